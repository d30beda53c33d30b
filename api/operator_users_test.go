package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wds/internal/workspace"
	"wds/models"
)

// authenticates calls a page every member may read with token and reports the answer.
func (e *keysEnv) authenticates(token string) (int, []byte) {
	e.t.Helper()
	return e.call("GET", "/admin/v1/orgs/"+e.org.ID.String()+"/read-keys", token, nil)
}

func (e *keysEnv) auditCount() int64 {
	e.t.Helper()
	var n int64
	if err := e.db.Raw(`SELECT count(*) FROM audit_log`).Find(&n).Error; err != nil {
		e.t.Fatal(err)
	}
	return n
}

func TestOperatorRotatesAndRevokesTokens(t *testing.T) {
	e := newKeysEnv(t)
	member := "/admin/v1/users/" + e.memberID.String()
	owner := "/admin/v1/users/" + e.ownerID.String()

	// Only the holder receives a rotated token: an owner rotating a member's is 403 and changes nothing.
	before := e.auditCount()
	status, body := e.call("POST", member+"/rotate-token", e.owner, nil)
	wantError(t, status, body, http.StatusForbidden, "forbidden")
	if status, _ = e.authenticates(e.member); status != http.StatusOK || e.auditCount() != before {
		t.Fatalf("a refused rotation changed the member's token or the audit log: %d", status)
	}

	// The member rotates their own: the new one works, the old one is 401 at once.
	status, body = e.call("POST", member+"/rotate-token", e.member, nil)
	if status != http.StatusOK {
		t.Fatalf("rotate: %d %s", status, body)
	}
	rotated := decode[map[string]string](t, body)
	e.minted = append(e.minted, rotated["token"])
	if rotated["id"] != e.memberID.String() || !strings.HasPrefix(rotated["token"], workspace.OperatorTokenPrefix) || rotated["token"] == e.member {
		t.Fatalf("rotated %v", rotated)
	}
	status, body = e.authenticates(e.member)
	wantError(t, status, body, http.StatusUnauthorized, "invalid_token")
	if status, body = e.authenticates(rotated["token"]); status != http.StatusOK {
		t.Fatalf("the new token: %d %s", status, body)
	}
	e.member = rotated["token"]

	// A member may not touch another user's token, and learns so before anything changes.
	for _, op := range []string{"/rotate-token", "/revoke-token"} {
		status, body = e.call("POST", owner+op, e.member, nil)
		wantError(t, status, body, http.StatusForbidden, "forbidden")
	}
	if status, _ = e.authenticates(e.owner); status != http.StatusOK {
		t.Fatalf("the owner's token after a member's refused calls: %d", status)
	}

	// A member may rotate their own.
	status, body = e.call("POST", member+"/rotate-token", e.member, nil)
	if status != http.StatusOK {
		t.Fatalf("self rotate: %d %s", status, body)
	}
	self := decode[map[string]string](t, body)["token"]
	e.minted = append(e.minted, self)
	if status, _ = e.authenticates(e.member); status != http.StatusUnauthorized {
		t.Fatalf("the token before a self rotation: %d", status)
	}
	e.member = self

	// A member revokes their own token: from then on it is refused exactly as an unknown token is.
	status, body = e.call("POST", member+"/revoke-token", e.member, nil)
	if status != http.StatusOK {
		t.Fatalf("revoke: %d %s", status, body)
	}
	revoked := decode[map[string]any](t, body)
	if revoked["id"] != e.memberID.String() || revoked["revoked_at"] == nil {
		t.Fatalf("revoked %v", revoked)
	}
	status, body = e.authenticates(e.member)
	_, unknown := e.authenticates(workspace.OperatorTokenPrefix + strings.Repeat("A", 43))
	wantError(t, status, body, http.StatusUnauthorized, "invalid_token")
	if string(body) != string(unknown) {
		t.Fatalf("a revoked token answers %s, an unknown one %s", body, unknown)
	}
	status, body = e.call("POST", member+"/rotate-token", e.member, nil)
	wantError(t, status, body, http.StatusUnauthorized, "invalid_token")

	// An owner may revoke it again (the first time stays), but not hand out a new one: the way back is
	// `wds admin user rotate-token`, which runs with the database's own credentials.
	status, body = e.call("POST", member+"/revoke-token", e.owner, nil)
	if status != http.StatusOK || decode[map[string]any](t, body)["revoked_at"] != revoked["revoked_at"] {
		t.Fatalf("revoking again must keep the first time: %d %s", status, body)
	}
	status, body = e.call("POST", member+"/rotate-token", e.owner, nil)
	wantError(t, status, body, http.StatusForbidden, "forbidden")
	reissued, err := workspace.NewService(e.db).ReissueToken(context.Background(), e.memberID, e.ownerID)
	if err != nil {
		t.Fatal(err)
	}
	e.member = reissued.Token
	e.minted = append(e.minted, e.member)
	if status, _ = e.authenticates(e.member); status != http.StatusOK {
		t.Fatalf("the token reissued after a revocation: %d", status)
	}

	var actions []string
	e.db.Raw(`SELECT action FROM audit_log WHERE target_id = ? AND org_id = ? ORDER BY created_at`, e.memberID, e.org.ID).Find(&actions)
	want := "user.rotate_token,user.rotate_token,user.revoke_token,user.revoke_token,user.rotate_token"
	if got := strings.Join(actions, ","); got != want {
		t.Fatalf("audit actions %s, want %s", got, want)
	}
	e.assertNoSecretLeaked()
}

// A user of another org does not exist for the caller: 404, and nothing changes.
func TestOperatorTokenOfAnotherOrgIsNotFound(t *testing.T) {
	e := newKeysEnv(t)
	other, otherTok, err := workspace.NewService(e.db).CreateUser(context.Background(), e.otherOrg, "owner2@elsewhere.test", models.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	e.minted = append(e.minted, otherTok)
	cases := []struct {
		token, user string
	}{
		{otherTok, e.memberID.String()},  // another org's owner, this org's member
		{otherTok, e.ownerID.String()},   // another org's owner, this org's owner
		{e.owner, other.ID.String()},     // this org's owner, another org's owner
		{e.owner, e.otherUser.String()},  // the same
		{e.owner, uuid.NewString()},      // nobody
		{e.owner, "not-a-uuid"},          // not an id
		{e.member, other.ID.String()},    // a member, another org's owner
		{otherTok, "not-a-uuid"},         // not an id, from another org
		{otherTok, uuid.Nil.String()},    // nobody
		{e.member, e.otherUser.String()}, // a member, another org's user
	}
	before := e.auditCount()
	for _, c := range cases {
		for _, op := range []string{"/rotate-token", "/revoke-token"} {
			status, body := e.call("POST", "/admin/v1/users/"+c.user+op, c.token, nil)
			wantError(t, status, body, http.StatusNotFound, "not_found")
		}
	}
	for _, tok := range []string{e.owner, e.member, otherTok} {
		if status, _ := e.call("GET", "/admin/v1/orgs/"+e.otherOrg.String()+"/read-keys", tok, nil); status == http.StatusUnauthorized {
			t.Fatal("a refused call changed a token")
		}
	}
	if after := e.auditCount(); after != before {
		t.Fatalf("refused calls wrote %d audit rows", after-before)
	}
	status, body := e.call("POST", "/admin/v1/users/"+e.memberID.String()+"/rotate-token", "", nil)
	wantError(t, status, body, http.StatusUnauthorized, "missing_authorization")
}
