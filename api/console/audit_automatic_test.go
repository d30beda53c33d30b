package console_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/endpoints"
	"wds/models"
)

// TestTheAuditLogShowsTheServicesOwnActionsAsAutomatic: what the service did by itself (here a
// `wds listen` endpoint deleted when its lease ended) has no actor, and the audit page says
// "wds (automatic)" for it, with the endpoint's URL redacted.
func TestTheAuditLogShowsTheServicesOwnActionsAsAutomatic(t *testing.T) {
	e := newEnv(t)
	var owner models.User
	e.db.Raw("SELECT u.* FROM users u JOIN memberships m ON m.user_id = u.id WHERE m.org_id = ? AND m.role = 'owner'", e.org.ID).Scan(&owner)
	ended := time.Now().Add(-time.Minute)
	ep := models.Endpoint{ID: uuid.New(), OrgID: e.org.ID, URL: "https://receiver.example/hooks?token=lease-secret", EventTypes: models.TextArray{"order.created"},
		SecretSealed: []byte("x"), Enabled: true, MaxAttempts: 1, CreatedBy: owner.ID, LeaseUntil: &ended}
	if err := e.db.Create(&ep).Error; err != nil {
		t.Fatal(err)
	}
	if n, err := endpoints.ExpireLeases(context.Background(), e.db); err != nil || n != 1 {
		t.Fatalf("expired %d: %v", n, err)
	}
	c, _ := e.signIn(e.ownerToken)
	res, page := e.do(c, "GET", "/console/audit", nil)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `<td class="actor">wds (automatic)</td><td>endpoint.lease_ended</td>`) ||
		!strings.Contains(page, ">url: https://receiver.example/hooks</li>") || strings.Contains(page, "lease-secret") {
		t.Fatalf("audit page: %d\n%s", res.StatusCode, page)
	}
}
