package temporalclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/sirupsen/logrus"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"wds/internal/platform/config"
	"wds/internal/platform/metrics/temporalmetrics"
	"wds/internal/platform/tracing"
)

// address is TEMPORAL_ADDRESS or the default frontend.
func address(cfg *config.Config) string {
	if cfg.TemporalAddress != "" {
		return cfg.TemporalAddress
	}
	return config.DefaultTemporalAddress
}

// ClientOptions are the client options of every wds process. gRPC compression is off: wds sends
// ids, never bodies, so its messages are small, and the SDK's default gzip made the Temporal server
// decompress every start, poll answer and task completion for nothing (13% of the start path in
// the benchmark's profile).
func ClientOptions(cfg *config.Config) (client.Options, error) {
	mh, err := temporalmetrics.Handler()
	if err != nil {
		return client.Options{}, err
	}
	// With tracing on, the trace of the request that starts a workflow goes on into its activities.
	interceptors, err := tracing.TemporalInterceptors()
	if err != nil {
		return client.Options{}, err
	}
	o := client.Options{HostPort: address(cfg), Namespace: cfg.TemporalNamespace, Logger: QuietLogger(),
		MetricsHandler: mh, Interceptors: interceptors,
		ConnectionOptions: client.ConnectionOptions{GrpcCompression: &client.GrpcCompressionNone{}}}
	if cfg.TemporalAPIKey != "" {
		o.Credentials = client.NewAPIKeyStaticCredentials(cfg.TemporalAPIKey)
	}
	if cfg.TemporalTLS() {
		if o.ConnectionOptions.TLS, err = clientTLS(cfg); err != nil {
			return client.Options{}, err
		}
	}
	return o, nil
}

// clientTLS is the TLS of a Temporal Cloud or secured cluster connection: the system roots (or
// TEMPORAL_TLS_CA), the client certificate for mTLS when given, and the server name when it differs
// from the address's host.
func clientTLS(cfg *config.Config) (*tls.Config, error) {
	t := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: cfg.TemporalTLSServerName}
	if cfg.TemporalTLSCert != "" {
		cert, err := tls.LoadX509KeyPair(cfg.TemporalTLSCert, cfg.TemporalTLSKey)
		if err != nil {
			return nil, fmt.Errorf("TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY: %w", err)
		}
		t.Certificates = []tls.Certificate{cert}
	}
	if cfg.TemporalTLSCA != "" {
		pem, err := os.ReadFile(cfg.TemporalTLSCA)
		if err != nil {
			return nil, fmt.Errorf("TEMPORAL_TLS_CA: %w", err)
		}
		t.RootCAs = x509.NewCertPool()
		if !t.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("TEMPORAL_TLS_CA=%q holds no PEM certificate", cfg.TemporalTLSCA)
		}
	}
	return t, nil
}

// Dial connects, waiting for a Temporal that is still starting (a worker often starts first).
func Dial(ctx context.Context, cfg *config.Config, log logrus.FieldLogger) (client.Client, error) {
	opts, err := ClientOptions(cfg)
	if err != nil {
		return nil, err
	}
	for wait := time.Second; ; wait = min(wait*2, 15*time.Second) {
		c, err := client.DialContext(ctx, opts)
		if err == nil {
			return c, nil
		}
		log.WithError(err).WithField("address", opts.HostPort).Warn("Temporal is not reachable yet; retrying")
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("connect to Temporal at %s: %w", opts.HostPort, err)
		case <-time.After(wait):
		}
	}
}

// LazyClient is a client that connects on first use, so `wds serve` starts while Temporal is away;
// starts that fail meanwhile are left to the relay.
func LazyClient(cfg *config.Config) (client.Client, error) {
	opts, err := ClientOptions(cfg)
	if err != nil {
		return nil, err
	}
	c, err := client.NewLazyClient(opts)
	if err != nil {
		return nil, fmt.Errorf("TEMPORAL_ADDRESS: %w", err)
	}
	return c, nil
}

// QuietLogger keeps the SDK's own logging to warnings and errors on stderr.
func QuietLogger() sdklog.Logger {
	return sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
}
