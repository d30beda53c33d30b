package workspace_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/problem"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// tokenEnv is an org with an owner, an admin and a member, and another org with its owner; each
// operator's token is kept so tests can see which still authenticate.
type tokenEnv struct {
	t                       *testing.T
	db                      *gorm.DB
	org, other              uuid.UUID
	owner, admin, member    uuid.UUID
	otherOwner              uuid.UUID
	tokens                  map[uuid.UUID]string
	seen                    []string // every token the test has held, to be looked for in audit rows
	ownerTok, memberTok     string
	adminTok, otherOwnerTok string
}

func newTokenEnv(t *testing.T) *tokenEnv {
	t.Helper()
	e := &tokenEnv{t: t, db: pgtest.New(t), tokens: map[uuid.UUID]string{}}
	e.org = e.newOrg("Acme")
	e.other = e.newOrg("Elsewhere")
	e.owner = e.newUser(e.org, "owner@acme.test", models.RoleOwner)
	e.admin = e.newUser(e.org, "admin@acme.test", models.RoleAdmin)
	e.member = e.newUser(e.org, "member@acme.test", models.RoleMember)
	e.otherOwner = e.newUser(e.other, "owner@elsewhere.test", models.RoleOwner)
	return e
}

func (e *tokenEnv) newOrg(name string) uuid.UUID {
	e.t.Helper()
	org, err := workspace.NewService(e.db).CreateOrg(context.Background(), name)
	if err != nil {
		e.t.Fatal(err)
	}
	return org.ID
}

func (e *tokenEnv) newUser(org uuid.UUID, email string, role models.Role) uuid.UUID {
	e.t.Helper()
	u, tok, err := workspace.NewService(e.db).CreateUser(context.Background(), org, email, role)
	if err != nil {
		e.t.Fatal(err)
	}
	e.tokens[u.ID] = tok
	e.seen = append(e.seen, tok)
	return u.ID
}

// authenticates reports whether the user's current token (as the test knows it) signs in.
func (e *tokenEnv) authenticates(user uuid.UUID) bool {
	e.t.Helper()
	u, err := workspace.NewService(e.db).UserByToken(context.Background(), e.tokens[user])
	if errors.Is(err, workspace.ErrInvalidOperatorToken) {
		return false
	}
	if err != nil {
		e.t.Fatal(err)
	}
	if u.ID != user {
		e.t.Fatalf("token of %s authenticated %s", user, u.ID)
	}
	return true
}

func (e *tokenEnv) audit() []models.AuditEntry {
	e.t.Helper()
	var rows []models.AuditEntry
	if err := e.db.Order("created_at, org_id").Find(&rows).Error; err != nil {
		e.t.Fatal(err)
	}
	return rows
}

// session opens a console session row for the user, as a sign-in does.
func (e *tokenEnv) session(user, org uuid.UUID) {
	e.t.Helper()
	err := e.db.Exec(`INSERT INTO console_sessions (id_hash, user_id, org_id, expires_at) VALUES (decode(?, 'hex'), ?, ?, now() + interval '1 hour')`,
		strings.ReplaceAll(uuid.NewString(), "-", ""), user, org).Error
	if err != nil {
		e.t.Fatal(err)
	}
}

func (e *tokenEnv) sessions(user uuid.UUID) int64 {
	e.t.Helper()
	var n int64
	if err := e.db.Raw(`SELECT count(*) FROM console_sessions WHERE user_id = ?`, user).Find(&n).Error; err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *tokenEnv) assertNoTokenAudited() {
	e.t.Helper()
	var details []string
	if err := e.db.Raw(`SELECT action || ' ' || details::text FROM audit_log`).Find(&details).Error; err != nil {
		e.t.Fatal(err)
	}
	if len(details) == 0 {
		e.t.Fatal("no audit rows: the search would prove nothing")
	}
	for _, d := range details {
		for _, tok := range e.seen {
			if strings.Contains(d, tok) || strings.Contains(d, tok[len(workspace.OperatorTokenPrefix):]) {
				e.t.Errorf("audit row %q holds a token", d)
			}
		}
	}
}

