package api_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/sirupsen/logrus"
	"gorm.io/gorm"

	"wds/api"
	"wds/internal/apikeys"
	"wds/internal/platform/config"
	"wds/test/apitest"
	"wds/test/pgtest"
)

// instance is another router over the env's database, clock and key box (another `wds serve`),
// with its dependencies changed by edit.
func (e *intEnv) instance(edit func(*api.Deps)) *intEnv {
	e.t.Helper()
	log := logrus.New()
	log.SetOutput(io.Discard)
	d := api.Deps{Services: apitest.Services(e.db, e.box, nil), Log: log, Now: e.clock.Now}
	edit(&d)
	r, err := api.NewRouter(d)
	if err != nil {
		e.t.Fatal(err)
	}
	other := *e
	other.router = r
	other.srv = httptest.NewServer(r)
	e.t.Cleanup(other.srv.Close)
	return &other
}

// holding runs lockSQL in a transaction of its own on db and returns the function that ends it.
func holding(t *testing.T, db *gorm.DB, lockSQL string, args ...any) (release func()) {
	t.Helper()
	tx := db.Begin()
	if err := tx.Exec(lockSQL, args...).Error; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback() })
	return func() {
		if err := tx.Rollback().Error; err != nil {
			t.Fatal(err)
		}
	}
}

// within runs call, which must answer within d; otherwise release lets it finish and the test fails.
func within[T any](t *testing.T, d time.Duration, release func(), call func() T) (T, time.Duration) {
	t.Helper()
	start := time.Now()
	got := make(chan T, 1)
	go func() { got <- call() }()
	select {
	case v := <-got:
		return v, time.Since(start)
	case <-time.After(d):
		release()
		<-got
		t.Fatalf("no answer within %s", d)
		panic("unreachable")
	}
}

// wantUnavailable checks the 503 the APIs answer when the database could not do the work in time.
func wantUnavailable(t *testing.T, status int, body []byte, header http.Header) {
	t.Helper()
	wantError(t, status, body, http.StatusServiceUnavailable, "unavailable")
	if ra := header.Get("Retry-After"); ra != "5" {
		t.Errorf("Retry-After %q, want 5", ra)
	}
}

// Every request, the console's included, runs under the request deadline of config/timeouts.go.
func TestEveryRequestRunsUnderTheRequestDeadline(t *testing.T) {
	log := logrus.New()
	log.SetOutput(io.Discard)
	r, err := api.NewRouter(api.Deps{Services: servicesOver(pgtest.New(t)), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	var left time.Duration
	var has bool
	r.GET("/probe", func(c *gin.Context) { // registered later, as the console is
		var at time.Time
		at, has = c.Request.Context().Deadline()
		left = time.Until(at)
	})
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/probe", nil))
	if !has || left > config.RequestTimeout || left < config.RequestTimeout-5*time.Second {
		t.Fatalf("deadline set %v, %s left; want %s", has, left, config.RequestTimeout)
	}
}

// A request whose deadline passes while its database work waits on a lock answers 503
// unavailable with Retry-After at the deadline, never 500 and never only when the holder lets go;
// nothing was written, so the same Idempotency-Key executes on the retry.
func TestADeadlineThatPassesDuringDatabaseWorkAnswers503(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{})
	o := e.post("/integrations/v1/orders", k, orderBody("deadline-1", 0, 0, nil, [2]int64{1, 1000})).want(t, http.StatusCreated, "")
	hurried := e.instance(func(d *api.Deps) { d.RequestTimeout = 500 * time.Millisecond })
	cancelPath := "/integrations/v1/orders/" + o["id"].(string) + "/cancel"
	idem := map[string]string{"Idempotency-Key": "cancel-deadline-1"}

	// A write: the cancel waits for the order's row, which another transaction holds.
	release := holding(t, e.db, `SELECT 1 FROM orders WHERE id = ? FOR UPDATE`, o["id"])
	r, took := within(t, 8*time.Second, release, func() resp { return hurried.call(http.MethodPost, cancelPath, k, "", idem) })
	wantUnavailable(t, r.status, r.body, r.header)
	if took < 500*time.Millisecond || took >= config.DBLockTimeout {
		t.Errorf("answered after %s, want at the 500 ms deadline", took)
	}
	release()
	if n := e.count(`SELECT count(*) FROM orders WHERE id = ? AND status = 'cancelled'`, o["id"]); n != 0 {
		t.Fatal("the cut-off cancel was written")
	}
	retry := e.call(http.MethodPost, cancelPath, k, "", idem)
	if again := retry.want(t, http.StatusOK, ""); again["already_cancelled"] != false || retry.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("the retry with the same Idempotency-Key did not execute: %s", retry.body)
	}

	// A read: the Read API's page waits for the orders table.
	read := newReadEnv(t)
	log := logrus.New()
	log.SetOutput(io.Discard)
	router, err := api.NewRouter(api.Deps{Services: apitest.Services(read.db, nil, nil), Log: log, Now: read.clock.Now, RequestTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	read.srv = httptest.NewServer(router)
	t.Cleanup(read.srv.Close)
	release = holding(t, read.db, `LOCK TABLE orders IN ACCESS EXCLUSIVE MODE`)
	type answer struct {
		status int
		body   []byte
		header http.Header
	}
	a, took := within(t, 8*time.Second, release, func() answer {
		req, _ := http.NewRequest(http.MethodGet, read.srv.URL+"/v1/orders", nil)
		req.Header.Set("Authorization", "Bearer "+read.key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return answer{}
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		read.validate(req, res, b)
		return answer{res.StatusCode, b, res.Header}
	})
	wantUnavailable(t, a.status, a.body, a.header)
	if took >= config.DBLockTimeout {
		t.Errorf("answered after %s, want at the 500 ms deadline", took)
	}
	release()
	if status, body := read.get("/v1/orders", read.key); status != http.StatusOK {
		t.Fatalf("after the lock: %d %s", status, body)
	}
}

// servicesOver wires every service to db, with no sealing box and no event starter.
func servicesOver(db *gorm.DB) api.Services { return apitest.Services(db, nil, nil) }
