package delivery

import (
	"context"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// Emit inserts one event and returns its id, whether or not an endpoint can receive it.
func Emit(ctx context.Context, tx *gorm.DB, orgID uuid.UUID, storeID *uuid.UUID, typ string, data any) (uuid.UUID, error) {
	ev, err := NewEvent(orgID, storeID, typ, data)
	if err != nil {
		return uuid.Nil, err
	}
	_, err = WriteEvents(ctx, tx, []PendingEvent{ev})
	return ev.ID, err
}

// EventsPageSQL is the support desk's page query, for the plan test.
func EventsPageSQL(q EventsQuery) (string, []any) { return eventsPageSQL(q) }