func TestRotateTokenReplacesTheTokenAtOnce(t *testing.T) {
	e := newTokenEnv(t)
	ctx := context.Background()
	e.session(e.member, e.org)
	e.session(e.owner, e.org)
	old := e.tokens[e.member]

	out, err := workspace.NewService(e.db).ReissueToken(ctx, e.member, e.owner)
	if err != nil {
		t.Fatal(err)
	}
	if out.ID != e.member || !strings.HasPrefix(out.Token, workspace.OperatorTokenPrefix) || out.Token == old {
		t.Fatalf("rotated %+v", out)
	}
	e.seen = append(e.seen, out.Token)
	if e.authenticates(e.member) {
		t.Fatal("the old token still authenticates")
	}
	e.tokens[e.member] = out.Token
	if !e.authenticates(e.member) {
		t.Fatal("the new token does not authenticate")
	}
	if e.sessions(e.member) != 0 || e.sessions(e.owner) != 1 {
		t.Fatalf("sessions after rotation: member %d (want 0), owner %d (want 1)", e.sessions(e.member), e.sessions(e.owner))
	}
	rows := e.audit()
	if len(rows) != 1 {
		t.Fatalf("audit rows %+v", rows)
	}
	r := rows[0]
	if r.Action != "user.rotate_token" || r.OrgID != e.org || r.ActorID != e.owner || r.TargetType != "user" || r.TargetID != e.member ||
		r.Details["console_sessions_ended"] != float64(1) {
		t.Fatalf("audit row %+v", r)
	}
	// Anyone may rotate their own token, a member too.
	out, err = workspace.NewService(e.db).RotateToken(ctx, e.member, e.member)
	if err != nil {
		t.Fatal(err)
	}
	e.seen = append(e.seen, out.Token)
	if e.authenticates(e.member) {
		t.Fatal("the token before the second rotation still authenticates")
	}
	e.tokens[e.member] = out.Token
	if !e.authenticates(e.member) {
		t.Fatal("the self-rotated token does not authenticate")
	}
	e.assertNoTokenAudited()
}

func TestRevokeTokenRefusesTheTokenUntilRotated(t *testing.T) {
	e := newTokenEnv(t)
	ctx := context.Background()
	e.session(e.admin, e.org)
	e.session(e.admin, e.org)

	before := time.Now().Add(-time.Minute)
	out, err := workspace.NewService(e.db).RevokeToken(ctx, e.admin, e.admin)
	if err != nil {
		t.Fatal(err)
	}
	if out.ID != e.admin || out.RevokedAt.Before(before) || out.RevokedAt.After(time.Now().Add(time.Minute)) {
		t.Fatalf("revoked %+v", out)
	}
	if e.authenticates(e.admin) {
		t.Fatal("a revoked token authenticates")
	}
	if e.sessions(e.admin) != 0 {
		t.Fatal("the revoked user's console sessions survived")
	}
	// Revoking again keeps the first time and says so in the audit row.
	again, err := workspace.NewService(e.db).RevokeToken(ctx, e.admin, e.owner)
	if err != nil {
		t.Fatal(err)
	}
	if !again.RevokedAt.Equal(out.RevokedAt) {
		t.Fatalf("second revoke moved revoked_at from %v to %v", out.RevokedAt, again.RevokedAt)
	}
	// Reissuing (the CLI's way back) gives the user a working token again.
	rotated, err := workspace.NewService(e.db).ReissueToken(ctx, e.admin, e.owner)
	if err != nil {
		t.Fatal(err)
	}
	e.seen = append(e.seen, rotated.Token)
	if e.authenticates(e.admin) {
		t.Fatal("rotation revived the revoked token")
	}
	e.tokens[e.admin] = rotated.Token
	if !e.authenticates(e.admin) {
		t.Fatal("the token rotated after a revocation does not authenticate")
	}

	rows := e.audit()
	if len(rows) != 3 {
		t.Fatalf("audit rows %+v", rows)
	}
	want := []struct {
		action  string
		actor   uuid.UUID
		already any
		ended   float64
	}{
		{"user.revoke_token", e.admin, false, 2},
		{"user.revoke_token", e.owner, true, 0},
		{"user.rotate_token", e.owner, nil, 0},
	}
	for i, w := range want {
		r := rows[i]
		if r.Action != w.action || r.ActorID != w.actor || r.TargetID != e.admin || r.OrgID != e.org ||
			r.Details["already_revoked"] != w.already || r.Details["console_sessions_ended"] != w.ended {
			t.Errorf("audit row %d: %+v, want %+v", i, r, w)
		}
	}
	e.assertNoTokenAudited()
}

func TestWhoMayChangeAToken(t *testing.T) {
	e := newTokenEnv(t)
	ctx := context.Background()
	cases := []struct {
		name          string
		target, actor uuid.UUID
		want          error
	}{
		{"a member, another user's", e.owner, e.member, workspace.ErrForbidden},
		{"an owner, a user of another org", e.otherOwner, e.owner, problem.NotFound},
		{"a user of another org, one of this org", e.member, e.otherOwner, problem.NotFound},
		{"an owner, a user who does not exist", uuid.New(), e.owner, problem.NotFound},
		{"an actor who does not exist", e.member, uuid.New(), problem.NotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := workspace.NewService(e.db).RotateToken(ctx, c.target, c.actor)
			if !errors.Is(err, c.want) {
				t.Fatalf("rotate: %v, want %v", err, c.want)
			}
			_, err = workspace.NewService(e.db).RevokeToken(ctx, c.target, c.actor)
			if !errors.Is(err, c.want) {
				t.Fatalf("revoke: %v, want %v", err, c.want)
			}
		})
	}
	// Nothing changed: every token still authenticates and nothing was audited.
	for _, u := range []uuid.UUID{e.owner, e.admin, e.member, e.otherOwner} {
		if !e.authenticates(u) {
			t.Errorf("user %s lost their token to a refused call", u)
		}
	}
	if rows := e.audit(); len(rows) != 0 {
		t.Fatalf("refused calls were audited: %+v", rows)
	}
	// An admin may revoke a member's token; the owner an admin's.
	if _, err := workspace.NewService(e.db).RevokeToken(ctx, e.admin, e.owner); err != nil {
		t.Fatal(err)
	}
	if _, err := workspace.NewService(e.db).RevokeToken(ctx, e.member, e.admin); err != nil {
		t.Fatal(err)
	}
	if _, err := workspace.NewService(e.db).ReissueToken(ctx, e.admin, e.otherOwner); !errors.Is(err, problem.NotFound) {
		t.Fatalf("other org's owner rotating an admin: %v", err)
	}
}

