package api_test

import (
	"bytes"
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
	"wds/internal/platform/metrics"
	"wds/models"
	"wds/test/apitest"
	"wds/test/pgtest"
)

// syncBuffer collects log output written from the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// lines parses every JSON log line written so far.
func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", l)
		}
		out = append(out, m)
	}
	return out
}

// observedServer is the real router over db with its JSON log captured.
func observedServer(t *testing.T, db *gorm.DB) (*httptest.Server, *syncBuffer) {
	t.Helper()
	buf := &syncBuffer{}
	log := logrus.New()
	log.SetOutput(buf)
	log.SetFormatter(&logrus.JSONFormatter{})
	// A frozen clock: a burst that crossed a minute boundary would find part of its budget back.
	frozen := time.Now()
	r, err := api.NewRouter(api.Deps{Services: apitest.Services(db, nil, nil), Log: log, Now: func() time.Time { return frozen }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return srv, buf
}

func call(t *testing.T, srv *httptest.Server, path, key, requestID string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if requestID != "" {
		req.Header.Set(api.HeaderRequestID, requestID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	openapitest.Check(t, req, res.StatusCode, res.Header, body)
	return res, body
}

func TestRequestLogCarriesRequestIDKeyOrgRouteStatusAndDuration(t *testing.T) {
	db := pgtest.New(t)
	org, _, owner := mustOrg(t, db, "Logged")
	keyID, key := mustReadKeyWithID(t, db, org.ID, owner.ID, models.ScopeReadOnly, nil)
	srv, logs := observedServer(t, db)

	res, _ := call(t, srv, "/v1/orders?limit=5", key, "req-7f3a:trace.01_x")
	if res.StatusCode != http.StatusOK || res.Header.Get(api.HeaderRequestID) != "req-7f3a:trace.01_x" {
		t.Fatalf("status %d, echoed id %q", res.StatusCode, res.Header.Get(api.HeaderRequestID))
	}
	// Ids that are too long or carry characters a log reader could be fooled by are replaced.
	for _, bad := range []string{strings.Repeat("a", 129), "two words", `x","level":"panic`} {
		res, _ := call(t, srv, "/v1/health", "", bad)
		if got := res.Header.Get(api.HeaderRequestID); got == bad || uuid.Validate(got) != nil {
			t.Errorf("request id %q echoed as %q, want a fresh UUID", bad, got)
		}
	}
	res, _ = call(t, srv, "/v1/orders", "pck_live_"+strings.Repeat("0", 40), "")
	generated := res.Header.Get(api.HeaderRequestID)
	if res.StatusCode != http.StatusUnauthorized || uuid.Validate(generated) != nil {
		t.Fatalf("refused request: status %d, id %q", res.StatusCode, generated)
	}

	lines := logs.lines(t)
	var ok, refused map[string]any
	for _, l := range lines {
		switch l["request_id"] {
		case "req-7f3a:trace.01_x":
			ok = l
		case generated:
			refused = l
		}
	}
	if ok == nil || refused == nil {
		t.Fatalf("request lines missing from the log:\n%s", logs.String())
	}
	want := map[string]any{"key_id": keyID.String(), "org_id": org.ID.String(), "route": "/v1/orders",
		"path": "/v1/orders", "method": "GET", "status": float64(200), "level": "info", "msg": "request"}
	for k, v := range want {
		if ok[k] != v {
			t.Errorf("log field %s = %v, want %v (line %v)", k, ok[k], v, ok)
		}
	}
	if _, has := ok["duration_ms"].(float64); !has {
		t.Errorf("duration_ms missing: %v", ok)
	}
	if refused["status"] != float64(401) || refused["key_id"] != nil {
		t.Errorf("refused request line: %v", refused)
	}
	if out := logs.String(); strings.Contains(out, key) || strings.Contains(out, strings.Repeat("0", 40)) {
		t.Error("an API key reached the log")
	}
}

func TestReadyChecksDatabaseAndSchema(t *testing.T) {
	db := pgtest.New(t)
	srv, _ := observedServer(t, db)
	if res, body := call(t, srv, "/v1/ready", "", ""); res.StatusCode != http.StatusOK || string(body) != `{"ok":true}` {
		t.Fatalf("ready: %d %s", res.StatusCode, body)
	}

	// A schema behind the binary (a deploy that ran ahead of `wds migrate up`) is not ready.
	if err := db.Exec("DELETE FROM goose_db_version WHERE version_id = (SELECT max(version_id) FROM goose_db_version)").Error; err != nil {
		t.Fatal(err)
	}
	res, body := call(t, srv, "/v1/ready", "", "")
	wantError(t, res.StatusCode, body, http.StatusServiceUnavailable, "not_ready")
	if !strings.Contains(string(body), "wds migrate up") {
		t.Errorf("detail does not say how to fix it: %s", body)
	}

	// A database that is gone is not ready, and the answer does not leak its address or user.
	sqlDB, _ := db.DB()
	_ = sqlDB.Close()
	res, body = call(t, srv, "/v1/ready", "", "")
	wantError(t, res.StatusCode, body, http.StatusServiceUnavailable, "not_ready")
	if strings.Contains(string(body), "127.0.0.1") || strings.Contains(string(body), "postgres") {
		t.Errorf("readiness answer leaks connection details: %s", body)
	}
	// Liveness does not depend on the database.
	if res, _ := call(t, srv, "/v1/health", "", ""); res.StatusCode != http.StatusOK {
		t.Errorf("health with the database down: %d", res.StatusCode)
	}
}

func TestMetricsCountRequestsAndReadRateLimits(t *testing.T) {
	db := pgtest.New(t)
	org, _, owner := mustOrg(t, db, "Metered")
	key := mustReadKey(t, db, org.ID, owner.ID, models.ScopeReadOnly, nil)
	srv, _ := observedServer(t, db)

	route := func(r, status string) float64 {
		return metricValue(t, "wds_http_requests_total", map[string]string{"route": r, "method": "GET", "status": status})
	}
	rateLimitedRead := func(t *testing.T) float64 {
		return metricValue(t, "wds_rate_limited_total", map[string]string{"api": "read"})
	}
	before404, before429 := route("/v1/vendors/:id", "404"), route("/v1/vendors", "429")
	beforeLimited := rateLimitedRead(t)
	for range 3 {
		call(t, srv, "/v1/vendors/"+uuid.NewString(), key, "")
	}
	// The Read API allows 600 per minute per key; the 601st in a burst is refused.
	for range 597 {
		call(t, srv, "/v1/vendors", key, "")
	}
	if res, _ := call(t, srv, "/v1/vendors", key, ""); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("601st request: %d, want 429", res.StatusCode)
	}
	if got := route("/v1/vendors/:id", "404") - before404; got != 3 {
		t.Errorf("requests to /v1/vendors/:id with 404 grew by %v, want 3", got)
	}
	if got := route("/v1/vendors", "429") - before429; got != 1 {
		t.Errorf("429s on /v1/vendors grew by %v, want 1", got)
	}
	if got := rateLimitedRead(t) - beforeLimited; got != 1 {
		t.Errorf("wds_rate_limited_total{api=read} grew by %v, want 1", got)
	}
}

// metricValue reads the counter series of name with exactly these labels from the process registry.
func metricValue(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	fams, err := metrics.Registry.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if len(got) == len(labels) && func() bool {
				for k, v := range labels {
					if got[k] != v {
						return false
					}
				}
				return true
			}() {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
