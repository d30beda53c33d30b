package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/sirupsen/logrus"

	"wds/internal/platform/config"
)

// Handler serves the registry in the Prometheus text format. A collector that fails (the database
// is down) loses only its own series; the rest of the scrape is still served.
func Handler() http.Handler {
	return promhttp.HandlerFor(Registry, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Server is the metrics listener of one process.
type Server struct {
	srv  *http.Server
	done chan struct{}
	// Addr is the bound address (useful when the configured one had port 0).
	Addr string
}

// Start binds addr now, so a taken port fails start-up with a clear error instead of silently
// leaving the process unobservable, and serves /metrics until Stop.
func Start(addr string, log logrus.FieldLogger) (*Server, error) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", Handler())
	// The API's write timeout (config/timeouts.go): a stalled scraper cannot hold connections open.
	return listen("WDS_METRICS_ADDR", addr, mux, config.HTTPWriteTimeout, log)
}

// MaxProfile is the longest CPU profile or trace the profiler listener serves: its write timeout,
// which net/http/pprof refuses to outlast.
const MaxProfile = 5 * time.Minute

// StartProfiler serves Go's runtime profiles (net/http/pprof, under /debug/pprof/) on addr until
// Stop, so an operator can see where a live serve or worker spends its CPU:
// `go tool pprof http://ADDR/debug/pprof/profile?seconds=30`. It is off unless WDS_PPROF_ADDR is set,
// because a profile shows the process's internals to whoever reaches the port.
func StartProfiler(addr string, log logrus.FieldLogger) (*Server, error) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	return listen("WDS_PPROF_ADDR", addr, mux, MaxProfile+10*time.Second, log)
}

// listen binds addr (named by the variable that set it) and serves h with the API's header, read and
// idle timeouts, so anyone who reaches the port cannot hold connections open.
func listen(variable, addr string, h http.Handler, writeTimeout time.Duration, log logrus.FieldLogger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s=%q: cannot listen (%w); pick a free address", variable, addr, err)
	}
	s := &Server{
		srv: &http.Server{Handler: h, ReadHeaderTimeout: config.HTTPReadHeaderTimeout, ReadTimeout: config.HTTPReadTimeout,
			WriteTimeout: writeTimeout, IdleTimeout: config.HTTPIdleTimeout},
		done: make(chan struct{}),
		Addr: ln.Addr().String(),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.WithError(err).WithField("listener", variable).Error("listener stopped")
		}
	}()
	log.WithField("addr", s.Addr).WithField("listener", variable).Info("listening")
	return s, nil
}

// Stop closes the listener, letting a scrape in progress finish for a short while.
func (s *Server) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if s.srv.Shutdown(ctx) != nil {
		_ = s.srv.Close() // a profile still being written ends now
	}
	<-s.done
}
