package console

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wds/internal/apikeys"
	"wds/internal/deliverylog"
	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/internal/platform/ratelimit"
	"wds/internal/resend"
	"wds/internal/workspace"
	"wds/models"
)

// KeyService mints and revokes an org's keys of both kinds (apikeys.Service).
type KeyService interface {
	CreateReadKey(ctx context.Context, in apikeys.NewReadKey) (*models.ReadKey, string, error)
	RevokeReadKey(ctx context.Context, id, actorID uuid.UUID) (*models.ReadKey, error)
	CreateIntegrationKey(ctx context.Context, in apikeys.NewIntegrationKey) (*apikeys.CreatedIntegrationKey, error)
	RevokeIntegrationKey(ctx context.Context, id, actorID uuid.UUID) (*models.IntegrationKey, error)
	CountLive(ctx context.Context, orgID uuid.UUID) (apikeys.LiveCounts, error)
}

// KeyLists are an org's keys of both kinds, which any member may list (apikeys.KeyLists).
type KeyLists interface {
	ListReadKeys(ctx context.Context, q paging.OrgQuery) (paging.Page[apikeys.ReadKey], error)
	ListIntegrationKeys(ctx context.Context, q paging.OrgQuery) (paging.Page[apikeys.IntegrationKey], error)
}

// AuditLog is an org's audit log and the names of what its rows mention, for owners and admins
// (workspace.AuditLog).
type AuditLog interface {
	ListAudit(ctx context.Context, q paging.OrgQuery) (paging.Page[workspace.AuditEntry], error)
	AuditNames(ctx context.Context, org uuid.UUID, ids map[uuid.UUID]bool) (map[uuid.UUID]string, error)
}

// DeliveryLog is the org's delivery log, one attempt of it, how chains stand and the hourly counts
// of the charts, role-checked (deliverylog.Service).
type DeliveryLog interface {
	ListOrgDeliveries(ctx context.Context, q paging.OrgQuery, f deliverylog.LogFilter) (paging.Page[deliverylog.LogRow], error)
	Delivery(ctx context.Context, id uuid.UUID, actorID *uuid.UUID) (*deliverylog.LogRow, error)
	ChainFates(ctx context.Context, orgID uuid.UUID, attempts []models.Delivery) (map[uuid.UUID]deliverylog.ChainFate, error)
	DeliveryHistory(ctx context.Context, q paging.OrgQuery, since time.Time) ([]deliverylog.HourCount, error)
}

func (c *Console) registerPages(p *gin.RouterGroup) {
	p.GET("/", c.overview)
	p.GET("/keys", c.keys)
	p.POST("/keys", c.createReadKey)
	p.POST("/keys/:id/revoke", c.revokeReadKey)
	p.GET("/connectors", c.connectors)
	p.POST("/connectors", c.createConnector)
	p.POST("/connectors/:id/revoke", c.revokeConnector)
	p.GET("/webhooks", c.webhooks)
	p.POST("/webhooks", c.createEndpoint)
	p.GET("/webhooks/:id", c.endpoint)
	p.GET("/webhooks/:id/:action", c.confirmAction)
	p.POST("/webhooks/:id/:action", c.endpointAction)
	p.GET("/deliveries/:id", c.delivery)
	p.POST("/deliveries/:id/refire", c.refire)
	p.GET("/audit", c.audit)
	c.registerWorkspacePages(p)
	c.registerSupportPages(p)
}

// notices are the messages a redirect may ask a page to show once (by name, so no text travels;
// flash.go).
var notices = map[string]string{
	"revoked": "Revoked.", "enabled": "Endpoint enabled.", "disabled": "Endpoint disabled; its pending retries are dropped.",
	"deleted": "Endpoint deleted.", "test": "Test event queued: it arrives in a moment (see the delivery log).",
	"refired": "Re-fired: a fresh chain starts at attempt 1.", "shipment": "Shipment saved.", "saved": "Saved.",
}

