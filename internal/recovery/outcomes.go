// How a recovery's chains stand now, and the org's recoveries: what the support desk quotes after an
// outage is what was delivered, not only what was started.

package recovery

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/workspace"
	"wds/models"
)

// recoveryChainsSQL is each chain a recovery started (webhook_dispatches_recovery), with its event
// and its last attempt's status: succeeded, dropped, or failed with an attempt to come (no attempt
// yet: its workflow is about to make the first).
const recoveryChainsSQL = `SELECT p.recovery_id, p.chain_id, p.event_id, p.workflow_id, p.created_at, coalesce(l.status, '') AS status
	FROM webhook_dispatches p
	LEFT JOIN LATERAL (SELECT d.status FROM webhook_deliveries d WHERE d.chain_id = p.chain_id ORDER BY d.attempt DESC LIMIT 1) l ON true
	WHERE p.recovery_id IN @ids`

// RecoveryChain is one chain a recovery started and how it stands.
type RecoveryChain struct {
	ChainID    uuid.UUID
	EventID    uuid.UUID
	WorkflowID string
	CreatedAt  time.Time
	// Status is the last attempt's: succeeded, dropped, failed (retrying), or "" before the first.
	Status models.Status
}

// Retrying reports whether the chain still has an attempt to make.
func (c RecoveryChain) Retrying() bool {
	return c.Status != models.StatusSucceeded && c.Status != models.StatusDropped
}

// withOutcomes fills each recovery's Succeeded, Retrying and Dropped from its chains.
func withOutcomes(ctx context.Context, db *gorm.DB, recs ...*models.Recovery) error {
	if len(recs) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
	}
	var rows []struct {
		RecoveryID                   uuid.UUID
		Succeeded, Retrying, Dropped int
	}
	err := db.WithContext(ctx).Raw(`SELECT c.recovery_id, count(*) FILTER (WHERE c.status = @succeeded) AS succeeded,
			count(*) FILTER (WHERE c.status = @dropped) AS dropped,
			count(*) FILTER (WHERE c.status NOT IN (@succeeded, @dropped)) AS retrying
		FROM (`+recoveryChainsSQL+`) c GROUP BY c.recovery_id`,
		map[string]any{"ids": ids, "succeeded": models.StatusSucceeded, "dropped": models.StatusDropped}).Scan(&rows).Error
	if err != nil {
		return fmt.Errorf("count recovered chains: %w", err)
	}
	for _, r := range recs {
		for _, row := range rows {
			if row.RecoveryID == r.ID {
				r.Succeeded, r.Retrying, r.Dropped = row.Succeeded, row.Retrying, row.Dropped
			}
		}
	}
	return nil
}

// RecoveryChains are the chains the recovery started that did not succeed (dropped again, or still
// retrying), oldest first, at most limit: the ones support follows up. A nil actor is the
// database's own operator.
func (s *Service) RecoveryChains(ctx context.Context, id uuid.UUID, actorID *uuid.UUID, limit int) ([]RecoveryChain, error) {
	if _, err := s.Recovery(ctx, id, actorID); err != nil {
		return nil, err
	}
	var out []RecoveryChain
	err := s.DB.WithContext(ctx).Raw(`SELECT * FROM (`+recoveryChainsSQL+`) c WHERE c.status <> @succeeded ORDER BY c.created_at, c.chain_id LIMIT @n`,
		map[string]any{"ids": []uuid.UUID{id}, "succeeded": models.StatusSucceeded, "n": limit}).Scan(&out).Error
	if err != nil {
		return nil, fmt.Errorf("list recovered chains: %w", err)
	}
	return out, nil
}

// MaxRecoveriesListed is how many recoveries ListRecoveries answers at most.
const MaxRecoveriesListed = 100

// ListRecoveries is the org's recoveries, running first, then newest first, at most
// MaxRecoveriesListed, each with how its chains stand. The actor must be a member of the org.
func (s *Service) ListRecoveries(ctx context.Context, orgID, actorID uuid.UUID) ([]models.Recovery, error) {
	if err := workspace.RequireRole(ctx, s.DB, orgID, actorID, workspace.Anyone...); err != nil {
		return nil, err
	}
	recs := []models.Recovery{}
	err := s.DB.WithContext(ctx).Where("org_id = ?", orgID).
		Order("status = '" + models.RecoveryRunning + "' DESC, created_at DESC, id DESC").Limit(MaxRecoveriesListed).Find(&recs).Error
	if err != nil {
		return nil, fmt.Errorf("list recoveries: %w", err)
	}
	ptrs := make([]*models.Recovery, len(recs))
	for i := range recs {
		ptrs[i] = &recs[i]
	}
	return recs, withOutcomes(ctx, s.DB, ptrs...)
}

// RecoveriesOfChains names the recovery that started each of the given chain workflows, if one did.
func (s *Service) RecoveriesOfChains(ctx context.Context, workflowIDs []string) (map[string]uuid.UUID, error) {
	out := map[string]uuid.UUID{}
	if len(workflowIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		WorkflowID string
		RecoveryID uuid.UUID
	}
	err := s.DB.WithContext(ctx).Raw(`SELECT workflow_id, recovery_id FROM webhook_dispatches WHERE workflow_id IN ? AND recovery_id IS NOT NULL`,
		workflowIDs).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("find the chains' recoveries: %w", err)
	}
	for _, r := range rows {
		out[r.WorkflowID] = r.RecoveryID
	}
	return out, nil
}
