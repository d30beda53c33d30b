package deliverylog

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"wds/models"
)

// ChainFate is how a chain stands now, for a page that shows one of its earlier attempts: its latest
// attempt and, when that one dropped and was re-fired (by hand or by a recovery), the new chain.
type ChainFate struct {
	ChainID           uuid.UUID
	Status            models.Status // the latest attempt's
	Attempt           int           // the latest attempt's number
	RefiredChainID    *uuid.UUID
	RefiredWorkflowID *string
}

// ChainFates reads how the chains of the org's attempts stand now, by chain. It reads the attempts'
// events' rows alone (webhook_deliveries_event), so it costs what the page shows.
func (s *Service) ChainFates(ctx context.Context, orgID uuid.UUID, attempts []models.Delivery) (map[uuid.UUID]ChainFate, error) {
	out := map[uuid.UUID]ChainFate{}
	if len(attempts) == 0 {
		return out, nil
	}
	var eventIDs, chainIDs []uuid.UUID
	for _, a := range attempts {
		eventIDs, chainIDs = append(eventIDs, a.EventID), append(chainIDs, a.ChainID)
	}
	var fates []ChainFate
	err := s.db.WithContext(ctx).Raw(`SELECT d.chain_id, (array_agg(d.status ORDER BY d.attempt DESC))[1] AS status,
			max(d.attempt) AS attempt,
			(array_agg(r.chain_id ORDER BY d.attempt DESC) FILTER (WHERE r.id IS NOT NULL))[1] AS refired_chain_id,
			(array_agg(r.workflow_id ORDER BY d.attempt DESC) FILTER (WHERE r.id IS NOT NULL))[1] AS refired_workflow_id
		FROM webhook_deliveries d LEFT JOIN webhook_dispatches r ON r.refired_delivery_id = d.id
		WHERE d.org_id = ? AND d.event_id IN ? AND d.chain_id IN ?
		GROUP BY d.chain_id`, orgID, eventIDs, chainIDs).Scan(&fates).Error
	if err != nil {
		return nil, fmt.Errorf("read how the chains stand: %w", err)
	}
	for _, f := range fates {
		out[f.ChainID] = f
	}
	return out, nil
}
