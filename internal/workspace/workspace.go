// Package workspace creates orgs, stores and operators, checks an operator's role, and writes the
// audit log. Its operations are the methods of Service, which the CLI, the console and the Operator
// API call; none of them holds these rules itself. The rules other domains apply inside their own
// transactions (RequireRole, RequireRowRole, StoreOf, Audit) take that transaction. Nothing here
// emits webhook events, so the service needs no event starter. Its rows (orgs, stores, users,
// memberships, roles, audit entries) are models' (models/workspace.go), as every table's are.
package workspace

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/database"
	"wds/internal/platform/problem"
	"wds/internal/platform/secrets"
	"wds/models"
)

// Service runs the workspace's operations over the database.
type Service struct {
	db *gorm.DB
}

// NewService is the operations over db.
func NewService(db *gorm.DB) *Service { return &Service{db: db} }

// RequireRole is the package's RequireRole over the service's database: who may act in an org.
func (s *Service) RequireRole(ctx context.Context, orgID, actorID uuid.UUID, roles ...models.Role) error {
	return RequireRole(ctx, s.db, orgID, actorID, roles...)
}

// CreateOrg makes an org and its order-number sequence in one transaction.
func (s *Service) CreateOrg(ctx context.Context, name string) (*models.Org, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, problem.Fail(problem.Invalid, "name is required")
	}
	org := &models.Org{ID: uuid.New(), Name: name}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(org).Error; err != nil {
			return err
		}
		// The sequence's name comes from the same SQL function that inserts use (migrations/00001).
		// Names cannot be bound as parameters; this one derives from a UUID we generated.
		var seq string
		if err := tx.Raw("SELECT wds_order_number_sequence(?)", org.ID).Find(&seq).Error; err != nil {
			return err
		}
		return tx.Exec("CREATE SEQUENCE " + seq + " START 1001").Error
	})
	if err != nil {
		return nil, fmt.Errorf("create org: %w", err)
	}
	return org, nil
}

var currencyRE = regexp.MustCompile(`^[A-Za-z]{3}$`)

// CreateStore adds a store to an org; currency defaults to USD.
func (s *Service) CreateStore(ctx context.Context, orgID uuid.UUID, name, currency string) (*models.Store, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, problem.Fail(problem.Invalid, "name is required")
	}
	if currency == "" {
		currency = "USD"
	}
	if !currencyRE.MatchString(currency) {
		return nil, problem.Fail(problem.Invalid, "currency must be three letters, e.g. USD")
	}
	if err := orgExists(ctx, s.db, orgID); err != nil {
		return nil, err
	}
	store := &models.Store{ID: uuid.New(), OrgID: orgID, Name: name, Currency: strings.ToUpper(currency)}
	if err := s.db.WithContext(ctx).Create(store).Error; err != nil {
		return nil, fmt.Errorf("create store: %w", err)
	}
	return store, nil
}

// StoreOf loads a store and checks it belongs to orgID.
func StoreOf(ctx context.Context, db *gorm.DB, orgID, storeID uuid.UUID) (*models.Store, error) {
	var s models.Store
	err := db.WithContext(ctx).Where("id = ? AND org_id = ?", storeID, orgID).Take(&s).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, problem.Fail(problem.NotFound, "store %s not found in org %s", storeID, orgID)
	}
	if err != nil {
		return nil, fmt.Errorf("load store: %w", err)
	}
	return &s, nil
}

func orgExists(ctx context.Context, db *gorm.DB, orgID uuid.UUID) error {
	var n int64
	if err := db.WithContext(ctx).Model(&models.Org{}).Where("id = ?", orgID).Count(&n).Error; err != nil {
		return fmt.Errorf("load org: %w", err)
	}
	if n == 0 {
		return problem.Fail(problem.NotFound, "org %s not found", orgID)
	}
	return nil
}

// OperatorTokenPrefix marks operator tokens so they are never confused with API keys.
const OperatorTokenPrefix = "wds_op_"

