package apikeys_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"gorm.io/gorm"

	"wds/internal/apikeys"
	"wds/internal/platform/database"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
	"wds/test/pgtest"
)

// A flood of made-up keys cannot take the pool: what cannot be a key is refused without a query,
// and a well-formed unknown key waits its turn at the database like any transaction.
func TestKeyLookupsAreGatedAndMalformedKeysCostNothing(t *testing.T) {
	db, err := database.Open(context.Background(), pgtest.URL(t), nil, database.Concurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = database.Close(db) })
	// Hold the only turn.
	begun, done := make(chan struct{}), make(chan struct{})
	go db.Transaction(func(tx *gorm.DB) error { close(begun); <-done; return nil })
	<-begun
	defer close(done)

	wellFormed, _, _ := secrets.NewAPIKey(apikeys.ReadKeyPrefix)
	for _, malformed := range []string{"pck_live_short", "pck_live_" + wellFormed[9:] + "x", "pck_live_" + wellFormed[10:] + "*"} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if _, err := apikeys.NewService(db, nil).AuthenticateRead(ctx, malformed, time.Now()); !errors.Is(err, apikeys.ErrInvalidAPIKey) {
			t.Errorf("%q: %v, want invalid_api_key at once", malformed, err)
		}
		cancel()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := apikeys.NewService(db, nil).AuthenticateRead(ctx, wellFormed, time.Now()); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("well-formed key while the turn is taken: %v, want it to wait its turn", err)
	}
	intKey, _, _ := secrets.NewAPIKey(apikeys.IntegrationKeyPrefix)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	if _, err := apikeys.NewService(db, nil).AuthenticateIntegration(ctx2, intKey, time.Now()); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("integration key while the turn is taken: %v, want it to wait its turn", err)
	}
	token, _, _ := secrets.NewAPIKey(workspace.OperatorTokenPrefix)
	ctx3, cancel3 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel3()
	if _, err := workspace.NewService(db).UserByToken(ctx3, token); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("operator token while the turn is taken: %v, want it to wait its turn", err)
	}
}
