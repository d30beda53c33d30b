package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"

	"wds/api"
	"wds/test/pgtest"
)

// The tenancy sweep: org A's credentials against org B's ids on every route that takes one, and
// org A's lists and pages searched for anything of org B's. New routes must join the tables below:
// the sweep fails on a route of the router it does not call.

// cred is how a case authenticates: as the caller's read key, integration key, owner's operator
// token or owner's console session.
type cred int

const (
	asRead cred = iota
	asInt
	asOperator
	asConsole
)

// tcase is one call: route exactly as gin lists it ("METHOD /pattern"), its path parameters and its
// body (JSON, or url.Values for the console), each made from the caller and the tenant whose rows
// are named. The cases run in order, and every one succeeds when the caller is the target itself
// (the control pass), so an order's shipments come before its cancellation and an endpoint's
// deletion comes last.
type tcase struct {
	route  string
	as     cred
	params func(caller, target *tenant) map[string]string
	body   func(caller, target *tenant) any
}

func tenancyCases() []tcase {
	param := func(name string, id func(x *tenant) uuid.UUID) func(_, x *tenant) map[string]string {
		return func(_, x *tenant) map[string]string { return map[string]string{name: id(x).String()} }
	}
	order := param("id", func(x *tenant) uuid.UUID { return x.orderID })
	shipment := param("id", func(x *tenant) uuid.UUID { return x.shipmentID })
	vendor := param("id", func(x *tenant) uuid.UUID { return x.vendorID })
	client := param("id", func(x *tenant) uuid.UUID { return x.clientID })
	delivery := param("id", func(x *tenant) uuid.UUID { return x.deliveryID })
	consoleEndpoint := param("id", func(x *tenant) uuid.UUID { return x.consoleEndpointID })
	targetOrg := param("org_id", func(x *tenant) uuid.UUID { return x.org })
	callerOrg := func(c, _ *tenant) map[string]string { return map[string]string{"org_id": c.org.String()} }
	body := func(v map[string]any) func(_, _ *tenant) any { return func(_, _ *tenant) any { return v } }
	form := func(v url.Values) func(_, _ *tenant) any { return func(_, _ *tenant) any { return v } }
	withStore := func(v map[string]any) func(_, x *tenant) any {
		return func(_, x *tenant) any {
			out := map[string]any{"store_id": x.store}
			for k, val := range v {
				out[k] = val
			}
			return out
		}
	}
	formWithStore := func(v url.Values) func(_, x *tenant) any {
		return func(_, x *tenant) any {
			out := url.Values{"store_id": {x.store.String()}}
			for k, val := range v {
				out[k] = val
			}
			return out
		}
	}
	rpc := func(op, name string, id func(x *tenant) uuid.UUID, extra map[string]any) tcase {
		return tcase{route: "POST /admin/v1/rpc/:operation", as: asOperator,
			params: func(_, _ *tenant) map[string]string { return map[string]string{"operation": op} },
			body: func(_, x *tenant) any {
				p := map[string]any{name: id(x)}
				for k, v := range extra {
					p[k] = v
				}
				return p
			}}
	}
	endpointID := func(x *tenant) uuid.UUID { return x.endpointID }
	orgID := func(x *tenant) uuid.UUID { return x.org }
	lines := []map[string]any{{"description": "Cup", "quantity": 1, "unit_price_cents": 300}}

	return []tcase{
		// Read API.
		{"GET /v1/orders/:id", asRead, order, nil},
		{"GET /v1/clients/:id", asRead, client, nil},
		{"GET /v1/vendors/:id", asRead, vendor, nil},
		{"GET /v1/products/:id", asRead, param("id", func(x *tenant) uuid.UUID { return x.productID }), nil},
		{"GET /v1/events/:id", asRead, param("id", func(x *tenant) uuid.UUID { return x.eventID }), nil},
		{"POST /v1/webhooks/test/:endpoint_id", asRead, param("endpoint_id", endpointID), nil},
		{"GET /integrations/v1/orders/by-external/*external_id", asInt,
			func(_, x *tenant) map[string]string { return map[string]string{"external_id": x.orderExternalID} }, nil},

		// Shipping, while the order can still ship.
		{"POST /admin/v1/orders/:id/shipments", asOperator, order, body(map[string]any{"carrier": "DHL", "tracking_number": "TRK-1"})},
		{"POST /admin/v1/shipments/:id/tracking", asOperator, shipment, body(map[string]any{"tracking_number": "TRK-2"})},
		{"GET /console/orders/:id", asConsole, order, nil},
		{"POST /console/orders/:id/ship", asConsole, order, form(url.Values{"carrier": {"FedEx"}})},
		{"POST /console/shipments/:id/tracking", asConsole, shipment, func(_, x *tenant) any {
			return url.Values{"tracking_number": {"TRK-3"}, "order": {x.orderID.String()}}
		}},
		{"POST /admin/v1/shipments/:id/delivered", asOperator, shipment, nil},
		{"POST /console/shipments/:id/delivered", asConsole, shipment, func(_, x *tenant) any {
			return url.Values{"order": {x.orderID.String()}}
		}},

		// Suppliers and clients.
		{"PATCH /admin/v1/vendors/:id", asOperator, vendor, body(map[string]any{"phone": "+1 555 0100"})},
		{"POST /admin/v1/vendors/:id/claim-token", asOperator, vendor, nil},
		{"POST /console/vendors/:id", asConsole, vendor, form(url.Values{"name": {"Renamed supplier"}, "email": {"supplier@renamed.test"}})},
		{"POST /console/vendors/:id/claim-token", asConsole, vendor, nil},
		{"PATCH /admin/v1/clients/:id", asOperator, client, body(map[string]any{"display_name": "Renamed"})},
		{"POST /console/clients/:id", asConsole, client, form(url.Values{"email": {"client@renamed.test"}, "display_name": {"Console"}})},

		// Money: a second payment, a refund of the first, then the cancellation.
		{"POST /integrations/v1/orders/:id/payments", asInt, order, body(map[string]any{"external_id": "pay-2", "amount_cents": 100, "method": "card"})},
		{"POST /integrations/v1/payments/:id/refund", asInt, param("id", func(x *tenant) uuid.UUID { return x.paymentID }), nil},
		{"POST /integrations/v1/orders/:id/cancel", asInt, order, nil},

		// The org in the path.
		{"POST /admin/v1/orgs/:org_id/read-keys", asOperator, targetOrg, body(map[string]any{"name": "minted by the sweep"})},
		{"GET /admin/v1/orgs/:org_id/read-keys", asOperator, targetOrg, nil},
		{"POST /admin/v1/orgs/:org_id/integration-keys", asOperator, targetOrg, withStore(map[string]any{"scopes": []string{"orders:write"}})},
		{"GET /admin/v1/orgs/:org_id/integration-keys", asOperator, targetOrg, nil},
		{"GET /admin/v1/orgs/:org_id/audit-log", asOperator, targetOrg, nil},
		{"GET /admin/v1/orgs/:org_id/deliveries", asOperator, targetOrg, nil},
		{"GET /admin/v1/orgs/:org_id/events", asOperator, targetOrg, nil},
		{"POST /admin/v1/orgs/:org_id/orders", asOperator, targetOrg, withStore(map[string]any{"lines": lines})},
		{"POST /admin/v1/orgs/:org_id/clients", asOperator, targetOrg, withStore(map[string]any{"email": "by-hand-1@example.test"})},
		{"POST /admin/v1/orgs/:org_id/vendors", asOperator, targetOrg, withStore(map[string]any{"name": "By hand"})},
		// The caller's own org in the path, another org's store in the body.
		{"POST /admin/v1/orgs/:org_id/orders", asOperator, callerOrg, withStore(map[string]any{"lines": lines})},
		{"POST /admin/v1/orgs/:org_id/clients", asOperator, callerOrg, withStore(map[string]any{"email": "by-hand-2@example.test"})},
		{"POST /admin/v1/orgs/:org_id/vendors", asOperator, callerOrg, withStore(map[string]any{"name": "By hand 2"})},
		{"POST /admin/v1/orgs/:org_id/integration-keys", asOperator, callerOrg, withStore(map[string]any{"scopes": []string{"orders:write"}})},
		{"POST /console/vendors", asConsole, nil, formWithStore(url.Values{"name": {"Console supplier"}})},
		{"POST /console/clients", asConsole, nil, formWithStore(url.Values{"email": {"by-hand-3@example.test"}})},
		{"POST /console/connectors", asConsole, nil, formWithStore(url.Values{"scopes": {"orders:write"}})},

		// Webhooks: the Operator API works on endpointID, the console on consoleEndpointID; each is
		// deleted last.
		rpc("outbound_webhook_list_deliveries", "p_id", endpointID, nil),
		rpc("outbound_webhook_update", "p_id", endpointID, map[string]any{"p_rate_limit": 5, "p_headers": map[string]string{"X-Sweep": "1"}}),
		{"GET /admin/v1/events/:id", asOperator, param("id", func(x *tenant) uuid.UUID { return x.eventID }), nil},
		{"GET /console/events/:id", asConsole, param("id", func(x *tenant) uuid.UUID { return x.eventID }), nil},
		{"GET /admin/v1/recoveries/:id", asOperator, param("id", func(x *tenant) uuid.UUID { return x.recoveryID }), nil},
		{"POST /admin/v1/recoveries/:id/cancel", asOperator, param("id", func(x *tenant) uuid.UUID { return x.recoveryID }), nil},
		{"POST /admin/v1/endpoints/:id/recover", asOperator, param("id", endpointID), body(map[string]any{"since": time.Now().UTC().Add(-24 * time.Hour).Format(time.RFC3339)})},
		{"POST /console/endpoints/:id/settings", asConsole, consoleEndpoint, form(url.Values{"rate_limit": {"7"}, "headers": {"X-Sweep: 1"}})},
		{"POST /console/endpoints/:id/recover", asConsole, consoleEndpoint, form(url.Values{"since": {time.Now().UTC().Add(-24 * time.Hour).Format("2006-01-02T15:04")}})},
		{"GET /console/recoveries/:id", asConsole, param("id", func(x *tenant) uuid.UUID { return x.recoveryID }), nil},
		{"POST /console/recoveries/:id/cancel", asConsole, param("id", func(x *tenant) uuid.UUID { return x.recoveryID }), nil},
		{"POST /admin/v1/orders/:id/resend", asOperator, order, func(_, x *tenant) any { return map[string]any{"endpoint_id": x.apiResendID} }},
		{"POST /console/orders/:id/resend", asConsole, order, func(_, x *tenant) any {
			return url.Values{"endpoint": {x.consoleResendID.String()}}
		}},
		{"POST /admin/v1/events/:id/resend", asOperator, param("id", func(x *tenant) uuid.UUID { return x.eventID }),
			func(_, x *tenant) any { return map[string]any{"endpoint_id": x.endpointID} }},
		{"POST /console/events/:id/resend", asConsole, param("id", func(x *tenant) uuid.UUID { return x.eventID }),
			func(_, x *tenant) any { return url.Values{"endpoint": {x.consoleEndpointID.String()}} }},
		rpc("outbound_webhook_rotate_secret", "p_id", endpointID, nil),
		rpc("outbound_webhook_disable", "p_id", endpointID, nil),
		rpc("outbound_webhook_enable", "p_id", endpointID, nil),
		{"GET /admin/v1/deliveries/:id", asOperator, delivery, nil},
		{"GET /console/deliveries/:id", asConsole, delivery, nil},
		{"POST /admin/v1/deliveries/:id/refire", asOperator, delivery, nil},
		{"POST /console/deliveries/:id/refire", asConsole, delivery, func(_, x *tenant) any {
			return url.Values{"endpoint": {x.endpointID.String()}}
		}},
		rpc("outbound_webhook_delete", "p_id", endpointID, nil),
		rpc("outbound_webhook_list", "p_org_id", orgID, nil),
		rpc("outbound_webhook_create", "p_org_id", orgID, map[string]any{"p_url": "https://127.0.0.1/another", "p_event_types": []string{"order.created"}}),
		{"GET /console/webhooks/:id", asConsole, consoleEndpoint, nil},
		{"GET /console/webhooks/:id/:action", asConsole, func(_, x *tenant) map[string]string {
			return map[string]string{"id": x.consoleEndpointID.String(), "action": "delete"}
		}, nil},
		consoleAction("test"), consoleAction("rotate"), consoleAction("disable"), consoleAction("enable"), consoleAction("delete"),

		// Keys and operator tokens.
		{"POST /admin/v1/read-keys/:id/revoke", asOperator, param("id", func(x *tenant) uuid.UUID { return x.targetReadKeyID }), nil},
		{"POST /console/keys/:id/revoke", asConsole, param("id", func(x *tenant) uuid.UUID { return x.targetReadKeyID }), nil},
		{"POST /admin/v1/integration-keys/:id/revoke", asOperator, param("id", func(x *tenant) uuid.UUID { return x.targetIntKeyID }), nil},
		{"POST /console/connectors/:id/revoke", asConsole, param("id", func(x *tenant) uuid.UUID { return x.targetIntKeyID }), nil},
		{"POST /admin/v1/users/:id/revoke-token", asOperator, param("id", func(x *tenant) uuid.UUID { return x.memberID }), nil},
		// Only the holder rotates a token, so the control rotates the owner's own; last, as it
		// replaces the token and ends the session the cases above use.
		{"POST /admin/v1/users/:id/rotate-token", asOperator, param("id", func(x *tenant) uuid.UUID { return x.ownerID }), nil},
	}
}

