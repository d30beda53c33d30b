package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/apikeys"
	"wds/test/deliverytest"
)

// wds listen --feed against a real API over a real database: it prints the org's events of the types
// asked for, in the feed's order, follows the feed as new ones commit, says where to resume on Ctrl-C,
// and resumed there prints only what came after.
func TestListenFeedTailsAndResumes(t *testing.T) {
	f, url := newKeyFixture(t)
	in := newKeyInstance(t, f.db, apikeys.ConnectURL(url))
	_, key := f.readKey(t)
	emit := func(typ string) string {
		t.Helper()
		id, err := deliverytest.Emit(context.Background(), f.db, f.org, nil, typ, map[string]any{"id": uuid.New()})
		if err != nil {
			t.Fatal(err)
		}
		return id.String()
	}
	env := []string{"WDS_DATA_DIR=" + t.TempDir()}
	tail := func(args ...string) *process {
		return startWDS(t, env, append([]string{"listen", "--feed", "--key", key, "--api", in.srv.URL,
			"--events", "client.created,client.updated", "--interval", "100ms"}, args...)...)
	}
	before := []string{emit("client.created"), emit("client.updated"), emit("client.created")}

	l := tail()
	waitFor(t, "the feed caught up", func() bool { return strings.Contains(l.out.String(), "Caught up; polling every 100 milliseconds") })
	skipped := emit("vendor.created") // not a type asked for
	later := emit("client.created")
	waitFor(t, "the later event", func() bool { return strings.Contains(l.out.String(), later) })
	if out := l.out.String(); strings.Contains(out, skipped) {
		t.Errorf("printed a vendor.created although --events names client types only:\n%s", out)
	}
	inOrder(t, l.out.String(), append(before, later)...)
	if err := l.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	<-l.exited
	m := regexp.MustCompile(`resume with --after (\S+)`).FindStringSubmatch(l.out.String())
	if l.err != nil || m == nil {
		t.Fatalf("after Ctrl-C: exit %v, no iterator to resume from:\n%s", l.err, l.out.String())
	}

	last := emit("client.updated")
	resumed := tail("--after", m[1])
	waitFor(t, "the event after the checkpoint", func() bool { return strings.Contains(resumed.out.String(), last) })
	for _, id := range append(before, later) {
		if strings.Contains(resumed.out.String(), id) {
			t.Errorf("resumed from the checkpoint, printed event %s again:\n%s", id, resumed.out.String())
		}
	}
}

// inOrder fails unless each id appears in out, each after the one before.
func inOrder(t *testing.T, out string, ids ...string) {
	t.Helper()
	at := 0
	for _, id := range ids {
		i := strings.Index(out[at:], id)
		if i < 0 {
			t.Fatalf("event %s missing or out of order:\n%s", id, out)
		}
		at += i + len(id)
	}
}

// Mistakes end wds listen --feed at once with a clear line and exit 1: a malformed iterator (the
// API's 400 invalid_cursor, as it said it), a flag of the webhook way of listening, a feed flag
// without --feed, no key.
func TestListenFeedRefusesMistakes(t *testing.T) {
	f, url := newKeyFixture(t)
	in := newKeyInstance(t, f.db, apikeys.ConnectURL(url))
	_, key := f.readKey(t)
	env := []string{"WDS_DATA_DIR=" + t.TempDir()}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--feed", "--key", key, "--api", in.srv.URL, "--after", "not-an-iterator"}, "400 invalid_cursor"},
		{[]string{"--feed", "--key", "pck_live_madeup", "--api", in.srv.URL}, "401 invalid_api_key"},
		{[]string{"--feed", "--key", key, "--org", f.org.String()}, "--org is not for --feed"},
		{[]string{"--org", f.org.String(), "--actor", f.owner.String(), "--key", key}, "--key goes with --feed"},
		{[]string{"--feed"}, "--key is required with --feed"},
		{[]string{"--feed", "--key", key, "--api", "localhost:8080"}, "--api must be an http:// or https:// URL"},
	} {
		p := startWDS(t, env, append([]string{"listen"}, c.args...)...)
		<-p.exited
		if p.err == nil || !strings.Contains(p.out.String(), c.want) {
			t.Errorf("wds listen %v: exit %v, want exit 1 saying %q:\n%s", c.args, p.err, c.want, p.out.String())
		}
	}
}

// What passes is waited out: a 503 with Retry-After is asked again after it, and the tail goes on.
func TestListenFeedWaitsOutUnavailable(t *testing.T) {
	var calls atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":"unavailable","detail":"the database is restarting"}`))
			return
		}
		w.Write([]byte(`{"rows":[{"id":"e1","type":"order.created"}],"next":"it1","done":true}`))
	}))
	defer api.Close()
	var out, log bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	tl := &feedTail{base: api.URL + "/v1/events", key: "k", interval: time.Hour, client: api.Client(), out: &out, log: &log}
	start := time.Now()
	if err := tl.run(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "503 unavailable: the database is restarting; trying again in 1s") ||
		!strings.Contains(out.String(), "event e1") || !strings.Contains(out.String(), "resume with --after it1") {
		t.Fatalf("log:\n%s\nout:\n%s", log.String(), out.String())
	}
	if elapsed := time.Since(start); elapsed < time.Second {
		t.Errorf("asked again after %s, before the Retry-After of 1s", elapsed)
	}
}
