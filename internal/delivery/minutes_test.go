package delivery_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/delivery"
	"wds/internal/deliverylog"
	"wds/internal/events"
	"wds/internal/platform/paging"
	"wds/models"
	"wds/workflows/contract"
)

// minutesFromLogSQL counts the minutes from the delivery log itself, the way the console's charts
// were counted before the minutes kept them: the oracle the kept counts must match.
const minutesFromLogSQL = `SELECT d.endpoint_id, d.org_id, date_trunc('minute', d.attempted_at) AS minute,
	count(*) FILTER (WHERE d.status = 'succeeded') AS succeeded, count(*) FILTER (WHERE d.status <> 'succeeded') AS failed,
	count(*) FILTER (WHERE d.status = 'dropped') AS dropped,
	count(*) FILTER (WHERE d.attempt = 1 AND (d.workflow_id LIKE 'webhook-refire/%' OR d.workflow_id LIKE 'webhook-recovery/%')) AS refired,
	count(*) FILTER (WHERE d.status = 'dropped' AND EXISTS (SELECT 1 FROM webhook_dispatches r WHERE r.refired_delivery_id = d.id)) AS dropped_refired
	FROM webhook_deliveries d GROUP BY 1, 2, 3 ORDER BY 1, 3`

// Every count the console's charts read is kept by the write that makes it: each attempt's own
// (succeeded, failed, dropped, and a re-fired or recovered chain's first attempt), a waiting chain's
// drop, and a drop's re-fire. Counted from the log afterwards, the minutes hold the same numbers; the
// retention job keeps 8 days of them.
func TestMinutesCountWhatTheLogHolds(t *testing.T) {
	f := newFixture(t)
	ep := f.Endpoint("https://127.0.0.1/hook")
	ago := func(d time.Duration) time.Time { return time.Now().Add(-d).UTC().Truncate(time.Microsecond) }
	record := func(workflow func(ev uuid.UUID) string, attempt int, status models.Status, at time.Time, next *time.Time) models.Delivery {
		t.Helper()
		ev := f.Event(events.OrderCreated, map[string]any{"id": uuid.New()})
		d := models.Delivery{ID: uuid.New(), OrgID: f.Org, EventID: ev, EndpointID: ep.ID, EventType: events.OrderCreated,
			ChainID: uuid.New(), WorkflowID: workflow(ev), Attempt: attempt, Status: status, AttemptedAt: at, NextAttemptAt: next}
		if ok, err := delivery.RecordAttempt(f.Ctx, f.DB, &d); !ok || err != nil {
			t.Fatalf("record: %v %v", ok, err)
		}
		return d
	}
	later := func(d time.Duration) *time.Time { t := time.Now().Add(d); return &t }
	original := contract.EventWorkflowID
	refire := func(ev uuid.UUID) string { return contract.RefireWorkflowID(ev, ep.ID, 1) }
	recovery := func(ev uuid.UUID) string { return contract.ManualWorkflowID(models.DispatchRecovery, ev, ep.ID, 1) }
	resend := func(ev uuid.UUID) string { return contract.ResendWorkflowID(ev, ep.ID, 1) }

	record(original, 1, models.StatusSucceeded, ago(48*time.Hour), nil)
	record(original, 1, models.StatusSucceeded, ago(9*24*time.Hour), nil) // older than the minutes kept
	waiting := record(original, 1, models.StatusFailed, ago(3*time.Hour), later(time.Hour))
	if err := delivery.DropChain(f.Ctx, f.DB, waiting.ChainID, "endpoint disabled"); err != nil {
		t.Fatal(err)
	}
	dropped := record(original, 5, models.StatusDropped, ago(3*time.Hour), nil)
	if _, err := f.Resends.Refire(f.Ctx, dropped.ID, f.Owner); err != nil {
		t.Fatal(err)
	}
	record(refire, 1, models.StatusSucceeded, ago(time.Hour), nil)
	record(recovery, 1, models.StatusFailed, ago(time.Hour), later(time.Minute))
	record(refire, 2, models.StatusFailed, ago(time.Hour), nil)
	record(resend, 1, models.StatusSucceeded, ago(time.Hour), nil) // a resend is no re-fire

	var want, kept []models.EndpointMinute
	if err := f.DB.Raw(minutesFromLogSQL).Scan(&want).Error; err != nil {
		t.Fatal(err)
	}
	if err := f.DB.Raw(`SELECT * FROM webhook_endpoint_minutes ORDER BY endpoint_id, minute`).Scan(&kept).Error; err != nil {
		t.Fatal(err)
	}
	if len(kept) != len(want) {
		t.Fatalf("%d minutes kept, the log has %d:\nkept %+v\nlog  %+v", len(kept), len(want), kept, want)
	}
	var refired, droppedRefired, drops int64
	for i := range want {
		if !kept[i].Minute.Equal(want[i].Minute) || kept[i].EndpointID != want[i].EndpointID || kept[i].OrgID != want[i].OrgID {
			t.Fatalf("minute %d: kept %+v, the log has %+v", i, kept[i], want[i])
		}
		kept[i].Minute = want[i].Minute
		if kept[i] != want[i] {
			t.Errorf("minute %d: kept %+v, the log has %+v", i, kept[i], want[i])
		}
		refired, droppedRefired, drops = refired+kept[i].Refired, droppedRefired+kept[i].DroppedRefired, drops+kept[i].Dropped
	}
	if refired != 2 || droppedRefired != 1 || drops != 2 {
		t.Errorf("kept %d re-fired chains, %d drops re-fired and %d drops; want 2, 1 and 2", refired, droppedRefired, drops)
	}

	if _, err := delivery.PruneMinutes(f.Ctx, f.DB); err != nil {
		t.Fatal(err)
	}
	var left int64
	f.DB.Model(&models.EndpointMinute{}).Count(&left)
	if left != int64(len(want)-1) {
		t.Errorf("%d minutes left after the prune, want the %d of the last 8 days", left, len(want)-1)
	}
}

