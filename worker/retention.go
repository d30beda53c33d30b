package worker

import (
	"context"
	"fmt"
	"strings"
	"time"

	"gorm.io/gorm"

	"wds/internal/delivery"
	"wds/internal/endpoints"
	"wds/models"
)

// MinRetention is the shortest retention Prune accepts: far longer than any chain's ladder (ten
// attempts span about 50 hours), so no running workflow loses the event body or the rows it writes.
const MinRetention = 7 * 24 * time.Hour

// Pruned counts what one Prune deleted.
type Pruned struct {
	Deliveries int64 `json:"deliveries"`
	Dispatches int64 `json:"dispatches"`
	Events     int64 `json:"events"`
	// Secrets counts previous signing secrets cleared because their rotation's grace had ended.
	Secrets int64 `json:"secrets"`
	// Expired counts endpoints deleted because their lease (endpoints.LeaseTTL) had ended.
	Expired int64 `json:"expired"`
}

// Prune deletes delivery rows attempted before cutoff, started re-fire and test dispatches queued
// before it, and events created before it that nothing refers to any more (no delivery row, no
// dispatch): the log and the outbox would otherwise grow forever. It works in batches of at most
// batch rows, each its own short statement, so it never holds many locks at once. It also clears
// previous signing secrets whose rotation's grace has ended, deletes endpoints whose lease has
// ended and the endpoints' attempt counts of minutes older than a day, whatever the cutoff.
func Prune(ctx context.Context, db *gorm.DB, cutoff time.Time, batch int) (Pruned, error) {
	var p Pruned
	steps := []struct {
		n    *int64
		sql  string
		args []any
	}{
		// The log has no index on time alone (each filter's index leads with the org, migration
		// 00033): each org's oldest rows of each status are one range of webhook_deliveries_org_status.
		{&p.Deliveries, `DELETE FROM webhook_deliveries WHERE id IN (
			SELECT d.id FROM orgs o CROSS JOIN unnest(CAST(? AS text[])) s(status) CROSS JOIN LATERAL (
				SELECT x.id FROM webhook_deliveries x WHERE x.org_id = o.id AND x.status = s.status AND x.attempted_at < ?
				ORDER BY x.attempted_at LIMIT ?) d
			LIMIT ?)`, []any{recorded(), cutoff, batch, batch}},
		{&p.Dispatches, `DELETE FROM webhook_dispatches WHERE id IN (
			SELECT id FROM webhook_dispatches WHERE created_at < ? AND dispatched_at IS NOT NULL
			ORDER BY created_at LIMIT ?)`, []any{cutoff, batch}},
		{&p.Events, `WITH doomed AS (
			SELECT e.id FROM events e WHERE e.created_at < ? AND e.dispatched_at IS NOT NULL
				AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)
				AND NOT EXISTS (SELECT 1 FROM webhook_dispatches q WHERE q.event_id = e.id)
			ORDER BY e.created_at LIMIT ? FOR UPDATE SKIP LOCKED),
		counters AS (DELETE FROM webhook_refire_counters WHERE event_id IN (SELECT id FROM doomed))
		DELETE FROM events WHERE id IN (SELECT id FROM doomed)`, []any{cutoff, batch}},
	}
	for _, s := range steps {
		for {
			r := db.WithContext(ctx).Exec(s.sql, s.args...)
			if r.Error != nil {
				return p, fmt.Errorf("prune: %w", r.Error)
			}
			*s.n += r.RowsAffected
			if r.RowsAffected < int64(batch) {
				break
			}
		}
	}
	// A rotation's previous secret signs nothing once its grace has ended (the Deliver activity reads it only
	// before previous_secret_until); a sealed copy kept beyond that would only outlive its use.
	r := db.WithContext(ctx).Exec(`UPDATE webhook_endpoints SET previous_secret_sealed = NULL, previous_secret_until = NULL
		WHERE previous_secret_until <= clock_timestamp()`)
	if r.Error != nil {
		return p, fmt.Errorf("prune: clear previous secrets: %w", r.Error)
	}
	p.Secrets = r.RowsAffected
	var err error
	if _, err = delivery.PruneMinutes(ctx, db); err != nil {
		return p, fmt.Errorf("prune: %w", err)
	}
	if p.Expired, err = endpoints.ExpireLeases(ctx, db); err != nil {
		return p, fmt.Errorf("prune: expire leased endpoints: %w", err)
	}
	return p, nil
}

// recorded is the statuses a delivery row holds, as a PostgreSQL array literal.
func recorded() string {
	out := make([]string, len(models.Recorded))
	for i, st := range models.Recorded {
		out[i] = string(st)
	}
	return "{" + strings.Join(out, ",") + "}"
}
