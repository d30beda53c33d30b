package workspace

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"wds/internal/platform/problem"
	"wds/internal/platform/secrets"
	"wds/models"
)

// RotatedToken is a user's new operator token, shown only in this answer.
type RotatedToken struct {
	ID    uuid.UUID `json:"id"`
	Token string    `json:"token"`
}

// RevokedToken says since when a user's operator token no longer authenticates.
type RevokedToken struct {
	ID        uuid.UUID `json:"id"`
	RevokedAt time.Time `json:"revoked_at"`
}

// RotateToken gives the caller a new operator token. The old one stops working when this commits, a
// revoked user may authenticate again (with the new token only), and the user's console sessions end.
// Only the token's holder receives it: a manager who could rotate someone else's token would hold
// their credential (an admin taking over an owner). A manager revokes another's token instead, and
// the holder gets a new one from ReissueToken.
func (s *Service) RotateToken(ctx context.Context, userID, actorID uuid.UUID) (*RotatedToken, error) {
	return s.newToken(ctx, userID, actorID, holderOnly)
}

// ReissueToken is RotateToken for `wds admin user rotate-token`, which runs with the database's own
// credentials: the way back for an operator who lost or revoked their token. The actor may be the
// user or an owner or admin of each of the user's orgs.
func (s *Service) ReissueToken(ctx context.Context, userID, actorID uuid.UUID) (*RotatedToken, error) {
	return s.newToken(ctx, userID, actorID, managers)
}

func (s *Service) newToken(ctx context.Context, userID, actorID uuid.UUID, may tokenRule) (*RotatedToken, error) {
	token, hash, err := secrets.NewAPIKey(OperatorTokenPrefix)
	if err != nil {
		return nil, err
	}
	err = changeToken(ctx, s.db, userID, actorID, "user.rotate_token", may, func(tx *gorm.DB, _ *models.User, _ map[string]any) error {
		return tx.Exec(`UPDATE users SET token_hash = ?, token_revoked_at = NULL WHERE id = ?`, hash, userID).Error
	})
	if err != nil {
		return nil, fmt.Errorf("rotate operator token: %w", err)
	}
	return &RotatedToken{ID: userID, Token: token}, nil
}

// RevokeToken stops a user's operator token from authenticating until RotateToken gives them a new
// one, and ends the user's console sessions. Revoking again keeps the first time. Who may: the user;
// an owner or admin of each of the user's orgs, but an owner's token only an owner.
func (s *Service) RevokeToken(ctx context.Context, userID, actorID uuid.UUID) (*RevokedToken, error) {
	out := &RevokedToken{ID: userID}
	err := changeToken(ctx, s.db, userID, actorID, "user.revoke_token", managersBelowOwners, func(tx *gorm.DB, u *models.User, details map[string]any) error {
		details["already_revoked"] = u.TokenRevokedAt != nil
		if u.TokenRevokedAt != nil {
			out.RevokedAt = *u.TokenRevokedAt
			return nil
		}
		return tx.Raw(`UPDATE users SET token_revoked_at = now() WHERE id = ? RETURNING token_revoked_at`, userID).Find(&out.RevokedAt).Error
	})
	if err != nil {
		return nil, fmt.Errorf("revoke operator token: %w", err)
	}
	return out, nil
}

// changeToken runs change on the user's locked row, ends the user's console sessions and writes one
// audit row (action, target the user) in each org the user belongs to, all in one transaction. The
// audit rows never hold the token; details says how many console sessions ended.
func changeToken(ctx context.Context, db *gorm.DB, userID, actorID uuid.UUID, action string, may tokenRule,
	change func(tx *gorm.DB, u *models.User, details map[string]any) error) error {
	return db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		u, orgs, err := lockTokenHolder(ctx, tx, userID, actorID, may)
		if err != nil {
			return err
		}
		details := map[string]any{}
		if err := change(tx, u, details); err != nil {
			return err
		}
		// Sessions belong to the user, not to the token they signed in with: all of them end. A
		// sign-in racing this transaction waits for the row lock taken above (console.signIn), so
		// none opens with the old token once this commits.
		ended := tx.Exec(`DELETE FROM console_sessions WHERE user_id = ?`, userID)
		if ended.Error != nil {
			return fmt.Errorf("end console sessions: %w", ended.Error)
		}
		details["console_sessions_ended"] = ended.RowsAffected
		for _, org := range orgs {
			if err := Audit(ctx, tx, models.AuditEntry{OrgID: org, ActorID: actorID, Action: action,
				TargetType: "user", TargetID: userID, Details: details}); err != nil {
				return err
			}
		}
		return nil
	})
}

// tokenRule says who, besides the holder, may change a user's token.
type tokenRule int

const (
	holderOnly          tokenRule = iota // nobody: only the holder (rotation through the APIs)
	managers                             // an owner or admin of each of the user's orgs
	managersBelowOwners                  // as managers, but an owner's token only an owner
)

// lockTokenHolder locks the user's row and returns it with the user's orgs, oldest membership first,
// once it has checked that the actor may change the user's token under rule may: anyone their own;
// others as may says, provided they manage every org the user belongs to (the token works in all of
// them). A user the actor shares no org with does not exist for them (404), as ids of other orgs
// never do.
func lockTokenHolder(ctx context.Context, tx *gorm.DB, userID, actorID uuid.UUID, may tokenRule) (*models.User, []uuid.UUID, error) {
	notFound := problem.Fail(problem.NotFound, "user %s not found", userID)
	var users []models.User
	if err := tx.WithContext(ctx).Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", userID).Limit(1).Find(&users).Error; err != nil {
		return nil, nil, fmt.Errorf("load user: %w", err)
	}
	if len(users) == 0 {
		return nil, nil, notFound
	}
	var held []models.Membership
	if err := tx.WithContext(ctx).Where("user_id = ?", userID).Order("created_at, org_id").Find(&held).Error; err != nil {
		return nil, nil, fmt.Errorf("load memberships: %w", err)
	}
	orgs := make([]uuid.UUID, len(held))
	roles := make(map[uuid.UUID]models.Role, len(held))
	for i, m := range held {
		orgs[i] = m.OrgID
		roles[m.OrgID] = m.Role
	}
	if len(orgs) == 0 {
		if userID == actorID {
			return nil, nil, problem.Fail(ErrForbidden, "this operator belongs to no org")
		}
		return nil, nil, notFound
	}
	if userID == actorID {
		return &users[0], orgs, nil
	}
	var actorRoles []models.Membership
	if err := tx.WithContext(ctx).Where("user_id = ? AND org_id IN ?", actorID, orgs).Find(&actorRoles).Error; err != nil {
		return nil, nil, fmt.Errorf("check role: %w", err)
	}
	if len(actorRoles) == 0 {
		return nil, nil, notFound
	}
	if may == holderOnly {
		return nil, nil, problem.Fail(ErrForbidden,
			"only user %s may rotate their own token; an owner or admin may revoke it instead", userID)
	}
	for _, m := range actorRoles {
		if err := allowed(m.Role, Managers); err != nil {
			return nil, nil, err
		}
		if may == managersBelowOwners && roles[m.OrgID] == models.RoleOwner && m.Role != models.RoleOwner {
			return nil, nil, problem.Fail(ErrForbidden, "user %s is an owner; only an owner may revoke their token", userID)
		}
	}
	if len(actorRoles) < len(orgs) {
		return nil, nil, problem.Fail(ErrForbidden,
			"user %s also belongs to an org you do not manage, where their token works too", userID)
	}
	return &users[0], orgs, nil
}
