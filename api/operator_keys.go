package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wds/api/openapi"
	"wds/internal/apikeys"
	"wds/internal/deliverylog"
	"wds/internal/ingest"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/internal/workspace"
	"wds/models"
)

// KeyStore mints and revokes an org's keys of both kinds (apikeys). Minting an integration key seals
// its signing secret, so it fails when no encryption key is configured.
type KeyStore interface {
	CreateReadKey(ctx context.Context, in apikeys.NewReadKey) (*models.ReadKey, string, error)
	CreateIntegrationKey(ctx context.Context, in apikeys.NewIntegrationKey) (*apikeys.CreatedIntegrationKey, error)
	RevokeReadKey(ctx context.Context, id, actorID uuid.UUID) (*models.ReadKey, error)
	RevokeIntegrationKey(ctx context.Context, id, actorID uuid.UUID) (*models.IntegrationKey, error)
}

// KeyLists are the Operator API's pages of an org's keys (apikeys.KeyLists), which any member may
// read.
type KeyLists interface {
	ListReadKeys(ctx context.Context, q paging.OrgQuery) (paging.Page[apikeys.ReadKey], error)
	ListIntegrationKeys(ctx context.Context, q paging.OrgQuery) (paging.Page[apikeys.IntegrationKey], error)
}

// AuditLog is the Operator API's page of an org's audit log (workspace.AuditLog), which owners and
// admins read.
type AuditLog interface {
	ListAudit(ctx context.Context, q paging.OrgQuery) (paging.Page[workspace.AuditEntry], error)
}

// registerOperatorKeys mounts the resource side of the Operator API beside the named webhook
// operations: keys of both kinds, the audit log and the org-wide delivery log. Role rules live in the
// operations (apikeys, workspace): owners and admins mint, revoke and read the audit log; any member
// lists keys and deliveries.
func (s *server) registerOperatorKeys(r *gin.Engine) {
	r.GET("/admin/v1/openapi.json", serveDoc(openapi.OperatorJSON, "application/json"))
	g := s.operatorGroup(r)
	org := g.Group("/orgs/:org_id", pathOrg)
	org.POST("/read-keys", s.orgRole(workspace.Managers), s.createReadKey)
	org.GET("/read-keys", operatorList(s.KeyLists, KeyLists.ListReadKeys))
	org.POST("/integration-keys", s.orgRole(workspace.Managers), s.createIntegrationKey)
	org.GET("/integration-keys", operatorList(s.KeyLists, KeyLists.ListIntegrationKeys))
	org.GET("/audit-log", operatorList(s.Audit, AuditLog.ListAudit))
	org.GET("/deliveries", s.listOrgDeliveries)
	g.POST("/read-keys/:id/revoke", s.revokeReadKey)
	g.POST("/integration-keys/:id/revoke", s.revokeIntegrationKey)
}

// pathOrg reads :org_id; one that is not a UUID names no org, so it is 404 like an unknown path.
func pathOrg(c *gin.Context) {
	id, err := uuid.Parse(c.Param("org_id"))
	if err != nil {
		fail(c, problem.Fail(problem.NotFound, "no org %q", c.Param("org_id")))
		return
	}
	c.Set(ctxOrgID, id) // also names the org in the request log, as key-authenticated calls do
	c.Next()
}

// orgRole refuses an actor without one of roles in the path's org before the body is read, so a
// member learns only that they may not, never what is wrong with their input. The operation checks
// again; this is the early answer, not the rule's only home.
func (s *server) orgRole(roles []models.Role) gin.HandlerFunc {
	return func(c *gin.Context) {
		if err := s.Operators.RequireRole(c.Request.Context(), c.MustGet(ctxOrgID).(uuid.UUID), actorOf(c), roles...); err != nil {
			fail(c, err)
			return
		}
		c.Next()
	}
}

func actorOf(c *gin.Context) uuid.UUID { return c.MustGet(ctxOperator).(uuid.UUID) }

