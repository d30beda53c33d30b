package views

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/database"
	"wds/models"
)

// Client is a CRM client row.
type Client struct {
	ID             uuid.UUID       `json:"id"`
	StoreID        uuid.UUID       `json:"store_id"`
	Email          *string         `json:"email"`
	DisplayName    string          `json:"display_name"`
	FirstName      string          `json:"first_name"`
	LastName       string          `json:"last_name"`
	Phone          string          `json:"phone"`
	ClientType     string          `json:"client_type"`
	Tags           []string        `json:"tags"`
	BillingAddress json.RawMessage `json:"billing_address"`
	Source         *ClientSource   `json:"source"`
	CreatedAt      time.Time       `json:"created_at"`
	UpdatedAt      time.Time       `json:"updated_at"`
}

// ClientSource is stamped on clients created from an integration.
type ClientSource struct {
	Label            *string    `json:"label"`
	ExternalID       *string    `json:"external_id"`
	IntegrationKeyID *uuid.UUID `json:"integration_key_id"`
}

// clientColumns are a client's view, of the clients table named t.
const clientColumns = `t.id, t.store_id, t.email, t.display_name, t.first_name, t.last_name, t.phone,
	t.client_type, t.tags, t.billing_address, t.source_label, t.source_external_id,
	t.source_integration_key_id, t.created_at, t.updated_at`

const clientSelect = `SELECT ` + clientColumns + ` FROM clients t`

// clientView is the client r as GetClient shows it.
func clientView(r models.Client) Client {
	c := Client{ID: r.ID, StoreID: r.StoreID, Email: r.Email, DisplayName: r.DisplayName, FirstName: r.FirstName,
		LastName: r.LastName, Phone: r.Phone, ClientType: r.ClientType, Tags: []string(r.Tags),
		BillingAddress: json.RawMessage(r.BillingAddress), CreatedAt: utc(r.CreatedAt), UpdatedAt: utc(r.UpdatedAt)}
	if c.Tags == nil {
		c.Tags = []string{}
	}
	if len(c.BillingAddress) == 0 {
		c.BillingAddress = json.RawMessage("null")
	}
	if r.SourceLabel != nil || r.SourceIntegrationKeyID != nil {
		c.Source = &ClientSource{Label: r.SourceLabel, ExternalID: r.SourceExternalID, IntegrationKeyID: r.SourceIntegrationKeyID}
	}
	return c
}

// GetClient loads one client within scope.
func GetClient(ctx context.Context, db *gorm.DB, s Scope, id uuid.UUID) (*Client, error) {
	cond, args := ScopeFilter(s, "t.org_id", "t.store_id")
	row, err := one[models.Client](ctx, db, "client", clientSelect+" WHERE t.id = ? AND "+cond, append([]any{id}, args...)...)
	if err != nil {
		return nil, err
	}
	c := clientView(*row)
	return &c, nil
}

// WriteClient runs write, an INSERT or UPDATE of one client that names the table t (INSERT INTO
// clients AS t, UPDATE clients t), and returns the row it wrote as GetClient shows it, or nil when it
// wrote none. A write that announces the client so needs no second statement to read it back.
func WriteClient(ctx context.Context, db *gorm.DB, write string, args ...any) (*Client, error) {
	var rows []models.Client
	if err := db.WithContext(ctx).Raw(write+ClientReturning, args...).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("write client: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	c := clientView(rows[0])
	return &c, nil
}

// ClientReturning is the RETURNING clause of a client write sent without WriteClient (in a batch):
// ScanClient reads its row.
const ClientReturning = " RETURNING " + clientColumns

// ScanClient reads a row of ClientReturning as GetClient shows the client.
func ScanClient(row database.Row) (*Client, error) {
	var r models.Client
	var tags []string
	err := row.Scan(&r.ID, &r.StoreID, &r.Email, &r.DisplayName, &r.FirstName, &r.LastName, &r.Phone,
		&r.ClientType, &tags, &r.BillingAddress, &r.SourceLabel, &r.SourceExternalID,
		&r.SourceIntegrationKeyID, &r.CreatedAt, &r.UpdatedAt)
	if err != nil {
		return nil, fmt.Errorf("scan client: %w", err)
	}
	r.Tags = tags
	c := clientView(r)
	return &c, nil
}

// ListClients loads one page of clients.
func ListClients(ctx context.Context, db *gorm.DB, q ListQuery) (Page[Client], error) {
	tail, args := Keyset(q, "t.org_id", "t.store_id")
	var rows []models.Client
	if err := db.WithContext(ctx).Raw(clientSelect+tail, args...).Find(&rows).Error; err != nil {
		return Page[Client]{}, fmt.Errorf("list clients: %w", err)
	}
	out := make([]Client, len(rows))
	for i, r := range rows {
		out[i] = clientView(r)
	}
	return NewPage(out, q.Limit, func(c Client) (time.Time, uuid.UUID) { return c.UpdatedAt, c.ID }), nil
}

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
func GetVendor(ctx context.Context, db *gorm.DB, s Scope, id uuid.UUID) (*Vendor, error) {
	cond, args := ScopeFilter(s, "t.org_id", "t.store_id")
	v, err := one[Vendor](ctx, db, "vendor", vendorSelect+" WHERE t.id = ? AND "+cond, append([]any{id}, args...)...)
	if err != nil {
		return nil, err
	}
	u := v.inUTC()
	return &u, nil
}

// ListVendors loads one page of vendors.
func ListVendors(ctx context.Context, db *gorm.DB, q ListQuery) (Page[Vendor], error) {
	tail, args := Keyset(q, "t.org_id", "t.store_id")
	var rows []Vendor
	if err := db.WithContext(ctx).Raw(vendorSelect+tail, args...).Find(&rows).Error; err != nil {
		return Page[Vendor]{}, fmt.Errorf("list vendors: %w", err)
	}
	for i := range rows {
		rows[i] = rows[i].inUTC()
	}
	return NewPage(rows, q.Limit, func(v Vendor) (time.Time, uuid.UUID) { return v.UpdatedAt, v.ID }), nil
}
