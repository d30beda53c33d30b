package api

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"wds/api/openapi"
	"wds/internal/deliverylog"
	"wds/internal/endpoints"
	"wds/internal/platform/answer"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/internal/workspace"
	"wds/models"
)

// DispatchStarter starts queued re-fires and test events at once after commit; what it cannot start
// the worker's relay starts later.
type DispatchStarter interface {
	StartDispatches(ctx context.Context, dispatchIDs ...uuid.UUID)
}

// OperatorAuth is who holds an operator token and what they may do in an org (workspace).
type OperatorAuth interface {
	UserByToken(ctx context.Context, token string) (*models.User, error)
	// RequireRole is problem.NotFound for a non-member and workspace.ErrForbidden for a member
	// without one of roles.
	RequireRole(ctx context.Context, orgID, actorID uuid.UUID, roles ...models.Role) error
	// OnlyOrg is workspace.ErrSeveralOrgs for an operator in no org or in several.
	OnlyOrg(ctx context.Context, actorID uuid.UUID) (uuid.UUID, error)
}

// WebhookService is the endpoint operations (endpoints.Service) behind the named operations.
type WebhookService interface {
	Create(ctx context.Context, in endpoints.CreateInput) (*endpoints.Created, error)
	List(ctx context.Context, orgID uuid.UUID, actorID *uuid.UUID) ([]models.Endpoint, error)
	Disable(ctx context.Context, id, actorID uuid.UUID) (*models.Endpoint, error)
	Enable(ctx context.Context, id, actorID uuid.UUID) (*models.Endpoint, error)
	Delete(ctx context.Context, id, actorID uuid.UUID) (*models.Endpoint, error)
	RotateSecret(ctx context.Context, id, actorID uuid.UUID, grace time.Duration) (*endpoints.Rotated, error)
	Update(ctx context.Context, in endpoints.UpdateInput) (*models.Endpoint, error)
}

// DeliveryLog is the delivery log (deliverylog.Service): an endpoint's, the org's and one attempt.
type DeliveryLog interface {
	ListDeliveries(ctx context.Context, q deliverylog.DeliveriesQuery) (*deliverylog.DeliveriesPage, error)
	ListOrgDeliveries(ctx context.Context, q paging.OrgQuery, f deliverylog.LogFilter) (paging.Page[deliverylog.LogRow], error)
	Delivery(ctx context.Context, id uuid.UUID, actorID *uuid.UUID) (*deliverylog.LogRow, error)
}

const ctxOperator = "wds.operator"

// registerOperator mounts the Operator API: named operations called as POST /admin/v1/rpc/<operation>
// with a JSON object of parameters, and the delivery re-fire.
func (s *server) registerOperator(r *gin.Engine) {
	g := s.operatorGroup(r)
	g.POST("/rpc/:operation", s.rpc)
	g.POST("/deliveries/:id/refire", s.refire)
}

// operatorAuth authenticates `Authorization: Bearer <operator token>`.
func (s *server) operatorAuth(c *gin.Context) {
	token, err := bearer(c)
	if err != nil {
		fail(c, err)
		return
	}
	if !s.admitAuth(c) {
		return
	}
	u, err := s.Operators.UserByToken(c.Request.Context(), token)
	if errors.Is(err, workspace.ErrInvalidOperatorToken) {
		err = wrongKind(err, token, workspace.OperatorTokenPrefix)
	}
	if err != nil {
		s.authFailed(c, err)
		fail(c, err)
		return
	}
	c.Set(ctxOperator, u.ID)
	c.Next()
}

// rpcParams are the parameters of every operation; each operation reads the ones it needs.
type rpcParams struct {
	ID    *string `json:"p_id"`
	OrgID *string `json:"p_org_id"`
	// The endpoint's fields: Optional, so that an update tells "leave as is" from "clear".
	URL         models.Optional[string]            `json:"p_url"`
	EventTypes  models.Optional[[]string]          `json:"p_event_types"`
	MaxAttempts models.Optional[int]               `json:"p_max_attempts"`
	RateLimit   models.Optional[int]               `json:"p_rate_limit"`
	Headers     models.Optional[map[string]string] `json:"p_headers"`
	Description models.Optional[string]            `json:"p_description"`
	Limit       *int                               `json:"p_limit"`
	CursorAt    string                             `json:"p_cursor_at"`
	CursorID    string                             `json:"p_cursor_id"`
	// GraceSeconds is how long a rotated-out secret also signs (rotate_secret).
	GraceSeconds int64 `json:"p_grace_seconds"`
}

type rpcFunc func(ctx context.Context, actor uuid.UUID, p rpcParams) (int, any, error)

