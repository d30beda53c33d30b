package catalog

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/events"
	"wds/internal/outbox"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/internal/workspace"
	"wds/models"
)

// Field limits of a vendor, in characters.
const (
	maxName  = 200
	maxEmail = 320
	maxPhone = 200
	maxNotes = 5000
)

// VendorFields are a vendor's fields as an operator sends them: to add a vendor (name required) or
// to edit one (only the fields present change; null clears an optional one).
type VendorFields struct {
	Name  models.Optional[string] `json:"name"`
	Email models.Optional[string] `json:"email"`
	Phone models.Optional[string] `json:"phone"`
	Notes models.Optional[string] `json:"notes"`
}

// vendorRow is what an edit may change.
type vendorRow struct {
	Name                string
	Email, Phone, Notes *string
}

// apply checks the fields sent and writes them over r.
func (r *vendorRow) apply(in VendorFields) error {
	if in.Name.Set {
		name, err := text("name", in.Name, maxName)
		if err != nil {
			return err
		}
		if name == nil {
			return problem.Fail(problem.Invalid, "name is required and cannot be cleared")
		}
		r.Name = *name
	}
	for _, f := range []struct {
		name  string
		in    models.Optional[string]
		max   int
		field **string
	}{{"email", in.Email, maxEmail, &r.Email}, {"phone", in.Phone, maxPhone, &r.Phone}, {"notes", in.Notes, maxNotes, &r.Notes}} {
		if !f.in.Set {
			continue
		}
		v, err := text(f.name, f.in, f.max)
		if err != nil {
			return err
		}
		*f.field = v
	}
	if r.Email != nil && !strings.Contains(*r.Email, "@") {
		return problem.Fail(problem.Invalid, "email must be an email address")
	}
	return nil
}

// text is an optional text field trimmed, nil when null or empty, refused past max characters or
// holding control characters other than line breaks and tabs (notes may have several lines).
func text(field string, o models.Optional[string], max int) (*string, error) {
	if o.Null {
		return nil, nil
	}
	v := strings.TrimSpace(o.Value)
	switch {
	case v == "":
		return nil, nil
	case !utf8.ValidString(v) || utf8.RuneCountInString(v) > max:
		return nil, problem.Fail(problem.Invalid, "%s must be at most %d characters of text", field, max)
	case strings.ContainsFunc(v, func(r rune) bool { return (r < 0x20 && r != '\n' && r != '\t' && r != '\r') || r == 0x7f }):
		return nil, problem.Fail(problem.Invalid, "%s must not hold control characters", field)
	}
	return &v, nil
}

func (r vendorRow) equal(o vendorRow) bool {
	return r.Name == o.Name && ptrEqual(r.Email, o.Email) && ptrEqual(r.Phone, o.Phone) && ptrEqual(r.Notes, o.Notes)
}

