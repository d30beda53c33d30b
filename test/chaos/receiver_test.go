package chaos

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"wds/webhook"
)

// behaviour is how one of the receiver's endpoints answers.
type behaviour int

const (
	answerOK         behaviour = iota // 200 at once
	answerSlowly                      // 200 after the receiver's slow delay
	hangPastLimit                     // no answer for 15 s, past the 10 s limit
	redirect                          // 302 to followedPath, which would answer 200
	endlessBody                       // 200, then a body that never ends
	trickleBody                       // 200, then one byte a second, never finishing
	resetConnection                   // the TCP connection reset before any answer
	failFirstAttempt                  // 500 to an event's first POST, unrecorded, as a receiver that was down; 200 after
)

// followedPath is where redirect points; a sender that followed it would show there.
const followedPath = "/followed"

// receiver is a real HTTPS receiver, as an integrator writes one: it checks the signature,
// deduplicates on X-PC-Event-Id, and applies each new event's side effect (here: counting the order
// it names). Each path is one endpoint with its own behaviour and secret.
type receiver struct {
	srv    *httptest.Server
	caFile string
	slow   time.Duration
	// inFlight counts the requests answerSlowly is holding right now.
	inFlight atomic.Int64

	mu    sync.Mutex
	paths map[string]*inbox
}

// inbox is what one endpoint received.
type inbox struct {
	behaviour  behaviour
	endpointID string
	secret     string
	posts      map[string]int  // event id -> POSTs received
	effects    map[string]int  // order id -> side effects applied
	rejected   map[string]bool // event ids whose first POST failFirstAttempt answered 500
	badSigs    int
	// headers are the endpoint's custom headers, which every POST must carry with these values.
	headers    map[string]string
	badHeaders int
}

func newReceiver(t *testing.T, dir string, slow time.Duration) *receiver {
	t.Helper()
	rc := &receiver{slow: slow, paths: map[string]*inbox{}}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	// An ECDSA key and plain X25519: a handshake costs the receiver a fraction of httptest's RSA key
	// and the default hybrid post-quantum exchange, so the hundreds of connections a hostile scenario
	// opens at once do not starve this (race-instrumented) process.
	rc.srv.TLS = &tls.Config{Certificates: []tls.Certificate{loopbackCert(t)}, CurvePreferences: []tls.CurveID{tls.X25519}}
	rc.srv.StartTLS()
	t.Cleanup(rc.srv.Close)
	rc.caFile = filepath.Join(dir, "receiver-ca.pem")
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rc.srv.Certificate().Raw})
	if err := os.WriteFile(rc.caFile, cert, 0o644); err != nil {
		t.Fatal(err)
	}
	return rc
}

// loopbackCert is a self-signed ECDSA P-256 certificate for 127.0.0.1.
func loopbackCert(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "chaos receiver"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// add makes an endpoint path; its secret is set once wds has created the endpoint.
func (rc *receiver) add(path string, b behaviour) string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.paths[path] = &inbox{behaviour: b, posts: map[string]int{}, effects: map[string]int{}, rejected: map[string]bool{}}
	return rc.srv.URL + path
}

// created records the endpoint wds made for the path, with the custom headers it was given.
func (rc *receiver) created(path, endpointID, secret string, headers map[string]string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.paths[path].endpointID, rc.paths[path].secret, rc.paths[path].headers = endpointID, secret, headers
}

func (rc *receiver) behaviourOf(path string) behaviour {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.paths[path].behaviour
}

func (rc *receiver) endpointID(path string) string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.paths[path].endpointID
}

// secrets are the signing secrets of every endpoint.
func (rc *receiver) secrets() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []string
	for _, in := range rc.paths {
		if in.secret != "" {
			out = append(out, in.secret)
		}
	}
	return out
}

