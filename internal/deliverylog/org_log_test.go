package deliverylog

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/paging"
	"wds/test/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// seedDeliveries fills the delivery log of several orgs so the planner faces a table where a
// sequential scan plus sort would be a real choice.
func seedDeliveries(t *testing.T, db *gorm.DB, perOrg int) []uuid.UUID {
	t.Helper()
	var orgs []uuid.UUID
	for range 4 {
		org, user, ev, ep := uuid.New(), uuid.New(), uuid.New(), uuid.New()
		orgs = append(orgs, org)
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{"INSERT INTO orgs (id, name) VALUES (?, 'o')", []any{org}},
			{"INSERT INTO users (id, email, token_hash) VALUES (?, ?, ?)", []any{user, user.String() + "@x.test", []byte(user.String())}},
			{"INSERT INTO events (id, org_id, type, body) VALUES (?, ?, 'order.created', '{}')", []any{ev, org}},
			{`INSERT INTO webhook_endpoints (id, org_id, url, event_types, secret_sealed, created_by)
				VALUES (?, ?, 'https://r.example/', '{order.created}', '\x00', ?)`, []any{ep, org, user}},
			{`INSERT INTO webhook_deliveries (id, org_id, event_id, endpoint_id, event_type, chain_id, workflow_id, attempt, status, attempted_at)
				SELECT gen_random_uuid(), ?, ?, ?, 'order.created', gen_random_uuid(), 'w', 1,
					(ARRAY['succeeded','failed','dropped'])[1 + g % 3], now() - g * interval '1 second'
				FROM generate_series(1, ?) g`, []any{org, ev, ep, perOrg}},
		} {
			if err := db.Exec(q.sql, q.args...).Error; err != nil {
				t.Fatal(err)
			}
		}
	}
	db.Exec("ANALYZE")
	return orgs
}

// A page of the org's delivery log ends before the attempt that would take it past 4 MB of JSON
// (receivers' answers are kept up to 64 KiB each), with the cursor of its last row.
func TestOrgDeliveryPagesAreBoundedBySize(t *testing.T) {
	db := pgtest.New(t)
	orgs := seedDeliveries(t, db, 200)
	if err := db.Exec(`UPDATE webhook_deliveries SET response_excerpt = repeat('x', 65536)`).Error; err != nil {
		t.Fatal(err)
	}
	rows, next, err := LogPage(context.Background(), db, LogFilter{OrgID: orgs[0]}, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(paging.Page[LogRow]{Rows: rows, NextCursor: next})
	if len(rows) == 0 || len(rows) >= 100 || len(body) > paging.MaxPageBytes || next == nil {
		t.Fatalf("a page of %d rows, %d bytes, next %v: want fewer than 100 rows within %d bytes and a cursor",
			len(rows), len(body), next, paging.MaxPageBytes)
	}
}
