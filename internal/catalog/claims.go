package catalog

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/events"
	"wds/internal/platform/problem"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
	"wds/models"
)

// ClaimTokenPrefix marks vendor claim tokens.
const ClaimTokenPrefix = "vct_"

// ClaimTokenTTL is how long a claim token may be used.
const ClaimTokenTTL = 7 * 24 * time.Hour

// ClaimToken is a freshly issued token, shown only here.
type ClaimToken struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
}

// IssueClaimToken makes a single-use token (owners and admins only) by which the supplier claims its
// vendor profile, valid seven days. It replaces the vendor's previous token; only its SHA-256 is
// stored, and neither the audit row nor any error carries it.
func (s *Service) IssueClaimToken(ctx context.Context, actorID, vendorID uuid.UUID) (*ClaimToken, error) {
	token, hash, err := secrets.NewAPIKey(ClaimTokenPrefix)
	if err != nil {
		return nil, err
	}
	out := &ClaimToken{Token: token}
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		org, claimed, err := lockClaim(ctx, tx, vendorID)
		if err != nil {
			return err
		}
		if err := workspace.RequireRowRole(ctx, tx, org, actorID, "vendor", vendorID, workspace.Managers...); err != nil {
			return err
		}
		if claimed {
			return problem.Fail(ErrVendorAlreadyClaimed, "vendor %s is already claimed", vendorID)
		}
		var expires []time.Time
		err = tx.Raw(`INSERT INTO vendor_claim_tokens (vendor_id, token_hash, expires_at, created_by)
			VALUES (?, ?, clock_timestamp() + ?::interval, ?)
			ON CONFLICT (vendor_id) DO UPDATE SET token_hash = excluded.token_hash, expires_at = excluded.expires_at,
				used_at = NULL, created_by = excluded.created_by, created_at = clock_timestamp()
			RETURNING expires_at`, vendorID, hash, fmt.Sprintf("%d seconds", int(ClaimTokenTTL.Seconds())), actorID).Find(&expires).Error
		if err != nil {
			return fmt.Errorf("store claim token: %w", err)
		}
		out.ExpiresAt = expires[0].UTC()
		return audit(ctx, tx, org, actorID, "vendor.claim_token", vendorID, map[string]any{"expires_at": out.ExpiresAt})
	})
	if err != nil {
		return nil, fmt.Errorf("issue claim token: %w", err)
	}
	return out, nil
}

// lockClaim locks a vendor's row and says its org and whether it is claimed.
func lockClaim(ctx context.Context, tx *gorm.DB, vendorID uuid.UUID) (org uuid.UUID, claimed bool, err error) {
	var rows []struct {
		OrgID   uuid.UUID
		Claimed bool
	}
	if err := tx.WithContext(ctx).Raw(`SELECT org_id, claimed_at IS NOT NULL AS claimed FROM vendors WHERE id = ? FOR UPDATE`, vendorID).
		Find(&rows).Error; err != nil {
		return uuid.Nil, false, fmt.Errorf("lock vendor: %w", err)
	}
	if len(rows) == 0 {
		return uuid.Nil, false, problem.Fail(problem.NotFound, "vendor %s not found", vendorID)
	}
	return rows[0].OrgID, rows[0].Claimed, nil
}

// Claim is what claiming a vendor profile sends: the token and who claims it.
type Claim struct {
	Token string  `json:"token"`
	Email string  `json:"email"`
	Name  *string `json:"name"`
}

// Claimed answers a claim.
type Claimed struct {
	VendorID  uuid.UUID `json:"vendor_id"`
	ClaimedAt time.Time `json:"claimed_at"`
}