// An attempt never waits for another attempt's count of the same minute: while one transaction holds
// the minute's row, an attempt counts in a row of its own within the minute, and the next attempt,
// the row free again, in the minute's first. A waiting chain's drop counts into that first row
// whichever row its attempt was counted in. Summed by minute, the rows hold what the log holds.
func TestAnAttemptCountsInARowNoOtherAttemptHolds(t *testing.T) {
	f := newFixture(t)
	ep := f.Endpoint("https://127.0.0.1/hook")
	at := time.Now().UTC().Truncate(time.Minute).Add(-time.Hour)
	record := func(status models.Status, next *time.Time) models.Delivery {
		t.Helper()
		ev := f.Event(events.OrderCreated, map[string]any{"id": uuid.New()})
		d := models.Delivery{ID: uuid.New(), OrgID: f.Org, EventID: ev, EndpointID: ep.ID, EventType: events.OrderCreated,
			ChainID: uuid.New(), WorkflowID: contract.EventWorkflowID(ev), Attempt: 1, Status: status,
			AttemptedAt: at.Add(time.Second), NextAttemptAt: next}
		ctx, cancel := context.WithTimeout(f.Ctx, 5*time.Second)
		defer cancel()
		if ok, err := delivery.RecordAttempt(ctx, f.DB, &d); !ok || err != nil {
			t.Fatalf("record: %v %v", ok, err)
		}
		return d
	}
	record(models.StatusSucceeded, nil)
	holder := f.DB.Begin()
	defer holder.Rollback()
	if err := holder.Exec(`SELECT 1 FROM webhook_endpoint_minutes WHERE endpoint_id = ? AND minute = ? FOR UPDATE`, ep.ID, at).Error; err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	next := time.Now().Add(time.Hour)
	waiting := record(models.StatusFailed, &next)
	if took := time.Since(start); took > time.Second {
		t.Errorf("the attempt took %s beside a held row of its minute", took)
	}
	if err := holder.Commit().Error; err != nil {
		t.Fatal(err)
	}
	record(models.StatusSucceeded, nil)
	if err := delivery.DropChain(f.Ctx, f.DB, waiting.ChainID, "endpoint disabled"); err != nil {
		t.Fatal(err)
	}
	var rows []models.EndpointMinute
	if err := f.DB.Raw(`SELECT * FROM webhook_endpoint_minutes ORDER BY minute`).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || !rows[0].Minute.Equal(at) || !rows[1].Minute.Truncate(time.Minute).Equal(at) || rows[1].Minute.Equal(at) {
		t.Fatalf("rows of the minute: %+v; want its first and one more within it", rows)
	}
	if rows[0].Succeeded != 2 || rows[0].Dropped != 1 || rows[1].Failed != 1 || rows[1].Succeeded != 0 {
		t.Errorf("the minute's first row %+v, the held attempt's %+v; want 2 succeeded and the drop first, the failure in its own", rows[0], rows[1])
	}
	var want, summed []models.EndpointMinute
	if err := f.DB.Raw(minutesFromLogSQL).Scan(&want).Error; err != nil {
		t.Fatal(err)
	}
	err := f.DB.Raw(`SELECT endpoint_id, org_id, date_trunc('minute', minute) AS minute, sum(succeeded) AS succeeded,
		sum(failed) AS failed, sum(dropped) AS dropped, sum(refired) AS refired, sum(dropped_refired) AS dropped_refired
		FROM webhook_endpoint_minutes GROUP BY 1, 2, 3`).Scan(&summed).Error
	if err != nil {
		t.Fatal(err)
	}
	if len(summed) != 1 || len(want) != 1 || !summed[0].Minute.Equal(want[0].Minute) {
		t.Fatalf("summed %+v, the log has %+v", summed, want)
	}
	summed[0].Minute = want[0].Minute
	if summed[0] != want[0] {
		t.Errorf("summed %+v, the log has %+v", summed[0], want[0])
	}
}

