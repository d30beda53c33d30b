package main

import (
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/apikeys"
	"wds/internal/platform/secrets"
	"wds/models"
)

// from is a client whose requests come from the loopback address ip, so the instance tells it apart
// from the flood's 127.0.0.1.
func from(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 10 * time.Second}
}

func (in *keyInstance) statusFrom(c *http.Client, path, token string) int {
	in.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, in.srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := c.Do(req)
	if err != nil {
		in.t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// A flood of made-up keys from one address reaches the database for a few dozen lookups at most:
// a token tried again is refused from memory, and past 60 refusals a minute the address is answered
// 429 before any lookup. Meanwhile a real key from another address is served on every request, and a
// key minted with a token that was refused a moment ago works as soon as its insert is announced.
func TestAFloodOfMadeUpKeysNeverReachesTheDatabase(t *testing.T) {
	f, url := newKeyFixture(t)
	in := newKeyInstance(t, f.db, apikeys.ConnectURL(url))
	_, real := f.readKey(t)
	honest := from("127.0.0.2")
	if got := in.statusFrom(honest, readPath, real); got != http.StatusOK {
		t.Fatalf("the real key before the flood: %d", got)
	}
	lookupsBefore := cacheLookups(t, "miss")
	repeated := make([]string, 5)
	for i := range repeated {
		repeated[i], _, _ = secrets.NewAPIKey(apikeys.ReadKeyPrefix)
	}
	flood := from("127.0.0.1")
	var wg sync.WaitGroup
	var mu sync.Mutex
	answers := map[int]int{}
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 250 {
				token := repeated[(w+i)%len(repeated)]
				if i%2 == 0 {
					token, _, _ = secrets.NewAPIKey(apikeys.ReadKeyPrefix)
				}
				got := in.statusFrom(flood, readPath, token)
				mu.Lock()
				answers[got]++
				mu.Unlock()
			}
		}()
	}
	for range 50 {
		if got := in.statusFrom(honest, readPath, real); got != http.StatusOK {
			t.Fatalf("the real key during the flood: %d", got)
		}
	}
	wg.Wait()
	if answers[http.StatusUnauthorized]+answers[http.StatusTooManyRequests] != 1000 || answers[http.StatusTooManyRequests] == 0 {
		t.Fatalf("the flood's answers: %v, want 401 then 429 only", answers)
	}
	if looked := cacheLookups(t, "miss") - lookupsBefore; looked > 70 {
		t.Fatalf("the flood cost %v database lookups, want at most about 60", looked)
	}

	token, hash, err := secrets.NewAPIKey(apikeys.ReadKeyPrefix)
	if err != nil {
		t.Fatal(err)
	}
	other := from("127.0.0.3")
	if got := in.statusFrom(other, readPath, token); got != http.StatusUnauthorized {
		t.Fatalf("a token of no key: %d", got)
	}
	if err := f.db.Create(&models.ReadKey{ID: uuid.New(), OrgID: f.org, Name: "minted", KeyHash: hash, KeyHint: token[:12],
		Scope: models.ScopeReadOnly, CreatedBy: f.owner}).Error; err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for in.statusFrom(other, readPath, token) != http.StatusOK {
		if time.Now().After(deadline) {
			t.Fatal("a key minted after its token was refused is still refused 2 s later")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
