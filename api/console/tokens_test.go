package console_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"wds/api/console"
	"wds/internal/workspace"
)

func (e *env) userOf(token string) uuid.UUID {
	e.t.Helper()
	u, err := workspace.NewService(e.db).UserByToken(context.Background(), token)
	if err != nil {
		e.t.Fatal(err)
	}
	return u.ID
}

func (e *env) sessionsOf(user uuid.UUID) int64 {
	e.t.Helper()
	var n int64
	if err := e.db.Raw(`SELECT count(*) FROM console_sessions WHERE user_id = ?`, user).Find(&n).Error; err != nil {
		e.t.Fatal(err)
	}
	return n
}

// signedOut reports whether the browser's session has ended (every page sends it to sign in).
func (e *env) signedOut(c *http.Client) bool {
	e.t.Helper()
	res, _ := e.do(c, "GET", "/console/", nil)
	return res.StatusCode == http.StatusSeeOther && res.Header.Get("Location") == "/console/login"
}

// Rotating or revoking an operator's token ends every console session of theirs at once; a replaced
// or revoked token signs nobody in, and other operators' sessions carry on.
func TestRotatingOrRevokingATokenEndsItsConsoleSessions(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	member, owner := e.userOf(e.memberToken), e.userOf(e.ownerToken)
	first, _ := e.signIn(e.memberToken)
	second, _ := e.signIn(e.memberToken)
	owners, _ := e.signIn(e.ownerToken)

	rotated, err := workspace.NewService(e.db).ReissueToken(ctx, member, owner)
	if err != nil {
		t.Fatal(err)
	}
	if !e.signedOut(first) || !e.signedOut(second) || e.sessionsOf(member) != 0 {
		t.Fatal("the member's sessions outlived the rotation of their token")
	}
	if e.signedOut(owners) {
		t.Fatal("the owner's session ended with the member's token")
	}
	res, page := e.login(e.browser(), e.memberToken)
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(page, "invalid_token") {
		t.Fatalf("the replaced token signs in: %d", res.StatusCode)
	}
	third, _ := e.signIn(rotated.Token)

	if _, err := workspace.NewService(e.db).RevokeToken(ctx, member, member); err != nil {
		t.Fatal(err)
	}
	if !e.signedOut(third) || e.sessionsOf(member) != 0 {
		t.Fatal("the member's session outlived the revocation of their token")
	}
	res, page = e.login(e.browser(), rotated.Token)
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(page, "invalid_token") {
		t.Fatalf("a revoked token signs in: %d", res.StatusCode)
	}
}

// Sign-ins racing a revocation of their token never leave a session behind: each either opens before
// the revocation, which then ends it, or finds the token revoked.
func TestSignInsRacingARevocationLeaveNoSession(t *testing.T) {
	// Up to 40 sign-ins fail here, all from one address: above the default limit of failed ones.
	e := newEnv(t, func(c *console.Console) { c.SignInLimit = 100 })
	ctx := context.Background()
	member, owner := e.userOf(e.memberToken), e.userOf(e.ownerToken)
	for round := range 5 {
		rotated, err := workspace.NewService(e.db).ReissueToken(ctx, member, owner)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		codes := make(chan int, 8)
		for range 8 {
			c, form := e.loginForm()
			form.Set("token", rotated.Token)
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := c.PostForm(e.srv.URL+"/console/login", form)
				if err != nil {
					codes <- 0
					return
				}
				res.Body.Close()
				codes <- res.StatusCode
			}()
		}
		if _, err := workspace.NewService(e.db).RevokeToken(ctx, member, owner); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		close(codes)
		for code := range codes {
			if code != http.StatusSeeOther && code != http.StatusUnauthorized {
				t.Fatalf("round %d: a sign-in answered %d", round, code)
			}
		}
		if n := e.sessionsOf(member); n != 0 {
			t.Fatalf("round %d: %d sessions outlived the revocation", round, n)
		}
	}
}