// CreateUser makes an operator with a role in an org and returns the token, shown only here.
func (s *Service) CreateUser(ctx context.Context, orgID uuid.UUID, email string, role models.Role) (*models.User, string, error) {
	email = strings.TrimSpace(email)
	if !strings.Contains(email, "@") {
		return nil, "", problem.Fail(problem.Invalid, "email must be an email address")
	}
	if !role.Valid() {
		return nil, "", problem.Fail(problem.Invalid, "role must be owner, admin or member")
	}
	if err := orgExists(ctx, s.db, orgID); err != nil {
		return nil, "", err
	}
	token, hash, err := secrets.NewAPIKey(OperatorTokenPrefix)
	if err != nil {
		return nil, "", err
	}
	u := &models.User{ID: uuid.New(), Email: email, TokenHash: hash}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(u).Error; err != nil {
			if errors.Is(err, gorm.ErrDuplicatedKey) {
				return problem.Fail(problem.Conflict, "a user with email %s exists", email)
			}
			return err
		}
		return tx.Create(&models.Membership{OrgID: orgID, UserID: u.ID, Role: role}).Error
	})
	if err != nil {
		return nil, "", fmt.Errorf("create user: %w", err)
	}
	return u, token, nil
}

// UserByToken authenticates an operator token. A revoked token (RevokeToken) is refused exactly as an
// unknown one is: the caller learns nothing about which.
func (s *Service) UserByToken(ctx context.Context, token string) (*models.User, error) {
	// As API keys are: a token that cannot be one costs no query, and the lookup waits its turn.
	if !secrets.WellFormedKey(OperatorTokenPrefix, token) {
		return nil, ErrInvalidOperatorToken
	}
	release, err := database.Admit(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("authenticate operator: %w", err)
	}
	defer release()
	var u models.User
	err = s.db.WithContext(ctx).Where("token_hash = ? AND token_revoked_at IS NULL", secrets.HashAPIKey(token)).Take(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, ErrInvalidOperatorToken
	}
	if err != nil {
		return nil, fmt.Errorf("authenticate operator: %w", err)
	}
	return &u, nil
}

// ErrSeveralOrgs is OnlyOrg's answer for an operator in no org or in more than one.
var ErrSeveralOrgs = errors.New("the operator belongs to no org or to several")

// OnlyOrg is the org of an operator who belongs to exactly one, so callers may leave the org out.
func (s *Service) OnlyOrg(ctx context.Context, actorID uuid.UUID) (uuid.UUID, error) {
	var orgs []uuid.UUID
	err := s.db.WithContext(ctx).Model(&models.Membership{}).Where("user_id = ?", actorID).Limit(2).Pluck("org_id", &orgs).Error
	if err != nil {
		return uuid.Nil, fmt.Errorf("find the operator's org: %w", err)
	}
	if len(orgs) != 1 {
		return uuid.Nil, ErrSeveralOrgs
	}
	return orgs[0], nil
}

// Managers may mint and revoke keys, manage endpoints and re-fire deliveries.
var Managers = []models.Role{models.RoleOwner, models.RoleAdmin}

// Anyone is every member of the org (listing).
var Anyone = []models.Role{models.RoleOwner, models.RoleAdmin, models.RoleMember}

// RequireRole checks that actor is a member of org with one of roles. To a non-member the org does
// not exist (problem.NotFound, exactly as for an unknown org): an operator learns nothing about orgs they
// do not belong to, and an id of another org is 404 wherever it appears. A member without one of
// roles is forbidden. orgID must be the caller's own words (a path, a parameter, a session), since
// the answer names it; for a row found by its id use RequireRowRole, which names the row instead.
func RequireRole(ctx context.Context, db *gorm.DB, orgID, actorID uuid.UUID, roles ...models.Role) error {
	role, err := RoleOf(ctx, db, orgID, actorID)
	if err != nil {
		return err
	}
	return allowed(role, roles)
}

// RoleOf is the actor's role in the org, for what any member may read but only some may read in
// full; to a non-member the org does not exist (404), as in RequireRole.
func RoleOf(ctx context.Context, db *gorm.DB, orgID, actorID uuid.UUID) (models.Role, error) {
	role, err := roleIn(ctx, db, orgID, actorID)
	if err != nil {
		return "", err
	}
	if role == "" {
		return "", problem.Fail(problem.NotFound, "org %s not found", orgID)
	}
	return role, nil
}

