package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
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
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("WDS_METRICS_ADDR=%q: cannot listen (%w); pick a free address such as :9090", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", Handler())
	s := &Server{
		// The API's timeouts (config/timeouts.go): a stalled scraper, or anyone who reaches the port,
		// cannot hold connections open.
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: config.HTTPReadHeaderTimeout, ReadTimeout: config.HTTPReadTimeout,
			WriteTimeout: config.HTTPWriteTimeout, IdleTimeout: config.HTTPIdleTimeout},
		done: make(chan struct{}),
		Addr: ln.Addr().String(),
	}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.WithError(err).Error("metrics listener stopped")
		}
	}()
	log.WithField("addr", s.Addr).Info("metrics listening on /metrics")
	return s, nil
}

// Stop closes the listener, letting a scrape in progress finish for a short while.
func (s *Server) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	<-s.done
}
