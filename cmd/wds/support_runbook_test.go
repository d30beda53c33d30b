package main

import (
	"bufio"
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/dev/temporaldev"
	"wds/internal/events"
	"wds/internal/platform/database"
	"wds/internal/platform/secrets"
	"wds/test/deliverytest"
	"wds/test/pgtest"
)

// runbookCommands are the wds admin commands of docs/support.md's runbook blocks, in order: the shell
// blocks marked as run by this test. The page's other shell blocks (putting a clone's bin/ on the
// PATH) are run by the docs test, against wds dev.
func runbookCommands(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../../docs/support.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []string
	inShell, runbook, prev := false, false, ""
	for sc := bufio.NewScanner(f); sc.Scan(); prev = sc.Text() {
		line := sc.Text()
		switch {
		case line == "```sh":
			inShell, runbook = true, strings.HasPrefix(prev, "<!-- not run:") && strings.Contains(prev, "TestSupportRunbook")
		case line == "```":
			inShell = false
		case !inShell || !runbook:
		case strings.HasPrefix(line, "wds admin "):
			cmds = append(cmds, strings.TrimPrefix(line, "wds admin "))
		case strings.TrimSpace(line) != "":
			t.Fatalf("docs/support.md has a shell line the runbook test cannot run: %q", line)
		}
	}
	if len(cmds) == 0 {
		t.Fatal("docs/support.md has no runbook block (marked <!-- not run: ... TestSupportRunbook ... -->)")
	}
	return cmds
}

// shellArgs splits a command line as a shell does for the runbook's lines: words, 'quoted words',
// and $VARIABLES.
func shellArgs(line string, vars map[string]string) []string {
	var args []string
	for len(line) > 0 {
		line = strings.TrimLeft(line, " ")
		if line == "" {
			break
		}
		var word string
		if line[0] == '\'' {
			end := strings.IndexByte(line[1:], '\'') + 1
			word, line = line[1:end], line[end+1:]
		} else {
			end := strings.IndexByte(line, ' ')
			if end < 0 {
				end = len(line)
			}
			word, line = line[:end], line[end:]
			if strings.HasPrefix(word, "$") {
				word = vars[word[1:]]
			}
		}
		args = append(args, word)
	}
	return args
}

// flakyReceiver is an HTTPS receiver that can be down (503) and logs when each event arrived, and
// under which delivery ids.
type flakyReceiver struct {
	srv        *httptest.Server
	mu         sync.Mutex
	down       bool
	got        map[string][]time.Time
	deliveries map[string]map[string]bool
}

func newFlakyReceiver(t *testing.T) *flakyReceiver {
	rc := &flakyReceiver{got: map[string][]time.Time{}, deliveries: map[string]map[string]bool{}}
	rc.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		if rc.down {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		id := r.Header.Get("X-PC-Event-Id")
		rc.got[id] = append(rc.got[id], time.Now())
		if rc.deliveries[id] == nil {
			rc.deliveries[id] = map[string]bool{}
		}
		rc.deliveries[id][r.Header.Get("X-PC-Delivery-Id")] = true
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *flakyReceiver) setDown(down bool) { rc.mu.Lock(); rc.down = down; rc.mu.Unlock() }

func (rc *flakyReceiver) received(id uuid.UUID) []time.Time {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]time.Time(nil), rc.got[id.String()]...)
}

// attempts is how many distinct delivery ids (attempts) an event arrived under.
func (rc *flakyReceiver) attempts(id uuid.UUID) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.deliveries[id.String()])
}

