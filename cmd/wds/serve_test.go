package main

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"wds/internal/platform/config"
)

// TestAPIServerDisconnectsClientsThatNeverFinishTheirHeaders: a client that opens a connection and
// sends part of a header line, then nothing (or a byte now and then, slowloris), is disconnected
// once the header timeout passes, so stalled clients cannot pile up connections and goroutines.
// It runs the server `wds serve` and `wds dev` build, with its real timeouts.
func TestAPIServerDisconnectsClientsThatNeverFinishTheirHeaders(t *testing.T) {
	t.Parallel()
	srv := newHTTPServer("127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}))
	if srv.ReadHeaderTimeout != config.HTTPReadHeaderTimeout || srv.ReadTimeout != config.HTTPReadTimeout ||
		srv.WriteTimeout != config.HTTPWriteTimeout || srv.IdleTimeout != config.HTTPIdleTimeout {
		t.Fatalf("the API server's timeouts are not config/timeouts.go's: %+v", srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	addr := ln.Addr().String()

	clients := map[string]func(c net.Conn, stop <-chan struct{}){
		"silent": func(net.Conn, <-chan struct{}) {},
		"trickling": func(c net.Conn, stop <-chan struct{}) {
			for {
				select {
				case <-stop:
					return
				case <-time.After(500 * time.Millisecond):
					if _, err := c.Write([]byte("x")); err != nil {
						return
					}
				}
			}
		},
	}
	var wg sync.WaitGroup
	for name, dribble := range clients {
		wg.Go(func() {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			start := time.Now()
			if _, err := io.WriteString(c, "GET /v1/health HTTP/1.1\r\nHost: wds\r\nX-Slow: "); err != nil {
				t.Error(err)
				return
			}
			stop := make(chan struct{})
			go dribble(c, stop)
			defer close(stop)
			_ = c.SetReadDeadline(start.Add(config.HTTPReadHeaderTimeout + 15*time.Second))
			_, err = io.ReadAll(c) // nil at EOF: the server hung up
			took := time.Since(start)
			switch {
			case errors.Is(err, os.ErrDeadlineExceeded):
				t.Errorf("%s client: still connected %s after it began its headers", name, took.Round(time.Second))
			case took < config.HTTPReadHeaderTimeout-time.Second:
				t.Errorf("%s client: disconnected after %s, before the header timeout of %s", name, took, config.HTTPReadHeaderTimeout)
			}
		})
	}
	wg.Wait()

	// A client that sends its request at once is served as usual.
	res, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if b, _ := io.ReadAll(res.Body); res.StatusCode != http.StatusOK || string(b) != "ok" {
		t.Fatalf("a prompt request: %d %s", res.StatusCode, b)
	}
}
