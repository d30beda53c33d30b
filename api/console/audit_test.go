package console_test

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// The audit log reads as key/value lists, never Go's map syntax, with times to the second; an id it
// cannot name is cut to 8 characters, whole on hover.
func TestTheAuditLogShowsDetailsAsAPersonReadsThem(t *testing.T) {
	e := newEnv(t)
	chain := uuid.New()
	details := `{"chains": [{"chain_id": "` + chain.String() + `", "endpoint_id": "e1"}], "since": "2026-11-26T10:15:30.123456Z", "started": 12}`
	if err := e.db.Exec(`INSERT INTO audit_log (id, org_id, actor_id, action, target_type, target_id, details)
		VALUES (?, ?, NULL, 'event.resend', 'event', ?, ?::jsonb)`, uuid.New(), e.org.ID, uuid.New(), details).Error; err != nil {
		t.Fatal(err)
	}
	c, _ := e.signIn(e.ownerToken)
	_, page := e.do(c, "GET", "/console/audit", nil)
	if strings.Contains(page, "map[") {
		t.Errorf("the audit log shows Go's map syntax:\n%s", page)
	}
	for _, want := range []string{`<li title="chains: (chain_id: ` + chain.String() + `, endpoint_id: e1)">chains: (chain_id: ` + chain.String()[:8] + `…, endpoint_id: e1)</li>`,
		">since: 2026-11-26 10:15:30 UTC</li>", ">started: 12</li>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the audit log lacks %q:\n%s", want, page)
		}
	}
}

// The audit log names what it mentions: the actor by email, a store by its name, an endpoint by its
// URL (as target and in details, redacted as the log writes it), each linked to its page, and it
// resolves them in one query a page however many rows mention them.
func TestTheAuditLogNamesPeopleStoresAndEndpoints(t *testing.T) {
	e := newEnv(t)
	owner := e.userOf(e.ownerToken)
	var store uuid.UUID
	if err := e.db.Raw("SELECT id FROM stores WHERE org_id = ?", e.org.ID).Row().Scan(&store); err != nil {
		t.Fatal(err)
	}
	addRows := func(n int) {
		for range n {
			ep := uuid.New()
			if err := e.db.Exec(`INSERT INTO webhook_endpoints (id, org_id, url, event_types, secret_sealed, created_by)
				VALUES (?, ?, ?, '{order.created}', '\x00', ?)`, ep, e.org.ID, "https://r"+ep.String()[:8]+".example/hooks?token=s3cret", owner).Error; err != nil {
				t.Fatal(err)
			}
			if err := e.db.Exec(`INSERT INTO audit_log (id, org_id, actor_id, action, target_type, target_id, details)
				VALUES (?, ?, ?, 'webhook_endpoint.update', 'webhook_endpoint', ?, ?::jsonb)`, uuid.New(), e.org.ID, owner, ep,
				`{"endpoint_id": "`+ep.String()+`", "store_id": "`+store.String()+`"}`).Error; err != nil {
				t.Fatal(err)
			}
		}
	}
	c, _ := e.signIn(e.ownerToken)
	queries := func() int {
		var n atomic.Int64
		name := "count-" + uuid.NewString()
		count := func(*gorm.DB) { n.Add(1) }
		e.db.Callback().Raw().After("gorm:raw").Register(name, count)
		e.db.Callback().Query().After("gorm:query").Register(name, count)
		defer func() {
			e.db.Callback().Raw().Remove(name)
			e.db.Callback().Query().Remove(name)
		}()
		e.do(c, "GET", "/console/audit", nil)
		return int(n.Load())
	}
	addRows(1)
	one := queries()
	addRows(20)
	if many := queries(); many != one {
		t.Errorf("the audit page ran %d queries over 1 row and %d over 21: names are resolved per row", one, many)
	}
	_, page := e.do(c, "GET", "/console/audit", nil)
	for _, want := range []string{`<td class="actor">o@acme.test</td>`, ">store: Main</li>", ">endpoint: https://r", `.example/hooks</li>`,
		`<td class="target"><a href="/console/webhooks/`} {
		if !strings.Contains(page, want) {
			t.Errorf("the audit log lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "s3cret") || strings.Contains(page, "store_id") || strings.Contains(page, store.String()) {
		t.Errorf("the audit log shows a URL's token or a store's id:\n%s", page)
	}
}
