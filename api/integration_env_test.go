package api_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"
	"gorm.io/gorm"

	"wds/api"
	"wds/api/openapi/openapitest"
	"wds/api/signing"
	"wds/internal/apikeys"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/apitest"
	"wds/test/pgtest"
)

// intEnv is one org with a store and an owner, served by the real router over real PostgreSQL, with
// helpers to mint integration keys and call the Integration API. Every answer is checked against the
// Integration API's OpenAPI document.
type intEnv struct {
	t     testing.TB
	db    *gorm.DB
	srv   *httptest.Server
	clock *testClock
	box   *secrets.Box
	org   *models.Org
	store *models.Store
	owner *models.User
	used  *apikeys.LastUsed
	// router serves in-process requests (the fuzz target), without a network round trip.
	router http.Handler
}

func newIntEnv(t testing.TB, trustedProxies ...string) *intEnv {
	t.Helper()
	box, err := secrets.NewBox(secrets.GenerateKey())
	if err != nil {
		t.Fatal(err)
	}
	e := &intEnv{t: t, db: pgtest.New(t), clock: &testClock{t: time.Now()}, box: box}
	e.org, e.store, e.owner = mustOrg(t, e.db, "Acme")
	log := logrus.New()
	log.SetOutput(io.Discard)
	e.used = apikeys.NewLastUsed(e.db, log)
	r, err := api.NewRouter(api.Deps{Services: apitest.Services(e.db, box, nil), Log: log, Now: e.clock.Now, TrustedProxies: trustedProxies, LastUsed: e.used})
	if err != nil {
		t.Fatal(err)
	}
	e.router = r
	e.srv = httptest.NewServer(r)
	t.Cleanup(e.srv.Close)
	return e
}

// intKey is a minted key with its secrets.
type intKey struct {
	*models.IntegrationKey
	token  string
	secret string
}

// allScopes is every integration scope.
var allScopes = models.IntegrationScopes

// mint creates a key for the env's store; fields left zero take the env's org, store and owner and
// every scope.
func (e *intEnv) mint(in apikeys.NewIntegrationKey) intKey {
	e.t.Helper()
	if in.OrgID == uuid.Nil {
		in.OrgID, in.StoreID = e.org.ID, e.store.ID
	}
	if in.ActorID == uuid.Nil {
		in.ActorID = e.owner.ID
	}
	if in.Scopes == nil {
		in.Scopes = allScopes
	}
	if in.Label == "" {
		in.Label = "Test shop"
	}
	k, err := apikeys.NewService(e.db, e.box).CreateIntegrationKey(context.Background(), in)
	if err != nil {
		e.t.Fatal(err)
	}
	return intKey{IntegrationKey: k.Key, token: k.Plaintext, secret: k.SigningSecret}
}

// resp is one answer.
type resp struct {
	status int
	body   []byte
	header http.Header
}

// json decodes the body into a map.
func (r resp) json(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

// want fails unless the answer has status (and, for errors, the error code).
func (r resp) want(t testing.TB, status int, code string) map[string]any {
	t.Helper()
	if code != "" {
		wantError(t, r.status, r.body, status, code)
	} else if r.status != status {
		t.Fatalf("got %d, want %d: %s", r.status, status, r.body)
	}
	return r.json(t)
}

// call sends body with the key, signing it when the key has a secret, plus extra headers (an empty
// value removes a header).
func (e *intEnv) call(method, path string, k intKey, body string, hdr map[string]string) resp {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if k.token != "" {
		req.Header.Set("Authorization", "Bearer "+k.token)
	}
	if k.secret != "" {
		if k.PayloadFormat == models.FormatNativestore {
			req.Header.Set("X-Store-Webhook-Signature", signNative(k.secret, body))
		} else {
			req.Header.Set("PC-Signature", signing.SignPC([]byte(k.secret), e.clock.Now().Unix(), []byte(body)))
		}
	}
	for h, v := range hdr {
		if v == "" {
			req.Header.Del(h)
		} else {
			req.Header.Set(h, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	e.validate(req, res, out)
	return resp{status: res.StatusCode, body: out, header: res.Header}
}

func (e *intEnv) post(path string, k intKey, body string) resp {
	e.t.Helper()
	return e.call(http.MethodPost, path, k, body, nil)
}

func (e *intEnv) get(path string, k intKey) resp {
	e.t.Helper()
	return e.call(http.MethodGet, path, k, "", nil)
}

// validate checks a real answer against the document, so the two cannot drift apart.
func (e *intEnv) validate(req *http.Request, res *http.Response, body []byte) {
	e.t.Helper()
	openapitest.Check(e.t, req, res.StatusCode, res.Header, body)
}

// count runs a COUNT query.
func (e *intEnv) count(query string, args ...any) int64 {
	e.t.Helper()
	var n int64
	if err := e.db.Raw(query, args...).Scan(&n).Error; err != nil {
		e.t.Fatal(err)
	}
	return n
}

// events returns the outbox event types in order of creation.
func (e *intEnv) events() []string {
	e.t.Helper()
	var types []string
	if err := e.db.Raw(`SELECT type FROM events ORDER BY created_at, id`).Scan(&types).Error; err != nil {
		e.t.Fatal(err)
	}
	return types
}

// eventBody returns the latest event of a type, decoded.
func (e *intEnv) eventBody(typ string) map[string]any {
	e.t.Helper()
	var raw []string
	if err := e.db.Raw(`SELECT body::text FROM events WHERE type = ? ORDER BY created_at DESC LIMIT 1`, typ).Scan(&raw).Error; err != nil {
		e.t.Fatal(err)
	}
	if len(raw) == 0 {
		e.t.Fatalf("no %s event", typ)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(raw[0]), &m); err != nil {
		e.t.Fatal(err)
	}
	return m
}

// mustStore adds a store to the env's org.
func mustStore(t testing.TB, e *intEnv, name string) uuid.UUID {
	t.Helper()
	s, err := workspace.NewService(e.db).CreateStore(context.Background(), e.org.ID, name, "USD")
	if err != nil {
		t.Fatal(err)
	}
	return s.ID
}

// signNative is the platform's X-Store-Webhook-Signature for body, computed as the platform
// documents it (base64 of HMAC-SHA256 of the raw body), not with wds's own code.
func signNative(secret, body string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(body))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}
