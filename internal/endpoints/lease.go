package endpoints

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"wds/internal/platform/problem"
)

// LeaseTTL is how long an endpoint on a lease (one `wds listen` registered) lives after its last
// renewal. Its listener renews it every LeaseTTL/12 while it runs; one that crashed stops, and an
// hour later the endpoint no longer counts against the org's MaxEnabledPerOrg (roomForOneMore) and
// the next Prune deletes it.
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

// liveLease is the SQL condition of an endpoint that is not on an ended lease.
const liveLease = "(lease_until IS NULL OR lease_until > clock_timestamp())"

// ExpireLeases deletes the endpoints whose lease has ended, as of its end. Their listener is gone, so
// no one is left to delete them; chains still running to them stop as on a delete.
const ExpireLeases = `UPDATE webhook_endpoints SET enabled = false, deleted_at = lease_until
	WHERE lease_until <= clock_timestamp() AND deleted_at IS NULL`
