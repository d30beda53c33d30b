package apikeys

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/problem"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
	"wds/models"
)

// IntegrationKeyPrefix marks Integration API keys.
const IntegrationKeyPrefix = "pck_int_"

// Integration key rate limits, requests per minute (docs/read-api.md and docs/integration-api.md).
const (
	DefaultRateLimit = 600
	MaxRateLimit     = 6000
)

// NewIntegrationKey is what minting an integration key asks for.
type NewIntegrationKey struct {
	OrgID            uuid.UUID
	StoreID          uuid.UUID
	ActorID          uuid.UUID
	Label            string
	PayloadFormat    string // generic (default) or nativestore
	Scopes           []string
	IPAllowlist      []string // CIDR ranges, IPv4 or IPv6; a bare address means just that address
	RequireSignature bool
	ExpiresAt        *time.Time
	RateLimit        int // 0 is the default
}

// CreatedIntegrationKey is a minted key with the secrets shown once.
type CreatedIntegrationKey struct {
	Key           *models.IntegrationKey
	Plaintext     string
	SigningSecret string // empty unless the key requires signatures
}

// CreateIntegrationKey mints a key pinned to (org, store) (owners and admins only) and audits it. A
// nativestore key always requires signatures, because the platform always signs. When signatures are
// required a signing secret is generated and stored sealed with box, the plaintext returned once.
func (s *Service) CreateIntegrationKey(ctx context.Context, in NewIntegrationKey) (*CreatedIntegrationKey, error) {
	if err := workspace.RequireRole(ctx, s.db, in.OrgID, in.ActorID, workspace.Managers...); err != nil {
		return nil, err
	}
	k, err := in.validate()
	if err != nil {
		return nil, err
	}
	if _, err := workspace.StoreOf(ctx, s.db, in.OrgID, in.StoreID); err != nil {
		return nil, err
	}
	out := &CreatedIntegrationKey{Key: k}
	if out.Plaintext, k.KeyHash, err = secrets.NewAPIKey(IntegrationKeyPrefix); err != nil {
		return nil, err
	}
	k.KeyHint = out.Plaintext[:hintLen]
	if k.RequireSignature {
		if out.SigningSecret, k.SigningSecretSealed, err = newSealedSecret(s.box); err != nil {
			return nil, err
		}
	}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Create(k).Error; err != nil {
			return err
		}
		return workspace.Audit(ctx, tx, models.AuditEntry{OrgID: k.OrgID, ActorID: in.ActorID,
			Action: "integration_key.create", TargetType: "integration_key", TargetID: k.ID,
			Details: map[string]any{"store_id": k.StoreID, "label": k.Label, "hint": k.KeyHint,
				"payload_format": k.PayloadFormat, "scopes": k.Scopes, "ip_allowlist": k.IPAllowlist,
				"require_signature": k.RequireSignature, "rate_limit": k.RateLimit, "expires_at": k.ExpiresAt}})
	})
	if err != nil {
		return nil, fmt.Errorf("create integration key: %w", err)
	}
	return out, nil
}

func newSealedSecret(box *secrets.Box) (string, []byte, error) {
	if box == nil {
		return "", nil, errors.New("create integration key: no encryption key configured to store the signing secret")
	}
	secret, err := secrets.NewSigningSecret()
	if err != nil {
		return "", nil, err
	}
	sealed, err := box.Seal([]byte(secret))
	if err != nil {
		return "", nil, fmt.Errorf("seal signing secret: %w", err)
	}
	return secret, sealed, nil
}

// validate checks the request and builds the row (without its key material).
func (in NewIntegrationKey) validate() (*models.IntegrationKey, error) {
	k := &models.IntegrationKey{ID: uuid.New(), OrgID: in.OrgID, StoreID: in.StoreID, Label: strings.TrimSpace(in.Label),
		PayloadFormat: in.PayloadFormat, RequireSignature: in.RequireSignature, CreatedBy: in.ActorID,
		ExpiresAt: in.ExpiresAt, RateLimit: in.RateLimit}
	if k.PayloadFormat == "" {
		k.PayloadFormat = models.FormatGeneric
	}
	switch k.PayloadFormat {
	case models.FormatGeneric:
	case models.FormatNativestore:
		k.RequireSignature = true
	default:
		return nil, problem.Fail(problem.Invalid, "payload_format must be generic or nativestore")
	}
	if k.RateLimit == 0 {
		k.RateLimit = DefaultRateLimit
	}
	if k.RateLimit < 1 || k.RateLimit > MaxRateLimit {
		return nil, problem.Fail(problem.Invalid, "rate_limit must be between 1 and %d requests per minute", MaxRateLimit)
	}
	var err error
	if k.Scopes, err = validScopes(in.Scopes); err != nil {
		return nil, err
	}
	if k.IPAllowlist, err = validCIDRs(in.IPAllowlist); err != nil {
		return nil, err
	}
	return k, nil
}

