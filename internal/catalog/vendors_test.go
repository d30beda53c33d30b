package catalog_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/catalog"
	"wds/internal/events"
	"wds/internal/events/eventstest"
	"wds/internal/platform/problem"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type fixture struct {
	t                       *testing.T
	ctx                     context.Context
	db                      *gorm.DB
	org, store              uuid.UUID
	owner, member, outsider uuid.UUID
	seen                    int
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	db := pgtest.New(t)
	org, _ := workspace.NewService(db).CreateOrg(ctx, "Acme")
	store, _ := workspace.NewService(db).CreateStore(ctx, org.ID, "Main", "USD")
	owner, _, _ := workspace.NewService(db).CreateUser(ctx, org.ID, "o@acme.test", models.RoleOwner)
	member, _, _ := workspace.NewService(db).CreateUser(ctx, org.ID, "m@acme.test", models.RoleMember)
	other, _ := workspace.NewService(db).CreateOrg(ctx, "Other")
	outsider, _, err := workspace.NewService(db).CreateUser(ctx, other.ID, "x@other.test", models.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, ctx: ctx, db: db, org: org.ID, store: store.ID, owner: owner.ID, member: member.ID, outsider: outsider.ID}
}

func set(v string) models.Optional[string] { return models.Optional[string]{Set: true, Value: v} }

var null = models.Optional[string]{Set: true, Null: true}

// emitted returns the types of the events written since the last call, each body validated.
func (f *fixture) emitted() string {
	f.t.Helper()
	all := eventstest.Written(f.t, f.db)
	defer func() { f.seen = len(all) }()
	return strings.Join(all[f.seen:], ",")
}

func (f *fixture) vendor(name string) *catalog.Vendor {
	f.t.Helper()
	v, err := catalog.NewService(f.db, nil).CreateVendor(f.ctx, f.org, f.member, f.store, catalog.VendorFields{Name: set(name), Email: set("s@supply.test")})
	if err != nil {
		f.t.Fatal(err)
	}
	return v
}

func (f *fixture) audits(action string) int64 {
	var n int64
	f.db.Model(&models.AuditEntry{}).Where("action = ?", action).Count(&n)
	return n
}

func TestVendorsAreAddedAndEditedWithTheirEvents(t *testing.T) {
	f := newFixture(t)
	v := f.vendor(" Clay Supply ")
	if v.Name != "Clay Supply" || *v.Email != "s@supply.test" || v.Phone != nil || v.ClaimedAt != nil {
		t.Fatalf("created %+v", v)
	}
	if got := f.emitted(); got != events.VendorCreated {
		t.Fatalf("create emitted %q", got)
	}
	u, err := catalog.NewService(f.db, nil).UpdateVendor(f.ctx, f.member, v.ID, catalog.VendorFields{Phone: set("+1 555"), Email: null})
	if err != nil || *u.Phone != "+1 555" || u.Email != nil || !u.UpdatedAt.After(v.UpdatedAt) {
		t.Fatalf("update %+v %v", u, err)
	}
	if got := f.emitted(); got != events.VendorUpdated {
		t.Fatalf("update emitted %q", got)
	}
	audits := f.audits("vendor.update")
	for _, same := range []catalog.VendorFields{{}, {Phone: set(" +1 555 ")}, {Email: null, Name: set("Clay Supply")}} {
		got, err := catalog.NewService(f.db, nil).UpdateVendor(f.ctx, f.member, v.ID, same)
		if err != nil || !got.UpdatedAt.Equal(u.UpdatedAt) {
			t.Fatalf("no-op edit %+v: %+v %v", same, got, err)
		}
	}
	if got := f.emitted(); got != "" || f.audits("vendor.update") != audits {
		t.Fatalf("no-op edits emitted %q, audited %d", got, f.audits("vendor.update")-audits)
	}
	for what, c := range map[string]struct {
		actor uuid.UUID
		in    catalog.VendorFields
		want  error
	}{
		"clearing the name":   {f.member, catalog.VendorFields{Name: null}, problem.Invalid},
		"an empty name":       {f.member, catalog.VendorFields{Name: set("  ")}, problem.Invalid},
		"an over-long note":   {f.member, catalog.VendorFields{Notes: set(strings.Repeat("n", 5001))}, problem.Invalid},
		"a bad email":         {f.member, catalog.VendorFields{Email: set("nobody")}, problem.Invalid},
		"another org's actor": {f.outsider, catalog.VendorFields{Phone: set("1")}, problem.NotFound},
	} {
		if _, err := catalog.NewService(f.db, nil).UpdateVendor(f.ctx, c.actor, v.ID, c.in); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", what, err, c.want)
		}
	}
	if _, err := catalog.NewService(f.db, nil).CreateVendor(f.ctx, f.org, f.outsider, f.store, catalog.VendorFields{Name: set("x")}); !errors.Is(err, problem.NotFound) {
		t.Errorf("an outsider's create: %v", err)
	}
	if got := f.emitted(); got != "" {
		t.Fatalf("refusals emitted %q", got)
	}
}

