package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	"sigs.k8s.io/yaml"

	"wds/api/openapi"
	"wds/api/openapi/openapitest"
	"wds/internal/apikeys"
	"wds/internal/catalog"
	"wds/models"
)

func TestHealthNeedsNoKey(t *testing.T) {
	e := newReadEnv(t)
	status, body := e.get("/v1/health", "")
	if status != http.StatusOK || string(body) != `{"ok":true}` {
		t.Fatalf("health: %d %s", status, body)
	}
}

func TestOpenAPIDocumentIsValid303(t *testing.T) {
	e := newReadEnv(t)
	status, body := e.get("/v1/openapi.json", "")
	if status != http.StatusOK {
		t.Fatalf("openapi.json: %d", status)
	}
	doc, err := openapi3.NewLoader().LoadFromData(body)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("document is not valid OpenAPI: %v", err)
	}
	if doc.OpenAPI != "3.0.3" || doc.Info.Version != "1.0.0" {
		t.Fatalf("openapi %s version %s, want 3.0.3 / 1.0.0", doc.OpenAPI, doc.Info.Version)
	}
	for _, p := range []string{"/v1/health", "/v1/openapi.json", "/v1/orders", "/v1/orders/{id}", "/v1/vendors",
		"/v1/vendors/{id}", "/v1/clients", "/v1/products", "/v1/products/{id}", "/v1/webhooks/test/{endpoint_id}"} {
		if doc.Paths.Find(p) == nil {
			t.Errorf("document lacks %s", p)
		}
	}
	status, yml := e.get("/api/openapi.yaml", "")
	asJSON, err := yaml.YAMLToJSON(yml)
	if status != http.StatusOK || err != nil {
		t.Fatalf("openapi.yaml: %d %v", status, err)
	}
	var a, b any
	_ = json.Unmarshal(asJSON, &a)
	_ = json.Unmarshal(body, &b)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatal("the YAML and JSON documents differ")
	}
	if string(openapi.ReadYAML()) != string(yml) {
		t.Fatal("served YAML is not the embedded document")
	}
}

func TestAuthenticationErrors(t *testing.T) {
	e := newReadEnv(t)
	past := time.Now().Add(-time.Minute)
	expired := mustReadKey(t, e.db, e.org.ID, e.owner.ID, models.ScopeReadOnly, &past)
	revokedID, revokedKey := mustReadKeyWithID(t, e.db, e.org.ID, e.owner.ID, models.ScopeReadOnly, nil)
	if _, err := apikeys.NewService(e.db, nil).RevokeReadKey(context.Background(), revokedID, e.owner.ID); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, header, code string
	}{
		{"no header", "", "missing_authorization"},
		{"basic scheme", "Basic dXNlcjpwYXNz", "missing_authorization"},
		{"bearer without token", "Bearer", "missing_authorization"},
		{"bearer with blank token", "Bearer   ", "missing_authorization"},
		{"unknown key", "Bearer pck_live_nope", "invalid_api_key"},
		{"integration key prefix", "Bearer pck_int_abc", "invalid_api_key"},
		{"expired key", "Bearer " + expired, "invalid_api_key"},
		{"revoked key", "Bearer " + revokedKey, "invalid_api_key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := http.Header{}
			if c.header != "" {
				hdr.Set("Authorization", c.header)
			}
			status, body := e.do(http.MethodGet, "/v1/orders", "", hdr)
			wantError(t, status, body, http.StatusUnauthorized, c.code)
		})
	}
	if status, _ := e.get("/v1/orders", "bearer-is-case-insensitive"); status != http.StatusUnauthorized {
		t.Fatal("unexpected success")
	}
	hdr := http.Header{"Authorization": {"bearer " + e.key}}
	if status, body := e.do(http.MethodGet, "/v1/orders", "", hdr); status != http.StatusOK {
		t.Fatalf("lower-case scheme: %d %s", status, body)
	}
}

