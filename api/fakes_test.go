package api_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"

	"wds/api"
	"wds/api/openapi/openapitest"
	"wds/internal/apikeys"
	"wds/internal/events"
	"wds/internal/ingest"
	"wds/internal/platform/paging"
	"wds/internal/resend"
	"wds/internal/workspace"
	"wds/models"
)

// Fakes of the services the handlers reach through api.Services, for tests of what a handler does with
// its input and with a store's answer: those need no PostgreSQL. Each fake embeds its interface, so
// a method a test does not expect panics and the router answers 500.

// fakeRouter is the real router over the fakes in d.
func fakeRouter(t *testing.T, d api.Deps) http.Handler {
	t.Helper()
	log := logrus.New()
	log.SetOutput(io.Discard)
	d.Log = log
	r, err := api.NewRouter(d)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// serve answers one request with a bearer token (none when empty) and a body (none when empty), and
// holds the answer to the served OpenAPI document, as every other API test does.
func serve(t *testing.T, h http.Handler, method, path, token, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return openapitest.Serve(t, h, req)
}

// fakeReadKeys knows read keys by their token; any other token is invalid.
type fakeReadKeys map[string]*models.ReadKey

func (f fakeReadKeys) AuthenticateRead(_ context.Context, token string, _ time.Time) (*models.ReadKey, error) {
	if k, ok := f[token]; ok {
		return k, nil
	}
	return nil, apikeys.ErrInvalidAPIKey
}

// fakeReads records the page queries it is asked and answers err.
type fakeReads struct {
	api.ReadStore
	err     error
	queries []paging.ListQuery
}

func (f *fakeReads) ListClients(_ context.Context, q paging.ListQuery) (paging.Page[ingest.ClientView], error) {
	f.queries = append(f.queries, q)
	return paging.Page[ingest.ClientView]{Rows: []ingest.ClientView{}}, f.err
}

func (f *fakeReads) GetClient(context.Context, paging.Scope, uuid.UUID) (*ingest.ClientView, error) {
	return &ingest.ClientView{}, f.err
}

// roleCheck is one RequireRole call.
type roleCheck struct {
	org, actor uuid.UUID
	roles      []models.Role
}

// fakeOperators knows operators by their token, answers every role check with roleErr and OnlyOrg
// with onlyOrgErr.
type fakeOperators struct {
	api.OperatorAuth
	users      map[string]uuid.UUID
	roleErr    error
	onlyOrgErr error
	checks     []roleCheck
}

func (f *fakeOperators) UserByToken(_ context.Context, token string) (*models.User, error) {
	if id, ok := f.users[token]; ok {
		return &models.User{ID: id}, nil
	}
	return nil, workspace.ErrInvalidOperatorToken
}

func (f *fakeOperators) RequireRole(_ context.Context, org, actor uuid.UUID, roles ...models.Role) error {
	f.checks = append(f.checks, roleCheck{org: org, actor: actor, roles: roles})
	return f.roleErr
}

func (f *fakeOperators) OnlyOrg(context.Context, uuid.UUID) (uuid.UUID, error) {
	return uuid.Nil, f.onlyOrgErr
}

// fakeKeys counts the read keys it mints.
type fakeKeys struct {
	api.KeyStore
	created []apikeys.NewReadKey
}

func (f *fakeKeys) CreateReadKey(_ context.Context, in apikeys.NewReadKey) (*models.ReadKey, string, error) {
	f.created = append(f.created, in)
	return &models.ReadKey{ID: uuid.New(), OrgID: in.OrgID, Name: in.Name, Scope: in.Scope}, "pck_live_fake", nil
}

// fakeWebhooks counts the test events it queues, answering as resend.Service does; any other
// operation panics.
type fakeWebhooks struct {
	api.WebhookService
	api.Resends
	tests int
}

func (f *fakeWebhooks) SendTest(_ context.Context, _, endpointID uuid.UUID) (*resend.TestQueued, error) {
	f.tests++
	return &resend.TestQueued{DeliveryID: uuid.New(), EndpointID: endpointID, EventType: events.WebhookTest, Status: models.StatusEnqueued}, nil
}

// fakeGate knows one integration key, by the token "int", and answers every rate-limit question
// with allow and allowErr.
type fakeGate struct {
	api.IntegrationGate
	key      *models.IntegrationKey
	allow    bool
	allowErr error
}

func (f *fakeGate) AuthenticateIntegration(_ context.Context, token string, _ time.Time) (*models.IntegrationKey, error) {
	if token == "int" {
		return f.key, nil
	}
	return nil, apikeys.ErrInvalidAPIKey
}

func (f *fakeGate) Allow(context.Context, uuid.UUID, int, time.Time) (bool, error) {
	return f.allow, f.allowErr
}

// fakeIngest counts the orders it is asked to create and refuses each with err.
type fakeIngest struct {
	api.IngestStore
	err    error
	orders int
}

func (f *fakeIngest) CreateOrder(context.Context, *models.IntegrationKey, ingest.Order) (*ingest.OrderResult, error) {
	f.orders++
	return nil, f.err
}
