package deliverylog

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// endpointTypesSQL lists the event types an endpoint's log holds, in order, by skipping from one
// type to the next in webhook_deliveries_endpoint_type (migration 00048): a descent of the index per
// type, however many attempts each has.
const endpointTypesSQL = `WITH RECURSIVE types(t) AS (
		(SELECT d.event_type FROM webhook_deliveries d WHERE d.endpoint_id = @ep ORDER BY d.event_type LIMIT 1)
		UNION ALL
		SELECT (SELECT d.event_type FROM webhook_deliveries d WHERE d.endpoint_id = @ep AND d.event_type > types.t
			ORDER BY d.event_type LIMIT 1)
		FROM types WHERE types.t IS NOT NULL)
	SELECT t FROM types WHERE t IS NOT NULL`

// EndpointTypes are the event types of the endpoint's attempts. The endpoint's index leads with the
// endpoint and then the type, so what reads an endpoint's log in time order or by status reads one
// range per type it holds: the types are read from the log itself, never assumed from a catalog, so
// no attempt of a type the catalog no longer (or does not yet) lists is passed over.
func EndpointTypes(ctx context.Context, db *gorm.DB, endpointID uuid.UUID) ([]string, error) {
	var types []string
	if err := db.WithContext(ctx).Raw(endpointTypesSQL, map[string]any{"ep": endpointID}).Scan(&types).Error; err != nil {
		return nil, fmt.Errorf("read the endpoint's event types: %w", err)
	}
	return types, nil
}
