package workspace

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/google/uuid"
)

// auditNamesSQL names the ids an audit page mentions that are the org's orders (by number, what a
// customer quotes), payments and shipments (by their order), events (by type and order), keys of
// both kinds (by label and hint), vendors and clients (by name). Each branch reads rows by their key,
// the page's ids alone, never a count or a scan of history.
const auditNamesSQL = `
	SELECT id, 'order ' || number AS name FROM orders WHERE org_id = @org AND id IN @ids
	UNION ALL SELECT p.id, 'payment of order ' || o.number FROM payments p JOIN orders o ON o.id = p.order_id
		WHERE o.org_id = @org AND p.id IN @ids
	UNION ALL SELECT s.id, 'shipment of order ' || o.number FROM shipments s JOIN orders o ON o.id = s.order_id
		WHERE s.org_id = @org AND s.id IN @ids
	UNION ALL SELECT e.id, e.type || coalesce(' of order ' || o.number, '') FROM events e LEFT JOIN orders o ON o.id = e.order_id
		WHERE e.org_id = @org AND e.id IN @ids
	UNION ALL SELECT id, 'connector key ' || coalesce(nullif(label, '') || ' ', '') || '(' || key_hint || '…)'
		FROM integration_keys WHERE org_id = @org AND id IN @ids
	UNION ALL SELECT id, 'read key ' || coalesce(nullif(name, '') || ' ', '') || '(' || key_hint || '…)'
		FROM read_keys WHERE org_id = @org AND id IN @ids
	UNION ALL SELECT id, 'vendor ' || name FROM vendors WHERE org_id = @org AND id IN @ids
	UNION ALL SELECT id, 'client ' || coalesce(nullif(display_name, ''), email, '(no name)') FROM clients WHERE org_id = @org AND id IN @ids`

// AuditNames names, in one query, the ids of an audit page that are the org's orders, payments,
// shipments, events, keys, vendors or clients, so the console's audit log reads "order 1017" and
// "connector key Shop (pck_int_Xy9Z…)" instead of ids. Other ids (another org's too) are left out.
func (s *AuditLog) AuditNames(ctx context.Context, org uuid.UUID, ids map[uuid.UUID]bool) (map[uuid.UUID]string, error) {
	names := map[uuid.UUID]string{}
	if len(ids) == 0 {
		return names, nil
	}
	var found []struct {
		ID   uuid.UUID
		Name string
	}
	err := s.db.WithContext(ctx).Raw(auditNamesSQL, map[string]any{"org": org, "ids": slices.Collect(maps.Keys(ids))}).Find(&found).Error
	if err != nil {
		return nil, fmt.Errorf("names of an audit page's rows: %w", err)
	}
	for _, f := range found {
		names[f.ID] = f.Name
	}
	return names, nil
}