func (c *Console) query(g *gin.Context, limit int) paging.OrgQuery {
	s := sessionOf(g)
	return paging.OrgQuery{OrgID: s.OrgID, ActorID: s.User.ID, Limit: limit}
}

func (c *Console) overview(g *gin.Context) {
	s := sessionOf(g)
	ctx := g.Request.Context()
	var counts struct {
		Endpoints int64
		apikeys.LiveCounts
	}
	keys, err := c.Keys.CountLive(ctx, s.OrgID)
	if err == nil {
		counts.LiveCounts = keys
		counts.Endpoints, err = c.Webhooks.CountEnabled(ctx, s.OrgID)
	}
	data := map[string]any{"Counts": counts}
	var eps []models.Endpoint
	if err == nil {
		// One read of the endpoints, with their health, serves the charts, the problems and the
		// drops still owed.
		eps, err = c.Webhooks.List(ctx, s.OrgID, &s.User.ID)
	}
	urls := urlsOf(eps)
	if err == nil {
		err = c.overviewCharts(g, urls, data)
	}
	if err == nil {
		err = c.latestProblems(g, urls, data)
	}
	if err == nil {
		unrecovered(eps, data)
	}
	if err != nil {
		c.render(g, status(err), "overview", s, view{Error: c.problem(err)})
		return
	}
	c.workerVersions(g, data)
	c.render(g, http.StatusOK, "overview", s, view{Data: data})
}

// overviewCharts adds the deliveries of the last 24 hours (drawn, and added up) and 7 days and each
// endpoint's success rate over the 7 days, drawn, to data; one query reads the whole window.
func (c *Console) overviewCharts(g *gin.Context, urls map[uuid.UUID]string, data map[string]any) error {
	ctx := g.Request.Context()
	now := time.Now()
	since := time.Date(now.UTC().Year(), now.UTC().Month(), now.UTC().Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -6)
	hours, err := c.Deliveries.DeliveryHistory(ctx, c.query(g, 0), since)
	if err != nil {
		return err
	}
	byEndpoint := map[uuid.UUID]*rate{}
	var rates []*rate
	for id, u := range urls {
		byEndpoint[id] = &rate{EndpointID: id, URL: u}
		rates = append(rates, byEndpoint[id])
	}
	for _, h := range hours {
		r := byEndpoint[h.EndpointID]
		if r == nil { // a deleted endpoint's attempts still count in the bars
			continue
		}
		r.Succeeded += h.Succeeded
		r.Attempts += h.Succeeded + h.Failed + h.Dropped
	}
	slices.SortFunc(rates, func(a, b *rate) int { return strings.Compare(a.URL, b.URL) })
	flat := make([]rate, len(rates))
	for i, r := range rates {
		flat[i] = *r
	}
	day := hourBins(hours, now)
	data["Hours"], data["Day"] = barChart("Deliveries, last 24 hours, by hour (UTC)", day), total(day)
	data["Days"] = barChart("Deliveries, last 7 days, by day (UTC)", dayBins(hours, now))
	data["Rates"], data["HasEndpoints"] = rateChart(flat), len(flat) > 0
	return nil
}

// endpointURLs are the org's endpoints' URLs by id, each followed by its description when it has one.
func (c *Console) endpointURLs(g *gin.Context) (map[uuid.UUID]string, error) {
	s := sessionOf(g)
	eps, err := c.Webhooks.List(g.Request.Context(), s.OrgID, &s.User.ID)
	return urlsOf(eps), err
}

// urlsOf is endpointURLs of endpoints already read.
func urlsOf(eps []models.Endpoint) map[uuid.UUID]string {
	urls := make(map[uuid.UUID]string, len(eps))
	for _, ep := range eps {
		urls[ep.ID] = ep.URL
		if ep.Description != nil {
			urls[ep.ID] += " · " + *ep.Description
		}
	}
	return urls
}

