package workspace

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"wds/internal/platform/problem"
	"wds/models"
)

// A console session (console_sessions) is an operator signed in to the console, working in one of
// their orgs. Its id is the console's cookie; only the id's hash is stored. It ends SessionTTL after
// sign-in, or SessionIdle after its last request, whichever comes first: a browser left signed in
// on a shared machine does not stay useful for half a day. A rotated or revoked token ends every
// session of its user (tokens.go).
const (
	SessionTTL  = 12 * time.Hour
	SessionIdle = 2 * time.Hour
)

// ErrNoSession is a session id that names no live session.
var ErrNoSession = errors.New("no console session")

// Session is a live session: its operator and the org they work in.
type Session struct {
	User  models.User
	OrgID uuid.UUID
}

func hashSessionID(id string) []byte { sum := sha256.Sum256([]byte(id)); return sum[:] }

// OpenSession authenticates an operator token and opens a session in the operator's first org,
// returning the session's id.
func (s *Service) OpenSession(ctx context.Context, token string) (string, error) {
	u, err := s.UserByToken(ctx, token)
	if err != nil {
		return "", err
	}
	orgs, err := s.Orgs(ctx, u.ID)
	if err != nil {
		return "", err
	}
	if len(orgs) == 0 {
		return "", problem.Fail(ErrForbidden, "this operator belongs to no org")
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("session id: %w", err)
	}
	id := base64.RawURLEncoding.EncodeToString(b)
	// The session opens only while the token it was made from is still the user's and not revoked,
	// checked under a share lock of the user's row: a rotation or revocation holding that row waits
	// for this insert and then ends the session, or this insert waits for it and opens none.
	opened := s.db.WithContext(ctx).Exec(`INSERT INTO console_sessions (id_hash, user_id, org_id, expires_at)
		SELECT ?, u.id, ?, ? FROM users u WHERE u.id = ? AND u.token_hash = ? AND u.token_revoked_at IS NULL FOR SHARE`,
		hashSessionID(id), orgs[0].ID, time.Now().Add(SessionIdle), u.ID, u.TokenHash)
	if opened.Error != nil {
		return "", fmt.Errorf("open session: %w", opened.Error)
	}
	if opened.RowsAffected == 0 {
		return "", ErrInvalidOperatorToken
	}
	// Sign-in is also when expired sessions are cleared, so the table holds about a day of them.
	s.db.WithContext(ctx).Exec(`DELETE FROM console_sessions WHERE expires_at < clock_timestamp() - interval '1 day'`)
	return id, nil
}

// Session finds the live session of id, or ErrNoSession, and moves its end to SessionIdle from
// now, never past SessionTTL after sign-in.
func (s *Service) Session(ctx context.Context, id string) (*Session, error) {
	var rows []models.ConsoleSession
	err := s.db.WithContext(ctx).Raw(`UPDATE console_sessions
		SET expires_at = LEAST(created_at + make_interval(secs => ?), clock_timestamp() + make_interval(secs => ?))
		WHERE id_hash = ? AND expires_at > clock_timestamp() RETURNING id_hash, user_id, org_id, expires_at`,
		SessionTTL.Seconds(), SessionIdle.Seconds(), hashSessionID(id)).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("load session: %w", err)
	}
	if len(rows) == 0 {
		return nil, ErrNoSession
	}
	out := &Session{OrgID: rows[0].OrgID}
	if err := s.db.WithContext(ctx).Where("id = ?", rows[0].UserID).Take(&out.User).Error; err != nil {
		return nil, fmt.Errorf("load operator: %w", err)
	}
	return out, nil
}

// MoveSession moves the session of id, the operator actor's, to another org of theirs; any other
// org does not exist for them (404), as in the APIs.
func (s *Service) MoveSession(ctx context.Context, id string, actor, org uuid.UUID) error {
	role, err := s.RoleOf(ctx, org, actor)
	if err != nil {
		return err
	}
	if role == "" {
		return problem.Fail(problem.NotFound, "org %s not found", org)
	}
	return s.db.WithContext(ctx).Model(&models.ConsoleSession{}).Where("id_hash = ?", hashSessionID(id)).Update("org_id", org).Error
}

// CloseSession ends the session of id.
func (s *Service) CloseSession(ctx context.Context, id string) error {
	return s.db.WithContext(ctx).Where("id_hash = ?", hashSessionID(id)).Delete(&models.ConsoleSession{}).Error
}
