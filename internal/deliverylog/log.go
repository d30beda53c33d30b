package deliverylog

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/paging"
	"wds/models"
)

// logColumns read a page's rows as t, each with the re-fire r that started a fresh chain from it, if
// any (a delivery is re-fired at most once), and the number of the order its event is about: for
// each of the page's rows, one event and one order read by their keys.
const logColumns = `t.*, r.chain_id AS refired_chain_id, r.workflow_id AS refired_workflow_id,
	(SELECT o.number FROM events e JOIN orders o ON o.id = e.order_id WHERE e.id = t.event_id) AS order_number`

// LogRow is a row of the delivery log: the attempt, and the number of the order its event is about,
// so two rows of one event type say which order each was for.
type LogRow struct {
	models.Delivery
	// OrderNumber is nil for an event about no order (a vendor's, a client's, a test). It is
	// answered as a string, as Order.number is.
	OrderNumber *int64 `json:"order_number,string" gorm:"->"`
}

// LogFilter is what a page of the delivery log reads: an org's log or one endpoint's, narrowed by
// event type, status and a time window. Zero values do not filter.
type LogFilter struct {
	OrgID      uuid.UUID
	EndpointID *uuid.UUID
	EventType  string
	Status     models.Status
	// Since and Until bound attempted_at: Since inclusive, Until exclusive.
	Since, Until *time.Time
}

// LogPage is one page of the delivery log, newest attempt first, cut at paging.MaxPageBytes.
func LogPage(ctx context.Context, db *gorm.DB, f LogFilter, limit int, cursor *paging.Cursor) (rows []LogRow, next *paging.Cursor, err error) {
	if limit == 0 {
		limit = paging.DefaultLimit
	}
	if f.EndpointID != nil && f.OrgID != uuid.Nil {
		// The org's log filtered by another org's endpoint holds nothing. Checked here rather than
		// in the page's query, where the org's predicate would tempt the planner to walk the org's
		// index and filter by endpoint.
		var n int64
		err := db.WithContext(ctx).Model(&models.Endpoint{}).Where("id = ? AND org_id = ?", *f.EndpointID, f.OrgID).Count(&n).Error
		if err != nil {
			return nil, nil, fmt.Errorf("look up the endpoint: %w", err)
		}
		if n == 0 {
			return []LogRow{}, nil, nil
		}
	}
	var types []string
	if f.EndpointID != nil && f.EventType == "" {
		if types, err = EndpointTypes(ctx, db, *f.EndpointID); err != nil {
			return nil, nil, err
		}
		if len(types) == 0 {
			return []LogRow{}, nil, nil
		}
	}
	sql, args := logPageSQL(f, types, limit, cursor)
	rows = []LogRow{}
	if err := db.WithContext(ctx).Raw(sql, args...).Find(&rows).Error; err != nil {
		return nil, nil, fmt.Errorf("list deliveries: %w", err)
	}
	n, more := paging.Fit(rows, limit)
	if more {
		next = &paging.Cursor{At: rows[n-1].AttemptedAt, ID: rows[n-1].ID}
	}
	return rows[:n], next, nil
}

// logPageSQL reads a page from the index that leads with what the filter fixes, then (for an
// endpoint) the event type, then the status: the endpoint's (webhook_deliveries_endpoint_type,
// migration 00048), else the org's by type (webhook_deliveries_org_type), else the org's
// (webhook_deliveries_org_status, both migration 00033). Each (type, status) the page may show is one range of that index, already in time order:
// the ranges are merged, so a page reads its rows and one more from each range at any depth and
// however rare the filter. An endpoint alone reads one range per status of each of types, the
// types its log holds (EndpointTypes). Only the page's rows themselves, and their re-fires, are
// then read.
func logPageSQL(f LogFilter, types []string, limit int, cursor *paging.Cursor) (string, []any) {
	var lead []string
	var args []any
	add := func(pred string, v any) { lead, args = append(lead, pred), append(args, v) }
	switch {
	case f.EndpointID != nil: // of the org (LogPage checked)
		add("b.endpoint_id = ?", *f.EndpointID)
		if f.EventType != "" {
			types = []string{f.EventType}
		}
	case f.EventType != "":
		add("b.org_id = ?", f.OrgID)
		add("b.event_type = ?", f.EventType)
		types = []string{""} // in the lead
	default:
		add("b.org_id = ?", f.OrgID)
		types = []string{""} // not in the org's index
	}
	if f.Since != nil {
		add("b.attempted_at >= ?", *f.Since)
	}
	if f.Until != nil {
		add("b.attempted_at < ?", *f.Until)
	}
	if cursor != nil {
		lead, args = append(lead, "(b.attempted_at, b.id) < (?, ?)"), append(args, cursor.At, cursor.ID)
	}
	var branches []string
	var all []any
	for _, r := range logRanges(types, f.Status) {
		branches = append(branches, `(SELECT b.id, b.attempted_at FROM webhook_deliveries b WHERE `+
			strings.Join(append(slices.Clone(lead), r.preds...), " AND ")+` ORDER BY b.attempted_at DESC, b.id DESC LIMIT ?)`)
		all = append(append(append(all, args...), r.args...), limit+1)
	}
	return `SELECT ` + logColumns + ` FROM (SELECT u.id, u.attempted_at FROM (` + strings.Join(branches, " UNION ALL ") + `) u
			ORDER BY u.attempted_at DESC, u.id DESC LIMIT ?) p
		JOIN webhook_deliveries t ON t.id = p.id LEFT JOIN webhook_dispatches r ON r.refired_delivery_id = t.id
		ORDER BY p.attempted_at DESC, p.id DESC`, append(all, limit+1)
}

// logRange is one range of a page's index: the type (where it is not in the lead) and the status.
type logRange struct {
	preds []string
	args  []any
}

// logRanges are the ranges a page merges: each of types ("" for none) with each recorded status,
// or the one status the filter fixes.
func logRanges(types []string, status models.Status) []logRange {
	statuses := models.Recorded
	if status != "" {
		statuses = []models.Status{status}
	}
	var out []logRange
	for _, typ := range types {
		for _, st := range statuses {
			r := logRange{preds: []string{"b.status = ?"}, args: []any{st}}
			if typ != "" {
				r = logRange{preds: []string{"b.event_type = ?", "b.status = ?"}, args: []any{typ, st}}
			}
			out = append(out, r)
		}
	}
	return out
}