func TestAClaimTokenClaimsTheVendorOnce(t *testing.T) {
	f := newFixture(t)
	v := f.vendor("Clay Supply")
	f.emitted()
	if _, err := catalog.NewService(f.db, nil).IssueClaimToken(f.ctx, f.member, v.ID); !errors.Is(err, workspace.ErrForbidden) {
		t.Fatalf("a member issued a claim token: %v", err)
	}
	old, err := catalog.NewService(f.db, nil).IssueClaimToken(f.ctx, f.owner, v.ID)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := catalog.NewService(f.db, nil).IssueClaimToken(f.ctx, f.owner, v.ID) // replaces the first
	if err != nil || !secrets.WellFormedKey(catalog.ClaimTokenPrefix, tok.Token) {
		t.Fatalf("token %+v %v", tok, err)
	}
	if got := f.emitted(); got != "" {
		t.Fatalf("issuing a token emitted %q", got)
	}
	claim := func(token string) error {
		_, err := catalog.NewService(f.db, nil).ClaimVendor(f.ctx, catalog.Claim{Token: token, Email: "owner@clay.test"})
		return err
	}
	if err := claim(old.Token); !errors.Is(err, catalog.ErrInvalidClaimToken) {
		t.Fatalf("the replaced token: %v", err)
	}
	for what, bad := range map[string]catalog.Claim{
		"no email": {Token: tok.Token}, "a bad email": {Token: tok.Token, Email: "clay"},
	} {
		if _, err := catalog.NewService(f.db, nil).ClaimVendor(f.ctx, bad); !errors.Is(err, problem.Invalid) {
			t.Errorf("%s: %v", what, err)
		}
	}
	name := "Clay Supply Co."
	got, err := catalog.NewService(f.db, nil).ClaimVendor(f.ctx, catalog.Claim{Token: tok.Token, Email: "owner@clay.test", Name: &name})
	if err != nil || got.VendorID != v.ID {
		t.Fatalf("claim %+v %v", got, err)
	}
	if got := f.emitted(); got != events.VendorClaimed {
		t.Fatalf("claim emitted %q", got)
	}
	if err := claim(tok.Token); !errors.Is(err, catalog.ErrInvalidClaimToken) {
		t.Fatalf("a used token: %v", err)
	}
	if _, err := catalog.NewService(f.db, nil).IssueClaimToken(f.ctx, f.owner, v.ID); !errors.Is(err, catalog.ErrVendorAlreadyClaimed) {
		t.Fatalf("a token for a claimed vendor: %v", err)
	}
	// An expired token, and one for a vendor claimed meanwhile.
	w := f.vendor("Glaze Co")
	expired, _ := catalog.NewService(f.db, nil).IssueClaimToken(f.ctx, f.owner, w.ID)
	f.db.Exec(`UPDATE vendor_claim_tokens SET expires_at = now() - interval '1 second' WHERE vendor_id = ?`, w.ID)
	if err := claim(expired.Token); !errors.Is(err, catalog.ErrInvalidClaimToken) {
		t.Fatalf("an expired token: %v", err)
	}
	live, _ := catalog.NewService(f.db, nil).IssueClaimToken(f.ctx, f.owner, w.ID)
	f.db.Exec(`UPDATE vendors SET claimed_at = now() WHERE id = ?`, w.ID)
	if err := claim(live.Token); !errors.Is(err, catalog.ErrVendorAlreadyClaimed) {
		t.Fatalf("a vendor claimed meanwhile: %v", err)
	}
	if err := claim("vct_short"); !errors.Is(err, catalog.ErrInvalidClaimToken) {
		t.Fatalf("a malformed token: %v", err)
	}
}

