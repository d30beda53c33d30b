package deliverylog_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/deliverylog"
	"wds/internal/platform/paging"
	"wds/test/pgtest"
)

// An endpoint's log, read alone, merges the ranges of every event type its attempts hold, whatever
// the catalog lists, and every status, into one newest-first order: paged three at a time it shows
// each attempt once, in time order, and an endpoint with no attempts shows none.
func TestAnEndpointsLogMergesEveryTypeItHolds(t *testing.T) {
	db := pgtest.New(t)
	org, ep, empty := uuid.New(), uuid.New(), uuid.New()
	start := time.Now().UTC().Truncate(time.Second)
	var want []uuid.UUID // newest first
	err := db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("SET LOCAL session_replication_role = replica").Error; err != nil {
			return err
		}
		types := []string{"order.created", "webhook.test", "order.retired_type", "client.updated"}
		statuses := []string{"succeeded", "failed", "dropped"}
		for i := range 13 {
			id := uuid.New()
			want = append(want, id)
			err := tx.Exec(`INSERT INTO webhook_deliveries (id, org_id, event_id, endpoint_id, event_type, chain_id, workflow_id, attempt, status, attempted_at)
				VALUES (?, ?, ?, ?, ?, ?, 'w', 1, ?, ?)`, id, org, uuid.New(), ep, types[i%len(types)], uuid.New(),
				statuses[i%len(statuses)], start.Add(-time.Duration(i)*time.Minute)).Error
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []uuid.UUID
	var cur *paging.Cursor
	for {
		rows, next, err := deliverylog.LogPage(t.Context(), db, deliverylog.LogFilter{EndpointID: &ep}, 3, cur)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			got = append(got, r.ID)
		}
		if next == nil {
			break
		}
		cur = next
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the endpoint's pages hold %v, want %v", got, want)
	}
	rows, next, err := deliverylog.LogPage(t.Context(), db, deliverylog.LogFilter{EndpointID: &empty}, 3, nil)
	if err != nil || len(rows) != 0 || next != nil {
		t.Fatalf("an endpoint without attempts: %d rows, next %v, %v", len(rows), next, err)
	}
}
