// Command receiver is the webhook receiver of docs/webhooks.md: it verifies X-PC-Signature with
// the wds/webhook package and deduplicates on X-PC-Event-Id, as an integrator's receiver would.
//
//	WEBHOOK_SECRET=whsec_... go run ./docs/receiver          # https://localhost:9443/hooks
//	FAIL=1 ...                                               # answer 500, to watch retries
package main

import (
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"wds/webhook"
)

func main() {
	rc := &receiver{secret: os.Getenv("WEBHOOK_SECRET"), fail: os.Getenv("FAIL") != "", seen: map[string]bool{}}
	http.Handle("POST /hooks", rc)
	ln, err := net.Listen("tcp", "localhost:9443")
	if err != nil {
		log.Fatal(err)
	}
	log.Print("listening on https://localhost:9443/hooks") // deliveries are accepted from here on
	// The self-signed certificate docs/webhooks.md makes, kept in the dev state that git ignores.
	log.Fatal(http.ServeTLS(ln, nil, ".wds/receiver-cert.pem", ".wds/receiver-key.pem"))
}

// receiver answers deliveries of one endpoint.
type receiver struct {
	secret string
	fail   bool // answer 500 to every verified delivery, to watch retries
	mu     sync.Mutex
	seen   map[string]bool // use a database table with a unique key in production
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 7<<20)) // events are at most 6 MB
	if err != nil {
		http.Error(w, "read", http.StatusBadRequest)
		return
	}
	// The raw bytes as received: re-serialised JSON would not match the signature. X-PC-Signature
	// verifies it, or the Standard Webhooks headers when only those came through.
	if err := webhook.VerifyHeaders(rc.secret, r.Header, body, time.Now()); err != nil {
		log.Printf("rejected %s: %v", r.Header.Get(webhook.HeaderDeliveryID), err)
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	if rc.fail {
		http.Error(w, "failing on purpose", http.StatusInternalServerError)
		return
	}
	id := r.Header.Get(webhook.HeaderEventID) // "null" for test events, which are never retried
	rc.mu.Lock()
	dup := id != "null" && rc.seen[id]
	rc.seen[id] = true
	rc.mu.Unlock()
	log.Printf("%s event %s delivery %s duplicate=%v: %s", r.Header.Get(webhook.HeaderEventType), id,
		r.Header.Get(webhook.HeaderDeliveryID), dup, body)
	w.WriteHeader(http.StatusNoContent) // any 2xx within 10 s is success
}