// Twenty concurrent claims with one token: one claim, one vendor.claimed; the rest are refused as
// a used token.
func TestConcurrentClaimsWithOneTokenClaimOnce(t *testing.T) {
	f := newFixture(t)
	v := f.vendor("Clay Supply")
	tok, err := catalog.NewService(f.db, nil).IssueClaimToken(f.ctx, f.owner, v.ID)
	if err != nil {
		t.Fatal(err)
	}
	f.emitted()
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, refused := 0, 0
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := catalog.NewService(f.db, nil).ClaimVendor(f.ctx, catalog.Claim{Token: tok.Token, Email: "c" + string(rune('a'+i)) + "@clay.test"})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.Is(err, catalog.ErrInvalidClaimToken):
				refused++
			default:
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if won != 1 || refused != 19 {
		t.Fatalf("%d claims won, %d refused", won, refused)
	}
	if got := f.emitted(); got != events.VendorClaimed {
		t.Fatalf("emitted %q", got)
	}
}

// The token is stored only as its hash and is in no audit row.
func TestTheClaimTokenIsStoredOnlyAsAHash(t *testing.T) {
	f := newFixture(t)
	v := f.vendor("Clay Supply")
	tok, err := catalog.NewService(f.db, nil).IssueClaimToken(f.ctx, f.owner, v.ID)
	if err != nil {
		t.Fatal(err)
	}
	var stored struct{ TokenHash []byte }
	f.db.Raw(`SELECT token_hash FROM vendor_claim_tokens WHERE vendor_id = ?`, v.ID).Find(&stored)
	if string(stored.TokenHash) != string(secrets.HashAPIKey(tok.Token)) {
		t.Fatal("the stored value is not the token's SHA-256")
	}
	var dump string
	f.db.Raw(`SELECT coalesce(string_agg(t::text, ' '), '') FROM (SELECT * FROM vendor_claim_tokens) t`).Find(&dump)
	var audit string
	f.db.Raw(`SELECT coalesce(string_agg(details::text, ' '), '') FROM audit_log`).Find(&audit)
	secret := tok.Token[len(catalog.ClaimTokenPrefix):]
	if strings.Contains(dump, secret) || strings.Contains(audit, secret) {
		t.Fatal("the plaintext token is stored")
	}
}

// A re-issue racing a claim never deadlocks: both lock the vendor first, then its token, so one waits
// for the other. Either the claim wins (the re-issue finds the vendor claimed) or the re-issue does
// (the claim's token was replaced); nothing else is answered, no 503 from a deadlock.
func TestAReissueRacingAClaimDoesNotDeadlock(t *testing.T) {
	f := newFixture(t)
	for round := range 30 {
		v := f.vendor("Race " + string(rune('A'+round)))
		tok, err := catalog.NewService(f.db, nil).IssueClaimToken(f.ctx, f.owner, v.ID)
		if err != nil {
			t.Fatal(err)
		}
		var issueErr, claimErr error
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			_, issueErr = catalog.NewService(f.db, nil).IssueClaimToken(f.ctx, f.owner, v.ID)
		}()
		go func() {
			defer wg.Done()
			<-start
			_, claimErr = catalog.NewService(f.db, nil).ClaimVendor(f.ctx, catalog.Claim{Token: tok.Token, Email: "race@clay.test"})
		}()
		close(start)
		wg.Wait()
		claimWon := claimErr == nil && errors.Is(issueErr, catalog.ErrVendorAlreadyClaimed)
		issueWon := issueErr == nil && errors.Is(claimErr, catalog.ErrInvalidClaimToken)
		if !claimWon && !issueWon {
			t.Fatalf("round %d: re-issue %v, claim %v", round, issueErr, claimErr)
		}
	}
}