// consoleAction posts an endpoint action as its confirmation page does (disable, delete and rotate
// ask first).
func consoleAction(action string) tcase {
	return tcase{route: "POST /console/webhooks/:id/:action", as: asConsole,
		params: func(_, x *tenant) map[string]string {
			return map[string]string{"id": x.consoleEndpointID.String(), "action": action}
		},
		body: func(_, _ *tenant) any { return url.Values{"confirmed": {"yes"}, "grace_seconds": {"0"}} }}
}

// listCase is a list or page that names no id: it must show the caller's rows and none of another
// org's. own is an id of the caller's that must appear (nil: the page shows no ids to look for).
type listCase struct {
	route string
	as    cred
	own   func(x *tenant) uuid.UUID
}

func tenancyLists() []listCase {
	return []listCase{
		{"GET /v1/orders", asRead, func(x *tenant) uuid.UUID { return x.orderID }},
		{"GET /v1/clients", asRead, func(x *tenant) uuid.UUID { return x.clientID }},
		{"GET /v1/vendors", asRead, func(x *tenant) uuid.UUID { return x.vendorID }},
		{"GET /v1/products", asRead, func(x *tenant) uuid.UUID { return x.productID }},
		{"GET /v1/events", asRead, func(x *tenant) uuid.UUID { return x.eventID }},
		{"GET /console/", asConsole, nil},
		{"GET /console/keys", asConsole, func(x *tenant) uuid.UUID { return x.targetReadKeyID }},
		{"GET /console/connectors", asConsole, func(x *tenant) uuid.UUID { return x.targetIntKeyID }},
		{"GET /console/webhooks", asConsole, func(x *tenant) uuid.UUID { return x.consoleEndpointID }},
		{"GET /console/events", asConsole, func(x *tenant) uuid.UUID { return x.eventID }},
		{"GET /console/orders", asConsole, func(x *tenant) uuid.UUID { return x.orderID }},
		{"GET /console/vendors", asConsole, func(x *tenant) uuid.UUID { return x.vendorID }},
		{"GET /console/clients", asConsole, func(x *tenant) uuid.UUID { return x.clientID }},
		{"GET /console/audit", asConsole, nil},
		{"GET /console/recoveries", asConsole, func(x *tenant) uuid.UUID { return x.recoveryID }},
	}
}

