package api_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"wds/api"
	"wds/internal/platform/problem"
	"wds/internal/workspace"
)

// opFakes is the Operator API over fakes: one operator, by the token "op".
type opFakes struct {
	org, actor uuid.UUID
	ops        *fakeOperators
	keys       *fakeKeys
	h          http.Handler
}

func newOpFakes(t *testing.T, roleErr error) *opFakes {
	f := &opFakes{org: uuid.New(), actor: uuid.New(), keys: &fakeKeys{}}
	f.ops = &fakeOperators{users: map[string]uuid.UUID{"op": f.actor}, roleErr: roleErr}
	f.h = fakeRouter(t, api.Deps{Services: api.Services{Operators: f.ops, Keys: f.keys}, Webhooks: &fakeWebhooks{}, Resends: &fakeWebhooks{}})
	return f
}

// Minting a key needs an owner or admin of the path's org, and a member is told so before the body
// is read: they learn that they may not, never what is wrong with their input.
func TestKeyMintChecksTheRoleBeforeTheBody(t *testing.T) {
	path := func(f *opFakes) string { return "/admin/v1/orgs/" + f.org.String() + "/read-keys" }
	member := newOpFakes(t, problem.Fail(workspace.ErrForbidden, "owners and admins only"))
	rec := serve(t, member.h, http.MethodPost, path(member), "op", "{not json")
	wantError(t, rec.Code, rec.Body.Bytes(), http.StatusForbidden, "forbidden")
	if len(member.ops.checks) != 1 || len(member.keys.created) != 0 {
		t.Fatalf("%d role checks, %d keys minted; want 1 and 0", len(member.ops.checks), len(member.keys.created))
	}
	if c := member.ops.checks[0]; c.org != member.org || c.actor != member.actor || !slices.Equal(c.roles, workspace.Managers) {
		t.Errorf("role check %+v, want the path's org, the token's operator and the managers' roles", c)
	}

	admin := newOpFakes(t, nil)
	rec = serve(t, admin.h, http.MethodPost, path(admin), "op", "{not json")
	wantError(t, rec.Code, rec.Body.Bytes(), http.StatusBadRequest, "invalid_json")
	rec = serve(t, admin.h, http.MethodPost, path(admin), "op", `{"scope":"read_only","name":"bi"}`)
	if rec.Code != http.StatusCreated || len(admin.keys.created) != 1 || !strings.Contains(rec.Body.String(), "pck_live_fake") {
		t.Fatalf("admin: got %d after %d mints: %s", rec.Code, len(admin.keys.created), rec.Body)
	}
	if in := admin.keys.created[0]; in.OrgID != admin.org || in.ActorID != admin.actor {
		t.Errorf("minted for org %s by %s, want %s by %s", in.OrgID, in.ActorID, admin.org, admin.actor)
	}
}

// Without a valid operator token nothing else is asked, and an org id that is not a UUID names no org.
func TestOperatorTokenAndOrgAreCheckedFirst(t *testing.T) {
	f := newOpFakes(t, nil)
	path := "/admin/v1/orgs/" + f.org.String() + "/read-keys"
	rec := serve(t, f.h, http.MethodPost, path, "", "{}")
	wantError(t, rec.Code, rec.Body.Bytes(), http.StatusUnauthorized, "missing_authorization")
	rec = serve(t, f.h, http.MethodPost, path, "someone-else", "{}")
	wantError(t, rec.Code, rec.Body.Bytes(), http.StatusUnauthorized, "invalid_token")
	rec = serve(t, f.h, http.MethodPost, "/admin/v1/orgs/acme/read-keys", "op", "{}")
	wantError(t, rec.Code, rec.Body.Bytes(), http.StatusNotFound, "not_found")
	if len(f.ops.checks) != 0 || len(f.keys.created) != 0 {
		t.Fatalf("%d role checks and %d mints for refused requests", len(f.ops.checks), len(f.keys.created))
	}
}

// A named operation may leave p_org_id out only for an operator of exactly one org; otherwise the
// caller is told to name it.
func TestWebhookOperationWithoutOrgNeedsAnOnlyOrg(t *testing.T) {
	f := newOpFakes(t, nil)
	f.ops.onlyOrgErr = workspace.ErrSeveralOrgs
	for _, op := range []string{"outbound_webhook_list", "core.rpc_outbound_webhook_create"} {
		rec := serve(t, f.h, http.MethodPost, "/admin/v1/rpc/"+op, "op", `{"p_url":"https://example.com/hook","p_event_types":[]}`)
		wantError(t, rec.Code, rec.Body.Bytes(), http.StatusUnprocessableEntity, "validation_failed")
		if !strings.Contains(rec.Body.String(), "p_org_id is required") {
			t.Errorf("%s: %s does not name p_org_id", op, rec.Body)
		}
	}
}
