// An endpoint's health, kept by the writes that change it rather than counted from the delivery log
// on each read (issue 39): auto-disable decides from the endpoint's row, and the endpoint list reads
// no delivery rows however long an outage has lasted.

package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/models"
	"wds/workflows/contract"
)

// recordAttemptSQL inserts an attempt's row once and, when it is new, keeps the endpoint's health
// and the minute's counts (MinuteCounts) in the same statement. A success moves last_success_at forward and ends
// the failure streak it follows; a failure after the last success (and the last enable) starts the
// streak if none is running, and a drop counts one more dropped chain. Rows may be recorded out of
// time order (attempts run concurrently), so each change compares times rather than assuming the
// newest; an attempt that changes nothing (a retry's failure within a running streak) writes no
// endpoint row. Nor does a success within successSkew of the last one recorded while no streak runs:
// last_success_at is kept to that, so a busy endpoint's row is written about once a second rather
// than on every attempt, each write a lock every attempt to it queued behind.
//
// For the same reason an attempt adds to any row of its minute that no other attempt holds locked
// (free), and only when every row of the minute is held does it start another, keyed a random number
// of microseconds into the minute: a busy endpoint's minute is a few rows, one for each attempt that
// ran at once, rather than one row every attempt waits its turn for. The minute's first row is its
// own start, the key a drop or a re-fire counts into (countDroppedSQL, wds_count_refired_drops),
// and every reader sums the minute's rows over a range of time. Once the health no longer reads a
// minute, FoldMinutes adds its hour's rows into one.
const recordAttemptSQL = `WITH ins AS (
	INSERT INTO webhook_deliveries (id, org_id, event_id, endpoint_id, event_type, chain_id, workflow_id, attempt,
		status, response_status, response_excerpt, error, duration_ms, attempted_at, next_attempt_at, request_headers)
	VALUES (@id, @org, @event, @endpoint, @type, @chain, @workflow, @attempt, @status, @response_status,
		@excerpt, @error, @duration, @at, @next, CAST(@sent AS jsonb))
	ON CONFLICT DO NOTHING RETURNING id, endpoint_id, status, attempted_at),
kept AS (
	UPDATE webhook_endpoints w SET
		last_success_at = CASE WHEN i.status = @succeeded THEN greatest(w.last_success_at, i.attempted_at) ELSE w.last_success_at END,
		failing_since = CASE WHEN i.status <> @succeeded THEN least(w.failing_since, i.attempted_at)
			WHEN w.failing_since > i.attempted_at THEN w.failing_since END,
		consecutive_dropped = CASE WHEN i.status = @dropped THEN w.consecutive_dropped + 1
			WHEN i.status <> @succeeded OR w.failing_since > i.attempted_at THEN w.consecutive_dropped ELSE 0 END
	FROM ins i
	WHERE w.id = i.endpoint_id AND CASE WHEN i.status = @succeeded
		THEN w.last_success_at IS NULL OR w.last_success_at < i.attempted_at - @skew * interval '1 microsecond'
			OR w.failing_since <= i.attempted_at
		ELSE i.attempted_at > greatest(w.last_success_at, w.health_reset_at, '-infinity')
			AND (i.status = @dropped OR w.failing_since IS NULL OR w.failing_since > i.attempted_at) END
	RETURNING w.id),
free AS MATERIALIZED (
	SELECT m.minute FROM webhook_endpoint_minutes m JOIN ins i ON m.endpoint_id = i.endpoint_id
	WHERE m.minute >= date_trunc('minute', i.attempted_at) AND m.minute < date_trunc('minute', i.attempted_at) + interval '1 minute'
	ORDER BY m.minute LIMIT 1 FOR UPDATE OF m SKIP LOCKED),
counted AS (
	INSERT INTO webhook_endpoint_minutes AS m (endpoint_id, org_id, minute, succeeded, failed, dropped, refired)
	SELECT endpoint_id, @org, coalesce((SELECT minute FROM free), CASE WHEN EXISTS (
			SELECT 1 FROM webhook_endpoint_minutes x WHERE x.endpoint_id = ins.endpoint_id
				AND x.minute >= date_trunc('minute', attempted_at) AND x.minute < date_trunc('minute', attempted_at) + interval '1 minute')
		THEN date_trunc('minute', attempted_at) + (1 + floor(random() * 59999999)) * interval '1 microsecond'
		ELSE date_trunc('minute', attempted_at) END),
		(status = @succeeded)::int, (status <> @succeeded)::int, (status = @dropped)::int, CAST(CAST(@refired AS boolean) AS int) FROM ins
	ON CONFLICT (endpoint_id, minute) DO UPDATE SET succeeded = m.succeeded + excluded.succeeded, failed = m.failed + excluded.failed,
		dropped = m.dropped + excluded.dropped, refired = m.refired + excluded.refired
	RETURNING 1)
SELECT id FROM ins`

