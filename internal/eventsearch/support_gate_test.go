package eventsearch_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/eventsearch"
	"wds/internal/platform/database"
	"wds/test/pgtest"
)

// The support desk's event reads take a turn at the database as the Read API's pages do: with every
// turn taken (here the one turn, by a stuck reader), a search waits the turn wait and gives up with
// ErrBusy (503) rather than adding a statement beside it; with the turn back, it runs.
func TestEventSearchWaitsItsTurnAtTheDatabase(t *testing.T) {
	ctx, org := context.Background(), uuid.New()
	db, err := database.Open(ctx, pgtest.URL(t), nil, database.Concurrency(1), database.TurnWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = database.Close(db) })
	svc := eventsearch.NewService(db, nil, nil)
	release, err := database.Admit(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.ListEvents(ctx, eventsearch.EventsQuery{OrgID: org, Outcome: eventsearch.OutcomeDropped, Limit: 10}); !errors.Is(err, database.ErrBusy) {
		t.Fatalf("search with no turn free: %v, want ErrBusy", err)
	}
	if _, err := svc.Event(ctx, uuid.New(), nil); !errors.Is(err, database.ErrBusy) {
		t.Fatalf("an event's detail with no turn free: %v, want ErrBusy", err)
	}
	release()
	if _, err := svc.ListEvents(ctx, eventsearch.EventsQuery{OrgID: org, Outcome: eventsearch.OutcomeDropped, Limit: 10}); err != nil {
		t.Fatalf("search with the turn back: %v", err)
	}
}