func ptrEqual(a, b *string) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// CreateVendor adds a supplier to a store's CRM (any member of the org) and emits vendor.created.
func (s *Service) CreateVendor(ctx context.Context, orgID, actorID, storeID uuid.UUID, in VendorFields) (*Vendor, error) {
	if err := workspace.RequireRole(ctx, s.db, orgID, actorID, workspace.Anyone...); err != nil {
		return nil, err
	}
	if !in.Name.Set || in.Name.Null {
		return nil, problem.Fail(problem.Invalid, "name is required")
	}
	var row vendorRow
	if err := row.apply(in); err != nil {
		return nil, err
	}
	var out *Vendor
	err := s.inTx(ctx, &out, func(tx *gorm.DB) (uuid.UUID, *Vendor, error) {
		if _, err := workspace.StoreOf(ctx, tx, orgID, storeID); err != nil {
			return orgID, nil, err
		}
		v, err := WriteVendor(ctx, tx, `INSERT INTO vendors AS t (id, org_id, store_id, name, email, phone, notes)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, uuid.New(), orgID, storeID, row.Name, row.Email, row.Phone, row.Notes)
		if err != nil {
			return orgID, nil, err
		}
		return orgID, v, audit(ctx, tx, orgID, actorID, "vendor.create", v.ID, map[string]any{"store_id": storeID})
	}, events.VendorCreated)
	if err != nil {
		return nil, fmt.Errorf("create vendor: %w", err)
	}
	return out, nil
}

// UpdateVendor edits a vendor (any member of its org) and emits vendor.updated when a stored field
// changed; an edit that changes nothing writes nothing.
func (s *Service) UpdateVendor(ctx context.Context, actorID, vendorID uuid.UUID, in VendorFields) (*Vendor, error) {
	var out *Vendor
	err := s.inTx(ctx, &out, func(tx *gorm.DB) (uuid.UUID, *Vendor, error) {
		org, before, err := lockVendor(ctx, tx, vendorID)
		if err != nil {
			return org, nil, err
		}
		if err := workspace.RequireRowRole(ctx, tx, org, actorID, "vendor", vendorID, workspace.Anyone...); err != nil {
			return org, nil, err
		}
		after := before
		if err := after.apply(in); err != nil {
			return org, nil, err
		}
		if after.equal(before) {
			v, err := GetVendor(ctx, tx, paging.Scope{OrgID: org}, vendorID)
			if err != nil {
				return org, nil, err
			}
			out = v
			return org, nil, nil // nothing to announce
		}
		v, err := WriteVendor(ctx, tx, `UPDATE vendors t SET name = ?, email = ?, phone = ?, notes = ? WHERE id = ?`,
			after.Name, after.Email, after.Phone, after.Notes, vendorID)
		if err != nil {
			return org, nil, err
		}
		return org, v, audit(ctx, tx, org, actorID, "vendor.update", vendorID, map[string]any{"fields": changed(before, after)})
	}, events.VendorUpdated)
	if err != nil {
		return nil, fmt.Errorf("update vendor: %w", err)
	}
	return out, nil
}

// changed names the fields an edit changed, never their values.
func changed(before, after vendorRow) []string {
	var out []string
	if before.Name != after.Name {
		out = append(out, "name")
	}
	for _, f := range []struct {
		name string
		a, b *string
	}{{"email", before.Email, after.Email}, {"phone", before.Phone, after.Phone}, {"notes", before.Notes, after.Notes}} {
		if !ptrEqual(f.a, f.b) {
			out = append(out, f.name)
		}
	}
	return out
}

// lockVendor locks a vendor's row and returns its org and editable fields.
func lockVendor(ctx context.Context, tx *gorm.DB, id uuid.UUID) (uuid.UUID, vendorRow, error) {
	var rows []struct {
		OrgID               uuid.UUID
		Name                string
		Email, Phone, Notes *string
	}
	if err := tx.WithContext(ctx).Raw(`SELECT org_id, name, email, phone, notes FROM vendors WHERE id = ? FOR UPDATE`, id).
		Find(&rows).Error; err != nil {
		return uuid.Nil, vendorRow{}, fmt.Errorf("lock vendor: %w", err)
	}
	if len(rows) == 0 {
		return uuid.Nil, vendorRow{}, problem.Fail(problem.NotFound, "vendor %s not found", id)
	}
	r := rows[0]
	return r.OrgID, vendorRow{Name: r.Name, Email: r.Email, Phone: r.Phone, Notes: r.Notes}, nil
}

// inTx runs write in a transaction; when it returns a vendor (of org), that vendor is announced as
// typ in the same transaction and becomes out's, and the event is started after commit.
func (s *Service) inTx(ctx context.Context, out **Vendor, write func(tx *gorm.DB) (uuid.UUID, *Vendor, error), typ string) error {
	var ids []uuid.UUID
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		org, v, err := write(tx)
		if err != nil || v == nil {
			return err
		}
		ev, err := outbox.NewEvent(org, &v.StoreID, typ, v)
		if err != nil {
			return err
		}
		*out = v
		ids, err = outbox.WriteEvents(ctx, tx, []outbox.PendingEvent{ev})
		return err
	})
	if err != nil {
		return err
	}
	if s.events != nil && len(ids) > 0 {
		s.events.StartEvents(ctx, ids)
	}
	return nil
}

func audit(ctx context.Context, tx *gorm.DB, org, actor uuid.UUID, action string, vendorID uuid.UUID, details map[string]any) error {
	return workspace.Audit(ctx, tx, models.AuditEntry{OrgID: org, ActorID: actor, Action: action,
		TargetType: "vendor", TargetID: vendorID, Details: details})
}