// operatorQuery is the org, the actor and the page parameters, read exactly as the Read API reads them.
func operatorQuery(c *gin.Context) (paging.OrgQuery, error) {
	lq, err := listQuery(c)
	if err != nil {
		return paging.OrgQuery{}, err
	}
	return paging.OrgQuery{OrgID: lq.OrgID, ActorID: actorOf(c), Limit: lq.Limit, Cursor: lq.Cursor}, nil
}

// operatorList serves one list of lists (a KeyLists or an AuditLog) as an Operator API page.
func operatorList[L, T any](lists L, list func(L, context.Context, paging.OrgQuery) (paging.Page[T], error)) gin.HandlerFunc {
	return func(c *gin.Context) {
		q, err := operatorQuery(c)
		if err != nil {
			fail(c, err)
			return
		}
		p, err := list(lists, c.Request.Context(), q)
		if err != nil {
			fail(c, err)
			return
		}
		c.JSON(http.StatusOK, p)
	}
}

// createReadKeyBody is POST /admin/v1/orgs/{org_id}/read-keys.
type createReadKeyBody struct {
	Scope     string  `json:"scope"`
	Name      string  `json:"name"`
	ExpiresAt *string `json:"expires_at"`
}

// createdReadKey shows the key once; it is never readable again.
type createdReadKey struct {
	apikeys.ReadKey
	Key string `json:"key"`
}

func (s *server) createReadKey(c *gin.Context) {
	var b createReadKeyBody
	if err := readObject(c, &b); err != nil {
		fail(c, err)
		return
	}
	expires, err := expiresAt(b.ExpiresAt)
	if err != nil {
		fail(c, err)
		return
	}
	k, plain, err := s.Keys.CreateReadKey(c.Request.Context(), apikeys.NewReadKey{
		OrgID: c.MustGet(ctxOrgID).(uuid.UUID), ActorID: actorOf(c), Scope: b.Scope, Name: b.Name, ExpiresAt: expires})
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, createdReadKey{Key: plain, ReadKey: apikeys.ReadKey{ID: k.ID, Name: k.Name, Hint: k.KeyHint,
		Scope: k.Scope, Status: apikeys.KeyActive, CreatedBy: k.CreatedBy, CreatedAt: k.CreatedAt, ExpiresAt: k.ExpiresAt}})
}

// createIntegrationKeyBody is POST /admin/v1/orgs/{org_id}/integration-keys (the fields of
// `wds admin integration-key create`).
type createIntegrationKeyBody struct {
	StoreID          *string  `json:"store_id"`
	Scopes           []string `json:"scopes"`
	Format           string   `json:"format"`
	RequireSignature bool     `json:"require_signature"`
	IPAllowlist      []string `json:"ip_allowlist"`
	ExpiresAt        *string  `json:"expires_at"`
	RateLimit        int      `json:"rate_limit"`
	Label            string   `json:"label"`
}

// createdIntegrationKey shows the key, and the signing secret when there is one, once.
type createdIntegrationKey struct {
	apikeys.IntegrationKey
	Key           string `json:"key"`
	SigningSecret string `json:"signing_secret,omitempty"`
}

func (s *server) createIntegrationKey(c *gin.Context) {
	var b createIntegrationKeyBody
	if err := readObject(c, &b); err != nil {
		fail(c, err)
		return
	}
	expires, err := expiresAt(b.ExpiresAt)
	if err != nil {
		fail(c, err)
		return
	}
	store, err := paramUUID("store_id", b.StoreID)
	if err != nil {
		fail(c, err)
		return
	}
	out, err := s.Keys.CreateIntegrationKey(c.Request.Context(), apikeys.NewIntegrationKey{
		OrgID: c.MustGet(ctxOrgID).(uuid.UUID), StoreID: store, ActorID: actorOf(c), Label: b.Label,
		PayloadFormat: b.Format, Scopes: b.Scopes, IPAllowlist: b.IPAllowlist, RequireSignature: b.RequireSignature,
		ExpiresAt: expires, RateLimit: b.RateLimit})
	if err != nil {
		fail(c, err)
		return
	}
	k := out.Key
	c.JSON(http.StatusCreated, createdIntegrationKey{Key: out.Plaintext, SigningSecret: out.SigningSecret,
		IntegrationKey: apikeys.IntegrationKey{ID: k.ID, StoreID: k.StoreID, Label: k.Label, Hint: k.KeyHint,
			PayloadFormat: k.PayloadFormat, Scopes: k.Scopes, IPAllowlist: k.IPAllowlist, RequireSignature: k.RequireSignature,
			RateLimit: k.RateLimit, Status: apikeys.KeyActive, CreatedBy: k.CreatedBy, CreatedAt: k.CreatedAt, ExpiresAt: k.ExpiresAt}})
}

