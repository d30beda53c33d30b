package activities_test

import (
	"bytes"
	"testing"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"

	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/internal/platform/metrics"
	"wds/internal/platform/secrets"
	"wds/models"
	"wds/test/deliverytest"
	"wds/workflows/contract"
)

// A worker whose keys open no secret of the endpoint (another WDS_ENCRYPTION_KEY than serve's, or a
// rotation without WDS_ENCRYPTION_KEY_PREVIOUS) records the attempt at once as failed with
// secret_unreadable, sends nothing, logs it at error level naming the endpoint and the variables to
// check, and counts it; the ladder goes on, and the next attempt with the right keys delivers.
func TestASecretNoKeyOpensFailsTheAttemptLoudly(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, nil)
	ep := f.Endpoint(rc.Srv.URL + "/hook")
	ev := f.Event(events.OrderCreated, nil)
	wrong, err := secrets.NewBox(secrets.GenerateKey())
	if err != nil {
		t.Fatal(err)
	}
	acts := f.Acts(rc, true)
	acts.Box = wrong
	log, hook := test.NewNullLogger()
	acts.Log = log
	before := unreadableCount(t)

	in := deliverytest.Attempt(ev, ep.ID, 1, deliverytest.Later())
	in.ReportFailure = true
	res, err := acts.Deliver(f.Ctx, in)
	if res.Outcome != models.StatusFailed || res.Error != models.ReasonSecretUnreadable {
		t.Fatalf("result %+v, want failed with %s", res, models.ReasonSecretUnreadable)
	}
	if _, failed := contract.FailedAttempt(err); !failed {
		t.Fatalf("error %v, want the attempt's failure (not an error Temporal retries)", err)
	}
	if len(rc.Got()) != 0 {
		t.Fatal("a request was sent without its secret")
	}
	var row models.Delivery
	if err := f.DB.Where("id = ?", in.DeliveryID).Take(&row).Error; err != nil || row.Error != models.ReasonSecretUnreadable || row.Status != models.StatusFailed {
		t.Fatalf("row %+v %v", row, err)
	}
	entry := hook.LastEntry()
	if entry == nil || entry.Level != logrus.ErrorLevel || entry.Data["endpoint_id"] != ep.ID ||
		!bytes.Contains([]byte(entry.Message), []byte("WDS_ENCRYPTION_KEY_PREVIOUS")) {
		t.Fatalf("log entry %+v, want an error naming the endpoint and the keys to check", entry)
	}
	if got := unreadableCount(t); got != before+1 {
		t.Fatalf("wds_webhook_secret_unreadable_total went from %v to %v", before, got)
	}

	next := deliverytest.Attempt(ev, ep.ID, 2, deliverytest.Later())
	next.ChainID = in.ChainID
	if res, err := f.Acts(rc, true).Deliver(f.Ctx, next); err != nil || res.Outcome != models.StatusSucceeded {
		t.Fatalf("the next attempt with the right key: %+v %v", res, err)
	}
}

// unreadableCount reads wds_webhook_secret_unreadable_total from the registry the metrics listener serves.
func unreadableCount(t *testing.T) float64 {
	t.Helper()
	families, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "wds_webhook_secret_unreadable_total" {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatal("no wds_webhook_secret_unreadable_total")
	return 0
}

// A header set the worker's keys do not open while the signing secret opens (sealed under another
// key than the secret, as a half-done rotation leaves it) fails the attempt the same way: nothing is
// sent without the endpoint's headers.
func TestAHeaderSetNoKeyOpensFailsTheAttemptToo(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, nil)
	ep, err := f.Svc.Create(f.Ctx, endpoints.CreateInput{OrgID: f.Org, ActorID: f.Owner, URL: rc.Srv.URL + "/hook",
		EventTypes: []string{events.OrderCreated}, Headers: map[string]string{"Authorization": "Bearer SUPERSECRET-42"}})
	if err != nil {
		t.Fatal(err)
	}
	other, err := secrets.NewBox(secrets.GenerateKey())
	if err != nil {
		t.Fatal(err)
	}
	_, sealed, err := models.SealHeaders(other, models.Headers{"Authorization": "Bearer SUPERSECRET-42"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.DB.Exec(`UPDATE webhook_endpoints SET headers_sealed = ? WHERE id = ?`, sealed, ep.ID).Error; err != nil {
		t.Fatal(err)
	}
	before := unreadableCount(t)
	in := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())
	in.ReportFailure = true
	res, _ := f.Acts(rc, true).Deliver(f.Ctx, in)
	if res.Outcome != models.StatusFailed || res.Error != models.ReasonSecretUnreadable {
		t.Fatalf("result %+v, want failed with %s", res, models.ReasonSecretUnreadable)
	}
	if len(rc.Got()) != 0 {
		t.Fatal("a request was sent without its headers")
	}
	if got := unreadableCount(t); got != before+1 {
		t.Fatalf("wds_webhook_secret_unreadable_total went from %v to %v", before, got)
	}
}
