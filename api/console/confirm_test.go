package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"wds/models"
)

// A disable, delete or rotate posted without its confirmation (a stale page, a forged form) shows
// the confirmation page and changes nothing; a member is refused the page; a rotation's grace must
// be one the service takes.
func TestEndpointActionsThatBreakAReceiverAskFirst(t *testing.T) {
	e := newEnv(t)
	c, csrf := e.signIn(e.ownerToken)
	e.do(c, "POST", "/console/webhooks", url.Values{"csrf": {csrf}, "url": {"https://127.0.0.1/asked"}, "events": {"order.created"}})
	var ep models.Endpoint
	e.db.Take(&ep)
	before := e.rows()
	for _, action := range []string{"disable", "delete", "rotate"} {
		res, page := e.do(c, "POST", "/console/webhooks/"+ep.ID.String()+"/"+action, url.Values{"csrf": {csrf}})
		if res.StatusCode != http.StatusOK || !strings.Contains(page, `id="consequence"`) || !strings.Contains(page, "https://127.0.0.1/asked") ||
			!strings.Contains(page, `name="confirmed" value="yes"`) {
			t.Errorf("%s without its confirmation: %d\n%s", action, res.StatusCode, page)
		}
	}
	if after := e.rows(); after != before {
		t.Fatalf("unconfirmed actions changed rows: %s -> %s", before, after)
	}
	_, page := e.do(c, "GET", "/console/webhooks/"+ep.ID.String()+"/rotate", nil)
	if !strings.Contains(page, `<option value="86400" selected>24 hours</option>`) {
		t.Fatalf("the rotation does not offer 24 hours first:\n%s", page)
	}
	res, page := e.do(c, "POST", "/console/webhooks/"+ep.ID.String()+"/rotate", url.Values{"csrf": {csrf}, "confirmed": {"yes"}, "grace_seconds": {"999999999"}})
	if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(page, "grace_seconds must be") {
		t.Fatalf("an out-of-range grace: %d\n%s", res.StatusCode, page)
	}
	m, _ := e.signIn(e.memberToken)
	if res, _ := e.do(m, "GET", "/console/webhooks/"+ep.ID.String()+"/delete", nil); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a member's confirmation page: %d", res.StatusCode)
	}
	if res, _ := e.do(c, "GET", "/console/webhooks/"+ep.ID.String()+"/enable-everything", nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("an unknown action's page: %d", res.StatusCode)
	}
}
