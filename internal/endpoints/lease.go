package endpoints

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/egress"
	"wds/internal/platform/problem"
	"wds/internal/workspace"
)

// LeaseTTL is how long an endpoint on a lease (one `wds listen` registered) lives after its last
// renewal. Its listener renews it every LeaseTTL/12 while it runs; one that crashed stops, and an
// hour later the endpoint is deleted by the first of: the org's next check of MaxEnabledPerOrg
// (roomForOneMore), so it no longer takes a slot, or the worker's next Prune.
const LeaseTTL = time.Hour

// Renew puts a live endpoint on a lease, or extends it, to LeaseTTL from now.
func (s *Service) Renew(ctx context.Context, id uuid.UUID) error {
	r := s.DB.WithContext(ctx).Exec(`UPDATE webhook_endpoints SET lease_until = clock_timestamp() + make_interval(secs => ?)
		WHERE id = ? AND deleted_at IS NULL`, LeaseTTL.Seconds(), id)
	if r.Error != nil {
		return fmt.Errorf("renew endpoint lease: %w", r.Error)
	}
	if r.RowsAffected == 0 {
		return problem.Fail(problem.NotFound, "endpoint %s not found", id)
	}
	return nil
}

// ExpireLeases deletes every endpoint whose lease has ended (the worker's prune runs it): their
// listener is gone, so no one is left to delete them.
func ExpireLeases(ctx context.Context, db *gorm.DB) (int64, error) {
	var n int64
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		ended, err := expireLeases(ctx, tx, uuid.Nil)
		n = int64(len(ended))
		return err
	})
	return n, err
}

// expireLeases deletes the endpoints of org (every org when uuid.Nil) whose lease has ended, as of its
// end, audits each with no actor (the service did it), and returns their ids. Chains still running
// to them stop at their next attempt, as on a delete. An endpoint another transaction holds is left
// for the next call, so this never waits on one, nor deadlocks with a change of it.
func expireLeases(ctx context.Context, tx *gorm.DB, org uuid.UUID) ([]uuid.UUID, error) {
	var ended []struct {
		ID, OrgID  uuid.UUID
		URL        string
		LeaseUntil time.Time
	}
	err := tx.WithContext(ctx).Raw(`WITH ended AS (
			SELECT id FROM webhook_endpoints WHERE lease_until <= clock_timestamp() AND deleted_at IS NULL
				AND (@org = '00000000-0000-0000-0000-000000000000'::uuid OR org_id = @org)
			ORDER BY id FOR UPDATE SKIP LOCKED)
		UPDATE webhook_endpoints w SET enabled = false, deleted_at = w.lease_until FROM ended WHERE w.id = ended.id
		RETURNING w.id, w.org_id, w.url, w.lease_until`, map[string]any{"org": org}).Scan(&ended).Error
	if err != nil {
		return nil, fmt.Errorf("expire ended leases: %w", err)
	}
	ids := make([]uuid.UUID, len(ended))
	for i, e := range ended {
		ids[i] = e.ID
		err := workspace.AuditAct(ctx, tx, workspace.Act{OrgID: e.OrgID, Action: "endpoint.lease_ended",
			TargetType: "webhook_endpoint", TargetID: e.ID,
			Details: map[string]any{"url": egress.RedactURL(e.URL), "lease_until": e.LeaseUntil}})
		if err != nil {
			return nil, err
		}
	}
	return ids, nil
}
