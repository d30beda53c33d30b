// Package catalog holds the supplier CRM (vendors: add, edit, and the claim-token flow by which a
// supplier claims its profile), marketplace sellers, their links to an org's stores, and products.
// The operations are the methods of Service; a write that announces a vendor event starts it as
// soon as its transaction commits (EventStarter), whichever adapter called it. Its rows are models'
// (models/catalog.go, models/vendor.go); a vendor's shape is Vendor.
package catalog

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/problem"
	"wds/internal/workspace"
	"wds/models"
)

// Service runs the catalog's operations over the database.
type Service struct {
	db     *gorm.DB
	events EventStarter
}

// EventStarter starts webhook delivery of events already committed to the outbox (worker.Starter).
// It must not fail the write: what it cannot start now the worker's relay starts after its grace.
type EventStarter interface {
	StartEvents(ctx context.Context, eventIDs []uuid.UUID)
}

// NewService is the operations over db; events nil leaves every event to the worker's relay.
func NewService(db *gorm.DB, events EventStarter) *Service {
	return &Service{db: db, events: events}
}

// CreateSeller adds a marketplace seller.
func (s *Service) CreateSeller(ctx context.Context, name string) (*models.Seller, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, problem.Fail(problem.Invalid, "name is required")
	}
	seller := &models.Seller{ID: uuid.New(), Name: name}
	if err := s.db.WithContext(ctx).Create(seller).Error; err != nil {
		return nil, fmt.Errorf("create seller: %w", err)
	}
	return seller, nil
}

// LinkSeller makes a seller's published products visible to an org through one of its stores. Linking
// again moves the link to the given store.
func (s *Service) LinkSeller(ctx context.Context, orgID, storeID, sellerID uuid.UUID) (*models.SellerLink, error) {
	if _, err := workspace.StoreOf(ctx, s.db, orgID, storeID); err != nil {
		return nil, err
	}
	if err := exists(ctx, s.db, &models.Seller{}, sellerID, "seller"); err != nil {
		return nil, err
	}
	l := &models.SellerLink{OrgID: orgID, SellerID: sellerID, StoreID: storeID}
	err := s.db.WithContext(ctx).Exec(`INSERT INTO seller_links (org_id, seller_id, store_id) VALUES (?, ?, ?)
		ON CONFLICT (org_id, seller_id) DO UPDATE SET store_id = EXCLUDED.store_id`, orgID, sellerID, storeID).Error
	if err != nil {
		return nil, fmt.Errorf("link seller: %w", err)
	}
	return l, nil
}

// NewProduct is what creating a product asks for.
type NewProduct struct {
	SellerID   uuid.UUID
	Name       string
	PriceCents int64
	SKU        string
	Currency   string
	Published  bool
}

// CreateProduct adds a product to a seller's shop.
func (s *Service) CreateProduct(ctx context.Context, in NewProduct) (*models.Product, error) {
	in.Name = strings.TrimSpace(in.Name)
	switch {
	case in.Name == "":
		return nil, problem.Fail(problem.Invalid, "name is required")
	case in.PriceCents < 0:
		return nil, problem.Fail(problem.Invalid, "price_cents must be >= 0")
	}
	if in.Currency == "" {
		in.Currency = "USD"
	}
	if err := exists(ctx, s.db, &models.Seller{}, in.SellerID, "seller"); err != nil {
		return nil, err
	}
	p := &models.Product{ID: uuid.New(), SellerID: in.SellerID, Name: in.Name, PriceCents: in.PriceCents,
		Currency: strings.ToUpper(in.Currency), Published: in.Published}
	if in.SKU != "" {
		p.SKU = &in.SKU
	}
	if err := s.db.WithContext(ctx).Create(p).Error; err != nil {
		return nil, fmt.Errorf("create product: %w", err)
	}
	return p, nil
}

func exists(ctx context.Context, db *gorm.DB, model any, id uuid.UUID, what string) error {
	err := db.WithContext(ctx).Model(model).Select("id").Where("id = ?", id).Take(&struct{ ID uuid.UUID }{}).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return problem.Fail(problem.NotFound, "%s %s not found", what, id)
	}
	if err != nil {
		return fmt.Errorf("load %s: %w", what, err)
	}
	return nil
}