func (s *server) rpcOperations() map[string]rpcFunc {
	return map[string]rpcFunc{
		"outbound_webhook_create":          s.rpcCreate,
		"outbound_webhook_update":          s.rpcUpdate,
		"outbound_webhook_list":            s.rpcList,
		"outbound_webhook_disable":         s.rpcEndpoint(WebhookService.Disable),
		"outbound_webhook_enable":          s.rpcEndpoint(WebhookService.Enable),
		"outbound_webhook_delete":          s.rpcEndpoint(WebhookService.Delete),
		"outbound_webhook_rotate_secret":   s.rpcRotate,
		"outbound_webhook_list_deliveries": s.rpcDeliveries,
	}
}

func (s *server) rpc(c *gin.Context) {
	// The spec names the operations core.rpc_outbound_webhook_*; accept that spelling too.
	name := strings.TrimPrefix(strings.TrimPrefix(c.Param("operation"), "core."), "rpc_")
	op := s.rpcOperations()[name]
	if op == nil {
		fail(c, problem.Fail(problem.NotFound, "no operation %q", c.Param("operation")))
		return
	}
	p, err := decodeParams(c)
	if err != nil {
		fail(c, err)
		return
	}
	status, out, err := op(c.Request.Context(), c.MustGet(ctxOperator).(uuid.UUID), p)
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(status, out)
}

// decodeParams reads the JSON object of parameters; an empty body is no parameters.
func decodeParams(c *gin.Context) (rpcParams, error) {
	var p rpcParams
	raw, err := cappedBody(c)
	if err != nil {
		return p, err
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return p, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return p, problem.Fail(answer.ErrInvalidJSON, "body must be a JSON object of parameters")
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return p, problem.Fail(problem.Invalid, "%s must be %s, not %s", te.Field, paramTakes(te.Field, te.Type), jsonGiven(te.Value))
		}
		return p, problem.Fail(answer.ErrInvalidJSON, "body must be a JSON object of parameters")
	}
	return p, nil
}

