package activities_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"wds/api/signing"
	"wds/internal/events"
	"wds/internal/platform/egress"
	"wds/internal/platform/problem"
	"wds/models"
	"wds/test/deliverytest"
	"wds/webhook"
	"wds/workflows/contract"
)

func TestDeliverSendsEveryHeaderAndAVerifiableSignature(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"ok":true}`)) })
	ep := f.Endpoint(rc.Srv.URL + "/hook")
	ev := f.Event(events.OrderCreated, map[string]any{"id": uuid.New(), "total_cents": 1250})
	in := deliverytest.Attempt(ev, ep.ID, 1, deliverytest.Later())

	res, err := f.Acts(rc, true).Deliver(f.Ctx, in)
	if err != nil || res.Outcome != models.StatusSucceeded {
		t.Fatalf("outcome %+v err %v", res, err)
	}
	hits := rc.Got()
	if len(hits) != 1 {
		t.Fatalf("%d requests", len(hits))
	}
	h := hits[0].Header
	var stored string
	f.DB.Raw("SELECT body::text FROM events WHERE id = ?", ev).Scan(&stored)
	if string(hits[0].Body) != stored {
		t.Fatalf("body differs from the stored event:\n%s\n%s", hits[0].Body, stored)
	}
	want := map[string]string{
		"Content-Type": "application/json", "User-Agent": "WDS-Webhook/1.0", "X-Pc-Event-Type": "order.created",
		"X-Pc-Event-Id": ev.String(), "X-Pc-Delivery-Id": in.DeliveryID.String(),
	}
	for k, v := range want {
		if h.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, h.Get(k), v)
		}
	}
	ts, err := strconv.ParseInt(h.Get("X-PC-Timestamp"), 10, 64)
	if err != nil || time.Since(time.Unix(ts, 0)).Abs() > 5*time.Second {
		t.Fatalf("X-PC-Timestamp %q", h.Get("X-PC-Timestamp"))
	}
	if !strings.HasPrefix(h.Get("X-PC-Signature"), "t="+h.Get("X-PC-Timestamp")+",v1=") {
		t.Fatalf("signature %q does not carry the timestamp", h.Get("X-PC-Signature"))
	}
	if err := signing.VerifyPC([]byte(ep.Secret), h.Get("X-PC-Signature"), hits[0].Body, time.Now()); err != nil {
		t.Fatalf("receiver cannot verify: %v", err)
	}
	if err := signing.VerifyPC([]byte("whsec_other"), h.Get("X-PC-Signature"), hits[0].Body, time.Now()); err == nil {
		t.Fatal("signature verifies with another secret")
	}
	rows := f.Rows(in.ChainID)
	if len(rows) != 1 || rows[0].ID != in.DeliveryID || rows[0].Status != "succeeded" || *rows[0].ResponseStatus != 200 ||
		rows[0].ResponseExcerpt != `{"ok":true}` || rows[0].NextAttemptAt != nil || rows[0].EventType != "order.created" {
		t.Fatalf("row %+v", rows)
	}
}

func TestTestEventCarriesTheLiteralNullEventID(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, nil)
	ep := f.Endpoint(rc.Srv.URL)
	q, err := f.Resends.SendTest(f.Ctx, f.Org, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	var disp models.Dispatch
	f.DB.Where("id = ?", q.DispatchID).Take(&disp)
	in := contract.AttemptInput{DeliveryID: q.DeliveryID, EventID: disp.EventID, EndpointID: ep.ID, ChainID: disp.ChainID, Attempt: 1, Test: true}
	if res, err := f.Acts(rc, true).Deliver(f.Ctx, in); err != nil || res.Outcome != "succeeded" {
		t.Fatalf("%+v %v", res, err)
	}
	h := rc.Got()[0]
	var body map[string]any
	json.Unmarshal(h.Body, &body)
	if h.Header.Get("X-PC-Event-Id") != "null" || h.Header.Get("X-PC-Event-Type") != "webhook.test" || body["id"] != nil || body["type"] != "webhook.test" {
		t.Fatalf("test event headers %v body %s", h.Header, h.Body)
	}
	if data := body["data"].(map[string]any); data["endpoint_id"] != ep.ID.String() || data["message"] == "" {
		t.Fatalf("test data %v", data)
	}
}

func TestARedirectIsAFailureAndIsNotFollowed(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hook" {
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		}
	})
	ep := f.Endpoint(rc.Srv.URL + "/hook")
	in := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())
	res, err := f.Acts(rc, true).Deliver(f.Ctx, in)
	if err != nil || res.Outcome != "failed" || res.Error != "HTTP 307" {
		t.Fatalf("%+v %v", res, err)
	}
	if hits := rc.Got(); len(hits) != 1 {
		t.Fatalf("redirect followed: %d requests", len(hits))
	}
	if r := f.Rows(in.ChainID)[0]; r.NextAttemptAt == nil || !r.NextAttemptAt.Equal(*in.NextAttemptAt) {
		t.Fatalf("failed row does not announce the next attempt: %+v", r)
	}
}

func TestTheLastFailedAttemptDropsTheChain(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	ep := f.Endpoint(rc.Srv.URL)
	in := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 5, nil)
	res, err := f.Acts(rc, true).Deliver(f.Ctx, in)
	if err != nil || res.Outcome != "dropped" || res.Error != "HTTP 500" {
		t.Fatalf("%+v %v", res, err)
	}
	if r := f.Rows(in.ChainID)[0]; r.Status != "dropped" || *r.ResponseStatus != 500 || r.NextAttemptAt != nil {
		t.Fatalf("%+v", r)
	}
}

func TestASlowReceiverTimesOut(t *testing.T) {
	f := newFixture(t)
	release := make(chan struct{})
	rc := deliverytest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) { <-release })
	defer close(release)
	ep := f.Endpoint(rc.Srv.URL)
	a := f.Acts(rc, true)
	if a.HTTP.Timeout != egress.Timeout || egress.Timeout != 10*time.Second {
		t.Fatalf("client timeout %v, want 10s", a.HTTP.Timeout)
	}
	a.HTTP.Timeout = 300 * time.Millisecond // the same path as 10 s, without waiting 10 s
	in := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())
	res, err := a.Deliver(f.Ctx, in)
	if err != nil || res.Outcome != "failed" || !strings.HasPrefix(res.Error, "timeout") {
		t.Fatalf("%+v %v", res, err)
	}
}

func TestResponseReadIsCappedAt64KiB(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(strings.Repeat("x", 1<<20)))
	})
	ep := f.Endpoint(rc.Srv.URL)
	in := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())
	if _, err := f.Acts(rc, true).Deliver(f.Ctx, in); err != nil {
		t.Fatal(err)
	}
	if r := f.Rows(in.ChainID)[0]; len(r.ResponseExcerpt) != 64<<10 || r.Status != "failed" {
		t.Fatalf("kept %d bytes of the response, status %s", len(r.ResponseExcerpt), r.Status)
	}
}

func TestTheAddressGuardRefusesLoopbackUnlessAllowed(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, nil)
	ep := f.Endpoint(rc.Srv.URL) // registered while private addresses were allowed
	in := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())
	res, err := f.Acts(rc, false).Deliver(f.Ctx, in)
	if err != nil || res.Outcome != "failed" || res.Error != "address_not_allowed" {
		t.Fatalf("%+v %v", res, err)
	}
	if len(rc.Got()) != 0 {
		t.Fatal("the guarded client reached loopback")
	}
}

func TestEventsOverTheCapAreSummarised(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, nil)
	ep := f.Endpoint(rc.Srv.URL)
	orderID := uuid.New()
	ev := f.Event(events.OrderCreated, map[string]any{"id": orderID, "notes": strings.Repeat("n", 6_100_000)})
	in := deliverytest.Attempt(ev, ep.ID, 1, deliverytest.Later())
	if res, err := f.Acts(rc, true).Deliver(f.Ctx, in); err != nil || res.Outcome != "succeeded" {
		t.Fatalf("%+v %v", res, err)
	}
	h := rc.Got()[0]
	var body map[string]any
	if err := json.Unmarshal(h.Body, &body); err != nil {
		t.Fatal(err)
	}
	if len(h.Body) > 2000 || body["summarized"] != true || body["id"] != ev.String() || body["type"] != "order.created" ||
		body["org_id"] != f.Org.String() || body["data"].(map[string]any)["id"] != orderID.String() || body["detail"] == "" {
		t.Fatalf("summary %s", h.Body)
	}
	if err := signing.VerifyPC([]byte(ep.Secret), h.Header.Get("X-PC-Signature"), h.Body, time.Now()); err != nil {
		t.Fatalf("summary signature: %v", err)
	}
}

func TestARetriedAttemptNeverMakesASecondRowOrASecondPost(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	ep := f.Endpoint(rc.Srv.URL)
	in := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 2, deliverytest.Later())
	a := f.Acts(rc, true)
	first, err := a.Deliver(f.Ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	again, err := a.Deliver(f.Ctx, in)
	if err != nil || !reflect.DeepEqual(again, first) {
		t.Fatalf("retried task: %+v %v, first %+v", again, err, first)
	}
	lost, err := a.RecordLostAttempt(f.Ctx, contract.LostAttempt{Attempt: in, Error: "attempt_lost: worker died"})
	if err != nil || !reflect.DeepEqual(lost, first) {
		t.Fatalf("lost record over a recorded attempt: %+v %v", lost, err)
	}
	if n := len(rc.Got()); n != 1 {
		t.Fatalf("%d POSTs for one attempt", n)
	}
	if rows := f.Rows(in.ChainID); len(rows) != 1 || rows[0].Error != "HTTP 503" {
		t.Fatalf("rows %+v", rows)
	}
}

func TestALostAttemptIsRecordedOnce(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, nil)
	ep := f.Endpoint(rc.Srv.URL)
	in := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())
	a := f.Acts(rc, true)
	for range 2 {
		res, err := a.RecordLostAttempt(f.Ctx, contract.LostAttempt{Attempt: in, Error: "attempt_lost: worker died"})
		if err != nil || res.Outcome != "failed" {
			t.Fatalf("%+v %v", res, err)
		}
	}
	if rows := f.Rows(in.ChainID); len(rows) != 1 || rows[0].Status != "failed" || rows[0].ResponseStatus != nil {
		t.Fatalf("rows %+v", rows)
	}
}

func TestDisablingStopsAChainAndDropsItsLastRow(t *testing.T) {
	for _, c := range []struct {
		reason string
		act    func(f *fixture, id uuid.UUID) error
	}{
		{"endpoint_disabled", func(f *fixture, id uuid.UUID) error { _, err := f.Svc.Disable(f.Ctx, id, f.Owner); return err }},
		{"endpoint_deleted", func(f *fixture, id uuid.UUID) error { _, err := f.Svc.Delete(f.Ctx, id, f.Owner); return err }},
	} {
		t.Run(c.reason, func(t *testing.T) {
			f := newFixture(t)
			rc := deliverytest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) })
			ep := f.Endpoint(rc.Srv.URL)
			in := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())
			a := f.Acts(rc, true)
			if res, err := a.Deliver(f.Ctx, in); err != nil || res.Outcome != "failed" {
				t.Fatalf("%+v %v", res, err)
			}
			if err := c.act(f, ep.ID); err != nil {
				t.Fatal(err)
			}
			rows := f.Rows(in.ChainID)
			if rows[0].Status != "dropped" || rows[0].Error != c.reason || rows[0].NextAttemptAt != nil {
				t.Fatalf("after %s the last row is %+v", c.reason, rows[0])
			}
			next := in
			next.DeliveryID, next.Attempt = uuid.New(), 2
			res, err := a.Deliver(f.Ctx, next)
			if err != nil || res.Outcome != "dropped" || res.Error != c.reason {
				t.Fatalf("attempt 2: %+v %v", res, err)
			}
			if len(rc.Got()) != 1 || len(f.Rows(in.ChainID)) != 1 {
				t.Fatalf("stopped chain sent %d requests and has %d rows", len(rc.Got()), len(f.Rows(in.ChainID)))
			}
		})
	}
}

func TestAChainDroppedByDisablingStaysStoppedAfterReEnabling(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	ep := f.Endpoint(rc.Srv.URL)
	in := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())
	a := f.Acts(rc, true)
	a.Deliver(f.Ctx, in)
	if _, err := f.Svc.Disable(f.Ctx, ep.ID, f.Owner); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Svc.Enable(f.Ctx, ep.ID, f.Owner); err != nil {
		t.Fatal(err)
	}
	next := in
	next.DeliveryID, next.Attempt = uuid.New(), 2
	if res, err := a.Deliver(f.Ctx, next); err != nil || res.Outcome != "dropped" {
		t.Fatalf("%+v %v", res, err)
	}
	if len(rc.Got()) != 1 {
		t.Fatal("a dropped chain sent again")
	}
}

func TestResolveTargetsPicksTheEndpointsSubscribedAtEventTime(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, nil)
	a := f.Endpoint(rc.Srv.URL+"/a", events.OrderCreated, events.PaymentRecorded)
	b := f.Endpoint(rc.Srv.URL+"/b", events.OrderCreated)
	f.Endpoint(rc.Srv.URL+"/c", events.ClientCreated)
	off := f.Endpoint(rc.Srv.URL+"/off", events.OrderCreated)
	if _, err := f.Svc.Disable(f.Ctx, off.ID, f.Owner); err != nil {
		t.Fatal(err)
	}
	ev := f.Event(events.OrderCreated, nil)
	f.Endpoint(rc.Srv.URL+"/late", events.OrderCreated)
	got, err := f.Acts(rc, true).ResolveTargets(f.Ctx, contract.ResolveInput{EventID: ev})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].EndpointID != a.ID || got[1].EndpointID != b.ID || got[0].MaxAttempts != 5 || got[0].URL != rc.Srv.URL+"/a" {
		t.Fatalf("targets %+v", got)
	}
	one, err := f.Acts(rc, true).ResolveTargets(f.Ctx, contract.ResolveInput{EventID: ev, EndpointID: &off.ID})
	if err != nil || len(one) != 1 || one[0].EndpointID != off.ID {
		t.Fatalf("single target %+v %v", one, err)
	}
}

// Bodies larger than what comes with the attempt's first read are loaded within the worker's
// budget: many at once queue for room instead of holding gigabytes, and each arrives intact.
func TestLargeBodiesArriveIntactWithinTheWorkersBudget(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, nil)
	ep := f.Endpoint(rc.Srv.URL)
	acts := f.Acts(rc, true)
	// Six 5 MB events: 30 MB, over a 12 MB budget, so no more than two load at once and the others
	// wait for them to finish. (The default budget works the same way at 64 MB; a smaller one keeps
	// the test's sends few enough to beat the attempt's timeout on a loaded machine.)
	acts.LargeBodyBudget = 12 << 20
	var ids []uuid.UUID
	for i := range 6 {
		ids = append(ids, f.Event(events.OrderCreated, map[string]any{"n": i, "notes": strings.Repeat("n", 5_000_000)}))
	}
	var wg sync.WaitGroup
	for _, ev := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if res, err := acts.Deliver(f.Ctx, deliverytest.Attempt(ev, ep.ID, 1, deliverytest.Later())); err != nil || res.Outcome != "succeeded" {
				t.Errorf("%+v %v", res, err)
			}
		}()
	}
	wg.Wait()
	got := rc.Got()
	if len(got) != len(ids) {
		t.Fatalf("%d deliveries, want %d", len(got), len(ids))
	}
	for _, h := range got {
		var stored string
		f.DB.Raw("SELECT body::text FROM events WHERE id = ?", h.Header.Get("X-PC-Event-Id")).Find(&stored)
		if string(h.Body) != stored {
			t.Fatalf("a large body arrived changed (%d bytes, stored %d)", len(h.Body), len(stored))
		}
	}
}

// A rotation with a grace signs with both secrets until the grace ends, so a receiver that knows
// either verifies; after it, and after a rotation without one, only the new secret verifies.
func TestARotationsGraceSignsWithBothSecrets(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, nil)
	ep := f.Endpoint(rc.Srv.URL)
	acts := f.Acts(rc, true)
	rot, err := f.Svc.RotateSecret(f.Ctx, ep.ID, f.Owner, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	deliver := func() deliverytest.Hit {
		t.Helper()
		if _, err := acts.Deliver(f.Ctx, deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())); err != nil {
			t.Fatal(err)
		}
		got := rc.Got()
		return got[len(got)-1]
	}
	verifies := func(h deliverytest.Hit, secret string) bool {
		return webhook.Verify(secret, h.Header.Get(webhook.HeaderSignature), h.Body, time.Now()) == nil
	}
	if h := deliver(); !verifies(h, ep.Secret) || !verifies(h, rot.Secret) {
		t.Fatalf("during the grace: old %v, new %v (%s)", verifies(h, ep.Secret), verifies(h, rot.Secret), h.Header.Get(webhook.HeaderSignature))
	}
	f.DB.Exec(`UPDATE webhook_endpoints SET previous_secret_until = now() - interval '1 second' WHERE id = ?`, ep.ID)
	if h := deliver(); verifies(h, ep.Secret) || !verifies(h, rot.Secret) || strings.Count(h.Header.Get(webhook.HeaderSignature), "v1=") != 1 {
		t.Fatalf("after the grace: old %v, new %v", verifies(h, ep.Secret), verifies(h, rot.Secret))
	}
	again, err := f.Svc.RotateSecret(f.Ctx, ep.ID, f.Owner, 0)
	if err != nil {
		t.Fatal(err)
	}
	if h := deliver(); verifies(h, rot.Secret) || !verifies(h, again.Secret) {
		t.Fatal("a rotation without a grace kept the old secret signing")
	}
	if _, err := f.Svc.RotateSecret(f.Ctx, ep.ID, f.Owner, 8*24*time.Hour); !errors.Is(err, problem.Invalid) {
		t.Fatalf("a grace over seven days: %v", err)
	}
}

// A task that sent but could not record its row (the database refused the write) is run again by
// Temporal with the heartbeat it kept: the retry records what the POST came back with and sends
// nothing. A task that recorded its row keeps no heartbeat: that would cost every attempt a request
// to the Temporal server.
func TestARetryOfATaskThatSentRecordsWithoutSendingAgain(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
	ep := f.Endpoint(rc.Srv.URL)
	a := f.Acts(rc, true)
	var suite testsuite.WorkflowTestSuite
	run := func(in contract.AttemptInput) (converter.EncodedValues, error) {
		env := suite.NewTestActivityEnvironment()
		env.RegisterActivityWithOptions(a.Deliver, activity.RegisterOptions{Name: contract.ActivityDeliver})
		var kept converter.EncodedValues
		env.SetOnActivityHeartbeatListener(func(_ *activity.Info, d converter.EncodedValues) { kept = d })
		_, err := env.ExecuteActivity(contract.ActivityDeliver, in)
		return kept, err
	}
	if kept, err := run(deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())); err != nil || kept != nil {
		t.Fatalf("a recorded attempt: heartbeat %v, error %v", kept, err)
	}

	in := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())
	refuseDeliveryRows(t, f)
	kept, err := run(in)
	if err == nil || kept == nil {
		t.Fatalf("an unrecorded attempt: heartbeat %v, error %v", kept, err)
	}
	var sent map[string]any
	if err := kept.Get(&sent); err != nil {
		t.Fatal(err)
	}
	if err := f.DB.Exec("DROP TRIGGER refuse ON webhook_deliveries").Error; err != nil {
		t.Fatal(err)
	}

	retry := suite.NewTestActivityEnvironment()
	retry.RegisterActivityWithOptions(a.Deliver, activity.RegisterOptions{Name: contract.ActivityDeliver})
	retry.SetHeartbeatDetails(sent)
	val, err := retry.ExecuteActivity(contract.ActivityDeliver, in)
	if err != nil {
		t.Fatal(err)
	}
	var res contract.AttemptResult
	if err := val.Get(&res); err != nil || res.Outcome != models.StatusSucceeded {
		t.Fatalf("retry answered %+v %v", res, err)
	}
	if n := len(rc.Got()); n != 2 {
		t.Fatalf("%d POSTs, want one per event: the retry sends nothing", n)
	}
	rows := f.Rows(in.ChainID)
	if len(rows) != 1 || rows[0].Status != models.StatusSucceeded || rows[0].ResponseStatus == nil || *rows[0].ResponseStatus != http.StatusAccepted {
		t.Fatalf("rows %+v", rows)
	}
}

// refuseDeliveryRows makes PostgreSQL refuse every new delivery row, as a database that went away
// after the POST would.
func refuseDeliveryRows(t *testing.T, f *fixture) {
	t.Helper()
	err := f.DB.Exec(`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'refused'; END $$`).Error
	if err == nil {
		err = f.DB.Exec("CREATE TRIGGER refuse BEFORE INSERT ON webhook_deliveries FOR EACH ROW EXECUTE FUNCTION refuse()").Error
	}
	if err != nil {
		t.Fatal(err)
	}
}

// duration_ms covers the whole exchange, the response body included: a receiver that answers its
// status at once and its reason 50 ms later took 50 ms, not the 0 ms of its headers alone.
func TestTheDurationCoversTheWholeExchange(t *testing.T) {
	f := newFixture(t)
	const pause = 50 * time.Millisecond
	rc := deliverytest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		w.(http.Flusher).Flush()
		time.Sleep(pause)
		_, _ = io.WriteString(w, "bad signature")
	})
	ep := f.Endpoint(rc.Srv.URL)
	in := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())
	if _, err := f.Acts(rc, true).Deliver(f.Ctx, in); err != nil {
		t.Fatal(err)
	}
	r := f.Rows(in.ChainID)[0]
	if r.DurationMS < pause.Milliseconds() || *r.ResponseStatus != http.StatusUnauthorized || r.ResponseExcerpt != "bad signature" || r.Error != "HTTP 401" {
		t.Fatalf("row %+v: want at least %d ms, 401, the excerpt and the status as the error", r, pause.Milliseconds())
	}
}

// Asked by the workflow (ReportFailure), an attempt the receiver failed, by its answer or by never
// answering, is recorded once and then fails the activity, non-retryable, with the HTTP status and
// error in its message and its outcome in the details; a retried task fails the same way without a
// second POST or row. A success, and a chain stopped without sending, complete.
func TestAFailedAttemptFailsTheActivityOnceRecorded(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
	ep := f.Endpoint(rc.Srv.URL)
	in := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 2, deliverytest.Later())
	in.ReportFailure = true
	a := f.Acts(rc, true)
	for range 2 {
		_, err := a.Deliver(f.Ctx, in)
		var app *temporal.ApplicationError
		if !errors.As(err, &app) || app.Type() != contract.ErrTypeAttemptFailed || !app.NonRetryable() ||
			!strings.Contains(app.Error(), "attempt 2 failed: HTTP 500; next attempt at ") {
			t.Fatalf("a 500 did not fail the activity: %v", err)
		}
		res, ok := contract.FailedAttempt(err)
		if !ok || res.Outcome != models.StatusFailed || res.ResponseStatus == nil || *res.ResponseStatus != 500 {
			t.Fatalf("failure details %+v", res)
		}
	}
	if n, rows := len(rc.Got()), f.Rows(in.ChainID); n != 1 || len(rows) != 1 {
		t.Fatalf("%d POSTs and %d rows for one attempt", n, len(rows))
	}

	gone := f.Endpoint("https://127.0.0.1:1/hook") // nothing listens: a network error, and the last attempt
	in = deliverytest.Attempt(f.Event(events.OrderCreated, nil), gone.ID, 3, nil)
	in.ReportFailure = true
	_, err := a.Deliver(f.Ctx, in)
	if res, ok := contract.FailedAttempt(err); !ok || res.Outcome != models.StatusDropped || res.ResponseStatus != nil ||
		!strings.Contains(err.Error(), "attempt 3 dropped: ") || !strings.Contains(err.Error(), "the chain is dropped") {
		t.Fatalf("a refused connection: %+v %v", res, err)
	}

	rc.Answer(func(w http.ResponseWriter, r *http.Request) {})
	in = deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())
	in.ReportFailure = true
	if res, err := a.Deliver(f.Ctx, in); err != nil || res.Outcome != models.StatusSucceeded {
		t.Fatalf("a 200: %+v %v", res, err)
	}
	if _, err := f.Svc.Disable(f.Ctx, ep.ID, f.Owner); err != nil {
		t.Fatal(err)
	}
	in = deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())
	in.ReportFailure = true
	if res, err := a.Deliver(f.Ctx, in); err != nil || res.Outcome != models.StatusDropped || res.Error != models.ReasonEndpointDisabled {
		t.Fatalf("an attempt to a disabled endpoint: %+v %v", res, err)
	}
}

// A local attempt has no heartbeat: a run that sent but could not record keeps the outcome in the
// worker's memory, and the retry, which runs on the same worker, records it without sending again.
func TestALocalAttemptThatSentRecordsWithoutSendingAgain(t *testing.T) {
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
	ep := f.Endpoint(rc.Srv.URL)
	a := f.Acts(rc, true)
	var suite testsuite.WorkflowTestSuite
	run := func(in contract.AttemptInput) (contract.AttemptResult, error) {
		env := suite.NewTestActivityEnvironment()
		val, err := env.ExecuteLocalActivity(a.Deliver, in)
		var res contract.AttemptResult
		if err == nil {
			err = val.Get(&res)
		}
		return res, err
	}
	in := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())
	refuseDeliveryRows(t, f)
	if _, err := run(in); err == nil {
		t.Fatal("an attempt whose row was refused succeeded")
	}
	if err := f.DB.Exec("DROP TRIGGER refuse ON webhook_deliveries").Error; err != nil {
		t.Fatal(err)
	}
	res, err := run(in)
	if err != nil || res.Outcome != models.StatusSucceeded {
		t.Fatalf("retry answered %+v %v", res, err)
	}
	if n := len(rc.Got()); n != 1 {
		t.Fatalf("%d POSTs, want one: the retry sends nothing", n)
	}
	if rows := f.Rows(in.ChainID); len(rows) != 1 || rows[0].ResponseStatus == nil || *rows[0].ResponseStatus != http.StatusAccepted {
		t.Fatalf("rows %+v", rows)
	}
}

// Since the workflows' AttemptRecorded, a local attempt the receiver failed completes with its
// outcome, and one that could not write its row hands the outcome back (Unrecorded) instead of
// keeping it in the worker's memory. RecordFailedAttempt, a regular activity retried by Temporal,
// writes that row once however often it runs, never sends, and fails non-retryable with the HTTP
// status and error, so the Temporal UI shows the attempt failed.
func TestAFailedLocalAttemptIsHandedOnAndRecordedOnce(t *testing.T) {
	const deliverTimeout = 30 * time.Second
	f := newFixture(t)
	rc := deliverytest.NewReceiver(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, "down")
	})
	ep := f.Endpoint(rc.Srv.URL)
	a := f.Acts(rc, true)
	var suite testsuite.WorkflowTestSuite
	deliver := func(in contract.AttemptInput) contract.AttemptResult {
		t.Helper()
		env := suite.NewTestActivityEnvironment()
		env.SetTestTimeout(deliverTimeout) // the workflows' timeout of an attempt, not the test's default
		val, err := env.ExecuteLocalActivity(a.Deliver, in)
		var res contract.AttemptResult
		if err == nil {
			err = val.Get(&res)
		}
		if err != nil || res.Outcome != models.StatusFailed {
			t.Fatalf("a failed local attempt handed on: %+v %v", res, err)
		}
		return res
	}
	record := func(in contract.AttemptInput, res contract.AttemptResult) error {
		env := suite.NewTestActivityEnvironment()
		env.RegisterActivityWithOptions(a.RecordFailedAttempt, activity.RegisterOptions{Name: contract.ActivityRecordFailed})
		_, err := env.ExecuteActivity(contract.ActivityRecordFailed, contract.FailedAttemptInput{Attempt: in, Result: res})
		return err
	}
	failedWith500 := func(err error, n int) bool {
		var app *temporal.ApplicationError
		res, ok := contract.FailedAttempt(err)
		return ok && errors.As(err, &app) && app.NonRetryable() && app.Category() == temporal.ApplicationErrorCategoryBenign &&
			strings.Contains(err.Error(), fmt.Sprintf("attempt %d failed: HTTP 500; next attempt at ", n)) &&
			res.ResponseStatus != nil && *res.ResponseStatus == 500 && res.Unrecorded == nil
	}

	// Recorded by Deliver: nothing to hand on, and RecordFailedAttempt only fails.
	in := deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 1, deliverytest.Later())
	in.HandOffFailure = true
	if res := deliver(in); res.Unrecorded != nil || len(f.Rows(in.ChainID)) != 1 {
		t.Fatalf("a recorded failure handed on %+v", res)
	} else if err := record(in, res); !failedWith500(err, 1) {
		t.Fatalf("RecordFailedAttempt of a recorded attempt: %v", err)
	}

	// Not recorded by Deliver: RecordFailedAttempt fails retryably while the database refuses the
	// row, then records it once.
	in = deliverytest.Attempt(f.Event(events.OrderCreated, nil), ep.ID, 2, deliverytest.Later())
	in.HandOffFailure = true
	refuseDeliveryRows(t, f)
	res := deliver(in)
	if res.Unrecorded == nil || res.Unrecorded.ResponseStatus == nil || *res.Unrecorded.ResponseStatus != 500 {
		t.Fatalf("an unrecorded failure handed on %+v", res)
	}
	if err := record(in, res); err == nil || failedWith500(err, 2) {
		t.Fatalf("RecordFailedAttempt with the row refused: %v, want an error Temporal retries", err)
	}
	if err := f.DB.Exec("DROP TRIGGER refuse ON webhook_deliveries").Error; err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := record(in, res); !failedWith500(err, 2) {
			t.Fatalf("RecordFailedAttempt: %v", err)
		}
	}
	rows := f.Rows(in.ChainID)
	if n := len(rc.Got()); n != 2 || len(rows) != 1 {
		t.Fatalf("%d POSTs and %d rows, want one of each: RecordFailedAttempt never sends", n, len(rows))
	}
	if r := rows[0]; r.ID != in.DeliveryID || r.Status != models.StatusFailed || r.ResponseStatus == nil || *r.ResponseStatus != 500 ||
		r.ResponseExcerpt != "down" || r.Error != "HTTP 500" || r.NextAttemptAt == nil {
		t.Fatalf("row %+v", r)
	}
	// The headers sent travel with the handed-on outcome into the row.
	if r := rows[0]; r.Sent == nil || r.Sent.Standard["Webhook-Signature"] != rc.Got()[1].Header.Get("Webhook-Signature") {
		t.Fatalf("the handed-on row's headers %+v, the receiver got %v", r.Sent, rc.Got()[1].Header)
	}
}
