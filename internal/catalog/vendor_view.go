package catalog

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/paging"
)

// Vendor is a supplier CRM row; vendors have no slug, the UUID is the only handle.
type Vendor struct {
	ID             uuid.UUID  `json:"id"`
	StoreID        uuid.UUID  `json:"store_id"`
	Name           string     `json:"name"`
	Email          *string    `json:"email"`
	Phone          *string    `json:"phone"`
	Notes          *string    `json:"notes"`
	ClaimedAt      *time.Time `json:"claimed_at"`
	ClaimedByEmail *string    `json:"claimed_by_email"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
}

// vendorColumns are a vendor's view, of the vendors table named t.
const vendorColumns = `t.id, t.store_id, t.name, t.email, t.phone, t.notes, t.claimed_at, t.claimed_by_email,
	t.created_at, t.updated_at`

const vendorSelect = `SELECT ` + vendorColumns + ` FROM vendors t`

func (v Vendor) inUTC() Vendor {
	v.CreatedAt, v.UpdatedAt, v.ClaimedAt = utc(v.CreatedAt), utc(v.UpdatedAt), utcPtr(v.ClaimedAt)
	return v
}

// WriteVendor runs write, an INSERT or UPDATE of one vendor that names the table t, and returns the
// row it wrote as GetVendor shows it, or nil when it wrote none.
func WriteVendor(ctx context.Context, db *gorm.DB, write string, args ...any) (*Vendor, error) {
	var rows []Vendor
	if err := db.WithContext(ctx).Raw(write+" RETURNING "+vendorColumns, args...).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("write vendor: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	v := rows[0].inUTC()
	return &v, nil
}

// GetVendor loads one vendor within scope.
func GetVendor(ctx context.Context, db *gorm.DB, s paging.Scope, id uuid.UUID) (*Vendor, error) {
	cond, args := paging.ScopeFilter(s, "t.org_id", "t.store_id")
	v, err := paging.One[Vendor](ctx, db, "vendor", vendorSelect+" WHERE t.id = ? AND "+cond, append([]any{id}, args...)...)
	if err != nil {
		return nil, err
	}
	u := v.inUTC()
	return &u, nil
}

// ListVendors loads one page of vendors.
func ListVendors(ctx context.Context, db *gorm.DB, q paging.ListQuery) (paging.Page[Vendor], error) {
	tail, args := paging.Keyset(q, "t.org_id", "t.store_id")
	var rows []Vendor
	if err := db.WithContext(ctx).Raw(vendorSelect+tail, args...).Find(&rows).Error; err != nil {
		return paging.Page[Vendor]{}, fmt.Errorf("list vendors: %w", err)
	}
	for i := range rows {
		rows[i] = rows[i].inUTC()
	}
	return paging.FitPage(rows, q.Limit, func(v Vendor) (time.Time, uuid.UUID) { return v.UpdatedAt, v.ID }), nil
}

// utc and utcPtr give a view's times in UTC, as every API shows them.
func utc(t time.Time) time.Time { return t.UTC() }

func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