// ClaimVendor spends a claim token: the vendor records who claimed it and when (and the name they
// give), and vendor.claimed fires. The token is the credential. An unknown, used or expired token is
// invalid_claim_token; a vendor already claimed is vendor_already_claimed. Locks are taken in
// IssueClaimToken's order, the vendor's row and then its token's, so a re-issue racing a claim waits
// instead of deadlocking; of concurrent claims with one token exactly one succeeds.
func (s *Service) ClaimVendor(ctx context.Context, in Claim) (*Claimed, error) {
	email, err := text("email", models.Optional[string]{Set: true, Value: in.Email}, maxEmail)
	if err != nil {
		return nil, err
	}
	if email == nil || !strings.Contains(*email, "@") {
		return nil, problem.Fail(problem.Invalid, "email must be an email address")
	}
	name, err := text("name", models.Optional[string]{Set: in.Name != nil, Value: deref(in.Name)}, maxName)
	if err != nil {
		return nil, err
	}
	if !secrets.WellFormedKey(ClaimTokenPrefix, in.Token) {
		return nil, invalidToken()
	}
	var out Claimed
	var written *Vendor
	err = s.inTx(ctx, &written, func(tx *gorm.DB) (uuid.UUID, *Vendor, error) {
		vendorID, err := tokenVendor(ctx, tx, in.Token)
		if err != nil {
			return uuid.Nil, nil, err
		}
		org, claimed, err := lockClaim(ctx, tx, vendorID)
		if err != nil {
			return org, nil, err
		}
		if err := spendToken(ctx, tx, in.Token, vendorID); err != nil {
			return org, nil, err
		}
		if claimed {
			return org, nil, problem.Fail(ErrVendorAlreadyClaimed, "this vendor profile is already claimed")
		}
		v, err := WriteVendor(ctx, tx, `UPDATE vendors t SET claimed_at = clock_timestamp(), claimed_by_email = ?,
			name = coalesce(?, name) WHERE id = ?`, *email, name, vendorID)
		if err != nil {
			return org, nil, err
		}
		out.VendorID, out.ClaimedAt = v.ID, *v.ClaimedAt
		return org, v, nil
	}, events.VendorClaimed)
	if err != nil {
		return nil, fmt.Errorf("claim vendor: %w", err)
	}
	return &out, nil
}

// tokenVendor is the vendor a token was issued for, read without a lock: the claim locks the vendor
// next and then checks the token again under its own lock (spendToken).
func tokenVendor(ctx context.Context, tx *gorm.DB, token string) (uuid.UUID, error) {
	var vendors []uuid.UUID
	err := tx.WithContext(ctx).Raw(`SELECT vendor_id FROM vendor_claim_tokens WHERE token_hash = ?`, secrets.HashAPIKey(token)).
		Find(&vendors).Error
	if err != nil {
		return uuid.Nil, fmt.Errorf("look up claim token: %w", err)
	}
	if len(vendors) == 0 {
		return uuid.Nil, invalidToken()
	}
	return vendors[0], nil
}

// spendToken marks the vendor's token used if it is still this live token: a re-issue that committed
// since tokenVendor replaced it (invalid). The row lock makes concurrent claims with one token take
// turns, and every one after the first finds it used.
func spendToken(ctx context.Context, tx *gorm.DB, token string, vendorID uuid.UUID) error {
	var live []bool
	err := tx.WithContext(ctx).Raw(`SELECT used_at IS NULL AND expires_at > clock_timestamp() AND token_hash = ?
		FROM vendor_claim_tokens WHERE vendor_id = ? FOR UPDATE`, secrets.HashAPIKey(token), vendorID).Find(&live).Error
	if err != nil {
		return fmt.Errorf("look up claim token: %w", err)
	}
	if len(live) == 0 || !live[0] {
		return invalidToken()
	}
	if err := tx.Exec(`UPDATE vendor_claim_tokens SET used_at = clock_timestamp() WHERE vendor_id = ?`, vendorID).Error; err != nil {
		return fmt.Errorf("spend claim token: %w", err)
	}
	return nil
}

func invalidToken() error {
	return problem.Fail(ErrInvalidClaimToken, "the claim token is unknown, used or expired; ask the workspace for a new one")
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