// Routes that serve no org's data at all.
var tenancyExempt = map[string]bool{
	"GET /v1/health": true, "GET /v1/openapi.json": true, "GET /api/openapi.yaml": true, "GET /v1/event-types": true,
	"GET /v1/ready": true, "GET /integrations/v1/health": true, "GET /integrations/v1/openapi.json": true,
	"GET /admin/v1/openapi.json": true, "GET /console": true, "GET /console/console.css": true, "GET /console/console.js": true,
	"GET /console/login": true,
}

// pathOf fills a route pattern's :name and *name segments.
func pathOf(t *testing.T, pattern string, params map[string]string) string {
	t.Helper()
	segs := strings.Split(pattern, "/")
	for i, s := range segs {
		if strings.HasPrefix(s, ":") || strings.HasPrefix(s, "*") {
			v, ok := params[s[1:]]
			if !ok {
				t.Fatalf("%s: no value for %s", pattern, s)
			}
			segs[i] = url.PathEscape(v)
		}
	}
	return strings.Join(segs, "/")
}

// run calls c as caller on target's rows and returns the answer and the request's text (path and
// body), in which the ids the caller named can be found.
func (e *sweepEnv) run(c tcase, caller, target *tenant) (answer, string) {
	e.t.Helper()
	method, pattern, _ := strings.Cut(c.route, " ")
	var params map[string]string
	if c.params != nil {
		params = c.params(caller, target)
	}
	path := pathOf(e.t, pattern, params)
	var body any
	if c.body != nil {
		body = c.body(caller, target)
	}
	raw, _ := json.Marshal(body)
	request := path + " " + string(raw)
	switch c.as {
	case asRead:
		return e.send(nil, method, path, caller.readKey, body, nil), request
	case asInt:
		return e.send(nil, method, path, caller.intKey, body, nil), request
	case asOperator:
		return e.send(nil, method, path, caller.owner, body, nil), request
	}
	if method == http.MethodGet {
		return e.send(caller.console.c, method, path, "", nil, nil), request
	}
	form, _ := body.(url.Values)
	return e.post(caller.console, path, form), request
}

