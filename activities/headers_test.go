package activities_test

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/models"
	"wds/test/deliverytest"
)

// rowText is the endpoint's whole row as PostgreSQL holds it (bytea columns in hex), so a test can
// say what is, and is not, stored whatever the columns are.
func (f *fixture) rowText(t *testing.T, id uuid.UUID) string {
	t.Helper()
	var row string
	if err := f.DB.Raw(`SELECT row_to_json(w)::text FROM webhook_endpoints w WHERE id = ?`, id).Row().Scan(&row); err != nil {
		t.Fatal(err)
	}
	return row
}

// A custom header's value is a credential: the row holds it sealed (neither its text nor its bytes
// appear in any column), and every attempt still sends it as set.
func TestCustomHeaderValuesAreSealedAtRestAndSentAsSet(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, nil)
	ep, err := f.Svc.Create(f.Ctx, endpoints.CreateInput{OrgID: f.Org, ActorID: f.Owner, URL: rc.Srv.URL + "/hook",
		EventTypes: []string{events.OrderCreated}, Headers: map[string]string{"Authorization": "Bearer SUPERSECRET", "X-Tenant": "acme-tenant"}})
	if err != nil {
		t.Fatal(err)
	}
	row := f.rowText(t, ep.ID)
	for _, value := range []string{"Bearer SUPERSECRET", "acme-tenant"} {
		if strings.Contains(row, value) || strings.Contains(row, hex.EncodeToString([]byte(value))) {
			t.Fatalf("the row holds the header value %q: %s", value, row)
		}
	}
	if !strings.Contains(row, `"Authorization"`) {
		t.Fatalf("the row lost the header's name: %s", row)
	}

	in := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())
	if res, err := f.Acts(rc, true).Deliver(f.Ctx, in); err != nil || res.Outcome != models.StatusSucceeded {
		t.Fatalf("%+v %v", res, err)
	}
	h := rc.Got()[0].Header
	if h.Get("Authorization") != "Bearer SUPERSECRET" || h.Get("X-Tenant") != "acme-tenant" {
		t.Fatalf("the receiver got %v", h)
	}
}

// A row written before header values were sealed (plaintext in the headers column, nothing sealed)
// goes on delivering its headers until `wds admin secrets reencrypt` seals it.
func TestALegacyPlaintextHeaderRowStillSendsItsHeaders(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {})
	ep := f.Endpoint(rc.Srv.URL + "/hook")
	if err := f.DB.Exec(`UPDATE webhook_endpoints SET headers = '{"X-Legacy": "plain-value"}', headers_sealed = NULL WHERE id = ?`, ep.ID).Error; err != nil {
		t.Fatal(err)
	}
	in := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())
	if res, err := f.Acts(rc, true).Deliver(f.Ctx, in); err != nil || res.Outcome != models.StatusSucceeded {
		t.Fatalf("%+v %v", res, err)
	}
	if got := rc.Got()[0].Header.Get("X-Legacy"); got != "plain-value" {
		t.Fatalf("X-Legacy = %q", got)
	}
}

// A receiver whose error page echoes the request's headers gets them back redacted: neither the
// delivery log, which members read, nor the attempt's result, which reaches Temporal's history,
// holds a custom header value or the signing secret.
func TestAnEchoedHeaderValueIsRedactedFromTheExcerpt(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		_ = r.Header.Write(w)
	})
	ep, err := f.Svc.Create(f.Ctx, endpoints.CreateInput{OrgID: f.Org, ActorID: f.Owner, URL: rc.Srv.URL + "/hook",
		EventTypes: []string{events.OrderCreated}, Headers: map[string]string{"Authorization": "Bearer SUPERSECRET-42"}})
	if err != nil {
		t.Fatal(err)
	}
	in := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())
	res, err := f.Acts(rc, true).Deliver(f.Ctx, in)
	if res.Outcome != models.StatusFailed {
		t.Fatalf("%+v %v", res, err)
	}
	var excerpt string
	if err := f.DB.Raw(`SELECT response_excerpt FROM webhook_deliveries WHERE endpoint_id = ?`, ep.ID).Row().Scan(&excerpt); err != nil {
		t.Fatal(err)
	}
	for where, text := range map[string]string{"the delivery row": excerpt, "the result": fmt.Sprintf("%+v %v", res, err)} {
		if strings.Contains(text, "SUPERSECRET-42") || strings.Contains(text, ep.Secret) {
			t.Errorf("%s holds a sealed value: %s", where, text)
		}
	}
	if !strings.Contains(excerpt, "Authorization: [redacted]") {
		t.Errorf("the excerpt lost the echo's shape: %s", excerpt)
	}
}
