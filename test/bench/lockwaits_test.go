package bench

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"gorm.io/gorm"

	"wds/internal/dev/pgcluster"
	"wds/internal/platform/database"
)

// TestLockWatchSeesARowLockWait: on a real PostgreSQL, an attempt's update that waits 100 ms for
// another transaction's update of the same row is logged once, with its relation, and sets the p99
// of one attempt; among 200 attempts the one wait leaves the p99 under the floor. Another
// statement's wait is counted apart; a statement that waits for no one is not counted, nor are the
// waits of another database.
func TestLockWatchSeesARowLockWait(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// PostgreSQL runs as the postgres user when we are root: it must be able to enter the directory.
	if err := os.Chmod(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := pgcluster.Start(ctx, pgcluster.Options{Dir: dir, Settings: lockSettings})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	db, err := database.Open(ctx, c.URL("postgres"), quietLog())
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	if err := db.Exec(`CREATE TABLE webhook_deliveries (id int PRIMARY KEY, n int); INSERT INTO webhook_deliveries VALUES (1, 0);
		CREATE TABLE events (id int PRIMARY KEY, n int); INSERT INTO events VALUES (1, 0)`).Error; err != nil {
		t.Fatal(err)
	}
	w, err := watchLocks(ctx, db, c.LogFile())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.begin(); err != nil {
		t.Fatal(err)
	}
	waitBehind(t, db, "webhook_deliveries")
	waitBehind(t, db, "events") // what the relay's mark waits on, say: not an attempt's statement
	if err := db.Exec("UPDATE webhook_deliveries SET n = n + 1 WHERE id = 1").Error; err != nil {
		t.Fatal(err)
	}
	one, err := w.stop(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if one.Over != 1 || one.ByRelation["webhook_deliveries"] != 1 || one.P99Ms < 50 || one.MaxMs != one.P99Ms ||
		one.Others["UPDATE events SET n = n + 1 WHERE id = 1"] != 1 {
		t.Fatalf("one attempt that waited 100 ms: %+v", one)
	}
	many, err := readLockWaits(c.LogFile(), w.offset, "postgres", 200)
	if err != nil {
		t.Fatal(err)
	}
	if many.Over != 1 || many.P99Ms != many.FloorMs || many.MaxMs != one.MaxMs {
		t.Fatalf("one wait among 200 attempts: %+v", many)
	}
	if other, err := readLockWaits(c.LogFile(), w.offset, "wds", 1); err != nil || other.Over != 0 {
		t.Fatalf("another database's waits: %+v, %v; want none", other, err)
	}
}

// waitBehind has an update of row 1 of table wait about 100 ms behind another transaction's.
func waitBehind(t *testing.T, db *gorm.DB, table string) {
	t.Helper()
	update := "UPDATE " + table + " SET n = n + 1 WHERE id = 1"
	holder := db.Begin()
	defer holder.Rollback()
	if err := holder.Exec(update).Error; err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		// On a connection of its own, which reads the lowered deadlock_timeout after its first statement.
		waited <- db.Connection(func(c *gorm.DB) error {
			if err := c.Exec("SELECT 1").Error; err != nil {
				return err
			}
			return c.Exec(update).Error
		})
	}()
	for waiting := 0; waiting == 0; time.Sleep(10 * time.Millisecond) {
		if err := db.Raw("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'").Scan(&waiting).Error; err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if err := holder.Commit().Error; err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
}
