package database_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"wds/internal/platform/database"
	"wds/test/pgtest"
)

// heldTransaction runs fn in a GORM transaction begun on a connection held from db, as ingest does.
func heldTransaction(ctx context.Context, db *gorm.DB, fn func(tx *gorm.DB) error) (err error) {
	h, err := database.Hold(ctx, db)
	if err != nil {
		return err
	}
	defer func() { h.End(err) }()
	return h.DB.Transaction(fn)
}

// rowsOf counts the rows of the test's table.
func rowsOf(t *testing.T, db *gorm.DB) (n int64) {
	t.Helper()
	if err := db.Raw(`SELECT count(*) FROM held`).Scan(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

func heldDB(t *testing.T) *gorm.DB {
	t.Helper()
	db := openWith(t, pgtest.URL(t))
	if err := db.Exec(`CREATE TABLE held (id int PRIMARY KEY)`).Error; err != nil {
		t.Fatal(err)
	}
	return db
}

// insertAtCommit has the transaction insert id with its COMMIT and says when that insert answered.
func insertAtCommit(t *testing.T, tx *gorm.DB, id int, answered *bool) {
	t.Helper()
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO held VALUES ($1)`, id)
	err := database.SendAtCommit(tx, b, func(r pgx.BatchResults) error {
		_, err := r.Exec()
		*answered = err == nil
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A batch, a GORM statement and the batch sent with the commit are one transaction, whether the
// transaction's BEGIN went with a batch or alone before a statement.
func TestATransactionOnAHeldConnectionIsOneTransaction(t *testing.T) {
	db := heldDB(t)
	ctx := context.Background()
	txid := func(tx *gorm.DB) (batch, statement int64) {
		b := &pgx.Batch{}
		b.Queue(`SELECT txid_current()`)
		if err := database.Send(tx, b, func(r pgx.BatchResults) error { return r.QueryRow().Scan(&batch) }); err != nil {
			t.Fatal(err)
		}
		if err := tx.Raw(`SELECT txid_current()`).Scan(&statement).Error; err != nil {
			t.Fatal(err)
		}
		return batch, statement
	}
	for i, statementFirst := range []bool{false, true} {
		var answered bool
		err := heldTransaction(ctx, db, func(tx *gorm.DB) error {
			if statementFirst {
				if err := tx.Exec(`INSERT INTO held VALUES (100)`).Error; err != nil {
					return err
				}
			}
			if batch, statement := txid(tx); batch != statement {
				t.Errorf("statement first %v: the batch ran in transaction %d, the statement in %d", statementFirst, batch, statement)
			}
			insertAtCommit(t, tx, i+1, &answered)
			return nil
		})
		if err != nil || !answered {
			t.Fatalf("statement first %v: err = %v, insert at commit answered %v", statementFirst, err, answered)
		}
	}
	if n := rowsOf(t, db); n != 3 {
		t.Fatalf("%d rows, want 3", n)
	}
}

// A transaction whose function fails sends nothing of its batch for the commit, and what it wrote
// is rolled back.
func TestARefusedTransactionOnAHeldConnectionLeavesNothing(t *testing.T) {
	db := heldDB(t)
	refused := errors.New("refused")
	var answered bool
	err := heldTransaction(context.Background(), db, func(tx *gorm.DB) error {
		if err := tx.Exec(`INSERT INTO held VALUES (1)`).Error; err != nil {
			return err
		}
		insertAtCommit(t, tx, 2, &answered)
		return refused
	})
	if !errors.Is(err, refused) || answered {
		t.Fatalf("err = %v, insert at commit answered %v; want the function's error and no insert", err, answered)
	}
	if n := rowsOf(t, db); n != 0 {
		t.Fatalf("%d rows left", n)
	}
}

// A failure of the batch sent with the commit fails the commit, and the transaction is rolled back.
func TestAFailedBatchAtCommitRollsBack(t *testing.T) {
	db := heldDB(t)
	var answered bool
	err := heldTransaction(context.Background(), db, func(tx *gorm.DB) error {
		if err := tx.Exec(`INSERT INTO held VALUES (1)`).Error; err != nil {
			return err
		}
		insertAtCommit(t, tx, 1, &answered) // a duplicate key
		return nil
	})
	if err == nil || answered {
		t.Fatalf("err = %v, insert at commit answered %v; want the duplicate key's error", err, answered)
	}
	if n := rowsOf(t, db); n != 0 {
		t.Fatalf("%d rows left", n)
	}
}

// A held connection is another connection than a transaction's: holding one from inside a
// transaction is refused, and batches are sent only inside a transaction begun on a held one.
func TestBatchesGoOnlyInATransactionOfAHeldConnection(t *testing.T) {
	db := heldDB(t)
	ctx := context.Background()
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := database.Hold(ctx, tx); err == nil {
			t.Error("a transaction's handle was held")
		}
		b := &pgx.Batch{}
		b.Queue(`SELECT 1`)
		if err := database.Send(tx, b, func(pgx.BatchResults) error { return nil }); err == nil {
			t.Error("a batch was sent in a transaction of the pool")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