func validScopes(in []string) ([]string, error) {
	out := []string{}
	for _, s := range in {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !slices.Contains(models.IntegrationScopes, s) {
			return nil, problem.Fail(problem.Invalid, "unknown scope %q; scopes are %s", s, strings.Join(models.IntegrationScopes, ", "))
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	// A key with no scope could call nothing but the order lookup: surely a mistake, so the CLI and
	// the Operator API both refuse it here.
	if len(out) == 0 {
		return nil, problem.Fail(problem.Invalid, "scopes must name at least one of %s", strings.Join(models.IntegrationScopes, ", "))
	}
	return out, nil
}

// validCIDRs normalizes the allowlist to canonical prefixes (10.1.2.3/8 becomes 10.0.0.0/8, which is
// what PostgreSQL's cidr type insists on).
func validCIDRs(in []string) ([]string, error) {
	out := []string{}
	for _, c := range in {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		p, err := parsePrefix(c)
		if err != nil {
			return nil, problem.Fail(problem.Invalid, "ip allowlist entry %q is not a CIDR range such as 203.0.113.0/24 or 2001:db8::/32", c)
		}
		out = append(out, p.String())
	}
	return out, nil
}

func parsePrefix(s string) (netip.Prefix, error) {
	if !strings.Contains(s, "/") {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, err
		}
		return netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(p.Addr().Unmap(), p.Bits()).Masked(), nil
}

// RevokeIntegrationKey revokes a key (owners and admins of its org) and audits it. Revoking twice keeps
// the first revocation time. A key of an org the actor is not in is not found, as an unknown one is.
func (s *Service) RevokeIntegrationKey(ctx context.Context, id, actorID uuid.UUID) (*models.IntegrationKey, error) {
	var k models.IntegrationKey
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("id = ?", id).Take(&k).Error; err != nil {
			if errors.Is(err, gorm.ErrRecordNotFound) {
				return problem.Fail(problem.NotFound, "integration key %s not found", id)
			}
			return err
		}
		if err := workspace.RequireRowRole(ctx, tx, k.OrgID, actorID, "integration key", id, workspace.Managers...); err != nil {
			return err
		}
		if err := tx.Raw("UPDATE integration_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = ? RETURNING revoked_at", id).
			Find(&k.RevokedAt).Error; err != nil {
			return err
		}
		return workspace.Audit(ctx, tx, models.AuditEntry{OrgID: k.OrgID, ActorID: actorID,
			Action: "integration_key.revoke", TargetType: "integration_key", TargetID: k.ID,
			Details: map[string]any{"hint": k.KeyHint, "store_id": k.StoreID}})
	})
	if err != nil {
		return nil, fmt.Errorf("revoke integration key: %w", err)
	}
	return &k, nil
}

// AuthenticateIntegration finds the integration key for a bearer value. Unlike read keys, a revoked or
// expired integration key is told so (docs/integration-api.md): an integrator needs to know to ask for a new one.
func (s *Service) AuthenticateIntegration(ctx context.Context, bearer string, now time.Time) (*models.IntegrationKey, error) {
	var k models.IntegrationKey
	if err := findByKey(ctx, s.db, IntegrationKeyPrefix, bearer, &k); err != nil {
		return nil, fmt.Errorf("authenticate integration key: %w", err)
	}
	if k.RevokedAt != nil {
		return nil, ErrKeyRevoked
	}
	if k.ExpiresAt != nil && !now.Before(*k.ExpiresAt) {
		return nil, ErrKeyExpired
	}
	return &k, nil
}

// SigningSecret opens the key's sealed signing secret. A key that requires signatures but holds no
// secret is ErrSignatureUnconfigured.
func (s *Service) SigningSecret(k *models.IntegrationKey) ([]byte, error) {
	if len(k.SigningSecretSealed) == 0 {
		return nil, ErrSignatureUnconfigured
	}
	if s.box == nil {
		return nil, errors.New("open signing secret: no encryption key configured")
	}
	secret, err := s.box.Open(k.SigningSecretSealed)
	if err != nil {
		return nil, fmt.Errorf("open signing secret of key %s: %w", k.ID, err)
	}
	return secret, nil
}