// posts is how many requests the path received.
func (rc *receiver) posts(path string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for _, c := range rc.paths[path].posts {
		n += c
	}
	return n
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	rc.mu.Lock()
	in := rc.paths[r.URL.Path]
	if in == nil {
		rc.mu.Unlock()
		http.NotFound(w, r)
		return
	}
	b := in.behaviour
	if id := r.Header.Get(webhook.HeaderEventID); b == failFirstAttempt && !in.rejected[id] {
		in.rejected[id] = true
		rc.mu.Unlock()
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	rc.record(in, r.Header, body)
	rc.mu.Unlock()
	rc.answer(w, r, b)
}

// waiting is how many events the path rejected once and has not received since: chains waiting on
// the ladder's timer for attempt 2.
func (rc *receiver) waiting(path string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	in, n := rc.paths[path], 0
	for id := range in.rejected {
		if in.posts[id] == 0 {
			n++
		}
	}
	return n
}

// record counts the POST and, for an event id not seen before whose signatures hold (both schemes),
// applies the side effect. Called with mu held.
func (rc *receiver) record(in *inbox, h http.Header, body []byte) {
	id := h.Get(webhook.HeaderEventID)
	in.posts[id]++
	for name, value := range in.headers {
		if h.Get(name) != value {
			in.badHeaders++
			return
		}
	}
	if err := webhook.Verify(in.secret, h.Get(webhook.HeaderSignature), body, time.Now()); err != nil {
		in.badSigs++
		return
	}
	// The Standard Webhooks headers must hold as well, by the specification's own Go library: under
	// every fault a delivery carries both schemes (docs/webhooks.md#standard-webhooks).
	if wh, err := standardwebhooks.NewWebhook(in.secret); err != nil || wh.Verify(body, h) != nil {
		in.badSigs++
		return
	}
	if in.posts[id] > 1 {
		return // a duplicate: the receiver's deduplication absorbs it
	}
	var ev struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	_ = json.Unmarshal(body, &ev)
	in.effects[ev.Data.ID]++
}

func (rc *receiver) answer(w http.ResponseWriter, r *http.Request, b behaviour) {
	switch b {
	case answerOK:
	case answerSlowly:
		rc.inFlight.Add(1)
		sleep(r, rc.slow)
		rc.inFlight.Add(-1)
	case hangPastLimit:
		sleep(r, 15*time.Second)
		if r.Context().Err() != nil {
			// The client gave up: a hung receiver never answers, not even as the connection closes
			// (an answer written then could reach a client at its very deadline).
			panic(http.ErrAbortHandler)
		}
	case redirect:
		http.Redirect(w, r, followedPath, http.StatusFound)
		return
	case endlessBody, trickleBody:
		stream(w, r, b)
		return
	case resetConnection:
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.(*tls.Conn).NetConn().(*net.TCPConn).SetLinger(0)
			_ = conn.Close()
		}
		return
	}
	w.WriteHeader(http.StatusOK)
}

// stream answers 200 and writes until the sender hangs up: fast, or one byte a second.
func stream(w http.ResponseWriter, r *http.Request, b behaviour) {
	w.WriteHeader(http.StatusOK)
	chunk := []byte(strings.Repeat("x", 32<<10))
	if b == trickleBody {
		chunk = chunk[:1]
	}
	for r.Context().Err() == nil {
		if _, err := w.Write(chunk); err != nil {
			return
		}
		w.(http.Flusher).Flush()
		if b == trickleBody {
			sleep(r, time.Second)
		}
	}
}

func sleep(r *http.Request, d time.Duration) {
	select {
	case <-r.Context().Done():
	case <-time.After(d):
	}
}

// tally is what one endpoint received, for the report.
type tally struct {
	delivered  int // distinct written events received
	resent     int // POSTs beyond the first for an event, absorbed by deduplication
	twice      int // orders whose side effect was applied more than once
	badSigs    int
	badHeaders int // POSTs whose custom header values were not the endpoint's
	unexpected int // event ids received that were never written
}

// tally compares what the path received with the event ids written.
func (rc *receiver) tally(path string, written map[string]bool) tally {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	in := rc.paths[path]
	var t tally
	for id, n := range in.posts {
		if !written[id] {
			t.unexpected++
			continue
		}
		t.delivered++
		t.resent += n - 1
	}
	for _, n := range in.effects {
		if n > 1 {
			t.twice++
		}
	}
	t.badSigs, t.badHeaders = in.badSigs, in.badHeaders
	return t
}
