package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wds/internal/workspace"
	"wds/models"
)

// Failed sign-ins are limited per client address: past the limit the form answers 429 with
// Retry-After and tries no token, a valid one included; another address is not held back.
func TestFailedSignInsAreLimitedPerAddress(t *testing.T) {
	e := newEnv(t)
	c := e.browser()
	for i := range 10 {
		if res, _ := e.login(c, "wds_op_guess"); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("failed sign-in %d: %d, want 401", i+1, res.StatusCode)
		}
	}
	res, page := e.login(c, e.ownerToken)
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "60" || !strings.Contains(page, "rate_limited") {
		t.Fatalf("the 11th sign-in: %d Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	if n := e.sessionsOf(e.userOf(e.ownerToken)); n != 0 {
		t.Fatalf("a sign-in past the limit opened %d sessions", n)
	}
}

// Successful sign-ins do not count: an operator who signs in often is never held back.
func TestSuccessfulSignInsAreNotLimited(t *testing.T) {
	e := newEnv(t)
	for i := range 15 {
		if res, _ := e.login(e.browser(), e.memberToken); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign-in %d: %d", i+1, res.StatusCode)
		}
	}
}

// Signing in again in the same browser replaces its session: the old one is gone from the table.
func TestSigningInAgainReplacesTheSession(t *testing.T) {
	e := newEnv(t)
	owner := e.userOf(e.ownerToken)
	c, _ := e.signIn(e.ownerToken)
	if res, _ := e.login(c, e.ownerToken); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("second sign-in: %d", res.StatusCode)
	}
	if n := e.sessionsOf(owner); n != 1 {
		t.Fatalf("%d sessions after signing in twice in one browser, want 1", n)
	}
	if e.signedOut(c) {
		t.Fatal("the browser's new session does not work")
	}
}

// A session ends after two idle hours as well as twelve hours after sign-in; each request moves the
// idle end, never past the twelve hours.
func TestASessionEndsWhenIdleOrOld(t *testing.T) {
	e := newEnv(t)
	c, _ := e.signIn(e.ownerToken)
	// Last used just over two hours ago (signed in three hours ago): ended.
	e.db.Exec(`UPDATE console_sessions SET created_at = now() - interval '3 hours', expires_at = now() - interval '1 second'`)
	if !e.signedOut(c) {
		t.Fatal("a session idle for over two hours still works")
	}
	c, _ = e.signIn(e.ownerToken)
	var left float64
	e.db.Raw(`SELECT extract(epoch FROM expires_at - now()) FROM console_sessions`).Scan(&left)
	if left > 2*3600+60 || left < 2*3600-60 {
		t.Fatalf("a new session ends in %.0f s, want two hours", left)
	}
	// Eleven hours after sign-in and used a minute ago: a request moves the end to the twelfth hour.
	e.db.Exec(`UPDATE console_sessions SET created_at = now() - interval '11 hours', expires_at = now() + interval '119 minutes'`)
	if e.signedOut(c) {
		t.Fatal("an active session ended early")
	}
	e.db.Raw(`SELECT extract(epoch FROM expires_at - now()) FROM console_sessions`).Scan(&left)
	if left > 3600+60 || left < 3600-60 {
		t.Fatalf("an eleven-hour-old session ends in %.0f s, want one hour (twelve after sign-in)", left)
	}
}

// Switching to an org the operator is not in answers 404, as the APIs do for another org's ids, and
// keeps the session where it was; an org of theirs switches.
func TestSwitchingToAnotherOrgsIDIsNotFound(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	other, err := workspace.NewService(e.db).CreateOrg(ctx, "Elsewhere")
	if err != nil {
		t.Fatal(err)
	}
	c, csrf := e.signIn(e.ownerToken)
	for _, org := range []string{other.ID.String(), uuid.NewString(), "not-an-id", ""} {
		res, page := e.do(c, "POST", "/console/org", url.Values{"csrf": {csrf}, "org": {org}})
		if res.StatusCode != http.StatusNotFound || !strings.Contains(page, "not_found") {
			t.Errorf("switch to %q: %d %s", org, res.StatusCode, page)
		}
	}
	var orgs []uuid.UUID
	e.db.Raw(`SELECT org_id FROM console_sessions`).Scan(&orgs)
	if len(orgs) != 1 || orgs[0] != e.org.ID {
		t.Fatalf("the session moved: %v", orgs)
	}
	if err := e.db.Create(&models.Membership{OrgID: other.ID, UserID: e.userOf(e.ownerToken), Role: models.RoleMember}).Error; err != nil {
		t.Fatal(err)
	}
	if res, _ := e.do(c, "POST", "/console/org", url.Values{"csrf": {csrf}, "org": {other.ID.String()}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("switch to an org of the operator's: %d", res.StatusCode)
	}
}