// revoked is the answer of both revokes, as `wds admin ... revoke` prints it.
type revoked struct {
	ID        uuid.UUID  `json:"id"`
	RevokedAt *time.Time `json:"revoked_at"`
}

func (s *server) revokeReadKey(c *gin.Context) {
	revokeWith(c, func(ctx context.Context, id uuid.UUID) (*time.Time, error) {
		k, err := s.Keys.RevokeReadKey(ctx, id, actorOf(c))
		if err != nil {
			return nil, err
		}
		return k.RevokedAt, nil
	})
}

func (s *server) revokeIntegrationKey(c *gin.Context) {
	revokeWith(c, func(ctx context.Context, id uuid.UUID) (*time.Time, error) {
		k, err := s.Keys.RevokeIntegrationKey(ctx, id, actorOf(c))
		if err != nil {
			return nil, err
		}
		return k.RevokedAt, nil
	})
}

func revokeWith(c *gin.Context, revoke func(context.Context, uuid.UUID) (*time.Time, error)) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		fail(c, problem.Fail(problem.NotFound, "no key %q", c.Param("id")))
		return
	}
	at, err := revoke(c.Request.Context(), id)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, revoked{ID: id, RevokedAt: at})
}

// listOrgDeliveries is GET /admin/v1/orgs/{org_id}/deliveries with optional endpoint_id, event_type,
// status, since and until filters.
func (s *server) listOrgDeliveries(c *gin.Context) {
	q, err := operatorQuery(c)
	if err != nil {
		fail(c, err)
		return
	}
	f, err := deliveryFilter(c)
	if err != nil {
		fail(c, err)
		return
	}
	p, err := s.Deliveries.ListOrgDeliveries(c.Request.Context(), q, f)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, p)
}

func deliveryFilter(c *gin.Context) (deliverylog.LogFilter, error) {
	f := deliverylog.LogFilter{EventType: c.Query("event_type"), Status: models.Status(c.Query("status"))}
	if raw, ok := c.GetQuery("endpoint_id"); ok {
		id, err := uuid.Parse(raw)
		if err != nil {
			return f, problem.Fail(paging.ErrInvalidParameter, "endpoint_id must be a UUID")
		}
		f.EndpointID = &id
	}
	for name, dst := range map[string]**time.Time{"since": &f.Since, "until": &f.Until} {
		raw, ok := c.GetQuery(name)
		if !ok {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, raw)
		if err != nil {
			return f, problem.Fail(paging.ErrInvalidParameter, "%s must be an RFC 3339 date-time", name)
		}
		*dst = &t
	}
	return f, nil
}

// readObject reads a JSON object body under the inbound cap (docs/integration-api.md) and decodes it as the
// Integration API does; an empty body is an empty object, so every field takes its default.
func readObject(c *gin.Context, v any) error {
	raw, err := cappedBody(c)
	if err != nil {
		return err
	}
	return ingest.DecodeOptional(raw, v)
}

// expiresAt parses an optional RFC 3339 expires_at; a malformed one is a field error naming it.
func expiresAt(raw *string) (*time.Time, error) { return bodyTime("expires_at", raw) }

// bodyTime parses an optional RFC 3339 time of a request body; a malformed one is a field error
// naming field.
func bodyTime(field string, raw *string) (*time.Time, error) {
	if raw == nil {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, *raw)
	if err != nil {
		return nil, problem.Fail(problem.Invalid, "%s must be an RFC 3339 date-time", field)
	}
	return &t, nil
}
