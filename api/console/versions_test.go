package console_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"wds/api/console"
	"wds/internal/versions"
)

// A Temporal that does not answer leaves the overview whole: an owner reads that the worker versions
// cannot be shown now, within the page's wait, and a member, who is never shown them, reads nothing.
func TestTheOverviewRendersWhenTemporalIsUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there any more
	tc, err := client.NewLazyClient(client.Options{HostPort: addr})
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	e := newEnv(t, func(c *console.Console) { c.Versions = versions.Deployments{Temporal: tc, Name: "wds"} })

	c, _ := e.signIn(e.ownerToken)
	start := time.Now()
	res, page := e.do(c, "GET", "/console/", nil)
	if res.StatusCode != 200 || !strings.Contains(page, "enabled webhook endpoints") || !strings.Contains(page, `id="versions-unreadable"`) {
		t.Fatalf("the owner's overview with Temporal away: %d\n%s", res.StatusCode, page)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the overview waited %s for Temporal", took)
	}
	m, _ := e.signIn(e.memberToken)
	if _, page := e.do(m, "GET", "/console/", nil); strings.Contains(page, "Worker versions") || !strings.Contains(page, "Overview") {
		t.Errorf("a member's overview:\n%s", page)
	}
}