// successSkew is how far behind an endpoint's last success last_success_at may be (recordAttemptSQL).
const successSkew = time.Second

// RecordAttempt writes an attempt's row unless the log already holds its id or its chain's attempt
// number, keeping the endpoint's health with it, and reports whether it wrote.
func RecordAttempt(ctx context.Context, db *gorm.DB, d *models.Delivery) (bool, error) {
	var inserted []uuid.UUID
	sent, err := sentColumn(d.Sent)
	if err != nil {
		return false, err
	}
	err = db.WithContext(ctx).Raw(recordAttemptSQL, map[string]any{
		"id": d.ID, "org": d.OrgID, "event": d.EventID, "endpoint": d.EndpointID, "type": d.EventType,
		"chain": d.ChainID, "workflow": d.WorkflowID, "attempt": d.Attempt, "status": d.Status,
		"response_status": d.ResponseStatus, "excerpt": d.ResponseExcerpt, "error": d.Error,
		"duration": d.DurationMS, "at": d.AttemptedAt, "next": d.NextAttemptAt, "sent": sent,
		"succeeded": models.StatusSucceeded, "dropped": models.StatusDropped,
		"refired": d.Attempt == 1 && contract.RefiredChain(d.WorkflowID), "skew": successSkew.Microseconds(),
	}).Find(&inserted).Error
	if err != nil {
		return false, fmt.Errorf("record delivery: %w", err)
	}
	return len(inserted) == 1, nil
}

// sentColumn is the request_headers value of an attempt: its JSON, or null when it sent nothing.
func sentColumn(r *models.RequestHeaders) (any, error) {
	if r == nil {
		return nil, nil
	}
	v, err := r.Value()
	if err != nil {
		return nil, fmt.Errorf("record delivery: %w", err)
	}
	return v, nil
}

// countDroppedSQL is the part of a statement that drops waiting chains (the CTE dropped, returning
// endpoint_id and attempted_at of each dropped row) which counts them into their endpoints' health:
// a chain whose failed attempt followed the last success and the last enable is one more in the
// streak. Each row, already counted as failed in its minute, is counted as dropped there too: in the
// minute's first row, or, when FoldMinutes has folded that row into its hour's, in a new one of the
// minute, which every reader sums with the hour's.
const countDroppedSQL = `kept AS (
	UPDATE webhook_endpoints w SET consecutive_dropped = w.consecutive_dropped + c.n
	FROM (SELECT d.endpoint_id, count(*) AS n FROM dropped d JOIN webhook_endpoints e ON e.id = d.endpoint_id
		WHERE d.attempted_at > greatest(e.last_success_at, e.health_reset_at, '-infinity') GROUP BY d.endpoint_id) c
	WHERE w.id = c.endpoint_id RETURNING 1),
minutes AS (
	INSERT INTO webhook_endpoint_minutes AS m (endpoint_id, minute, dropped)
	SELECT endpoint_id, date_trunc('minute', attempted_at), count(*) FROM dropped GROUP BY 1, 2
	ON CONFLICT (endpoint_id, minute) DO UPDATE SET dropped = m.dropped + excluded.dropped RETURNING 1)`

// ResetHealthSQL is what enabling sets: the failures before it no longer count.
const ResetHealthSQL = `failing_since = NULL, consecutive_dropped = 0, health_reset_at = clock_timestamp()`

