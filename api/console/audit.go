// The audit log page: each row as a person reads it, with the people, keys, stores, endpoints and
// orders it mentions by email, name, URL and number rather than by id.

package console

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wds/internal/workspace"
)

// auditRow is an audit entry written out: its actor, target and details in words, and where the
// target's own page is, when it has one.
type auditRow struct {
	When, Actor, Action string
	Target              ref
	Details             []detailLine
}

// detailLine is one "key: value" of an entry's details: as shown, ids that name nothing the page
// knows cut to their first 8 characters so the line wraps within the page, and whole, on hover.
type detailLine struct{ Text, Full string }

// ref is a row the audit log mentions: its name for a person, its full id (shown on hover) and the
// console page it links to, if any.
type ref struct{ Text, ID, Href string }

// targetPages are the console pages of the audit log's target types; the target's id ends the path.
var targetPages = map[string]string{
	"webhook_endpoint": "/console/webhooks/", "event": "/console/events/", "order": "/console/orders/",
	"webhook_recovery": "/console/recoveries/",
}

// audit is the org's audit log, newest first; an operator who has left the org keeps their id.
func (c *Console) audit(g *gin.Context) {
	ctx := g.Request.Context()
	page, err := c.Audit.ListAudit(ctx, c.query(g, 100))
	var names map[uuid.UUID]string
	if err == nil {
		names, err = c.auditNames(ctx, sessionOf(g).OrgID, page.Rows)
	}
	if err != nil {
		c.render(g, status(err), "audit", sessionOf(g), view{Error: c.problem(err)})
		return
	}
	rows := make([]auditRow, len(page.Rows))
	for i, e := range page.Rows {
		rows[i] = auditRow{When: stamp(e.CreatedAt), Action: e.Action, Actor: "wds (automatic)",
			Target: target(e, names), Details: details(e.Details, names)}
		if e.ActorID != nil {
			rows[i].Actor = nameOr(names, *e.ActorID)
		}
		if e.ActorKeyID != nil { // an integration key, through the Integration API
			rows[i].Actor = nameOr(names, *e.ActorKeyID)
		}
	}
	c.render(g, http.StatusOK, "audit", sessionOf(g), view{Data: map[string]any{"Rows": rows}})
}

func nameOr(names map[uuid.UUID]string, id uuid.UUID) string {
	if n, ok := names[id]; ok {
		return n
	}
	return id.String()
}

// target is the entry's target: its name when the page knows one, else its type, linked to its page.
func target(e workspace.AuditEntry, names map[uuid.UUID]string) ref {
	r := ref{Text: strings.ReplaceAll(e.TargetType, "_", " "), ID: e.TargetID.String()}
	if n, ok := names[e.TargetID]; ok {
		r.Text = n
	} else if ep, _ := e.Details["endpoint_id"].(string); e.TargetType == "webhook_recovery" && ep != "" {
		r.Text = "recovery of " + detail(ep, names, false) // a recovery is known by its endpoint
	}
	if p, ok := targetPages[e.TargetType]; ok {
		r.Href = p + e.TargetID.String()
	}
	return r
}

// details are an entry's details as "key: value" lines in key order, empty values left out; a
// key naming a resolved id drops its "_id" (endpoint_id: <uuid> reads endpoint: <url>), and drops
// itself when the name already says what it is (order_id: <uuid> reads order 1017).
func details(d map[string]any, names map[uuid.UUID]string) []detailLine {
	var out []detailLine
	for _, k := range slices.Sorted(maps.Keys(d)) {
		short := detail(d[k], names, true)
		if short == "" {
			continue
		}
		full := detail(d[k], names, false)
		if id, err := uuid.Parse(fmt.Sprint(d[k])); err == nil && names[id] != "" {
			k = strings.TrimSuffix(k, "_id")
			if strings.HasPrefix(names[id], strings.ReplaceAll(k, "_", " ")+" ") {
				out = append(out, detailLine{Text: short, Full: full})
				continue
			}
		}
		out = append(out, detailLine{Text: k + ": " + short, Full: k + ": " + full})
	}
	return out
}

// detail writes an audit detail's value (decoded JSON) as a person reads it, never in Go's map
// syntax: a list as its items joined by commas, an object as its "key: value" pairs in key order
// within parentheses, a time to the second, an id by its name when names has it (else, when short,
// its first 8 characters), a number as written.
func detail(v any, names map[uuid.UUID]string, short bool) string {
	switch x := v.(type) {
	case nil:
		return ""
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = detail(e, names, short)
		}
		return strings.Join(parts, ", ")
	case map[string]any:
		lines := details(x, names)
		parts := make([]string, len(lines))
		for i, l := range lines {
			parts[i] = l.Full
			if short {
				parts[i] = l.Text
			}
		}
		return "(" + strings.Join(parts, ", ") + ")"
	case string:
		if id, err := uuid.Parse(x); err == nil {
			if n, ok := names[id]; ok {
				return n
			}
			if short {
				return x[:8] + "…"
			}
			return x
		}
		if short && len(x) > 40 && !strings.Contains(x, " ") { // a workflow id and the like: one token the row cannot wrap
			return x[:24] + "…"
		}
		if t, err := time.Parse(time.RFC3339Nano, x); err == nil {
			return stamp(t)
		}
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// auditNames resolves every id a page of the audit log mentions (actors, targets, ids in details)
// that is one of the org's members, stores, endpoints or records: members by email, stores by name
// (workspace), endpoints by URL redacted as the audit log writes it (endpoints), orders by number,
// keys by label and the rest as workspace.AuditLog.AuditNames says; a query each, whatever the page holds.
func (c *Console) auditNames(ctx context.Context, org uuid.UUID, rows []workspace.AuditEntry) (map[uuid.UUID]string, error) {
	ids := map[uuid.UUID]bool{}
	for _, e := range rows {
		ids[e.TargetID] = true
		for _, a := range []*uuid.UUID{e.ActorID, e.ActorKeyID} {
			if a != nil {
				ids[*a] = true
			}
		}
		collectIDs(e.Details, ids)
	}
	names, err := c.Members.Names(ctx, org, ids)
	if err != nil {
		return nil, err
	}
	records, err := c.Audit.AuditNames(ctx, org, ids)
	if err != nil {
		return nil, err
	}
	maps.Copy(names, records)
	urls, err := c.Webhooks.RedactedURLs(ctx, org, ids)
	if err != nil {
		return nil, err
	}
	maps.Copy(names, urls)
	return names, nil
}

// collectIDs adds every id found in a detail value (at any depth) to ids.
func collectIDs(v any, ids map[uuid.UUID]bool) {
	switch x := v.(type) {
	case string:
		if id, err := uuid.Parse(x); err == nil {
			ids[id] = true
		}
	case []any:
		for _, e := range x {
			collectIDs(e, ids)
		}
	case map[string]any:
		for _, e := range x {
			collectIDs(e, ids)
		}
	}
}
