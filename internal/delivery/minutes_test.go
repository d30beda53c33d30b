package delivery_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/delivery"
	"wds/internal/events"
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
