package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"wds/models"
)

// A form's banner rides a short-lived cookie for the page its redirect names: another page leaves
// it waiting, that page shows it once and clears it, and a reload shows no banner. The address
// carries nothing (no ?done=).
func TestABannerShowsOnceOnItsOwnPage(t *testing.T) {
	e := newEnv(t)
	c, csrf := e.signIn(e.ownerToken)
	var store models.Store
	e.db.Take(&store)
	res, page := e.do(c, "POST", "/console/vendors", url.Values{"csrf": {csrf}, "store_id": {store.ID.String()}, "name": {"Clay"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/vendors" {
		t.Fatalf("add vendor: %d %q\n%s", res.StatusCode, res.Header.Get("Location"), page)
	}
	var ck *http.Cookie
	for _, k := range res.Cookies() {
		if k.Name == "__Host-wds_console_notice" {
			ck = k
		}
	}
	if ck == nil || !ck.HttpOnly || !ck.Secure || ck.SameSite != http.SameSiteStrictMode || ck.MaxAge != 60 || ck.Path != "/" {
		t.Fatalf("the notice's cookie %+v", ck)
	}
	const banner = `<p class="notice" role="status">Saved.</p>`
	if _, page := e.do(c, "GET", "/console/clients", nil); strings.Contains(page, banner) {
		t.Fatal("another page shows the vendor's banner")
	}
	if _, page := e.do(c, "GET", "/console/vendors", nil); !strings.Contains(page, banner) {
		t.Fatalf("the vendors page after the redirect lacks its banner:\n%s", page)
	}
	if _, page := e.do(c, "GET", "/console/vendors", nil); strings.Contains(page, banner) {
		t.Fatal("a reload shows the banner again")
	}
}
