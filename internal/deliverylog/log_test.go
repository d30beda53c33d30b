package deliverylog_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/deliverylog"
	"wds/internal/platform/paging"
	"wds/models"
	"wds/test/pgtest"
)

// logSeed is a million-row delivery log of one org beside another org's 200,000: four busy
// endpoints and one that received 10 attempts; four common event types and one with 20 attempts;
// 97 % succeeded, about 3 % failed and 0.1 % dropped; one attempt a second, newest first. The other
// org's rows are spread over the same time, a fifth as dense.
type logSeed struct {
	org, quiet, rareEndpoint uuid.UUID
	busy                     [4]uuid.UUID
	deep                     *paging.Cursor // a position 900,000 rows into the org's log
}

const rareType = "vendor.updated"

func seedLog(t *testing.T, db *gorm.DB) logSeed {
	t.Helper()
	s := logSeed{org: uuid.New(), quiet: uuid.New(), rareEndpoint: uuid.New()}
	for i := range s.busy {
		s.busy[i] = uuid.New()
	}
	fill := func(org uuid.UUID, eps []uuid.UUID, rare uuid.UUID, n int) {
		// Seeded rows need neither their events nor the outcome triggers: the plans are the point.
		err := db.Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec("SET LOCAL session_replication_role = replica; SET LOCAL statement_timeout = 0").Error; err != nil {
				return err
			}
			return tx.Exec(`INSERT INTO webhook_deliveries (id, org_id, event_id, endpoint_id, event_type, chain_id, workflow_id, attempt, status, attempted_at)
				SELECT gen_random_uuid(), @org, gen_random_uuid(),
					CASE WHEN i % 100000 = 3 THEN CAST(@rare AS uuid) ELSE (CAST(@eps AS uuid[]))[1 + i % 4] END,
					CASE WHEN i % 50000 = 7 THEN @rare_type ELSE (ARRAY['order.created','payment.recorded','order.shipped','client.updated'])[1 + (i / 7) % 4] END,
					gen_random_uuid(), 'webhook-event/x', 1,
					CASE WHEN i % 1001 = 0 THEN 'dropped' WHEN i % 37 = 0 THEN 'failed' ELSE 'succeeded' END,
					now() - i * @step * interval '1 second'
				FROM generate_series(1, @n) i`,
				map[string]any{"org": org, "eps": "{" + strings.Join(uuidStrings(eps), ",") + "}", "rare": rare, "rare_type": rareType,
					"n": n, "step": 1_000_000 / n}).Error
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	fill(s.org, s.busy[:], s.rareEndpoint, 1_000_000)
	fill(s.quiet, []uuid.UUID{uuid.New(), uuid.New(), uuid.New(), uuid.New()}, uuid.New(), 200_000)
	if err := db.Exec("ANALYZE webhook_deliveries").Error; err != nil {
		t.Fatal(err)
	}
	var deep struct {
		AttemptedAt time.Time
		ID          uuid.UUID
	}
	if err := db.Raw(`SELECT attempted_at, id FROM webhook_deliveries WHERE org_id = ?
		ORDER BY attempted_at DESC, id DESC OFFSET 900000 LIMIT 1`, s.org).Scan(&deep).Error; err != nil {
		t.Fatal(err)
	}
	s.deep = &paging.Cursor{At: deep.AttemptedAt, ID: deep.ID}
	return s
}

func uuidStrings(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

// Every filter the delivery log offers reads its page through an index of its own, at the start and
// 900,000 rows deep in a million-row log: the page's ranges (one per status, and for an endpoint
// alone one per status of each event type its log holds) give at most the page and one row more each, nothing is
// read to be thrown away by a filter, and only the page's rows are fetched. Before these indexes a
// rare status or type walked the org's history to the statement timeout, and a rare type on a busy
// endpoint walked the endpoint's.
func TestEveryDeliveryLogFilterReadsOnlyItsPage(t *testing.T) {
	db := pgtest.New(t)
	s := seedLog(t, db)
	since, until := time.Now().Add(-100*time.Hour), time.Now().Add(-50*time.Hour)
	busy, rare := s.busy[1], s.rareEndpoint
	const byEndpoint = "webhook_deliveries_endpoint_type"
	for _, c := range []struct {
		name  string
		f     deliverylog.LogFilter
		index string
	}{
		{"the org's log", deliverylog.LogFilter{}, "webhook_deliveries_org_status"},
		{"dropped", deliverylog.LogFilter{Status: models.StatusDropped}, "webhook_deliveries_org_status"},
		{"failed", deliverylog.LogFilter{Status: models.StatusFailed}, "webhook_deliveries_org_status"},
		{"succeeded", deliverylog.LogFilter{Status: models.StatusSucceeded}, "webhook_deliveries_org_status"},
		{"a window", deliverylog.LogFilter{Since: &since, Until: &until}, "webhook_deliveries_org_status"},
		{"a rare type", deliverylog.LogFilter{EventType: rareType}, "webhook_deliveries_org_type"},
		{"a common type", deliverylog.LogFilter{EventType: "order.shipped"}, "webhook_deliveries_org_type"},
		{"a type's drops", deliverylog.LogFilter{EventType: "payment.recorded", Status: models.StatusDropped}, "webhook_deliveries_org_type"},
		{"a busy endpoint", deliverylog.LogFilter{EndpointID: &busy}, byEndpoint},
		{"a rare endpoint", deliverylog.LogFilter{EndpointID: &rare}, byEndpoint},
		{"an endpoint's drops", deliverylog.LogFilter{EndpointID: &busy, Status: models.StatusDropped}, byEndpoint},
		{"an endpoint's failures in a window", deliverylog.LogFilter{EndpointID: &busy, Status: models.StatusFailed, Since: &since, Until: &until}, byEndpoint},
		{"a rare type on a busy endpoint", deliverylog.LogFilter{EndpointID: &s.busy[3], EventType: rareType}, byEndpoint},
		{"a type an endpoint never got", deliverylog.LogFilter{EndpointID: &busy, EventType: rareType}, byEndpoint},
		{"a common type on a busy endpoint", deliverylog.LogFilter{EndpointID: &busy, EventType: "order.shipped"}, byEndpoint},
		{"a type's drops on a busy endpoint", deliverylog.LogFilter{EndpointID: &busy, EventType: "client.updated", Status: models.StatusDropped}, byEndpoint},
		{"a type on a rare endpoint", deliverylog.LogFilter{EndpointID: &rare, EventType: "order.created"}, byEndpoint},
	} {
		for _, cursor := range []*paging.Cursor{nil, s.deep} {
			c.f.OrgID = s.org
			what := c.name + map[bool]string{true: " at the start", false: " deep"}[cursor == nil]
			types := endpointTypes(t, db, what, c.f)
			sql, args := deliverylog.LogPageSQL(c.f, types, 50, cursor)
			checkLogPageReadsItsRows(t, db, what, c.index, c.f, len(types), 50, sql, args)
		}
	}
}

// endpointTypes reads the event types of the endpoint of a filter of an endpoint alone, whose page
// reads one range per type and status, and checks that they cost a descent of the endpoint's index
// each.
func endpointTypes(t *testing.T, db *gorm.DB, what string, f deliverylog.LogFilter) []string {
	t.Helper()
	if f.EndpointID == nil || f.EventType != "" {
		return nil
	}
	types, err := deliverylog.EndpointTypes(context.Background(), db, *f.EndpointID)
	if err != nil {
		t.Fatal(err)
	}
	plan, text := pgtest.ExplainAnalyze(t, db, deliverylog.EndpointTypesSQL, map[string]any{"ep": *f.EndpointID})
	var read int64
	plan.Walk(func(n pgtest.PlanNode) {
		if n.Relation == "webhook_deliveries" {
			if !n.ReadsByOnly("webhook_deliveries_endpoint_type") {
				t.Errorf("%s: the endpoint's types read webhook_deliveries by %s %q:\n%s", what, n.NodeType, n.Index, text)
			}
			read += n.ActualRows * max(n.ActualLoops, 1)
		}
	})
	if read > int64(len(types)+1) {
		t.Errorf("%s: the endpoint's %d types read %d index entries, want one a type and one more:\n%s", what, len(types), read, text)
	}
	return types
}

func checkLogPageReadsItsRows(t *testing.T, db *gorm.DB, what, index string, f deliverylog.LogFilter, types, limit int, sql string, args []any) {
	t.Helper()
	plan, text := pgtest.ExplainAnalyze(t, db, sql, args...)
	ranges := int64(len(models.Recorded))
	if f.Status != "" {
		ranges = 1
	}
	if f.EndpointID != nil && f.EventType == "" {
		ranges *= int64(types)
	}
	var ranged, fetched int64
	plan.Walk(func(n pgtest.PlanNode) {
		if n.Relation != "webhook_deliveries" {
			return
		}
		rows := n.ActualRows * max(n.ActualLoops, 1)
		switch {
		case n.ReadsByOnly(index):
			ranged += rows
		case n.Index == "webhook_deliveries_pkey":
			fetched += rows
		default:
			t.Errorf("%s: reads webhook_deliveries by %s %q, removing %d rows by filter; want %s and no filter:\n%s",
				what, n.NodeType, n.Index, n.RemovedByFilter, index, text)
		}
	})
	t.Logf("%s: %d index entries read, %d rows fetched", what, ranged, fetched)
	if ranged > int64(limit+1)+ranges || fetched > int64(limit+1) {
		t.Errorf("%s: read %d index entries and fetched %d rows, want at most %d and %d:\n%s",
			what, ranged, fetched, int64(limit+1)+ranges, limit+1, text)
	}
}
