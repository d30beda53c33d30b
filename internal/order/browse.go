package order

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/paging"
)

// BrowseQuery is a page of an org's orders as the console lists them: newest change first, every
// order or those of the org's clients with an email, paged by keyset in either direction.
type BrowseQuery struct {
	OrgID uuid.UUID
	// ClientEmail keeps the orders of the org's clients with that email (any letter case); "" keeps all.
	ClientEmail string
	Cursor      *paging.Cursor
	// Newer asks for the page just above Cursor (the newer orders) instead of the one below it.
	Newer bool
	Limit int
}

// BrowsePage is a page of orders, newest change first, with the cursors of the pages on either side:
// Newer is nil on the first page, Older on the last.
type BrowsePage struct {
	Rows         []Order
	Newer, Older *paging.Cursor
	// Clients names the page's orders' clients: "Name <email>", the name or the email alone when the
	// client has only one. A client deleted since is missing.
	Clients map[uuid.UUID]string
}

// maxClientsByEmail bounds how many clients one email search reads orders of: an org has a client
// per store at most for one email.
const maxClientsByEmail = 50

// Browse reads one page of q. Every order: one range of orders_keyset, read forwards or backwards.
// By email: the org's clients with the email (clients_store_email, store by store), then each one's
// range of orders_client, at most a page and one more from each, merged. A page costs its rows at
// any depth.
func Browse(ctx context.Context, db *gorm.DB, q BrowseQuery) (BrowsePage, error) {
	leads := []string{"b.org_id = ?"}
	args := [][]any{{q.OrgID}}
	if q.ClientEmail != "" {
		var clients []uuid.UUID
		err := db.WithContext(ctx).Raw(`SELECT c.id FROM clients c WHERE c.store_id IN (SELECT s.id FROM stores s WHERE s.org_id = ?)
			AND lower(c.email) = lower(?) AND c.email IS NOT NULL ORDER BY c.id LIMIT ?`, q.OrgID, q.ClientEmail, maxClientsByEmail).Scan(&clients).Error
		if err != nil {
			return BrowsePage{}, fmt.Errorf("find clients by email: %w", err)
		}
		leads, args = nil, nil
		for _, c := range clients {
			leads, args = append(leads, "b.client_id = ? AND b.org_id = ?"), append(args, []any{c, q.OrgID})
		}
	}
	if len(leads) == 0 {
		return BrowsePage{Rows: []Order{}}, nil
	}
	sql, all := browseSQL(q, leads, args)
	rows, err := load(ctx, db, q.Limit+1, sql, all...)
	if err != nil {
		return BrowsePage{}, err
	}
	p := browsePage(q, rows)
	p.Clients, err = ClientNames(ctx, db, q.OrgID, p.Rows)
	return p, err
}

// ClientNames names the clients of a page's orders (BrowsePage.Clients), read by their keys.
func ClientNames(ctx context.Context, db *gorm.DB, org uuid.UUID, rows []Order) (map[uuid.UUID]string, error) {
	names := map[uuid.UUID]string{}
	var ids []uuid.UUID
	for _, o := range rows {
		if o.ClientID != nil {
			ids = append(ids, *o.ClientID)
		}
	}
	if len(ids) == 0 {
		return names, nil
	}
	var found []struct {
		ID    uuid.UUID
		Name  string
		Email *string
	}
	err := db.WithContext(ctx).Raw(`SELECT id, coalesce(nullif(display_name, ''), trim(first_name || ' ' || last_name)) AS name, email
		FROM clients WHERE org_id = ? AND id IN ?`, org, ids).Scan(&found).Error
	if err != nil {
		return nil, fmt.Errorf("the orders' clients: %w", err)
	}
	for _, f := range found {
		switch {
		case f.Email == nil || *f.Email == f.Name:
			names[f.ID] = f.Name
		case f.Name == "":
			names[f.ID] = *f.Email
		default:
			names[f.ID] = f.Name + " <" + *f.Email + ">"
		}
	}
	return names, nil
}

// browseSQL is the page's query: one lead (a predicate on orders aliased b, and its arguments) is an
// index range read in order from the cursor; several are a branch each, a page and one more from
// each range, merged in time order.
func browseSQL(q BrowseQuery, leads []string, args [][]any) (string, []any) {
	cmp, dir := "<", " DESC"
	if q.Newer {
		cmp, dir = ">", " ASC"
	}
	keyset := func(a string) (where, order string) {
		return " AND (" + a + ".updated_at, " + a + ".id) " + cmp + " (?, ?)", " ORDER BY " + a + ".updated_at" + dir + ", " + a + ".id" + dir
	}
	branch := func(i int, a string) (string, []any) {
		where, order := keyset(a)
		sql, all := strings.ReplaceAll(leads[i], "b.", a+"."), slices.Clone(args[i])
		if q.Cursor != nil {
			sql, all = sql+where, append(all, q.Cursor.At, q.Cursor.ID)
		}
		return sql + order + " LIMIT ?", append(all, q.Limit+1)
	}
	if len(leads) == 1 {
		sql, all := branch(0, "t")
		return orderSelect + " WHERE " + sql, all
	}
	parts := make([]string, len(leads))
	var all []any
	for i := range leads {
		sql, a := branch(i, "b")
		parts[i], all = "(SELECT b.id, b.updated_at FROM orders b WHERE "+sql+")", append(all, a...)
	}
	_, uOrder := keyset("u")
	_, tOrder := keyset("t")
	return orderSelect + " WHERE t.id IN (SELECT u.id FROM (" + strings.Join(parts, " UNION ALL ") + ") u" + uOrder +
		" LIMIT ?)" + tOrder, append(all, q.Limit+1)
}

// browsePage trims rows, read from the cursor outwards, to the page, newest first, with its cursors.
func browsePage(q BrowseQuery, rows []Order) BrowsePage {
	more := len(rows) > q.Limit
	if more {
		rows = rows[:q.Limit]
	}
	if q.Newer {
		slices.Reverse(rows)
	}
	p := BrowsePage{Rows: rows}
	if len(rows) == 0 {
		return p
	}
	first, last := &paging.Cursor{At: rows[0].UpdatedAt, ID: rows[0].ID}, &paging.Cursor{At: rows[len(rows)-1].UpdatedAt, ID: rows[len(rows)-1].ID}
	switch {
	case q.Newer:
		p.Older = last // the cursor's own row, at least, is older
		if more {
			p.Newer = first
		}
	default:
		if more {
			p.Older = last
		}
		if q.Cursor != nil {
			p.Newer = first
		}
	}
	return p
}
