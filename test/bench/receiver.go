package bench

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
)

// receiver is the HTTPS endpoint both wds's deliveries and the bare baseline POST to. It notes when
// each item first arrived (keyed by the order id for wds events, by the workflow's id for the
// baseline) and deduplicates wds deliveries on X-PC-Event-Id, as a receiver following the spec does.
type receiver struct {
	srv    *httptest.Server
	caFile string

	mu       sync.Mutex
	arrived  map[string]time.Time // first arrival per item
	perEvent map[string]int       // wds deliveries per event id
	bad      int                  // requests the receiver could not read
	// perSecond counts the POSTs to each path by the wall-clock second they arrived in, so a rate
	// limit is checked as the receiver sees it.
	perSecond map[string]map[int64]int

	// conns counts the connections accepted: each is a TLS handshake on both sides, so a sender
	// that does not keep its connections open pays for it in CPU.
	conns atomic.Int64
	// failing makes /flaky answer 500, as a receiver that is down does.
	failing atomic.Bool
	// failedOnce holds the events whose first POST /once answered 500.
	failedOnce map[string]bool
}

// newReceiver starts the HTTPS receiver on loopback and writes its certificate for the worker
// (WDS_WEBHOOK_CA_FILE) to dir.
func newReceiver(dir string) (*receiver, error) {
	r := &receiver{arrived: map[string]time.Time{}, perEvent: map[string]int{}, perSecond: map[string]map[int64]int{},
		failedOnce: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hook", r.wds)
	mux.HandleFunc("POST /bare", r.bare)
	mux.HandleFunc("POST /flaky", r.flaky)
	mux.HandleFunc("POST /once", r.once)
	mux.HandleFunc("POST /recover", r.wds)
	mux.HandleFunc("POST /limited", r.wds)
	r.srv = httptest.NewUnstartedServer(mux)
	r.srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			r.conns.Add(1)
		}
	}
	r.srv.StartTLS()
	r.caFile = filepath.Join(dir, "receiver-ca.pem")
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.srv.Certificate().Raw})
	if err := os.WriteFile(r.caFile, block, 0o644); err != nil {
		r.srv.Close()
		return nil, fmt.Errorf("bench: receiver: %w", err)
	}
	return r, nil
}

// wds takes an order.created delivery: the order id is data.id of the event body.
func (r *receiver) wds(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	var ev struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	err := json.NewDecoder(req.Body).Decode(&ev)
	eventID := req.Header.Get("X-PC-Event-Id")
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.perSecond[req.URL.Path] == nil {
		r.perSecond[req.URL.Path] = map[int64]int{}
	}
	r.perSecond[req.URL.Path][now.Unix()]++
	if err != nil || ev.Data.ID == "" || eventID == "" {
		r.bad++
		http.Error(w, "unreadable", http.StatusBadRequest)
		return
	}
	r.perEvent[eventID]++
	if _, seen := r.arrived[ev.Data.ID]; !seen {
		r.arrived[ev.Data.ID] = now
	}
}

// flaky is wds's endpoint that can be down: while failing it answers 500 and records nothing.
func (r *receiver) flaky(w http.ResponseWriter, req *http.Request) {
	if r.failing.Load() {
		_, _ = io.Copy(io.Discard, req.Body)
		http.Error(w, "down", http.StatusInternalServerError)
		return
	}
	r.wds(w, req)
}

// once is wds's endpoint that fails each event's first POST (by X-PC-Event-Id) with a 500 and takes
// the rest: every event it gets is retried exactly once, whatever the timing.
func (r *receiver) once(w http.ResponseWriter, req *http.Request) {
	eventID := req.Header.Get("X-PC-Event-Id")
	r.mu.Lock()
	first := eventID != "" && !r.failedOnce[eventID]
	if first {
		r.failedOnce[eventID] = true
	}
	r.mu.Unlock()
	if first {
		_, _ = io.Copy(io.Discard, req.Body)
		http.Error(w, "first attempt fails", http.StatusInternalServerError)
		return
	}
	r.wds(w, req)
}

// failedFirst is how many events /once has failed the first POST of.
func (r *receiver) failedFirst() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.failedOnce)
}

// bare takes the baseline's POST; the item is named by the X-Bare-Id header.
func (r *receiver) bare(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	_, _ = io.Copy(io.Discard, req.Body)
	id := req.Header.Get("X-Bare-Id")
	r.mu.Lock()
	defer r.mu.Unlock()
	if id == "" {
		r.bad++
		http.Error(w, "no id", http.StatusBadRequest)
		return
	}
	if _, seen := r.arrived[id]; !seen {
		r.arrived[id] = now
	}
}

// arrivedAt reports when the item first arrived.
func (r *receiver) arrivedAt(id string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.arrived[id]
	return t, ok
}

// busiestSecond is the most POSTs path received in one wall-clock second.
func (r *receiver) busiestSecond(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	most := 0
	for _, n := range r.perSecond[path] {
		most = max(most, n)
	}
	return most
}

// dedupe summarizes wds deliveries: distinct events and deliveries beyond the first of each.
func (r *receiver) dedupe() (events, duplicates, bad int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.perEvent {
		events++
		duplicates += n - 1
	}
	return events, duplicates, r.bad
}

// anyEvent is the id of one delivered wds event.
func (r *receiver) anyEvent() uuid.UUID {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id := range r.perEvent {
		if u, err := uuid.Parse(id); err == nil {
			return u
		}
	}
	return uuid.Nil
}

func (r *receiver) close() { r.srv.Close() }
