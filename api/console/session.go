package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/problem"
	"wds/internal/workspace"
	"wds/models"
)

// A console session ends sessionTTL after sign-in, or sessionIdle after its last request, whichever
// comes first: a browser left signed in on a shared machine does not stay useful for half a day.
// (The cookie's name is in login.go.)
const (
	sessionTTL  = 12 * time.Hour
	sessionIdle = 2 * time.Hour
)

// Members is who the operators are and where they belong (workspace.Service).
type Members interface {
	UserByToken(ctx context.Context, token string) (*models.User, error)
	Orgs(ctx context.Context, actorID uuid.UUID) ([]models.Org, error)
	RoleOf(ctx context.Context, orgID, actorID uuid.UUID) (models.Role, error)
	Stores(ctx context.Context, orgID uuid.UUID) ([]models.Store, error)
	ListMembers(ctx context.Context, orgID uuid.UUID) ([]workspace.Member, error)
}

// session is a signed-in operator working in one org.
type session struct {
	id    string // the cookie's value; only its hash is stored
	User  models.User
	OrgID uuid.UUID
	Orgs  []models.Org
	Role  models.Role
	CSRF  string
}

// Manager reports whether the operator may see owner and admin actions; the operations decide.
func (s *session) Manager() bool { return slices.Contains(workspace.Managers, s.Role) }

func hashID(id string) []byte { sum := sha256.Sum256([]byte(id)); return sum[:] }

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

// signIn authenticates an operator token and opens a session in the operator's first org.
func signIn(ctx context.Context, db *gorm.DB, members Members, token string) (string, error) {
	u, err := members.UserByToken(ctx, token)
	if err != nil {
		return "", err
	}
	orgs, err := members.Orgs(ctx, u.ID)
	if err != nil {
		return "", err
	}
	if len(orgs) == 0 {
		return "", problem.Fail(workspace.ErrForbidden, "this operator belongs to no org")
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("session id: %w", err)
	}
	id := base64.RawURLEncoding.EncodeToString(b)
	// The session opens only while the token it was made from is still the user's and not revoked,
	// checked under a share lock of the user's row: a rotation or revocation holding that row waits
	// for this insert and then ends the session, or this insert waits for it and opens none.
	opened := db.WithContext(ctx).Exec(`INSERT INTO console_sessions (id_hash, user_id, org_id, expires_at)
		SELECT ?, u.id, ?, ? FROM users u WHERE u.id = ? AND u.token_hash = ? AND u.token_revoked_at IS NULL FOR SHARE`,
		hashID(id), orgs[0].ID, time.Now().Add(sessionIdle), u.ID, u.TokenHash)
	if opened.Error != nil {
		return "", fmt.Errorf("open session: %w", opened.Error)
	}
	if opened.RowsAffected == 0 {
		return "", workspace.ErrInvalidOperatorToken
	}
	// Sign-in is also when expired sessions are cleared, so the table holds about a day of them.
	db.WithContext(ctx).Exec(`DELETE FROM console_sessions WHERE expires_at < clock_timestamp() - interval '1 day'`)
	return id, nil
}

var errNoSession = errors.New("no console session")

// loadSession finds a live session by the cookie's id, with the operator's role in its org, and
// moves its end to sessionIdle from now, never past sessionTTL after sign-in.
func loadSession(ctx context.Context, db *gorm.DB, members Members, id string) (*session, error) {
	var rows []models.ConsoleSession
	err := db.WithContext(ctx).Raw(`UPDATE console_sessions
		SET expires_at = LEAST(created_at + make_interval(secs => ?), clock_timestamp() + make_interval(secs => ?))
		WHERE id_hash = ? AND expires_at > clock_timestamp() RETURNING id_hash, user_id, org_id, expires_at`,
		sessionTTL.Seconds(), sessionIdle.Seconds(), hashID(id)).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("load session: %w", err)
	}
	if len(rows) == 0 {
		return nil, errNoSession
	}
	s := &session{id: id, OrgID: rows[0].OrgID, CSRF: csrfToken(id)}
	if err := db.WithContext(ctx).Where("id = ?", rows[0].UserID).Take(&s.User).Error; err != nil {
		return nil, fmt.Errorf("load operator: %w", err)
	}
	if s.Orgs, err = members.Orgs(ctx, s.User.ID); err != nil {
		return nil, err
	}
	if s.Role, err = members.RoleOf(ctx, s.OrgID, s.User.ID); err != nil {
		return nil, err
	}
	if s.Role == "" { // removed from the org since signing in
		return nil, errNoSession
	}
	return s, nil
}

// switchOrg moves the session to another org of the operator's; any other org does not exist for
// them (404), as in the APIs.
func switchOrg(ctx context.Context, db *gorm.DB, members Members, s *session, org uuid.UUID) error {
	role, err := members.RoleOf(ctx, org, s.User.ID)
	if err != nil {
		return err
	}
	if role == "" {
		return problem.Fail(problem.NotFound, "org %s not found", org)
	}
	return db.WithContext(ctx).Model(&models.ConsoleSession{}).Where("id_hash = ?", hashID(s.id)).Update("org_id", org).Error
}

func signOut(ctx context.Context, db *gorm.DB, id string) error {
	return db.WithContext(ctx).Where("id_hash = ?", hashID(id)).Delete(&models.ConsoleSession{}).Error
}
