package console_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

// The audit log reads as key/value lists, never Go's map syntax, with times to the second.
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
	for _, want := range []string{"chains: (chain_id: " + chain.String() + ", endpoint_id: e1)", "since: 2026-11-26 10:15:30;", "started: 12;"} {
		if !strings.Contains(page, want) {
			t.Errorf("the audit log lacks %q:\n%s", want, page)
		}
	}
}