// latestProblems adds the five latest dropped and the five latest failed attempts, newest first,
// with their endpoints' URLs and how their chains stand now, to data.
func (c *Console) latestProblems(g *gin.Context, urls map[uuid.UUID]string, data map[string]any) error {
	var attempts []deliverylog.LogRow
	for _, st := range []models.Status{models.StatusDropped, models.StatusFailed} {
		page, err := c.Deliveries.ListOrgDeliveries(g.Request.Context(), c.query(g, 5), deliverylog.LogFilter{Status: st})
		if err != nil {
			return err
		}
		attempts = append(attempts, page.Rows...)
	}
	slices.SortStableFunc(attempts, func(a, b deliverylog.LogRow) int { return b.AttemptedAt.Compare(a.AttemptedAt) })
	fates, err := c.Deliveries.ChainFates(g.Request.Context(), sessionOf(g).OrgID, deliveriesOf(attempts))
	if err != nil {
		return err
	}
	latest := make([]problemRow, len(attempts))
	var recovered []string
	for i, d := range attempts {
		latest[i] = problemRow{deliveryRow: deliveryRow{LogRow: d}, URL: urls[d.EndpointID], Fate: fates[d.ChainID]}
		if f := latest[i].Fate; d.Status == models.StatusFailed && f.Status == models.StatusDropped {
			// A failed attempt's chain that dropped since shows what became of the drop.
			latest[i].RefiredChainID, latest[i].RefiredWorkflowID = f.RefiredChainID, f.RefiredWorkflowID
		}
		if w := latest[i].RefiredWorkflowID; w != nil {
			latest[i].RefiredURL = c.workflowURL(*w)
			recovered = append(recovered, *w)
		}
	}
	by, err := c.Recoveries.RecoveriesOfChains(g.Request.Context(), recovered)
	for i, r := range latest {
		if r.RefiredWorkflowID != nil {
			latest[i].RecoveryID = by[*r.RefiredWorkflowID]
		}
	}
	data["Latest"] = latest
	return err
}

// deliveriesOf are the log rows' attempts.
func deliveriesOf(rows []deliverylog.LogRow) []models.Delivery {
	out := make([]models.Delivery, len(rows))
	for i, r := range rows {
		out[i] = r.Delivery
	}
	return out
}

// unrecovered adds the endpoints with unrecovered drops (models.UnrecoveredDrop), read from their
// kept health, and how many there are in all, to data.
func unrecovered(eps []models.Endpoint, data map[string]any) {
	var owing []models.Endpoint
	var n int64
	for _, ep := range eps {
		if ep.Health.UnrecoveredDropped > 0 {
			owing = append(owing, ep)
			n += ep.Health.UnrecoveredDropped
		}
	}
	data["Unrecovered"], data["UnrecoveredTotal"] = owing, n
}

// problemRow is a dropped or failed attempt on the overview, with its endpoint's URL and, when a
// recovery re-fired it, that recovery.
type problemRow struct {
	deliveryRow
	URL        string
	RecoveryID uuid.UUID
	// Fate is how the row's chain stands now.
	Fate deliverylog.ChainFate
}

// Recovered reports whether a recovery, rather than a person's Re-fire, started the row's new chain.
func (r problemRow) Recovered() bool { return r.RecoveryID != uuid.Nil }

// DeliveredOn is the attempt that delivered a failed attempt's chain since, or 0 while it has not.
func (r problemRow) DeliveredOn() int {
	if r.Status == models.StatusFailed && r.Fate.Status == models.StatusSucceeded {
		return r.Fate.Attempt
	}
	return 0
}

// keys is the API keys settings page: read keys, minted once, revoked by owners and admins.
func (c *Console) keys(g *gin.Context) { c.keysPage(g, http.StatusOK, view{Notice: notice(g)}) }

