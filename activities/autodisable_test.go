package activities_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/internal/events/eventstest"
	"wds/models"
	"wds/test/deliverytest"
)

func TestAFailingEndpointIsDisabledWhenAChainDropsAndTheOthersAreTold(t *testing.T) {
	f := newFixture(t)
	down := deliverytest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	// A token in the URL's query string goes no further than the delivery itself.
	failing, err := f.Svc.Create(f.Ctx, endpoints.CreateInput{OrgID: f.Org, ActorID: f.Owner, URL: down.Srv.URL + "/in?token=url-secret",
		EventTypes: []string{events.OrderCreated}, Headers: map[string]string{"Authorization": "Bearer secret-token"}})
	if err != nil {
		t.Fatal(err)
	}
	f.Endpoint("https://127.0.0.1/watch", events.WebhookEndpointDisabled) // told of the disable
	acts := f.Acts(down, true)

	// Failing, but not for long enough: a chain drops and the endpoint stays.
	acts.DisableAfter = time.Hour
	pending := deliverytest.Attempt(f.Event(events.OrderCreated, nil), failing.ID, 1, deliverytest.Later())
	acts.Deliver(f.Ctx, pending)
	if res, err := acts.Deliver(f.Ctx, deliverytest.Attempt(f.Event(events.OrderCreated, nil), failing.ID, 1, nil)); err != nil || res.Outcome != models.StatusDropped {
		t.Fatalf("%+v %v", res, err)
	}
	var ep models.Endpoint
	f.DB.Where("id = ?", failing.ID).Take(&ep)
	if !ep.Enabled {
		t.Fatal("disabled before WDS_WEBHOOK_DISABLE_AFTER")
	}

	// Long enough: the next drop disables it.
	acts.DisableAfter = time.Nanosecond
	dropped := deliverytest.Attempt(f.Event(events.OrderCreated, nil), failing.ID, 1, nil)
	if res, err := acts.Deliver(f.Ctx, dropped); err != nil || res.Outcome != models.StatusDropped {
		t.Fatalf("%+v %v", res, err)
	}
	f.DB.Where("id = ?", failing.ID).Take(&ep)
	if ep.Enabled || ep.DisabledReason == nil || *ep.DisabledReason != models.DisabledFailing {
		t.Fatalf("endpoint %+v", ep)
	}
	if rows := f.Rows(pending.ChainID); rows[len(rows)-1].Status != models.StatusDropped || rows[len(rows)-1].Error != models.ReasonEndpointDisabled {
		t.Fatalf("its pending chain: %+v", rows)
	}
	var audit []struct {
		ActorID *uuid.UUID
		Action  string
	}
	f.DB.Raw("SELECT actor_id, action FROM audit_log WHERE target_id = ? AND action = 'endpoint.auto_disabled'", failing.ID).Scan(&audit)
	if len(audit) != 1 || audit[0].ActorID != nil {
		t.Fatalf("audit %+v", audit)
	}
	var evs []models.Event
	f.DB.Where("type = ?", events.WebhookEndpointDisabled).Find(&evs)
	if len(evs) != 1 || evs[0].DispatchedAt != nil {
		t.Fatalf("events %+v: want one, waiting for its start to the watching endpoint", evs)
	}
	v, err := eventstest.Catalog()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate(evs[0].Body); err != nil {
		t.Fatalf("body does not match its schema: %v\n%s", err, evs[0].Body)
	}
	var body struct {
		Data struct {
			ID      uuid.UUID         `json:"id"`
			URL     string            `json:"url"`
			Reason  string            `json:"reason"`
			Headers map[string]string `json:"headers"`
		} `json:"data"`
	}
	json.Unmarshal(evs[0].Body, &body)
	if body.Data.ID != failing.ID || body.Data.Reason != "failing" || body.Data.Headers["Authorization"] != "" || len(body.Data.Headers) != 1 {
		t.Fatalf("data %s", evs[0].Body)
	}
	if body.Data.URL != down.Srv.URL+"/in" || strings.Contains(string(evs[0].Body), "url-secret") || strings.Contains(string(evs[0].Body), "secret-token") {
		t.Fatalf("the event carries the endpoint's URL redacted (no query string) and no header value: %s", evs[0].Body)
	}

	// Again (a retried task): nothing more happens.
	if _, err := acts.Deliver(f.Ctx, dropped); err != nil {
		t.Fatal(err)
	}
	var n int64
	f.DB.Model(&models.Event{}).Where("type = ?", events.WebhookEndpointDisabled).Count(&n)
	if n != 1 {
		t.Fatalf("%d endpoint_disabled events after a retried task", n)
	}

	// Enabling starts its health afresh.
	on, err := f.Svc.Enable(f.Ctx, failing.ID, f.Owner)
	if err != nil || on.DisabledReason != nil || on.Health.FailingSince != nil {
		t.Fatalf("%+v %v", on, err)
	}
}
