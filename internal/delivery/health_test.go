package delivery_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/delivery"
	"wds/internal/events"
	"wds/models"
	"wds/test/pgtest"
	"wds/workflows/contract"
)

// logHealthSQL is the health as the delivery log says it (what the endpoint list read until it was
// kept by the writes): the oracle the kept health must agree with. An unrecovered drop is a dropped
// attempt of a real event with no chain of its event to its endpoint queued after it.
const logHealthSQL = `SELECT s.last_success_at, f.failing_since, coalesce(f.consecutive_dropped, 0) AS consecutive_dropped,
		coalesce(c.succeeded_24h, 0) AS succeeded_24h, coalesce(c.failed_24h, 0) AS failed_24h,
		u.unrecovered_dropped, u.oldest_unrecovered_at
	FROM webhook_endpoints w
	LEFT JOIN LATERAL (SELECT max(d.attempted_at) AS last_success_at FROM webhook_deliveries d
		WHERE d.endpoint_id = w.id AND d.status = 'succeeded') s ON true
	LEFT JOIN LATERAL (SELECT min(d.attempted_at) FILTER (WHERE d.status <> 'succeeded') AS failing_since,
			count(DISTINCT d.chain_id) FILTER (WHERE d.status = 'dropped') AS consecutive_dropped
		FROM webhook_deliveries d WHERE d.endpoint_id = w.id
			AND d.attempted_at > greatest(coalesce(s.last_success_at, '-infinity'), coalesce(w.health_reset_at, '-infinity'))) f ON true
	LEFT JOIN LATERAL (SELECT count(*) FILTER (WHERE d.status = 'succeeded') AS succeeded_24h,
			count(*) FILTER (WHERE d.status <> 'succeeded') AS failed_24h
		FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.attempted_at >= clock_timestamp() - interval '24 hours') c ON true
	LEFT JOIN LATERAL (SELECT count(*) AS unrecovered_dropped, min(d.attempted_at) AS oldest_unrecovered_at
		FROM webhook_deliveries d WHERE d.endpoint_id = w.id AND d.status = 'dropped' AND d.event_type <> 'webhook.test'
			AND NOT EXISTS (SELECT 1 FROM webhook_dispatches p WHERE p.event_id = d.event_id AND p.endpoint_id = d.endpoint_id
				AND p.kind <> 'test' AND p.created_at >= d.attempted_at)) u ON true
	WHERE w.id = ?`