// ids are every id of the tenant's rows and people.
func (x *tenant) ids() map[string]uuid.UUID {
	return map[string]uuid.UUID{"org": x.org, "store": x.store, "owner": x.ownerID, "member": x.memberID,
		"read key": x.readKeyID, "second read key": x.targetReadKeyID, "integration key": x.intKeyID,
		"second integration key": x.targetIntKeyID, "order": x.orderID, "payment": x.paymentID, "client": x.clientID,
		"vendor": x.vendorID, "product": x.productID, "shipment": x.shipmentID, "endpoint": x.endpointID,
		"console endpoint": x.consoleEndpointID, "delivery": x.deliveryID}
}

// leaks names the tenant's ids in answer that the request did not name itself.
func (x *tenant) leaks(answer, request string) []string {
	var out []string
	for what, id := range x.ids() {
		if strings.Contains(answer, id.String()) && !strings.Contains(request, id.String()) {
			out = append(out, what+" "+id.String())
		}
	}
	sort.Strings(out)
	return out
}

// scopedTables says how each table's rows belong to an org, beyond the tables with an org_id
// column. A new table without org_id must be added here (or to unscopedTables), or the sweep fails.
var scopedTables = map[string]string{
	"orgs":                      "id = @org",
	"users":                     "id IN (SELECT user_id FROM memberships WHERE org_id = @org)",
	"sellers":                   "id IN (SELECT seller_id FROM seller_links WHERE org_id = @org)",
	"products":                  "seller_id IN (SELECT seller_id FROM seller_links WHERE org_id = @org)",
	"order_lines":               "order_id IN (SELECT id FROM orders WHERE org_id = @org)",
	"payments":                  "order_id IN (SELECT id FROM orders WHERE org_id = @org)",
	"external_refs":             "integration_key_id IN (SELECT id FROM integration_keys WHERE org_id = @org)",
	"idempotency_keys":          "integration_key_id IN (SELECT id FROM integration_keys WHERE org_id = @org)",
	"rate_limit_hits":           "key_id IN (SELECT id FROM integration_keys WHERE org_id = @org)",
	"webhook_refire_counters":   "endpoint_id IN (SELECT id FROM webhook_endpoints WHERE org_id = @org)",
	"webhook_endpoint_sends":    "endpoint_id IN (SELECT id FROM webhook_endpoints WHERE org_id = @org)",
	"webhook_endpoint_minutes":  "endpoint_id IN (SELECT id FROM webhook_endpoints WHERE org_id = @org)",
	"webhook_unrecovered_drops": "endpoint_id IN (SELECT id FROM webhook_endpoints WHERE org_id = @org)",
	"vendor_claim_tokens":       "vendor_id IN (SELECT id FROM vendors WHERE org_id = @org)",
}