func TestLastUsedIsRecordedWithoutAWritePerRequest(t *testing.T) {
	e := newReadEnv(t)
	e.get("/v1/orders", e.key)
	var used int64
	e.db.Raw("SELECT count(*) FROM read_keys WHERE last_used_at IS NOT NULL").Scan(&used)
	if used != 0 {
		t.Fatal("last_used_at written inside the request; it must be batched")
	}
	lu := apikeys.NewLastUsed(e.db, nil)
	k, err := apikeys.NewService(e.db, nil).AuthenticateRead(context.Background(), e.key, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	lu.Touch(apikeys.ReadKeysTable, k.ID, time.Now())
	lu.Flush(context.Background())
	e.db.Raw("SELECT count(*) FROM read_keys WHERE id = ? AND last_used_at IS NOT NULL", k.ID).Scan(&used)
	if used != 1 {
		t.Fatal("last_used_at not recorded by the flush")
	}
}

func TestRateLimit600PerMinute(t *testing.T) {
	e := newReadEnv(t)
	for i := 0; i < 600; i++ {
		status, body := e.get("/v1/vendors?limit=1", e.key)
		if status != http.StatusOK {
			t.Fatalf("request %d: %d %s", i+1, status, body)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/v1/vendors", nil)
	req.Header.Set("Authorization", "Bearer "+e.key)
	res, err := openapitest.Client(t, nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") != "60" {
		t.Fatalf("601st request: %d Retry-After=%q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	status, body := e.get("/v1/vendors", e.key)
	wantError(t, status, body, http.StatusTooManyRequests, "rate_limited")
	if status, _ := e.get("/v1/vendors", e.rwKey); status != http.StatusOK {
		t.Fatal("another key must have its own budget")
	}
	e.clock.Add(2 * time.Minute)
	if status, _ := e.get("/v1/vendors", e.key); status != http.StatusOK {
		t.Fatal("budget not restored after the window")
	}
}

func TestListParameters(t *testing.T) {
	e := newReadEnv(t)
	for i := 0; i < 120; i++ {
		mustVendor(t, e.db, e.org.ID, e.store.ID, fmt.Sprintf("v%d", i))
	}
	cases := []struct {
		query    string
		wantRows int
		code     string
	}{
		{"", 50, ""},
		{"?limit=1", 1, ""},
		{"?limit=100", 100, ""},
		{"?limit=101", 100, ""},
		{"?limit=99999999999999999999999", 100, ""},
		{"?limit=0", 0, "invalid_parameter"},
		{"?limit=-3", 0, "invalid_parameter"},
		{"?limit=ten", 0, "invalid_parameter"},
		{"?limit=", 0, "invalid_parameter"},
		{"?cursor_at=2026-01-01T00:00:00Z", 0, "invalid_cursor"},
		{"?cursor_id=" + uuid.NewString(), 0, "invalid_cursor"},
		{"?cursor_at=tomorrow&cursor_id=" + uuid.NewString(), 0, "invalid_cursor"},
		{"?cursor_at=2026-01-01T00:00:00Z&cursor_id=42", 0, "invalid_cursor"},
		{"?store_id=nope", 0, "invalid_parameter"},
		{"?store_id=" + uuid.NewString(), 0, ""},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			status, body := e.get("/v1/vendors"+c.query, e.key)
			if c.code != "" {
				wantError(t, status, body, http.StatusBadRequest, c.code)
				return
			}
			if p := decodePage(t, body); status != http.StatusOK || len(p.Rows) != c.wantRows {
				t.Fatalf("%d rows=%d, want %d", status, len(p.Rows), c.wantRows)
			}
		})
	}
}

// walk pages through path with limit and returns the ids in order; it fails on a duplicate.
func (e *readEnv) walk(path string, limit int, between func()) []uuid.UUID {
	e.t.Helper()
	var ids []uuid.UUID
	seen := map[uuid.UUID]bool{}
	q := fmt.Sprintf("?limit=%d", limit)
	for pages := 0; ; pages++ {
		status, body := e.get(path+q, e.key)
		if status != http.StatusOK {
			e.t.Fatalf("page %d: %d %s", pages, status, body)
		}
		p := decodePage(e.t, body)
		for _, r := range p.Rows {
			if seen[r.ID] {
				e.t.Fatalf("row %s returned twice", r.ID)
			}
			seen[r.ID] = true
			ids = append(ids, r.ID)
		}
		if p.NextCursor == nil {
			return ids
		}
		if len(p.Rows) != limit {
			e.t.Fatalf("short page (%d rows) that is not the last", len(p.Rows))
		}
		q = fmt.Sprintf("?limit=%d&cursor_at=%s&cursor_id=%s", limit, url.QueryEscape(p.NextCursor.At), p.NextCursor.ID)
		if between != nil {
			between()
		}
	}
}

func TestPagingLastPageAndExactMultiple(t *testing.T) {
	e := newReadEnv(t)
	for i := 0; i < 20; i++ {
		mustVendor(t, e.db, e.org.ID, e.store.ID, fmt.Sprintf("v%d", i))
	}
	if ids := e.walk("/v1/vendors", 10, nil); len(ids) != 20 {
		t.Fatalf("walked %d rows, want 20", len(ids))
	}
	if ids := e.walk("/v1/vendors", 7, nil); len(ids) != 20 {
		t.Fatalf("walked %d rows, want 20", len(ids))
	}
}

func TestPagingRowsSharingOneMicrosecond(t *testing.T) {
	e := newReadEnv(t)
	for i := 0; i < 25; i++ {
		mustVendor(t, e.db, e.org.ID, e.store.ID, fmt.Sprintf("v%d", i))
	}
	// Give every row the same updated_at: only the id orders them, and the cursor must carry it.
	e.db.Exec("ALTER TABLE vendors DISABLE TRIGGER vendors_touch")
	e.db.Exec("UPDATE vendors SET updated_at = '2026-03-04T05:06:07.123456Z'")
	ids := e.walk("/v1/vendors", 4, nil)
	if len(ids) != 25 {
		t.Fatalf("walked %d rows sharing one timestamp, want 25", len(ids))
	}
	for i := 1; i < len(ids); i++ {
		if ids[i].String() >= ids[i-1].String() {
			t.Fatalf("ids not descending at %d", i)
		}
	}
}

// While a reader walks the list, writers insert rows and update rows. Keyset paging must never
// repeat a row, and must return every row that was not touched during the walk.
func TestPagingWhileRowsAreWritten(t *testing.T) {
	e := newReadEnv(t)
	var original []uuid.UUID
	for i := 0; i < 300; i++ {
		original = append(original, mustVendor(t, e.db, e.org.ID, e.store.ID, fmt.Sprintf("v%d", i)).ID)
	}
	touched := sync.Map{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writes atomic.Int64
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if i%2 == 0 {
					mustVendor(t, e.db, e.org.ID, e.store.ID, "new")
				} else {
					id := original[(i*7+w*31)%len(original)]
					touched.Store(id, true)
					e.db.Exec("UPDATE vendors SET name = name || '.' WHERE id = ?", id)
				}
				writes.Add(1)
			}
		}(w)
	}
	ids := e.walk("/v1/vendors", 13, func() { time.Sleep(2 * time.Millisecond) })
	close(stop)
	wg.Wait()
	if writes.Load() < 10 {
		t.Fatalf("only %d concurrent writes happened; the test proves nothing", writes.Load())
	}
	got := map[uuid.UUID]bool{}
	for _, id := range ids {
		got[id] = true
	}
	for _, id := range original {
		if _, moved := touched.Load(id); !moved && !got[id] {
			t.Fatalf("untouched row %s was skipped", id)
		}
	}
}

func TestSingleRowNotFoundRules(t *testing.T) {
	e := newReadEnv(t)
	other, otherStore, _ := mustOrg(t, e.db, "Other")
	theirs := mustVendor(t, e.db, other.ID, otherStore.ID, "theirs")
	mine := mustVendor(t, e.db, e.org.ID, e.store.ID, "mine")
	if status, body := e.get("/v1/vendors/"+mine.ID.String(), e.key); status != http.StatusOK {
		t.Fatalf("own vendor: %d %s", status, body)
	}
	for _, path := range []string{"/v1/vendors/" + theirs.ID.String(), "/v1/vendors/not-a-uuid",
		"/v1/orders/" + uuid.NewString(), "/v1/orders/123", "/v1/products/" + uuid.NewString(),
		"/v1/products/%20", "/v1/clients/" + uuid.NewString()} {
		status, body := e.get(path, e.key)
		wantError(t, status, body, http.StatusNotFound, "not_found")
	}
	status, body := e.get("/v1/vendors", e.key)
	if p := decodePage(t, body); status != http.StatusOK || len(p.Rows) != 1 || p.Rows[0].ID != mine.ID {
		t.Fatalf("list leaked another org's rows: %s", body)
	}
}

func TestProductsOfLinkedSellersOnly(t *testing.T) {
	e := newReadEnv(t)
	ctx := context.Background()
	status, body := e.get("/v1/products", e.key)
	if p := decodePage(t, body); status != http.StatusOK || len(p.Rows) != 0 || p.NextCursor != nil {
		t.Fatalf("org with no seller: %s", body)
	}
	linked, _ := catalog.NewService(e.db, nil).CreateSeller(ctx, "linked")
	unlinked, _ := catalog.NewService(e.db, nil).CreateSeller(ctx, "unlinked")
	if _, err := catalog.NewService(e.db, nil).LinkSeller(ctx, e.org.ID, e.store.ID, linked.ID); err != nil {
		t.Fatal(err)
	}
	pub, _ := catalog.NewService(e.db, nil).CreateProduct(ctx, catalog.NewProduct{SellerID: linked.ID, Name: "mug", PriceCents: 900, Published: true})
	draft, _ := catalog.NewService(e.db, nil).CreateProduct(ctx, catalog.NewProduct{SellerID: linked.ID, Name: "draft", PriceCents: 900})
	elsewhere, _ := catalog.NewService(e.db, nil).CreateProduct(ctx, catalog.NewProduct{SellerID: unlinked.ID, Name: "x", PriceCents: 1, Published: true})
	status, body = e.get("/v1/products", e.key)
	p := decodePage(t, body)
	if status != http.StatusOK || len(p.Rows) != 1 || p.Rows[0].ID != pub.ID || p.Rows[0].StoreID != e.store.ID {
		t.Fatalf("products: %s", body)
	}
	if status, _ := e.get("/v1/products/"+pub.ID.String(), e.key); status != http.StatusOK {
		t.Fatal("published product of a linked seller must be readable")
	}
	for _, id := range []uuid.UUID{draft.ID, elsewhere.ID} {
		if status, _ := e.get("/v1/products/"+id.String(), e.key); status != http.StatusNotFound {
			t.Fatalf("product %s must be invisible", id)
		}
	}
}

func TestStoreFilter(t *testing.T) {
	e := newReadEnv(t)
	ctx := context.Background()
	second, err := catalogStore(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	mustVendor(t, e.db, e.org.ID, e.store.ID, "a")
	b := mustVendor(t, e.db, e.org.ID, second, "b")
	status, body := e.get("/v1/vendors?store_id="+second.String(), e.key)
	if p := decodePage(t, body); status != http.StatusOK || len(p.Rows) != 1 || p.Rows[0].ID != b.ID {
		t.Fatalf("store filter: %s", body)
	}
}
