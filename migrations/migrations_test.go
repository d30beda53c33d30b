package migrations_test

import (
	"context"
	"testing"

	"wds/internal/platform/database"
	"wds/migrations"
	"wds/test/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestUpOnEmptyDatabaseThenNoOp(t *testing.T) {
	ctx := context.Background()
	db, err := database.Open(ctx, pgtest.ClusterURL(t, "empty_db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := db.DB()
	defer sqlDB.Close()

	pending, err := migrations.Pending(ctx, sqlDB)
	if err != nil || !pending {
		t.Fatalf("empty database: pending=%v err=%v, want pending", pending, err)
	}
	n, err := migrations.Up(ctx, sqlDB)
	if err != nil || n == 0 {
		t.Fatalf("first up: n=%d err=%v", n, err)
	}
	n, err = migrations.Up(ctx, sqlDB)
	if err != nil || n != 0 {
		t.Fatalf("second up must be a no-op: n=%d err=%v", n, err)
	}
	list, err := migrations.List(ctx, sqlDB)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if !s.Applied {
			t.Errorf("migration %d not applied", s.Version)
		}
	}
	if pending, _ := migrations.Pending(ctx, sqlDB); pending {
		t.Error("still pending after up")
	}
}