func (c *Console) keysPage(g *gin.Context, code int, v view) {
	page, err := c.KeyLists.ListReadKeys(g.Request.Context(), c.query(g, 100))
	if err != nil && v.Error == nil {
		v.Error = c.problem(err)
	}
	v.Data = map[string]any{"Keys": page.Rows, "Created": v.Data}
	c.render(g, code, "keys", sessionOf(g), v)
}

func (c *Console) createReadKey(g *gin.Context) {
	s := sessionOf(g)
	in := apikeys.NewReadKey{OrgID: s.OrgID, ActorID: s.User.ID, Scope: g.PostForm("scope"), Name: g.PostForm("name")}
	exp, err := formTime(g, "expires_at")
	if err == nil {
		in.ExpiresAt = exp
		var k *models.ReadKey
		var plain string
		if k, plain, err = c.Keys.CreateReadKey(g.Request.Context(), in); err == nil {
			c.keysPage(g, http.StatusOK, view{Data: map[string]string{"ID": k.ID.String(), "Secret": plain}})
			return
		}
	}
	c.keysPage(g, status(err), view{Error: c.problem(err), Form: form(g)})
}

func (c *Console) revokeReadKey(g *gin.Context) {
	c.act(g, "/console/keys", "revoked", func(id uuid.UUID) error {
		_, err := c.Keys.RevokeReadKey(g.Request.Context(), id, sessionOf(g).User.ID)
		return err
	}, c.keysPage)
}

// connectors is the connectors settings page: integration keys with every option of the CLI.
func (c *Console) connectors(g *gin.Context) {
	c.connectorsPage(g, http.StatusOK, view{Notice: notice(g)})
}

func (c *Console) connectorsPage(g *gin.Context, code int, v view) {
	ctx := g.Request.Context()
	page, err := c.KeyLists.ListIntegrationKeys(ctx, c.query(g, 100))
	if err != nil && v.Error == nil {
		v.Error = c.problem(err)
	}
	stores, _ := c.Members.Stores(ctx, sessionOf(g).OrgID)
	names := make(map[uuid.UUID]string, len(stores))
	for _, st := range stores {
		names[st.ID] = st.Name
	}
	v.Data = map[string]any{"Keys": page.Rows, "Stores": stores, "StoreNames": names, "Scopes": models.IntegrationScopes, "Created": v.Data}
	c.render(g, code, "connectors", sessionOf(g), v)
}

func (c *Console) createConnector(g *gin.Context) {
	s := sessionOf(g)
	store, _ := uuid.Parse(g.PostForm("store_id"))
	rate, _ := strconv.Atoi(strings.TrimSpace(g.PostForm("rate_limit")))
	in := apikeys.NewIntegrationKey{OrgID: s.OrgID, StoreID: store, ActorID: s.User.ID, Label: g.PostForm("label"),
		PayloadFormat: g.PostForm("format"), Scopes: g.PostFormArray("scopes"), RequireSignature: g.PostForm("require_signature") != "",
		IPAllowlist: splitList(g.PostForm("ip_allowlist")), RateLimit: rate}
	exp, err := formTime(g, "expires_at")
	if err == nil {
		in.ExpiresAt = exp
		var k *apikeys.CreatedIntegrationKey
		if k, err = c.Keys.CreateIntegrationKey(g.Request.Context(), in); err == nil {
			c.connectorsPage(g, http.StatusOK, view{Data: map[string]string{"ID": k.Key.ID.String(), "Secret": k.Plaintext, "Signing": k.SigningSecret}})
			return
		}
	}
	c.connectorsPage(g, status(err), view{Error: c.problem(err), Form: form(g)})
}

func (c *Console) revokeConnector(g *gin.Context) {
	c.act(g, "/console/connectors", "revoked", func(id uuid.UUID) error {
		_, err := c.Keys.RevokeIntegrationKey(g.Request.Context(), id, sessionOf(g).User.ID)
		return err
	}, c.connectorsPage)
}