// unscopedTables belong to no org. rate_limit_hits is counted per request of any key, so it is left
// out of the whole-database row counts (the caller's own key spends its budget). relay_claims are
// the relay's claims of a batch of rows, of any org, which no request writes (internal/dispatch).
var unscopedTables = map[string]bool{"goose_db_version": true, "relay_claims": true}

// tables lists the database's tables and how to pick one org's rows from each.
func (e *sweepEnv) tables() map[string]string {
	e.t.Helper()
	var rows []struct {
		Name   string
		HasOrg bool
	}
	err := e.db.Raw(`SELECT t.table_name AS name, EXISTS (SELECT 1 FROM information_schema.columns c
			WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name AND c.column_name = 'org_id') AS has_org
		FROM information_schema.tables t WHERE t.table_schema = 'public' AND t.table_type = 'BASE TABLE'`).Find(&rows).Error
	if err != nil || len(rows) == 0 {
		e.t.Fatalf("list tables: %v (%d)", err, len(rows))
	}
	out := map[string]string{}
	for _, r := range rows {
		switch {
		case unscopedTables[r.Name]:
		case scopedTables[r.Name] != "":
			out[r.Name] = scopedTables[r.Name]
		case r.HasOrg:
			out[r.Name] = "org_id = @org"
		default:
			e.t.Errorf("table %s has no org_id: say in scopedTables how its rows belong to an org", r.Name)
		}
	}
	return out
}