func (rc *flakyReceiver) caFile(t *testing.T) string {
	file := filepath.Join(t.TempDir(), "receiver.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rc.srv.Certificate().Raw})
	if err := os.WriteFile(file, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestSupportRunbook runs every command of docs/support.md verbatim against a real system: an order
// 1042 whose webhook the customer lost, then an outage of 500 dropped chains that the
// runbook's recovery re-fires at 10 a second (its org's budget; the endpoint allows 20) while the wds worker running it is killed with SIGKILL
// and another takes over. Every outage event gets exactly one new chain and arrives under exactly
// one new attempt (a POST the killed worker made but could not record is sent again under the same
// X-PC-Delivery-Id, as docs/webhooks.md says), never more than 20 requests in a second, and nothing
// is left dropped.
func TestSupportRunbook(t *testing.T) {
	srv, err := temporaldev.Start(context.Background(), temporaldev.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	url, key := pgtest.URL(t), secrets.GenerateKey()
	t.Setenv("DATABASE_URL", url)
	t.Setenv("WDS_ENCRYPTION_KEY", key)
	t.Setenv("WDS_WEBHOOK_ALLOW_PRIVATE", "true")
	rc := newFlakyReceiver(t)
	workerEnv := []string{"DATABASE_URL=" + url, "WDS_ENCRYPTION_KEY=" + key, "TEMPORAL_ADDRESS=" + srv.Address,
		"WDS_WEBHOOK_ALLOW_PRIVATE=true", "WDS_WEBHOOK_CA_FILE=" + rc.caFile(t), "WDS_LOG_LEVEL=warn", "WDS_METRICS_ADDR=" + freeAddr(t)}
	worker := startWDS(t, workerEnv, "worker")

	db, err := database.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	vars := map[string]string{}
	vars["ORG"] = mustAdmin(t, "org", "create", "--name", "Acme")["id"].(string)
	store := mustAdmin(t, "store", "create", "--org", vars["ORG"], "--name", "Shop")["id"].(string)
	vars["ACTOR"] = mustAdmin(t, "user", "create", "--org", vars["ORG"], "--email", "support@acme.example", "--role", "owner")["id"].(string)
	vars["ENDPOINT"] = mustAdmin(t, "endpoint", "create", "--org", vars["ORG"], "--actor", vars["ACTOR"], "--url", rc.srv.URL+"/hooks",
		"--events", "order.created", "--max-attempts", "1")["id"].(string)
	org := uuid.MustParse(vars["ORG"])
	emit := func(data map[string]any) uuid.UUID {
		id, err := deliverytest.Emit(context.Background(), db, org, nil, events.OrderCreated, data)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(180 * time.Second)
		for !cond() {
			select {
			case <-worker.exited:
				t.Fatalf("wds worker exited: %v\n%s", worker.err, worker.out.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// Order 1042's webhook is delivered; the customer will say they never got it.
	order := uuid.New()
	db.Exec(`INSERT INTO orders (id, org_id, store_id, number, currency, subtotal_cents, total_cents, status)
		VALUES (?, ?, ?, 1042, 'USD', 100, 100, 'invoiced')`, order, org, store)
	ev1042 := emit(map[string]any{"id": order, "number": "1042"})
	vars["EVENT"] = ev1042.String()
	waitUntil("order 1042's webhook", func() bool { return len(rc.received(ev1042)) == 1 })

	// The receiver is down while 500 orders come in: every chain drops.
	vars["SINCE"] = time.Now().UTC().Format(time.RFC3339Nano)
	rc.setDown(true)
	const outage = 500
	var lost []uuid.UUID
	for range outage {
		lost = append(lost, emit(map[string]any{"id": uuid.New()}))
	}
	waitUntil("the outage's dropped chains", func() bool {
		var n int64
		db.Raw("SELECT count(*) FROM webhook_deliveries WHERE status = 'dropped'").Find(&n)
		return n == outage
	})
	rc.setDown(false)

	for _, line := range runbookCommands(t) {
		args := shellArgs(line, vars)
		if !strings.HasSuffix(line, "--wait") {
			out := mustAdmin(t, args...)
			t.Logf("wds admin %s\n-> %.300v", line, out)
			continue
		}
		// The recovery: halfway through, its worker is killed and another takes over.
		done := make(chan map[string]any, 1)
		go func() {
			out, err := admin(t, args...)
			if err != nil {
				t.Errorf("wds admin %s: %v", line, err)
			}
			done <- out
		}()
		waitUntil("the recovery to be halfway", func() bool {
			var started int
			db.Raw("SELECT coalesce(max(started), 0) FROM webhook_recoveries").Row().Scan(&started)
			return started >= outage/4
		})
		if err := worker.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-worker.exited
		var started int
		db.Raw("SELECT max(started) FROM webhook_recoveries").Row().Scan(&started)
		t.Logf("wds worker killed with %d of %d chains started", started, outage)
		worker = startWDS(t, workerEnv, "worker")
		select {
		case out := <-done:
			if out["status"] != "completed" || out["started"] != float64(outage) || out["total"] != float64(outage) {
				t.Fatalf("recovery ended %v", out)
			}
			vars["RECOVERY"] = out["id"].(string)
		case <-time.After(240 * time.Second): // 500 chains at 10 a second, and a worker restart
			t.Fatal("the recovery did not end")
		}
		waitUntil("every lost event delivered", func() bool {
			for _, id := range lost {
				if len(rc.received(id)) == 0 {
					return false
				}
			}
			return true
		})
	}
	if vars["RECOVERY"] == "" {
		t.Fatal("docs/support.md has no recover --wait command")
	}

	time.Sleep(2 * time.Second) // nothing more may arrive
	var at []time.Time
	for _, id := range lost {
		if n := rc.attempts(id); n != 1 {
			t.Errorf("event %s arrived under %d attempts after the outage, want one", id, n)
		}
		at = append(at, rc.received(id)...)
	}
	var chains []int
	db.Raw("SELECT count(*) FROM webhook_dispatches WHERE kind = 'recovery' GROUP BY event_id").Scan(&chains)
	if len(chains) != outage || slices.Max(chains) != 1 {
		t.Errorf("recovery chains per event %v, want one for each of %d events", chains, outage)
	}
	sort.Slice(at, func(i, j int) bool { return at[i].Before(at[j]) })
	for i := range at {
		if j := i + 20; j < len(at) && at[j].Sub(at[i]) < time.Second {
			t.Errorf("21 requests within %v: over the rate limit of 20 a second", at[j].Sub(at[i]))
			break
		}
	}
	waitUntil("order 1042's resend", func() bool { return len(rc.received(ev1042)) == 2 })
	if rows := mustAdmin(t, "event", "list", "--org", vars["ORG"], "--outcome", "dropped", "--since", vars["SINCE"])["rows"].([]any); len(rows) != 0 {
		t.Errorf("%d events still dropped after the recovery", len(rows))
	}
}
