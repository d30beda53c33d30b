package main

import (
	"context"
	"testing"

	"github.com/sirupsen/logrus"

	"wds/internal/platform/config"
	"wds/test/pgtest"
)

// The demo workspace holds a few pages of vendors, orders and clients at the README's limit=5, so a
// newcomer can follow next_cursor on a fresh start; a second start reads the same workspace back.
func TestDemoWorkspaceHasPagesToWalk(t *testing.T) {
	db := pgtest.New(t)
	dir := t.TempDir()
	svc := newServices(&config.Config{}, db, nil, nil, logrus.New())
	d, err := ensureDemo(context.Background(), svc, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"vendors", "orders", "clients"} {
		var n int64
		if err := db.Table(table).Where("org_id = ?", d.OrgID).Count(&n).Error; err != nil {
			t.Fatal(err)
		}
		if n != demoRows {
			t.Errorf("%s: %d rows, want %d", table, n, demoRows)
		}
	}
	var paid int64
	if err := db.Table("orders").Where("org_id = ? AND status = 'paid'", d.OrgID).Count(&paid).Error; err != nil {
		t.Fatal(err)
	}
	if paid != demoRows {
		t.Errorf("%d paid demo orders, want %d", paid, demoRows)
	}
	again, err := ensureDemo(context.Background(), svc, dir)
	if err != nil || *again != *d {
		t.Fatalf("second start: %v, %+v want %+v", err, again, d)
	}
}