// webhooks is the webhooks settings page: endpoints, with Send test.
func (c *Console) webhooks(g *gin.Context) { c.webhooksPage(g, http.StatusOK, view{Notice: notice(g)}) }

func (c *Console) webhooksPage(g *gin.Context, code int, v view) {
	s := sessionOf(g)
	eps, err := c.Webhooks.List(g.Request.Context(), s.OrgID, &s.User.ID)
	if err != nil && v.Error == nil {
		v.Error = c.problem(err)
	}
	v.Data = map[string]any{"Endpoints": eps, "Types": events.Types(), "Created": v.Data, "Ladder": c.RetrySchedule}
	c.render(g, code, "webhooks", s, v)
}

func (c *Console) createEndpoint(g *gin.Context) {
	s := sessionOf(g)
	attempts, _ := strconv.Atoi(strings.TrimSpace(g.PostForm("max_attempts")))
	ep, err := c.Webhooks.Create(g.Request.Context(), endpoints.CreateInput{OrgID: s.OrgID, ActorID: s.User.ID,
		URL: g.PostForm("url"), EventTypes: g.PostFormArray("events"), MaxAttempts: attempts, Description: g.PostForm("description")})
	if err != nil {
		c.webhooksPage(g, status(err), view{Error: c.problem(err), Form: form(g)})
		return
	}
	c.webhooksPage(g, http.StatusOK, view{Data: map[string]string{"ID": ep.ID.String(), "Secret": ep.Secret, "What": "endpoint"}})
}

// testsPerMinute is how many test events the console sends one endpoint a minute: Send test is open
// to every member, and each one is a signed POST to the receiver.
const testsPerMinute = 10

// endpointAction runs enable, disable, rotate, delete and test on an endpoint of the session's org.
func (c *Console) endpointAction(g *gin.Context) {
	s := sessionOf(g)
	ctx := g.Request.Context()
	action := g.Param("action")
	if _, asks := confirmations[action]; asks && !confirmed(g) {
		c.confirmAction(g)
		return
	}
	if action == "rotate" {
		id, _ := uuid.Parse(g.Param("id"))
		grace, err := graceOf(g)
		var rot *endpoints.Rotated
		if err == nil {
			rot, err = c.Webhooks.RotateSecret(ctx, id, s.User.ID, grace)
		}
		if err != nil {
			c.webhooksPage(g, status(err), view{Error: c.problem(err)})
			return
		}
		created := map[string]string{"ID": rot.ID.String(), "Secret": rot.Secret, "What": "rotated"}
		if grace > 0 {
			created["Until"] = stamp(time.Now().Add(grace))
		}
		c.webhooksPage(g, http.StatusOK, view{Data: created})
		return
	}
	ops := map[string]func(id uuid.UUID) error{
		"enable":  func(id uuid.UUID) error { _, err := c.Webhooks.Enable(ctx, id, s.User.ID); return err },
		"disable": func(id uuid.UUID) error { _, err := c.Webhooks.Disable(ctx, id, s.User.ID); return err },
		"delete":  func(id uuid.UUID) error { _, err := c.Webhooks.Delete(ctx, id, s.User.ID); return err },
		"test": func(id uuid.UUID) error {
			q, err := c.Resends.SendTestAs(ctx, s.OrgID, id, s.User.ID, func() error {
				if !c.tests.Allow(id.String(), testsPerMinute) {
					g.Header("Retry-After", "60")
					return problem.Fail(ratelimit.ErrExceeded, "at most %d test events a minute to one endpoint; retry after 60 seconds", testsPerMinute)
				}
				return nil
			})
			if err == nil && c.Dispatches != nil {
				c.Dispatches.StartDispatches(ctx, q.DispatchID)
			}
			return err
		},
	}
	op := ops[action]
	if op == nil {
		c.notFound(g)
		return
	}
	done := map[string]string{"enable": "enabled", "disable": "disabled", "delete": "deleted", "test": "test"}[action]
	c.act(g, "/console/webhooks", done, op, c.webhooksPage)
}

