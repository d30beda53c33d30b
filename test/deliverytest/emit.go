package deliverytest

import (
	"context"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/outbox"
)

// Emit inserts one event and returns its id, whether or not an endpoint can receive it.
func Emit(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, storeID *uuid.UUID, typ string, data any) (uuid.UUID, error) {
	ev, err := outbox.NewEvent(orgID, storeID, typ, data)
	if err != nil {
		return uuid.Nil, err
	}
	_, err = outbox.WriteEvents(ctx, tx, []outbox.PendingEvent{ev})
	return ev.ID, err
}