// healthSQL reads each endpoint's kept health and sums its minutes of the last 24 hours (counted to
// the minute: the oldest minute counted is the one 24 hours ago began in). The bound is now(), not
// clock_timestamp(): a stable bound is a range of the (endpoint_id, minute) key, where a volatile one
// could only filter every minute kept for the overview's 7 days, eight times the day's.
const healthSQL = `SELECT w.id, w.last_success_at, w.failing_since, w.consecutive_dropped, w.unrecovered_dropped, w.oldest_unrecovered_at,
		coalesce(c.succeeded_24h, 0) AS succeeded_24h, coalesce(c.failed_24h, 0) AS failed_24h
	FROM webhook_endpoints w
	LEFT JOIN LATERAL (SELECT sum(m.succeeded) AS succeeded_24h, sum(m.failed) AS failed_24h
		FROM webhook_endpoint_minutes m
		WHERE m.endpoint_id = w.id AND m.minute >= date_trunc('minute', now() - interval '24 hours')) c ON true
	WHERE w.id IN @ids`

// FillHealth fills the health of each endpoint.
func FillHealth(ctx context.Context, db *gorm.DB, eps ...*models.Endpoint) error {
	if len(eps) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(eps))
	for i, ep := range eps {
		ids[i] = ep.ID
	}
	var rows []struct {
		ID uuid.UUID
		models.EndpointHealth
	}
	if err := db.WithContext(ctx).Raw(healthSQL, map[string]any{"ids": ids}).Scan(&rows).Error; err != nil {
		return fmt.Errorf("read endpoint health: %w", err)
	}
	byID := make(map[uuid.UUID]models.EndpointHealth, len(rows))
	for _, r := range rows {
		byID[r.ID] = r.EndpointHealth
	}
	for _, ep := range eps {
		h := byID[ep.ID]
		ep.Health = &h
	}
	return nil
}

// MinuteCounts is how long the minutes are kept: the health reads the last 24 hours of them, the
// console's overview the last 7 days (from the start of the day 6 days ago, in UTC).
const MinuteCounts = 8 * 24 * time.Hour

// PruneMinutes deletes the attempt counts of minutes neither the health nor the overview reads.
func PruneMinutes(ctx context.Context, db *gorm.DB) (int64, error) {
	r := db.WithContext(ctx).Exec(`DELETE FROM webhook_endpoint_minutes WHERE minute < ?`, time.Now().Add(-MinuteCounts))
	if r.Error != nil {
		return 0, fmt.Errorf("prune endpoint minutes: %w", r.Error)
	}
	return r.RowsAffected, nil
}

// foldMinutesSQL moves the counts of every row of an hour older than the health's 24 hours (and an
// hour more, for attempts written late) into the row of the hour's start, and deletes the others. An
// hour folded is one row an endpoint instead of sixty or more. Concurrent writers lose nothing: a
// row changed while the fold waits for it is deleted as changed, with its new counts; a count made
// after the fold deleted its minute's row (a re-fire of an old drop, an upsert) starts a new row of
// the minute, which the hour's sums add; two folds at once each move only the rows they deleted.
const foldMinutesSQL = `WITH gone AS (
	DELETE FROM webhook_endpoint_minutes m
	WHERE m.minute < date_trunc('hour', now() - interval '25 hours', 'UTC') AND m.minute <> date_trunc('hour', m.minute, 'UTC')
	RETURNING m.endpoint_id, m.org_id, date_trunc('hour', m.minute, 'UTC') AS hour,
		m.succeeded, m.failed, m.dropped, m.refired, m.dropped_refired)
INSERT INTO webhook_endpoint_minutes AS m (endpoint_id, org_id, minute, succeeded, failed, dropped, refired, dropped_refired)
SELECT endpoint_id, org_id, hour, sum(succeeded), sum(failed), sum(dropped), sum(refired), sum(dropped_refired)
FROM gone GROUP BY endpoint_id, org_id, hour
ON CONFLICT (endpoint_id, minute) DO UPDATE SET succeeded = m.succeeded + excluded.succeeded, failed = m.failed + excluded.failed,
	dropped = m.dropped + excluded.dropped, refired = m.refired + excluded.refired, dropped_refired = m.dropped_refired + excluded.dropped_refired`

// FoldMinutes folds the minutes only the overview's hourly charts still read into one row an hour
// and an endpoint (foldMinutesSQL), so that a chart of 7 days reads about 1,700 rows an endpoint
// rather than 10,000, and returns how many hours it folded. The retention job runs it hourly.
func FoldMinutes(ctx context.Context, db *gorm.DB) (int64, error) {
	r := db.WithContext(ctx).Exec(foldMinutesSQL)
	if r.Error != nil {
		return 0, fmt.Errorf("fold endpoint minutes into hours: %w", r.Error)
	}
	return r.RowsAffected, nil
}