// pathID is the row the path names; one that is not a UUID names no row.
func pathID(g *gin.Context) (uuid.UUID, error) {
	id, err := uuid.Parse(g.Param("id"))
	if err != nil {
		return uuid.Nil, problem.Fail(problem.NotFound, "no such row")
	}
	return id, nil
}

// act runs op on the path's id and goes back to the list, or shows the list with the failure.
func (c *Console) act(g *gin.Context, back, done string, op func(id uuid.UUID) error, page func(*gin.Context, int, view)) {
	id, err := pathID(g)
	if err == nil {
		err = op(id)
	}
	if err != nil {
		page(g, status(err), view{Error: c.problem(err)})
		return
	}
	c.done(g, back, done)
}

// endpoint is one endpoint's delivery log, newest first, filtered and keyset-paged, with Re-fire on
// dropped rows and a link from every row to its workflow in the Temporal UI.
func (c *Console) endpoint(g *gin.Context) { c.endpointPage(g, http.StatusOK, view{Notice: notice(g)}) }

// endpointPage renders the endpoint of the path with v's notice, error and form: its delivery log
// and the support desk's sections (health, settings, recovery).
func (c *Console) endpointPage(g *gin.Context, code int, v view) {
	s := sessionOf(g)
	ctx := g.Request.Context()
	id, err := pathID(g)
	var ep *models.Endpoint
	if err == nil {
		eps, lerr := c.Webhooks.List(ctx, s.OrgID, &s.User.ID)
		for i := range eps {
			if eps[i].ID == id {
				ep = &eps[i]
			}
		}
		err = lerr
	}
	if err == nil && ep == nil {
		err = problem.Fail(problem.NotFound, "endpoint not found")
	}
	if err != nil {
		c.render(g, status(err), "endpoint", s, view{Error: c.problem(err)})
		return
	}
	data := map[string]any{"Endpoint": ep, "Types": events.Types()}
	if err = c.supportData(g, ep, data); err == nil {
		q := c.query(g, deliveryPageSize)
		if q.Cursor, err = paging.ParseCursor(g.Query("cursor_at"), g.Query("cursor_id")); err == nil {
			filter := deliverylog.LogFilter{EndpointID: &id, Status: models.Status(g.Query("status")), EventType: g.Query("event_type")}
			var page paging.Page[deliverylog.LogRow]
			if page, err = c.Deliveries.ListOrgDeliveries(ctx, q, filter); err == nil {
				rows := make([]deliveryRow, len(page.Rows))
				for i, d := range page.Rows {
					rows[i] = deliveryRow{LogRow: d, WorkflowURL: c.workflowURL(d.WorkflowID)}
					if d.RefiredWorkflowID != nil {
						rows[i].RefiredURL = c.workflowURL(*d.RefiredWorkflowID)
					}
				}
				data["Rows"], data["Status"], data["EventType"], data["Next"] = rows, filter.Status, filter.EventType, next(g, page)
				data["PageSize"], data["Paged"] = deliveryPageSize, q.Cursor != nil
				data["First"] = g.Request.URL.Path + "?" + url.Values{"status": {g.Query("status")}, "event_type": {g.Query("event_type")}}.Encode() + "#log"
				v.Data = data
				if _, bad := data["RecoverError"]; bad && code == http.StatusOK {
					code = http.StatusUnprocessableEntity // the since typed, shown beside its field
				}
				c.render(g, code, "endpoint", s, v)
				return
			}
		}
	}
	v.Error, v.Data = c.problem(err), data
	c.render(g, status(err), "endpoint", s, v)
}

// deliveryPageSize is how many attempts a page of an endpoint's delivery log shows: few enough that
// the page stays short, with the log's forms above it.
const deliveryPageSize = 20

