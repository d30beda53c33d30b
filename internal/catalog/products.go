package catalog

import (
	"context"
	"fmt"
	"time"

	"wds/internal/platform/paging"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// Product is a published shop product of a seller linked to the org; store_id is the store the
// seller is linked to.
type Product struct {
	ID         uuid.UUID `json:"id"`
	StoreID    uuid.UUID `json:"store_id"`
	SellerID   uuid.UUID `json:"seller_id"`
	Name       string    `json:"name"`
	SKU        *string   `json:"sku"`
	PriceCents int64     `json:"price_cents"`
	Currency   string    `json:"currency"`
	Published  bool      `json:"published"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// Products are reached through seller_links, so the org and store columns are the link's.
const productSelect = `SELECT t.id, l.store_id, t.seller_id, t.name, t.sku, t.price_cents, t.currency,
	t.published, t.created_at, t.updated_at
	FROM products t JOIN seller_links l ON l.seller_id = t.seller_id`

func (p Product) inUTC() Product {
	p.CreatedAt, p.UpdatedAt = utc(p.CreatedAt), utc(p.UpdatedAt)
	return p
}

// GetProduct loads one published product visible to the scope.
func GetProduct(ctx context.Context, db *gorm.DB, s paging.Scope, id uuid.UUID) (*Product, error) {
	cond, args := paging.ScopeFilter(s, "l.org_id", "l.store_id")
	p, err := paging.One[Product](ctx, db, "product", productSelect+" WHERE t.published AND t.id = ? AND "+cond, append([]any{id}, args...)...)
	if err != nil {
		return nil, err
	}
	u := p.inUTC()
	return &u, nil
}

// ListProducts loads one page of published products; an org with no linked seller gets an empty list.
func ListProducts(ctx context.Context, db *gorm.DB, q paging.ListQuery) (paging.Page[Product], error) {
	tail, args := paging.Keyset(q, "l.org_id", "l.store_id", "t.published")
	var rows []Product
	if err := db.WithContext(ctx).Raw(productSelect+tail, args...).Find(&rows).Error; err != nil {
		return paging.Page[Product]{}, fmt.Errorf("list products: %w", err)
	}
	for i := range rows {
		rows[i] = rows[i].inUTC()
	}
	return paging.FitPage(rows, q.Limit, func(p Product) (time.Time, uuid.UUID) { return p.UpdatedAt, p.ID }), nil
}
