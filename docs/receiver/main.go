// Command receiver is the webhook receiver of docs/webhooks.md: it verifies X-PC-Signature by the
// spec's rules and deduplicates on X-PC-Event-Id. It uses only the standard library, as an
// integrator's receiver would.
//
//	WEBHOOK_SECRET=whsec_... go run ./docs/receiver          # https://localhost:9443/hooks
//	FAIL=1 ...                                               # answer 500, to watch retries
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	secret := []byte(os.Getenv("WEBHOOK_SECRET"))
	seen := map[string]bool{} // use a database table with a unique key in production
	var mu sync.Mutex
	http.HandleFunc("POST /hooks", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 7<<20))
		if err != nil {
			http.Error(w, "read", http.StatusBadRequest)
			return
		}
		if err := verify(secret, r.Header.Get("X-PC-Signature"), body, time.Now()); err != nil {
			log.Printf("rejected %s: %v", r.Header.Get("X-PC-Delivery-Id"), err)
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		if os.Getenv("FAIL") != "" {
			http.Error(w, "failing on purpose", http.StatusInternalServerError)
			return
		}
		id := r.Header.Get("X-PC-Event-Id") // "null" for test events, which are never retried
		mu.Lock()
		dup := id != "null" && seen[id]
		seen[id] = true
		mu.Unlock()
		log.Printf("%s event %s delivery %s duplicate=%v: %s", r.Header.Get("X-PC-Event-Type"), id,
			r.Header.Get("X-PC-Delivery-Id"), dup, body)
		w.WriteHeader(http.StatusNoContent) // any 2xx within 10 s is success
	})
	log.Fatal(http.ListenAndServeTLS("localhost:9443", "cert.pem", "key.pem", nil))
}

// verify applies the receiver rules: parse t and v1, HMAC-SHA256 over "<t>.<raw body>" keyed by the
// secret's bytes, constant-time comparison, and at most 300 s of clock difference.
func verify(secret []byte, header string, body []byte, now time.Time) error {
	var ts int64 = -1
	var sigs [][]byte
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts, _ = strconv.ParseInt(v, 10, 64)
		case "v1":
			if b, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	if ts < 0 || len(sigs) == 0 {
		return errors.New("malformed X-PC-Signature")
	}
	if math.Abs(float64(now.Unix()-ts)) > 300 {
		return errors.New("timestamp outside the 300 s tolerance")
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(strconv.FormatInt(ts, 10) + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			return nil
		}
	}
	return errors.New("signature mismatch")
}