// A user in two orgs holds one token that works in both: an admin of one org may not take it over or
// lock the user out of the other; an operator who manages both may, and both orgs' logs record it.
func TestATokenOfSeveralOrgsNeedsAManagerOfEach(t *testing.T) {
	e := newTokenEnv(t)
	ctx := context.Background()
	if err := e.db.Create(&models.Membership{OrgID: e.other, UserID: e.member, Role: models.RoleMember}).Error; err != nil {
		t.Fatal(err)
	}
	for _, op := range []func() error{
		func() error { _, err := workspace.NewService(e.db).ReissueToken(ctx, e.member, e.owner); return err },
		func() error {
			_, err := workspace.NewService(e.db).RevokeToken(ctx, e.member, e.otherOwner)
			return err
		},
	} {
		if err := op(); !errors.Is(err, workspace.ErrForbidden) {
			t.Fatalf("a manager of one of the user's two orgs: %v, want forbidden", err)
		}
	}
	if !e.authenticates(e.member) || len(e.audit()) != 0 {
		t.Fatal("a refused call changed something")
	}
	if err := e.db.Create(&models.Membership{OrgID: e.other, UserID: e.owner, Role: models.RoleAdmin}).Error; err != nil {
		t.Fatal(err)
	}
	if _, err := workspace.NewService(e.db).RevokeToken(ctx, e.member, e.owner); err != nil {
		t.Fatal(err)
	}
	rows := e.audit()
	if len(rows) != 2 || rows[0].OrgID == rows[1].OrgID {
		t.Fatalf("want one audit row in each org: %+v", rows)
	}
	for _, r := range rows {
		if r.Action != "user.revoke_token" || r.TargetID != e.member || r.ActorID != e.owner {
			t.Fatalf("audit row %+v", r)
		}
	}
	// The user may always change their own token, in however many orgs.
	out, err := workspace.NewService(e.db).RotateToken(ctx, e.member, e.member)
	if err != nil {
		t.Fatal(err)
	}
	e.tokens[e.member] = out.Token
	e.seen = append(e.seen, out.Token)
	if !e.authenticates(e.member) {
		t.Fatal("the self-rotated token does not authenticate")
	}
	e.assertNoTokenAudited()
}

// Only the holder receives a rotated token: a manager who could rotate another's token would hold
// their credential. A manager may revoke it (no credential changes hands), but an admin not an
// owner's, so an admin cannot lock the owners out either. Every refusal changes nothing.
func TestOnlyTheHolderReceivesARotatedToken(t *testing.T) {
	e := newTokenEnv(t)
	ctx := context.Background()
	owner2 := e.newUser(e.org, "owner2@acme.test", models.RoleOwner)
	for _, c := range []struct {
		name          string
		target, actor uuid.UUID
	}{
		{"an owner, a member's", e.member, e.owner},
		{"an owner, an admin's", e.admin, e.owner},
		{"an owner, another owner's", owner2, e.owner},
		{"an admin, an owner's", e.owner, e.admin},
		{"an admin, a member's", e.member, e.admin},
	} {
		if _, err := workspace.NewService(e.db).RotateToken(ctx, c.target, c.actor); !errors.Is(err, workspace.ErrForbidden) {
			t.Errorf("rotate, %s: %v, want forbidden", c.name, err)
		}
	}
	if _, err := workspace.NewService(e.db).RevokeToken(ctx, e.owner, e.admin); !errors.Is(err, workspace.ErrForbidden) {
		t.Fatalf("an admin revoking an owner's token: %v, want forbidden", err)
	}
	for _, u := range []uuid.UUID{e.owner, owner2, e.admin, e.member} {
		if !e.authenticates(u) {
			t.Fatalf("user %s lost their token to a refused call", u)
		}
	}
	if rows := e.audit(); len(rows) != 0 {
		t.Fatalf("refused calls were audited: %+v", rows)
	}
	// An owner may revoke another owner's token, and an admin a member's.
	if _, err := workspace.NewService(e.db).RevokeToken(ctx, owner2, e.owner); err != nil {
		t.Fatal(err)
	}
	if _, err := workspace.NewService(e.db).RevokeToken(ctx, e.member, e.admin); err != nil {
		t.Fatal(err)
	}
	if e.authenticates(owner2) || e.authenticates(e.member) {
		t.Fatal("a revoked token still authenticates")
	}
	e.assertNoTokenAudited()
}