// RequireRowRole is RequireRole for a row found by its id alone (an order, a shipment): to an
// operator outside the row's org the row does not exist (404 naming what and rowID), so ids of other
// orgs reveal nothing; a member without one of roles is forbidden.
func RequireRowRole(ctx context.Context, db *gorm.DB, orgID, actorID uuid.UUID, what string, rowID uuid.UUID, roles ...models.Role) error {
	role, err := roleIn(ctx, db, orgID, actorID)
	if err != nil {
		return err
	}
	if role == "" {
		return problem.Fail(problem.NotFound, "%s %s not found", what, rowID)
	}
	return allowed(role, roles)
}

// roleIn is the actor's role in the org, or "" for a non-member.
func roleIn(ctx context.Context, db *gorm.DB, orgID, actorID uuid.UUID) (models.Role, error) {
	var m []models.Membership
	err := db.WithContext(ctx).Where("org_id = ? AND user_id = ?", orgID, actorID).Limit(1).Find(&m).Error
	if err != nil {
		return "", fmt.Errorf("check role: %w", err)
	}
	if len(m) == 0 {
		return "", nil
	}
	return m[0].Role, nil
}

func allowed(role models.Role, roles []models.Role) error {
	if slices.Contains(roles, role) {
		return nil
	}
	return problem.Fail(ErrForbidden, "role %s may not do this; owners and admins may", role)
}

// Audit writes one audit row; call it inside the transaction of the action it records.
func Audit(ctx context.Context, tx *gorm.DB, e models.AuditEntry) error {
	e.ID = uuid.New()
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	if err := tx.WithContext(ctx).Create(&e).Error; err != nil {
		return fmt.Errorf("write audit log: %w", err)
	}
	return nil
}

// Member is one operator of an org, as `wds admin user list` shows it (never the token).
type Member struct {
	ID        uuid.UUID   `json:"id"`
	Email     string      `json:"email"`
	Role      models.Role `json:"role"`
	CreatedAt time.Time   `json:"created_at"`
}

// ListMembers lists an org's operators, oldest first, so support staff can find an --actor id.
func (s *Service) ListMembers(ctx context.Context, orgID uuid.UUID) ([]Member, error) {
	if err := orgExists(ctx, s.db, orgID); err != nil {
		return nil, err
	}
	rows := []Member{}
	err := s.db.WithContext(ctx).Raw(`SELECT u.id, u.email, m.role, m.created_at FROM memberships m
		JOIN users u ON u.id = m.user_id WHERE m.org_id = ? ORDER BY m.created_at, u.id`, orgID).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("list members: %w", err)
	}
	return rows, nil
}

// RoleOf is the actor's role in the org, or "" when they are not a member: what a page shows, never
// what it allows (every operation checks the role itself).
func (s *Service) RoleOf(ctx context.Context, orgID, actorID uuid.UUID) (models.Role, error) {
	return roleIn(ctx, s.db, orgID, actorID)
}

// Orgs lists the orgs an operator belongs to, oldest membership first.
func (s *Service) Orgs(ctx context.Context, actorID uuid.UUID) ([]models.Org, error) {
	var orgs []models.Org
	err := s.db.WithContext(ctx).Raw(`SELECT o.* FROM orgs o JOIN memberships m ON m.org_id = o.id
		WHERE m.user_id = ? ORDER BY m.created_at, o.id`, actorID).Find(&orgs).Error
	if err != nil {
		return nil, fmt.Errorf("list the operator's orgs: %w", err)
	}
	return orgs, nil
}

// Stores lists an org's stores, oldest first.
func (s *Service) Stores(ctx context.Context, orgID uuid.UUID) ([]models.Store, error) {
	var out []models.Store
	if err := s.db.WithContext(ctx).Where("org_id = ?", orgID).Order("created_at, id").Find(&out).Error; err != nil {
		return nil, fmt.Errorf("list stores: %w", err)
	}
	return out, nil
}