// next is the next page's URL, keeping the filters, or "" on the last page.
func next(g *gin.Context, page paging.Page[deliverylog.LogRow]) string {
	if page.NextCursor == nil {
		return ""
	}
	q := url.Values{"status": {g.Query("status")}, "event_type": {g.Query("event_type")},
		"cursor_at": {page.NextCursor.At.Format(time.RFC3339Nano)}, "cursor_id": {page.NextCursor.ID.String()}}
	return g.Request.URL.Path + "?" + q.Encode() + "#log"
}

func (c *Console) refire(g *gin.Context) {
	s := sessionOf(g)
	back := "/console/webhooks/" + url.PathEscape(g.PostForm("endpoint"))
	c.act(g, back, "refired", func(id uuid.UUID) error {
		out, err := c.Resends.Refire(g.Request.Context(), id, s.User.ID)
		if err == nil && c.Dispatches != nil {
			c.Dispatches.StartDispatches(g.Request.Context(), out.DispatchID)
		}
		return err
	}, c.webhooksPage)
}

// deliveryRow is a delivery log row (with its order's number) with the links to its workflow and,
// once it was re-fired, to the workflow of its new chain.
type deliveryRow struct {
	deliverylog.LogRow
	WorkflowURL string
	RefiredURL  string
}

// Refirable reports whether a manager may re-fire the row (resend.Refirable).
func (r deliveryRow) Refirable() bool { return resend.Refirable(r.Delivery) }

// Answer is the receiver's response status with its name, once: "401 Unauthorized".
func (r deliveryRow) Answer() string {
	if r.ResponseStatus == nil {
		return ""
	}
	return strings.TrimSpace(strconv.Itoa(*r.ResponseStatus) + " " + http.StatusText(*r.ResponseStatus))
}

// Reason is why the attempt failed, in words (timeout, address_not_allowed, endpoint_disabled, ...),
// left out when it only repeats the status Answer shows.
func (r deliveryRow) Reason() string {
	if r.ResponseStatus != nil && r.Error == "HTTP "+strconv.Itoa(*r.ResponseStatus) {
		return ""
	}
	return r.Error
}

// Took is the attempt's round trip, timed on the monotonic clock around the whole exchange. One
// that stayed under a millisecond (a receiver on the same host) reads "<1 ms", not "0 ms"; an
// attempt that sent nothing (its endpoint disabled or deleted) took no time at all.
func (r deliveryRow) Took() string {
	switch {
	case r.DurationMS == 0 && r.ResponseStatus == nil && (r.Error == models.ReasonEndpointDisabled || r.Error == models.ReasonEndpointDeleted):
		return "not sent"
	case r.DurationMS == 0:
		return "<1 ms"
	}
	return strconv.FormatInt(r.DurationMS, 10) + " ms"
}

// workflowURL links a delivery to its workflow in the Temporal UI.
func (c *Console) workflowURL(workflowID string) string {
	return strings.TrimRight(c.TemporalUI, "/") + "/namespaces/" + url.PathEscape(c.Namespace) + "/workflows/" + url.PathEscape(workflowID)
}

// form keeps a failed form's text inputs for the page to show again.
func form(g *gin.Context) map[string]string {
	out := map[string]string{}
	for k, v := range g.Request.PostForm {
		if k != "csrf" && len(v) > 0 {
			out[k] = v[0]
		}
	}
	return out
}

// formTime reads an optional datetime-local or RFC 3339 field (UTC).
func formTime(g *gin.Context, name string) (*time.Time, error) {
	v := strings.TrimSpace(g.PostForm(name))
	if v == "" {
		return nil, nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04"} {
		if t, err := time.Parse(layout, v); err == nil {
			return &t, nil
		}
	}
	return nil, problem.Fail(problem.Invalid, "%s must be a date and time", name)
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