// paramTakes says what JSON a parameter takes, with an example where a caller is likely to guess
// wrong (a comma-separated string of event types, as the CLI takes them).
func paramTakes(field string, t reflect.Type) string {
	switch field {
	case "p_event_types":
		return `an array of event types, such as ["order.created"]`
	case "p_headers":
		return `an object of header names to values, such as {"X-Tenant": "acme"}`
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}

// jsonGiven names the JSON value encoding/json could not decode: its kind, or a number itself
// (encoding/json reports an out-of-range or fractional number as "number 1e99").
func jsonGiven(value string) string {
	if n, ok := strings.CutPrefix(value, "number "); ok {
		return n
	}
	switch value {
	case "array", "object":
		return "an " + value
	case "bool":
		return "a boolean"
	}
	return "a " + value
}

func paramUUID(name string, v *string) (uuid.UUID, error) {
	if v == nil || *v == "" {
		return uuid.Nil, problem.Fail(problem.Invalid, "%s is required", name)
	}
	id, err := uuid.Parse(*v)
	if err != nil {
		return uuid.Nil, problem.Fail(problem.Invalid, "%s must be a UUID", name)
	}
	return id, nil
}

// orgOf is p_org_id, or the actor's only org when it is omitted.
func (s *server) orgOf(ctx context.Context, actor uuid.UUID, p rpcParams) (uuid.UUID, error) {
	if p.OrgID != nil {
		return paramUUID("p_org_id", p.OrgID)
	}
	org, err := s.Operators.OnlyOrg(ctx, actor)
	if errors.Is(err, workspace.ErrSeveralOrgs) {
		return uuid.Nil, problem.Fail(problem.Invalid, "p_org_id is required")
	}
	return org, err
}

func (s *server) rpcCreate(ctx context.Context, actor uuid.UUID, p rpcParams) (int, any, error) {
	org, err := s.orgOf(ctx, actor, p)
	if err != nil {
		return 0, nil, err
	}
	if p.EventTypes.Value == nil {
		return 0, nil, problem.Fail(problem.Invalid, "p_event_types is required")
	}
	in := endpoints.CreateInput{OrgID: org, ActorID: actor, URL: p.URL.Value, EventTypes: p.EventTypes.Value,
		MaxAttempts: p.MaxAttempts.Value, Headers: p.Headers.Value, Description: p.Description.Value}
	if p.RateLimit.Set && !p.RateLimit.Null {
		in.RateLimit = &p.RateLimit.Value
	}
	ep, err := s.Webhooks.Create(ctx, in)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, ep, nil
}

// rpcUpdate edits the fields the parameters name; p_rate_limit, p_headers and p_description null
// clear them.
func (s *server) rpcUpdate(ctx context.Context, actor uuid.UUID, p rpcParams) (int, any, error) {
	id, err := paramUUID("p_id", p.ID)
	if err != nil {
		return 0, nil, err
	}
	ep, err := s.Webhooks.Update(ctx, endpoints.UpdateInput{ID: id, ActorID: actor, URL: p.URL, EventTypes: p.EventTypes,
		MaxAttempts: p.MaxAttempts, RateLimit: p.RateLimit, Headers: p.Headers, Description: p.Description})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, ep, nil
}

func (s *server) rpcList(ctx context.Context, actor uuid.UUID, p rpcParams) (int, any, error) {
	org, err := s.orgOf(ctx, actor, p)
	if err != nil {
		return 0, nil, err
	}
	rows, err := s.Webhooks.List(ctx, org, &actor)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, gin.H{"rows": rows}, nil
}

func (s *server) rpcEndpoint(op func(WebhookService, context.Context, uuid.UUID, uuid.UUID) (*models.Endpoint, error)) rpcFunc {
	return func(ctx context.Context, actor uuid.UUID, p rpcParams) (int, any, error) {
		id, err := paramUUID("p_id", p.ID)
		if err != nil {
			return 0, nil, err
		}
		ep, err := op(s.Webhooks, ctx, id, actor)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, ep, nil
	}
}

func (s *server) rpcRotate(ctx context.Context, actor uuid.UUID, p rpcParams) (int, any, error) {
	id, err := paramUUID("p_id", p.ID)
	if err != nil {
		return 0, nil, err
	}
	grace := time.Duration(p.GraceSeconds) * time.Second
	if p.GraceSeconds > math.MaxInt64/int64(time.Second) {
		grace = -1 // would overflow: refused as out of range
	}
	out, err := s.Webhooks.RotateSecret(ctx, id, actor, grace)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, out, nil
}

func (s *server) rpcDeliveries(ctx context.Context, actor uuid.UUID, p rpcParams) (int, any, error) {
	id, err := paramUUID("p_id", p.ID)
	if err != nil {
		return 0, nil, err
	}
	limit := 0
	if p.Limit != nil {
		limit = *p.Limit
	}
	if limit, err = paging.ClampLimit(limit, p.Limit != nil); err != nil {
		return 0, nil, err
	}
	cur, err := paging.ParseCursor(p.CursorAt, p.CursorID)
	if err != nil {
		return 0, nil, err
	}
	page, err := s.Deliveries.ListDeliveries(ctx, deliverylog.DeliveriesQuery{EndpointID: id, ActorID: &actor, Limit: limit, Cursor: cur})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, page, nil
}

// refire queues a fresh chain for a dropped delivery and starts it at once when it can.
func (s *server) refire(c *gin.Context) {
	id, err := uuid.Parse(c.Param("id"))
	if err != nil {
		fail(c, problem.Fail(problem.NotFound, "delivery not found"))
		return
	}
	out, err := s.Resends.Refire(c.Request.Context(), id, c.MustGet(ctxOperator).(uuid.UUID))
	if err != nil {
		fail(c, err)
		return
	}
	if s.Dispatches != nil {
		s.Dispatches.StartDispatches(c.Request.Context(), out.DispatchID)
	}
	c.JSON(http.StatusOK, out)
}

// operatorGroup is the Operator API's routes: the operator's token, then the query parameters the
// route's operation in the API document takes (knownQuery).
func (s *server) operatorGroup(r *gin.Engine) *gin.RouterGroup {
	return r.Group("/admin/v1", s.operatorAuth, knownQuery(operationQueries))
}

// operationQueries is what each Operator API operation takes in its query, from its document.
var operationQueries = sync.OnceValue(func() map[string][]string {
	params, err := openapi.QueryParams(openapi.OperatorJSON())
	if err != nil {
		panic(err) // the document is embedded and tested: a broken one is a build defect
	}
	return params
})

// knownQuery refuses a query parameter that the route's operation in params does not take, naming
// those it does, so a misspelt filter (order for order_number) is an error rather than ignored and
// answered with everything. A route the document does not describe is let through.
func knownQuery(params func() map[string][]string) gin.HandlerFunc {
	return func(c *gin.Context) {
		takes, ok := params()[c.Request.Method+" "+templatePath(c.FullPath())]
		if !ok {
			c.Next()
			return
		}
		for name := range c.Request.URL.Query() {
			if slices.Contains(takes, name) {
				continue
			}
			if len(takes) == 0 {
				fail(c, problem.Fail(paging.ErrInvalidParameter, "unknown query parameter %q: this operation takes none", name))
			} else {
				fail(c, problem.Fail(paging.ErrInvalidParameter, "unknown query parameter %q: this operation takes %s", name, strings.Join(takes, ", ")))
			}
			return
		}
		c.Next()
	}
}

// templatePath is a Gin route pattern (/orgs/:org_id) as the API document writes it (/orgs/{org_id}).
func templatePath(route string) string {
	parts := strings.Split(route, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") || strings.HasPrefix(p, "*") {
			parts[i] = "{" + p[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}
