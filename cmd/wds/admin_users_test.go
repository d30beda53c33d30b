package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"wds/internal/platform/database"
	"wds/internal/workspace"
	"wds/test/pgtest"
)

// signsIn reports whether an operator token authenticates, as the Operator API and the console check it.
func signsIn(t *testing.T, url, token string) bool {
	t.Helper()
	db, err := database.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	_, err = workspace.NewService(db).UserByToken(context.Background(), token)
	if errors.Is(err, workspace.ErrInvalidOperatorToken) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

func TestAdminUserRotateAndRevokeToken(t *testing.T) {
	url := pgtest.URL(t)
	t.Setenv("DATABASE_URL", url)
	org := mustAdmin(t, "org", "create", "--name", "Acme")["id"].(string)
	owner := mustAdmin(t, "user", "create", "--org", org, "--email", "o@acme.example", "--role", "owner")
	member := mustAdmin(t, "user", "create", "--org", org, "--email", "m@acme.example", "--role", "member")
	other := mustAdmin(t, "org", "create", "--name", "Elsewhere")["id"].(string)
	stranger := mustAdmin(t, "user", "create", "--org", other, "--email", "s@elsewhere.example", "--role", "owner")
	ownerID, memberID, strangerID := owner["id"].(string), member["id"].(string), stranger["id"].(string)
	tokens := []string{owner["token"].(string), member["token"].(string), stranger["token"].(string)}

	// Refused: a member on another user's token, anyone on a user of another org. Nothing changes.
	_, err := admin(t, "user", "revoke-token", "--id", ownerID, "--actor", memberID)
	wantCode(t, err, "forbidden")
	_, err = admin(t, "user", "rotate-token", "--id", memberID, "--actor", strangerID)
	wantCode(t, err, "not_found")
	_, err = admin(t, "user", "revoke-token", "--id", strangerID, "--actor", ownerID)
	wantCode(t, err, "not_found")
	_, err = admin(t, "user", "rotate-token", "--id", memberID)
	wantCode(t, err, "invalid_parameter")
	_, err = admin(t, "user", "revoke-token", "--id", "nope", "--actor", ownerID)
	wantCode(t, err, "invalid_parameter")
	for _, tok := range tokens {
		if !signsIn(t, url, tok) {
			t.Fatal("a refused command changed a token")
		}
	}
	if rows := auditRows(t, url); len(rows) != 0 {
		t.Fatalf("refused commands were audited: %+v", rows)
	}

	// An owner rotates the member's token: {"id","token"}, the old token refused at once.
	rotated := mustAdmin(t, "user", "rotate-token", "--id", memberID, "--actor", ownerID)
	newTok, _ := rotated["token"].(string)
	tokens = append(tokens, newTok)
	if len(rotated) != 2 || rotated["id"] != memberID || len(newTok) != 50 || newTok[:7] != workspace.OperatorTokenPrefix {
		t.Fatalf("rotate-token printed %v", rotated)
	}
	if signsIn(t, url, member["token"].(string)) || !signsIn(t, url, newTok) {
		t.Fatal("after rotation the old token must be refused and the new one accepted")
	}

	// The member revokes their own: {"id","revoked_at"}, and the token is refused until rotated.
	revoked := mustAdmin(t, "user", "revoke-token", "--id", memberID, "--actor", memberID)
	at, err := time.Parse(time.RFC3339Nano, revoked["revoked_at"].(string))
	if len(revoked) != 2 || revoked["id"] != memberID || err != nil || time.Since(at) > time.Minute {
		t.Fatalf("revoke-token printed %v", revoked)
	}
	if signsIn(t, url, newTok) {
		t.Fatal("a revoked token signs in")
	}

	rows := auditRows(t, url)
	if len(rows) != 2 || rows[0].Action != "user.rotate_token" || rows[0].ActorID != ownerID ||
		rows[1].Action != "user.revoke_token" || rows[1].ActorID != memberID {
		t.Fatalf("audit rows %+v", rows)
	}
	for _, r := range rows {
		if r.TargetID != memberID {
			t.Fatalf("audit row %+v", r)
		}
		for _, tok := range tokens {
			if containsSecret(r.Details, tok) {
				t.Fatalf("audit row %+v holds a token", r)
			}
		}
	}
}
