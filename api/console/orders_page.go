// The orders list: newest change first, paged both ways, searched by an order's number (or id) or
// a client's email, each order with its client.

package console

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"wds/internal/order"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
)

// ordersPageSize is how many orders a page of the list shows.
const ordersPageSize = 50

// orders is the org's orders; ?q= is an order's number or id (that order) or a client's email
// (their orders in every store); cursor_at, cursor_id and dir=newer page from a row either way.
func (c *Console) orders(g *gin.Context) {
	s := sessionOf(g)
	search := strings.TrimSpace(g.Query("q"))
	data := map[string]any{}
	page, err := c.findOrders(g, search)
	if err == nil {
		clients := make(map[string]string, len(page.Clients)) // by id as text: a template indexes with the row's *uuid.UUID printed
		for id, name := range page.Clients {
			clients[id.String()] = name
		}
		data["Rows"], data["Clients"] = page.Rows, clients
		data["Newer"], data["Older"] = pageURL(g, search, page.Newer, true), ""
		if page.Older != nil {
			data["Older"] = pageURL(g, search, page.Older, false)
		}
		if g.Query("cursor_at") != "" { // any page but the first
			data["First"] = pageURL(g, search, nil, false)
		}
		c.render(g, http.StatusOK, "orders", s, view{Data: data, Form: map[string]string{"q": search}})
		return
	}
	c.render(g, status(err), "orders", s, view{Error: c.problem(err), Data: data, Form: map[string]string{"q": search}})
}

// findOrders reads the page the query asks for: one order by its number or id, or a page of every
// order or of a client's, by email.
func (c *Console) findOrders(g *gin.Context, search string) (order.BrowsePage, error) {
	ctx, org := g.Request.Context(), sessionOf(g).OrgID
	if search != "" && !strings.Contains(search, "@") {
		ref, err := order.ParseRef("search", search, paging.ErrInvalidParameter)
		if err != nil {
			return order.BrowsePage{}, problem.Fail(paging.ErrInvalidParameter, "search by an order's number (such as 1042) or a client's email, not %q", search)
		}
		id, err := ref.Resolve(ctx, c.DB, org)
		if err != nil {
			return order.BrowsePage{}, err
		}
		o, err := order.Get(ctx, c.DB, c.scope(g).Scope, id)
		if err != nil {
			return order.BrowsePage{}, err
		}
		p := order.BrowsePage{Rows: []order.Order{*o}}
		p.Clients, err = order.ClientNames(ctx, c.DB, org, p.Rows)
		return p, err
	}
	q := order.BrowseQuery{OrgID: org, ClientEmail: search, Limit: ordersPageSize, Newer: g.Query("dir") == "newer"}
	var err error
	if q.Cursor, err = paging.ParseCursor(g.Query("cursor_at"), g.Query("cursor_id")); err != nil {
		return order.BrowsePage{}, err
	}
	return order.Browse(ctx, c.DB, q)
}

// pageURL is the list's URL from cur (newer: the page above it), keeping the search, or "" when
// there is no such page; with cur nil and newer false, the first page's.
func pageURL(g *gin.Context, search string, cur *paging.Cursor, newer bool) string {
	if cur == nil && newer {
		return ""
	}
	q := url.Values{}
	if search != "" {
		q.Set("q", search)
	}
	if cur != nil {
		q.Set("cursor_at", cur.At.Format(time.RFC3339Nano))
		q.Set("cursor_id", cur.ID.String())
		if newer {
			q.Set("dir", "newer")
		}
	}
	if len(q) == 0 {
		return g.Request.URL.Path
	}
	return g.Request.URL.Path + "?" + q.Encode()
}
