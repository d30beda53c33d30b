package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"
	"gorm.io/gorm"

	"wds/api"
	"wds/api/openapi/openapitest"
	"wds/internal/apikeys"
	"wds/internal/catalog"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/apitest"
	"wds/test/pgtest"
)

// readEnv is one org with a store, an owner and keys, served by the real router over real PostgreSQL.
type readEnv struct {
	t     testing.TB
	db    *gorm.DB
	srv   *httptest.Server
	org   *models.Org
	store *models.Store
	owner *models.User
	key   string // read_only
	rwKey string // read_write
	clock *testClock
}

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newReadEnv(t testing.TB) *readEnv {
	t.Helper()
	ctx := context.Background()
	e := &readEnv{t: t, db: pgtest.New(t), clock: &testClock{t: time.Now()}}
	e.org, e.store, e.owner = mustOrg(t, e.db, "Acme")
	e.key = mustReadKey(t, e.db, e.org.ID, e.owner.ID, models.ScopeReadOnly, nil)
	e.rwKey = mustReadKey(t, e.db, e.org.ID, e.owner.ID, models.ScopeReadWrite, nil)
	log := logrus.New()
	log.SetOutput(io.Discard)
	r, err := api.NewRouter(api.Deps{Services: apitest.Services(e.db, nil, nil), Log: log, Now: e.clock.Now, LastUsed: apikeys.NewLastUsed(e.db, log)})
	if err != nil {
		t.Fatal(err)
	}
	e.srv = httptest.NewServer(r)
	t.Cleanup(e.srv.Close)
	_ = ctx
	return e
}

func mustOrg(t testing.TB, db *gorm.DB, name string) (*models.Org, *models.Store, *models.User) {
	t.Helper()
	ctx := context.Background()
	org, err := workspace.NewService(db).CreateOrg(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	store, err := workspace.NewService(db).CreateStore(ctx, org.ID, name+" store", "EUR")
	if err != nil {
		t.Fatal(err)
	}
	owner, _, err := workspace.NewService(db).CreateUser(ctx, org.ID, uuid.NewString()+"@example.com", models.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	return org, store, owner
}

func mustReadKey(t testing.TB, db *gorm.DB, org, actor uuid.UUID, scope string, expires *time.Time) string {
	t.Helper()
	_, key := mustReadKeyWithID(t, db, org, actor, scope, expires)
	return key
}

func mustReadKeyWithID(t testing.TB, db *gorm.DB, org, actor uuid.UUID, scope string, expires *time.Time) (uuid.UUID, string) {
	t.Helper()
	k, key, err := apikeys.NewService(db, nil).CreateReadKey(context.Background(), apikeys.NewReadKey{OrgID: org, ActorID: actor, Scope: scope, ExpiresAt: expires})
	if err != nil {
		t.Fatal(err)
	}
	return k.ID, key
}

// mustVendor adds a vendor as one of the org's operators.
func mustVendor(t testing.TB, db *gorm.DB, org, store uuid.UUID, name string) *catalog.Vendor {
	t.Helper()
	var m models.Membership
	if err := db.Where("org_id = ?", org).Take(&m).Error; err != nil {
		t.Fatal(err)
	}
	v, err := catalog.NewService(db, nil).CreateVendor(context.Background(), org, m.UserID, store,
		catalog.VendorFields{Name: models.Optional[string]{Set: true, Value: name}})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// get calls the API and checks the response against the OpenAPI document, so the document and the
// real answers cannot drift apart.
func (e *readEnv) get(path, key string) (int, []byte) {
	e.t.Helper()
	return e.do(http.MethodGet, path, key, nil)
}

func (e *readEnv) do(method, path, key string, hdr http.Header) (int, []byte) {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, nil)
	for k, v := range hdr {
		req.Header[k] = v
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	e.validate(req, res, body)
	return res.StatusCode, body
}

func (e *readEnv) validate(req *http.Request, res *http.Response, body []byte) {
	e.t.Helper()
	openapitest.Check(e.t, req, res.StatusCode, res.Header, body)
}

func wantError(t testing.TB, status int, body []byte, wantStatus int, code string) {
	t.Helper()
	var b struct{ Error, Detail string }
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("error body is not JSON: %s", body)
	}
	if status != wantStatus || b.Error != code || strings.TrimSpace(b.Detail) == "" {
		t.Fatalf("got %d %s (%q), want %d %s", status, b.Error, b.Detail, wantStatus, code)
	}
}

type page struct {
	Rows []struct {
		ID        uuid.UUID `json:"id"`
		StoreID   uuid.UUID `json:"store_id"`
		UpdatedAt time.Time `json:"updated_at"`
	} `json:"rows"`
	NextCursor *struct {
		At string    `json:"at"`
		ID uuid.UUID `json:"id"`
	} `json:"next_cursor"`
}

func decodePage(t testing.TB, body []byte) page {
	t.Helper()
	var p page
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("not a page: %v: %s", err, body)
	}
	return p
}