// snapshot is, per table, the count and a hash of the org's rows (every column, as text).
func (e *sweepEnv) snapshot(org uuid.UUID) map[string]string {
	e.t.Helper()
	out := map[string]string{}
	for table, where := range e.tables() {
		var r struct {
			N int64
			H string
		}
		err := e.db.Raw(fmt.Sprintf(`SELECT count(*) AS n, coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '') AS h
			FROM %s t WHERE %s`, table, where), map[string]any{"org": org}).Find(&r).Error
		if err != nil {
			e.t.Fatalf("snapshot %s: %v", table, err)
		}
		out[table] = fmt.Sprintf("%d rows, md5 %s", r.N, r.H)
	}
	return out
}

// counts is every table's row count, whichever org the rows belong to.
func (e *sweepEnv) counts() map[string]int64 {
	e.t.Helper()
	out := map[string]int64{}
	for table := range e.tables() {
		if table == "rate_limit_hits" {
			continue
		}
		var n int64
		if err := e.db.Raw("SELECT count(*) FROM " + table).Find(&n).Error; err != nil {
			e.t.Fatal(err)
		}
		out[table] = n
	}
	return out
}

func TestTenancySweep(t *testing.T) {
	log := logrus.New()
	log.SetOutput(io.Discard)
	e := newSweepEnv(t, pgtest.New(t), log)
	a, b := e.tenant("alpha"), e.tenant("bravo")
	cases, lists := tenancyCases(), tenancyLists()

	// Every route that takes a parameter is called, every page without one is searched, and every
	// named operation is called with another org's id.
	called, listed, ops := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, c := range cases {
		called[c.route] = true
		if c.route == "POST /admin/v1/rpc/:operation" {
			ops[c.params(a, b)["operation"]] = true
		}
	}
	for _, l := range lists {
		listed[l.route] = true
	}
	routes := map[string]bool{}
	for _, r := range e.router.Routes() {
		route := r.Method + " " + r.Path
		routes[route] = true
		switch {
		case strings.ContainsAny(r.Path, ":*"):
			if !called[route] {
				t.Errorf("%s takes an id but the tenancy sweep does not call it: add it to tenancyCases", route)
			}
		case r.Method == http.MethodGet && !listed[route] && !tenancyExempt[route]:
			t.Errorf("%s is not searched for other orgs' rows: add it to tenancyLists (or tenancyExempt if it serves no org's data)", route)
		}
	}
	for route := range called {
		if !routes[route] {
			t.Errorf("tenancyCases calls %s, which the router does not serve", route)
		}
	}
	for route := range listed {
		if !routes[route] {
			t.Errorf("tenancyLists reads %s, which the router does not serve", route)
		}
	}
	for _, op := range api.RPCOperationNames() {
		if !ops[op] {
			t.Errorf("operation %s is not called with another org's id: add it to tenancyCases", op)
		}
	}
	if t.Failed() {
		t.FailNow()
	}

	// Org A names org B's rows: every answer is 404 not_found and nothing anywhere changes.
	before, beforeCounts := e.snapshot(b.org), e.counts()
	for _, c := range cases {
		got, request := e.run(c, a, b)
		name := c.route + " " + request
		if leaked := b.leaks(string(got.body), request); len(leaked) > 0 {
			t.Errorf("%s: the answer names org B's %v: %.300s", name, leaked, got.body)
		}
		if c.as == asConsole {
			if got.status != http.StatusNotFound || !strings.Contains(string(got.body), "<code>not_found</code>") {
				t.Errorf("%s: %d, want 404 with not_found on the page: %.300s", name, got.status, got.body)
			}
			continue
		}
		var shape map[string]any
		_ = json.Unmarshal(got.body, &shape)
		if got.status != http.StatusNotFound || len(shape) != 2 || shape["error"] != "not_found" || shape["detail"] == "" {
			t.Errorf("%s: %d %s, want 404 {\"error\":\"not_found\",\"detail\":...}", name, got.status, got.body)
		} else if shape["detail"] == "no such path" {
			t.Errorf("%s: the router has no such path; the case is wrong", name)
		}
	}
	after, afterCounts := e.snapshot(b.org), e.counts()
	for table, was := range before {
		if after[table] != was {
			t.Errorf("org A's calls changed org B's %s: %s, before %s", table, after[table], was)
		}
	}
	for table, n := range beforeCounts {
		if afterCounts[table] != n {
			t.Errorf("org A's refused calls wrote to %s: %d rows, before %d", table, afterCounts[table], n)
		}
	}

	// Org A's lists and pages show org A's rows and none of org B's.
	for _, l := range lists {
		method, path, _ := strings.Cut(l.route, " ")
		for _, p := range []string{path, path + "?store_id=" + b.store.String()} {
			if l.as == asConsole && p != path {
				continue // the console's pages take no store filter
			}
			got, _ := e.run(tcase{route: method + " " + p, as: l.as}, a, b)
			if leaked := b.leaks(string(got.body), p); len(leaked) > 0 {
				t.Errorf("%s: org A sees org B's %v", p, leaked)
			}
			if p == path && (got.status != http.StatusOK || l.own != nil && !strings.Contains(string(got.body), l.own(a).String())) {
				t.Errorf("%s: %d without org A's own row: %.300s", p, got.status, got.body)
			}
		}
	}

	// The control: org B doing the same succeeds, so each case reached a real row with a valid
	// request, and the 404s above were the tenancy check's.
	for _, c := range cases {
		got, request := e.run(c, b, b)
		ok := got.status >= 200 && got.status < 300
		if c.as == asConsole {
			ok = (got.status == http.StatusOK || got.status == http.StatusSeeOther) && !strings.Contains(string(got.body), `class="error"`)
		}
		if !ok {
			t.Errorf("control: org B's own %s %s: %d %.300s", c.route, request, got.status, got.body)
		}
	}
}