// Folded, an endpoint's hours older than the health's day are one row each, and the overview's
// charts read the same counts from them: from 8 days of minutes on two endpoints, some minutes in
// two rows, the 7 days' hourly history is what it was, the health's 24 hours too, and the window
// holds about 1,700 rows an endpoint instead of 10,000. What arrives after the fold still counts:
// a drop of a chain whose failed attempt's minute was folded, and a re-fire of a dropped attempt
// whose minute was; and a count that held a row while the fold waited for it is folded with it.
func TestFoldedHoursKeepWhatTheChartsAndTheHealthCount(t *testing.T) {
	f := newFixture(t)
	eps := []uuid.UUID{f.Endpoint("https://127.0.0.1/one").ID, f.Endpoint("https://127.0.0.1/two").ID}
	if err := f.DB.Exec(`INSERT INTO webhook_endpoint_minutes (endpoint_id, minute, succeeded, failed, dropped, refired, dropped_refired)
		SELECT e.id, date_trunc('minute', now()) - g * interval '1 minute' + s * interval '17 microseconds', 10, 3, 1, 2, 1
		FROM webhook_endpoints e, generate_series(0, 8 * 24 * 60 - 1) g, generate_series(0, (g % 7 = 0)::int) s
		WHERE e.id IN ?`, eps).Error; err != nil {
		t.Fatal(err)
	}
	since := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -6) // the overview's, a day's start
	history := func() []deliverylog.HourCount {
		t.Helper()
		h, err := f.Log.DeliveryHistory(f.Ctx, paging.OrgQuery{OrgID: f.Org, ActorID: f.Owner}, since)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	health := func() []int64 {
		t.Helper()
		list, err := f.Svc.List(f.Ctx, f.Org, nil)
		if err != nil {
			t.Fatal(err)
		}
		var counts []int64
		for _, ep := range list {
			counts = append(counts, ep.Health.Succeeded24h, ep.Health.Failed24h)
		}
		return counts
	}
	rows := func(since time.Time) (n int64) {
		f.DB.Raw(`SELECT count(*) FROM webhook_endpoint_minutes WHERE org_id = ? AND minute >= ?`, f.Org, since).Scan(&n)
		return n
	}
	// After the fold the window holds the last 26 hours' rows as they were, and a row an hour before.
	limit := rows(time.Now().Add(-26*time.Hour)) + int64(len(eps)*7*24)
	wantHistory, wantHealth, before := history(), health(), rows(since)

	// A row of a minute to be folded, held by a count that has not committed yet.
	held := time.Now().UTC().Truncate(time.Hour).Add(-50*time.Hour + 7*time.Minute)
	holder := f.DB.Begin()
	defer holder.Rollback()
	if err := holder.Exec(`UPDATE webhook_endpoint_minutes SET dropped_refired = dropped_refired + 1 WHERE endpoint_id = ? AND minute = ?`,
		eps[0], held).Error; err != nil {
		t.Fatal(err)
	}
	folded := make(chan error, 1)
	go func() { _, err := delivery.FoldMinutes(f.Ctx, f.DB); folded <- err }()
	time.Sleep(300 * time.Millisecond)
	if err := holder.Commit().Error; err != nil {
		t.Fatal(err)
	}
	if err := <-folded; err != nil {
		t.Fatal(err)
	}
	for i := range wantHistory {
		if wantHistory[i].Hour.Equal(held.Truncate(time.Hour)) && wantHistory[i].EndpointID == eps[0] {
			wantHistory[i].DroppedRefired++
		}
	}
	if after := rows(since); after > limit {
		t.Errorf("the 7 days hold %d rows after the fold (%d before), want at most %d", after, before, limit)
	}
	t.Logf("rows of the overview's 7 days: %d before the fold, %d after", before, rows(since))
	sameHistory(t, "after the fold", history(), wantHistory)
	if got := health(); !slices.Equal(got, wantHealth) {
		t.Errorf("the health after the fold is %v, was %v", got, wantHealth)
	}
	if n, err := delivery.FoldMinutes(f.Ctx, f.DB); n != 0 || err != nil {
		t.Errorf("a second fold folded %d hours (%v)", n, err)
	}

	// Attempts written late into folded hours, folded in turn; then the waiting one's chain dropped
	// and the dropped one re-fired, each counted in a row its minute no longer had.
	// Half past an hour: a minute folded away, not the hour's own row.
	hour := time.Now().UTC().Truncate(time.Hour).Add(30 * time.Minute)
	record := func(status models.Status, ago time.Duration, next *time.Time) models.Delivery {
		t.Helper()
		ev := f.Event(events.OrderCreated, map[string]any{"id": uuid.New()})
		d := models.Delivery{ID: uuid.New(), OrgID: f.Org, EventID: ev, EndpointID: eps[0], EventType: events.OrderCreated,
			ChainID: uuid.New(), WorkflowID: contract.EventWorkflowID(ev), Attempt: 1, Status: status,
			AttemptedAt: hour.Add(-ago), NextAttemptAt: next}
		if ok, err := delivery.RecordAttempt(f.Ctx, f.DB, &d); !ok || err != nil {
			t.Fatalf("record: %v %v", ok, err)
		}
		return d
	}
	next := time.Now().Add(time.Hour)
	waiting, dropped := record(models.StatusFailed, 40*time.Hour, &next), record(models.StatusDropped, 45*time.Hour, nil)
	if n, err := delivery.FoldMinutes(f.Ctx, f.DB); n != 2 || err != nil {
		t.Fatalf("folded %d hours of the late attempts, want 2 (%v)", n, err)
	}
	if err := delivery.DropChain(f.Ctx, f.DB, waiting.ChainID, "endpoint disabled"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Resends.Refire(f.Ctx, dropped.ID, f.Owner); err != nil {
		t.Fatal(err)
	}
	for i, h := range wantHistory {
		if h.EndpointID != eps[0] {
			continue
		}
		switch {
		case h.Hour.Equal(waiting.AttemptedAt.Truncate(time.Hour)): // failed, then dropped: a drop
			wantHistory[i].Dropped++
		case h.Hour.Equal(dropped.AttemptedAt.Truncate(time.Hour)): // a drop, re-fired
			wantHistory[i].Dropped++
			wantHistory[i].DroppedRefired++
		}
	}
	sameHistory(t, "with the late counts", history(), wantHistory)
}

// sameHistory fails the test unless got and want count the same hours of the same endpoints alike.
func sameHistory(t *testing.T, when string, got, want []deliverylog.HourCount) {
	t.Helper()
	same := slices.EqualFunc(got, want, func(a, b deliverylog.HourCount) bool {
		a.Hour, b.Hour = a.Hour.UTC(), b.Hour.UTC()
		return a == b
	})
	if !same {
		t.Errorf("the history %s differs:\n got %+v\nwant %+v", when, got, want)
	}
}
