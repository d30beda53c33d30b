package console

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"slices"

	"github.com/google/uuid"

	"wds/internal/workspace"
	"wds/models"
)

// Members is who the operators are and where they belong (workspace.Service).
type Members interface {
	UserByToken(ctx context.Context, token string) (*models.User, error)
	Orgs(ctx context.Context, actorID uuid.UUID) ([]models.Org, error)
	RoleOf(ctx context.Context, orgID, actorID uuid.UUID) (models.Role, error)
	Stores(ctx context.Context, orgID uuid.UUID) ([]models.Store, error)
	ListMembers(ctx context.Context, orgID uuid.UUID) ([]workspace.Member, error)
	Names(ctx context.Context, orgID uuid.UUID, ids map[uuid.UUID]bool) (map[uuid.UUID]string, error)
}

// Sessions opens, finds, moves and ends the console's sessions (workspace.Service), whose id is
// the cookie's value.
type Sessions interface {
	OpenSession(ctx context.Context, token string) (string, error)
	Session(ctx context.Context, id string) (*workspace.Session, error)
	MoveSession(ctx context.Context, id string, actor, org uuid.UUID) error
	CloseSession(ctx context.Context, id string) error
}

// session is a signed-in operator working in one org.
type session struct {
	id    string // the cookie's value
	User  models.User
	OrgID uuid.UUID
	Orgs  []models.Org
	Role  models.Role
	CSRF  string
}

// Manager reports whether the operator may see owner and admin actions; the operations decide.
func (s *session) Manager() bool { return slices.Contains(workspace.Managers, s.Role) }

// csrfToken binds a form to its session: an HMAC of a fixed label keyed by the session id, which
// only the browser holding the HttpOnly cookie could have been given.
func csrfToken(sessionID string) string {
	m := hmac.New(sha256.New, []byte(sessionID))
	m.Write([]byte("wds console csrf"))
	return hex.EncodeToString(m.Sum(nil))
}

// validCSRF compares in constant time.
func (s *session) validCSRF(token string) bool {
	return hmac.Equal([]byte(token), []byte(s.CSRF))
}

// loadSession finds the live session of the cookie's id (workspace.Session), with the operator's
// orgs and role in its org; an operator removed from the org since is signed out.
func (c *Console) loadSession(ctx context.Context, id string) (*session, error) {
	live, err := c.Sessions.Session(ctx, id)
	if err != nil {
		return nil, err
	}
	s := &session{id: id, User: live.User, OrgID: live.OrgID, CSRF: csrfToken(id)}
	if s.Orgs, err = c.Members.Orgs(ctx, s.User.ID); err != nil {
		return nil, err
	}
	if s.Role, err = c.Members.RoleOf(ctx, s.OrgID, s.User.ID); err != nil {
		return nil, err
	}
	if s.Role == "" { // removed from the org since signing in
		return nil, workspace.ErrNoSession
	}
	return s, nil
}
