package activities

import (
	"context"

	"wds/internal/delivery"

	"github.com/google/uuid"
)

// EventStarter starts committed events' workflows at once; the relay starts them otherwise.
type EventStarter interface {
	StartEvents(ctx context.Context, eventIDs []uuid.UUID)
}

// autoDisable disables the endpoint for failing once it has failed for DisableAfter
// (DisableIfFailing), then starts the webhook.endpoint_disabled event it wrote. Called after a chain
// drops; running it again changes nothing.
func (a *Activities) autoDisable(ctx context.Context, endpointID uuid.UUID) error {
	if a.DisableAfter <= 0 {
		return nil
	}
	targeted, err := delivery.DisableIfFailing(ctx, a.DB, endpointID, a.DisableAfter, a.now())
	if err != nil {
		return err
	}
	if a.Events != nil {
		a.Events.StartEvents(ctx, targeted)
	}
	return nil
}