// The health each write keeps equals what the delivery log says after every step of an outage:
// failures and drops (a retried task's row written twice), a failure recorded late that predates the
// last success, a success recorded late that predates the streak, chains dropped by a disable, the
// enable that starts afresh, and a success that ends the streak.
func TestKeptHealthIsWhatTheLogSays(t *testing.T) {
	f := newFixture(t)
	ep := f.Endpoint("https://127.0.0.1/hook")
	ev := f.Event(events.OrderCreated, nil)
	base := time.Now().Add(-time.Hour).UTC().Truncate(time.Microsecond)
	at := func(s int) time.Time { return base.Add(time.Duration(s) * time.Second) }
	later := at(100000)
	write := func(status models.Status, when time.Time, next *time.Time) models.Delivery {
		d := models.Delivery{ID: uuid.New(), OrgID: f.Org, EventID: ev, EndpointID: ep.ID, EventType: events.OrderCreated,
			ChainID: uuid.New(), WorkflowID: contract.EventWorkflowID(ev), Attempt: 1, Status: status, AttemptedAt: when, NextAttemptAt: next}
		if _, err := delivery.RecordAttempt(f.Ctx, f.DB, &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	check := func(step string) {
		t.Helper()
		var want models.EndpointHealth
		if err := f.DB.Raw(logHealthSQL, ep.ID).Scan(&want).Error; err != nil {
			t.Fatal(err)
		}
		list, err := f.Svc.List(f.Ctx, f.Org, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := list[0].Health; fmt.Sprint(*got) != fmt.Sprint(want) {
			t.Fatalf("%s: kept health %+v, the log says %+v", step, *got, want)
		}
	}
	write(models.StatusSucceeded, at(10), nil)
	check("a success")
	write(models.StatusFailed, at(20), &later)
	retried := write(models.StatusDropped, at(30), nil)
	if ok, err := delivery.RecordAttempt(f.Ctx, f.DB, &retried); ok || err != nil {
		t.Fatalf("a retried task wrote again: %v %v", ok, err)
	}
	check("a failure and a drop")
	write(models.StatusDropped, at(5), nil)
	check("a drop recorded late, before the last success")
	write(models.StatusSucceeded, at(15), nil)
	check("a success recorded late, before the streak")
	write(models.StatusFailed, at(40), &later)
	if _, err := f.Svc.Disable(f.Ctx, ep.ID, f.Owner); err != nil {
		t.Fatal(err)
	}
	check("the disable drops the waiting chains")
	if _, err := f.Svc.Enable(f.Ctx, ep.ID, f.Owner); err != nil {
		t.Fatal(err)
	}
	check("the enable starts afresh")
	write(models.StatusDropped, time.Now(), nil)
	check("a drop after the enable")
	write(models.StatusSucceeded, time.Now(), nil)
	check("a success ends the streak")
}

// The endpoint list's health reads the endpoints' rows and the last 24 hours of their minutes, one
// range of each endpoint's (endpoint_id, minute), never the delivery log nor the 7 days before that
// the minutes keep for the overview: with every minute of the 8 days kept counted, each endpoint's
// read is its last day's minutes (and the one the day began in), none removed by a filter.
func TestEndpointHealthReadsOnlyTheLastDay(t *testing.T) {
	f := newFixture(t)
	eps := []uuid.UUID{f.Endpoint("https://127.0.0.1/one").ID, f.Endpoint("https://127.0.0.1/two").ID}
	if err := f.DB.Exec(`INSERT INTO webhook_endpoint_minutes (endpoint_id, minute, succeeded, failed)
		SELECT e.id, date_trunc('minute', now()) - g * interval '1 minute', 2, 1
		FROM webhook_endpoints e, generate_series(0, 8 * 24 * 60 - 1) g WHERE e.id IN ?`, eps).Error; err != nil {
		t.Fatal(err)
	}
	f.DB.Exec("ANALYZE webhook_endpoint_minutes")
	root, plan := pgtest.ExplainAnalyze(t, f.DB, delivery.HealthSQL, map[string]any{"ids": eps})
	if root.Reads("webhook_deliveries") {
		t.Fatalf("the health reads the delivery log:\n%s", plan)
	}
	day := int64(len(eps) * (24*60 + 1))
	var read int64
	root.Walk(func(n pgtest.PlanNode) {
		if n.Relation != "webhook_endpoint_minutes" {
			return
		}
		if n.NodeType != "Index Scan" && n.NodeType != "Index Only Scan" && n.NodeType != "Bitmap Heap Scan" ||
			n.RemovedByFilter+n.RemovedByRecheck > 0 {
			t.Errorf("minutes read by %s, %d removed:\n%s", n.NodeType, n.RemovedByFilter+n.RemovedByRecheck, plan)
		}
		read += n.ActualRows * max(n.ActualLoops, 1)
	})
	if read > day {
		t.Errorf("the health read %d minutes for the last day's %d:\n%s", read, day, plan)
	}
	list, err := f.Svc.List(f.Ctx, f.Org, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range list {
		if h := ep.Health; h.Succeeded24h != 2*(24*60+1) && h.Succeeded24h != 2*24*60 {
			t.Errorf("endpoint %s counts %d successes in 24 hours of 2 a minute", ep.ID, h.Succeeded24h)
		}
	}
}

// PruneMinutes deletes the minutes neither the 24-hour counts nor the overview's 7 days read, and
// keeps the others; the health counts only the last day's.
func TestPruneMinutesKeepsTheLastEightDays(t *testing.T) {
	f := newFixture(t)
	ep := f.Endpoint("https://127.0.0.1/hook")
	f.DB.Exec(`INSERT INTO webhook_endpoint_minutes (endpoint_id, minute, failed) VALUES
		(?, date_trunc('minute', now() - interval '9 days'), 1), (?, date_trunc('minute', now() - interval '7 days'), 1),
		(?, date_trunc('minute', now() - interval '23 hours'), 1)`, ep.ID, ep.ID, ep.ID)
	if n, err := delivery.PruneMinutes(f.Ctx, f.DB); n != 1 || err != nil {
		t.Fatalf("pruned %d %v", n, err)
	}
	list, _ := f.Svc.List(f.Ctx, f.Org, nil)
	if list[0].Health.Failed24h != 1 {
		t.Fatalf("health %+v", list[0].Health)
	}
}
