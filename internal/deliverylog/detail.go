// One attempt as support reads it: what it sent (the headers, custom values by role) and what came
// back, for the console's delivery page, GET /admin/v1/deliveries/{id} and the event's attempts.

package deliverylog

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/database"
	"wds/internal/platform/problem"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
	"wds/models"
)

// Delivery is one attempt of the delivery log, as a row of the log (with the number of the order
// its event is about, and its re-fire if it has one) and with the headers it sent as the actor may
// read them (ShowSent). A nil actor is the database's own operator, who gets
// the custom header names alone, as with List. Another org's attempt is not found.
func (s *Service) Delivery(ctx context.Context, id uuid.UUID, actorID *uuid.UUID) (*LogRow, error) {
	release, err := database.Admit(ctx, s.db)
	if err != nil {
		return nil, err
	}
	defer release()
	var rows []LogRow
	err = s.db.WithContext(ctx).Raw(`SELECT `+logColumns+` FROM webhook_deliveries t
		LEFT JOIN webhook_dispatches r ON r.refired_delivery_id = t.id WHERE t.id = ?`, id).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("load delivery: %w", err)
	}
	if len(rows) == 0 {
		return nil, problem.Fail(problem.NotFound, "delivery %s not found", id)
	}
	manager, err := ReadsHeaders(ctx, s.db, rows[0].OrgID, actorID, "delivery", id)
	if err != nil {
		return nil, err
	}
	ShowSent(s.box, manager, &rows[0].Delivery)
	return &rows[0], nil
}

// ReadsHeaders checks that the actor may read the org's row (any member; to anyone else it is not
// found) and tells whether they may read custom header values (owners and admins). A nil actor is
// the database's own operator, who reads the names alone.
func ReadsHeaders(ctx context.Context, db *gorm.DB, orgID uuid.UUID, actorID *uuid.UUID, what string, rowID uuid.UUID) (bool, error) {
	if actorID == nil {
		return false, nil
	}
	if err := workspace.RequireRowRole(ctx, db, orgID, *actorID, what, rowID, workspace.Anyone...); err != nil {
		return false, err
	}
	role, err := workspace.RoleOf(ctx, db, orgID, *actorID)
	return slices.Contains(workspace.Managers, role), err
}

// ShowSent fills in the attempt's RequestHeaders from what it recorded: wds's own headers with their
// values and the custom ones as VisibleHeaders shows them to the reader, opened with box. An attempt
// that recorded none (it sent nothing, or it was made before attempts recorded them) is left without.
func ShowSent(box *secrets.Box, manager bool, d *models.Delivery) {
	if sent := d.Sent; sent != nil {
		d.RequestHeaders = sent.Shown(VisibleHeaders(box, manager, sent.Custom, sent.Sealed))
	}
}

// VisibleHeaders is a kept custom header set (models.SealHeaders) as the reader may see it: the
// values for an owner or admin (manager), when box opens them; the names alone otherwise. It is the
// one rule for an endpoint's headers (package endpoints) and for the headers an attempt sent.
func VisibleHeaders(box *secrets.Box, manager bool, stored models.Headers, sealed []byte) models.Headers {
	if manager && box != nil {
		if h, err := models.OpenHeaders(box, stored, sealed); err == nil {
			return h
		}
	}
	return stored.Masked()
}
