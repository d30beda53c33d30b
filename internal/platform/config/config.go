// Package config reads the service's settings from the environment (docs/configuration.md) and checks
// them once at start, naming the variable and the fix in every error.
package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/caarlos0/env/v11"
	"github.com/sirupsen/logrus"
)

// Config is every setting of every subcommand.
type Config struct {
	DatabaseURL string `env:"DATABASE_URL"`
	// ListenDatabaseURL is where the key cache's listener and the worker's resend listener connect for
	// LISTEN, when DATABASE_URL goes through a transaction-mode pooler that cannot carry it; empty is
	// DATABASE_URL.
	ListenDatabaseURL string `env:"WDS_LISTEN_DATABASE_URL"`
	DataDir           string `env:"WDS_DATA_DIR" envDefault:"./.wds"`
	HTTPAddr          string `env:"WDS_HTTP_ADDR" envDefault:":8080"`
	MetricsAddr       string `env:"WDS_METRICS_ADDR" envDefault:"127.0.0.1:9090"`
	// PprofAddr, when set, serves Go's runtime profiles there (metrics.StartProfiler); empty is off.
	PprofAddr         string `env:"WDS_PPROF_ADDR"`
	TemporalAddress   string `env:"TEMPORAL_ADDRESS"`
	TemporalNamespace string `env:"TEMPORAL_NAMESPACE" envDefault:"default"`
	// Temporal Cloud or a TLS-secured cluster: mTLS with a client certificate, or an API key (which
	// implies TLS), and optionally a CA bundle and server name for the frontend's certificate.
	TemporalTLSCert       string   `env:"TEMPORAL_TLS_CERT"`
	TemporalTLSKey        string   `env:"TEMPORAL_TLS_KEY"`
	TemporalTLSCA         string   `env:"TEMPORAL_TLS_CA"`
	TemporalTLSServerName string   `env:"TEMPORAL_TLS_SERVER_NAME"`
	TemporalAPIKey        string   `env:"TEMPORAL_API_KEY"`
	EncryptionKey         string   `env:"WDS_ENCRYPTION_KEY"`
	EncryptionKeyPrevious []string `env:"WDS_ENCRYPTION_KEY_PREVIOUS" envSeparator:","`
	TrustedProxies        []string `env:"WDS_TRUSTED_PROXIES" envSeparator:","`
	// TraceTrustCallers continues every caller's traceparent, not only a trusted proxy's: for a wds
	// reached only by callers that trace with it (docs/production.md, Traces).
	TraceTrustCallers    bool            `env:"WDS_TRACE_TRUST_CALLERS" envDefault:"false"`
	WebhookAllowPrivate  bool            `env:"WDS_WEBHOOK_ALLOW_PRIVATE" envDefault:"false"`
	WebhookCAFile        string          `env:"WDS_WEBHOOK_CA_FILE"`
	WebhookRetrySchedule []time.Duration `env:"WDS_WEBHOOK_RETRY_SCHEDULE" envDefault:"1m,5m,30m,2h,8h" envSeparator:","`
	// WebhookDisableAfter disables an endpoint that has not succeeded for this long when one of its
	// chains drops (docs/support.md); 0 never disables one.
	WebhookDisableAfter time.Duration `env:"WDS_WEBHOOK_DISABLE_AFTER" envDefault:"120h"`
	// ConsoleInsecureCookie drops Secure from the console's cookie, for plain-HTTP `wds dev` only.
	ConsoleInsecureCookie bool `env:"WDS_CONSOLE_INSECURE_COOKIE" envDefault:"false"`
	// TemporalUIURL is where the console links a delivery's workflow.
	TemporalUIURL string `env:"WDS_TEMPORAL_UI_URL" envDefault:"http://localhost:8233"`
	// ManualActivities is how many tasks of re-fires, resends and recoveries a worker runs at once,
	// on their own task queue, apart from fresh deliveries' (docs/support.md); 0 is the worker's
	// default (worker.DefaultManualSlots).
	ManualActivities int `env:"WDS_MANUAL_ACTIVITIES" envDefault:"0"`
	// RecoveryRate is the most chains a second one org's recoveries start, all together
	// (docs/support.md); 0 is delivery.DefaultOrgRecoveryRate.
	RecoveryRate int `env:"WDS_RECOVERY_RATE" envDefault:"0"`
	// SupportSearchRate paces each org's event searches, per instance (docs/support.md); 0 is
	// eventsearch.DefaultSearchRate.
	SupportSearchRate int `env:"WDS_SUPPORT_SEARCH_RATE" envDefault:"0"`
	// OperatorReadRate paces each org's list reads (the Operator API's lists and delivery logs, the
	// console's pages of them and its overview), per instance; 0 is paging.DefaultReadRate.
	OperatorReadRate int `env:"WDS_OPERATOR_READ_RATE" envDefault:"0"`
	// DeploymentName and BuildID are the worker's Temporal Worker Deployment Version
	// (docs/production.md, Deploys); an empty BuildID is the binary's version.
	DeploymentName string `env:"WDS_DEPLOYMENT_NAME" envDefault:"wds"`
	BuildID        string `env:"WDS_BUILD_ID"`
	// PromoteVersion says when a worker makes its own version the deployment's current one: first,
	// always or never (docs/production.md, Deploys).
	PromoteVersion string `env:"WDS_PROMOTE_VERSION" envDefault:"first"`
	// Retention is how long the worker keeps events and delivery rows (90 days); 0 keeps them forever.
	Retention time.Duration `env:"WDS_RETENTION" envDefault:"2160h"`
	// DBConcurrency bounds the transactions and Read API queries one process runs at once; 0 is
	// twice its CPUs.
	DBConcurrency int    `env:"WDS_DB_CONCURRENCY" envDefault:"0"`
	LogLevel      string `env:"WDS_LOG_LEVEL" envDefault:"info"`
	LogFormat     string `env:"WDS_LOG_FORMAT" envDefault:"json"`
}

// DefaultTemporalAddress is used outside `wds dev` when TEMPORAL_ADDRESS is unset.
const DefaultTemporalAddress = "localhost:7233"

// Load parses and validates the environment.
func Load() (*Config, error) {
	c := &Config{}
	if err := env.Parse(c); err != nil {
		return nil, nameVariables(err)
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Config) validate() error {
	var errs []error
	if c.ManualActivities < 0 {
		errs = append(errs, fmt.Errorf("WDS_MANUAL_ACTIVITIES=%d: 0 (the default, 8) or more", c.ManualActivities))
	}
	if c.SupportSearchRate < 0 {
		errs = append(errs, fmt.Errorf("WDS_SUPPORT_SEARCH_RATE=%d: 0 (the default, 20 searches a second an org) or more", c.SupportSearchRate))
	}
	if c.OperatorReadRate < 0 {
		errs = append(errs, fmt.Errorf("WDS_OPERATOR_READ_RATE=%d: 0 (the default, 20 reads a second an org) or more", c.OperatorReadRate))
	}
	if c.RecoveryRate < 0 {
		errs = append(errs, fmt.Errorf("WDS_RECOVERY_RATE=%d: 0 (the default, 10 chains a second an org) or more", c.RecoveryRate))
	}
	if _, err := logrus.ParseLevel(c.LogLevel); err != nil {
		errs = append(errs, fmt.Errorf("WDS_LOG_LEVEL=%q: use one of panic, fatal, error, warn, info, debug, trace", c.LogLevel))
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		errs = append(errs, fmt.Errorf("WDS_LOG_FORMAT=%q: use json or text", c.LogFormat))
	}
	for _, p := range c.TrustedProxies {
		if _, _, err := net.ParseCIDR(strings.TrimSpace(p)); err != nil {
			errs = append(errs, fmt.Errorf("WDS_TRUSTED_PROXIES: %q is not a CIDR range such as 10.0.0.0/8", p))
		}
	}
	errs = append(errs, c.validateDeployment()...)
	errs = append(errs, c.validateAddresses()...)
	errs = append(errs, c.validateTemporalTLS()...)
	if c.WebhookCAFile != "" {
		if _, err := os.Stat(c.WebhookCAFile); err != nil {
			errs = append(errs, fmt.Errorf("WDS_WEBHOOK_CA_FILE=%q: cannot read it (%w); give the path of a PEM CA bundle or unset it", c.WebhookCAFile, err))
		}
	}
	if c.DBConcurrency < 0 {
		errs = append(errs, fmt.Errorf("WDS_DB_CONCURRENCY=%d: give a positive number, or 0 for twice the CPUs", c.DBConcurrency))
	}
	if len(c.WebhookRetrySchedule) == 0 {
		errs = append(errs, errors.New("WDS_WEBHOOK_RETRY_SCHEDULE: give at least one delay, e.g. 1m,5m,30m,2h,8h"))
	}
	for i, d := range c.WebhookRetrySchedule {
		if d <= 0 || (i > 0 && d < c.WebhookRetrySchedule[i-1]) {
			errs = append(errs, errors.New("WDS_WEBHOOK_RETRY_SCHEDULE: delays are relative to the first attempt, so they must be positive and not decreasing"))
			break
		}
	}
	return errors.Join(errs...)
}

// Values of WDS_PROMOTE_VERSION.
const (
	// PromoteFirst makes a worker's version current only when the deployment never had one: the
	// first versioned deploy, a fresh Temporal namespace.
	PromoteFirst = "first"
	// PromoteAlways makes a worker's version current when it starts (wds dev's default).
	PromoteAlways = "always"
	// PromoteNever leaves the choice to the operator or the Temporal Worker Controller.
	PromoteNever = "never"
)

// validateDeployment checks the Worker Deployment settings against Temporal's own rules, so a worker
// fails at start naming the variable rather than at its first poll.
func (c *Config) validateDeployment() []error {
	var errs []error
	if c.DeploymentName == "" || strings.ContainsAny(c.DeploymentName, ".:") || len(c.DeploymentName) > 255 {
		errs = append(errs, fmt.Errorf("WDS_DEPLOYMENT_NAME=%q: give a name of 1 to 255 characters without . or : (default wds)", c.DeploymentName))
	}
	if len(c.BuildID) > 255 {
		errs = append(errs, fmt.Errorf("WDS_BUILD_ID: %d characters; at most 255, or unset for the binary's version", len(c.BuildID)))
	}
	switch c.PromoteVersion {
	case PromoteFirst, PromoteAlways, PromoteNever:
	default:
		errs = append(errs, fmt.Errorf("WDS_PROMOTE_VERSION=%q: use first, always or never", c.PromoteVersion))
	}
	return errs
}

// validateAddresses checks the listen and dial addresses now, so a typo fails start-up naming the
// variable instead of surfacing later as a bare "missing port in address" from the network stack.
func (c *Config) validateAddresses() []error {
	var errs []error
	check := func(name, value, example string) {
		if _, port, err := net.SplitHostPort(value); err != nil || !validPort(port) {
			errs = append(errs, fmt.Errorf("%s=%q: use host:port or :port, e.g. %s", name, value, example))
		}
	}
	check("WDS_HTTP_ADDR", c.HTTPAddr, ":8080")
	check("WDS_METRICS_ADDR", c.MetricsAddr, ":9090")
	if c.PprofAddr != "" {
		check("WDS_PPROF_ADDR", c.PprofAddr, "127.0.0.1:6060")
	}
	if c.TemporalAddress != "" {
		check("TEMPORAL_ADDRESS", c.TemporalAddress, "temporal.internal:7233")
	}
	_, httpPort, _ := net.SplitHostPort(c.HTTPAddr)
	_, metricsPort, _ := net.SplitHostPort(c.MetricsAddr)
	if len(errs) == 0 && httpPort != "0" && httpPort == metricsPort {
		errs = append(errs, fmt.Errorf("WDS_METRICS_ADDR=%q: the metrics listener needs a port of its own, not WDS_HTTP_ADDR's", c.MetricsAddr))
	}
	if _, pprofPort, _ := net.SplitHostPort(c.PprofAddr); len(errs) == 0 && pprofPort != "" && pprofPort != "0" &&
		(pprofPort == httpPort || pprofPort == metricsPort) {
		errs = append(errs, fmt.Errorf("WDS_PPROF_ADDR=%q: the profiler needs a port of its own, not WDS_HTTP_ADDR's or WDS_METRICS_ADDR's", c.PprofAddr))
	}
	return errs
}

// validateTemporalTLS checks that a client certificate comes with its key and that every named file
// can be read, so a misconfigured deployment fails at start naming the variable.
func (c *Config) validateTemporalTLS() []error {
	var errs []error
	if (c.TemporalTLSCert == "") != (c.TemporalTLSKey == "") {
		errs = append(errs, errors.New("TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY: give both (mTLS) or neither"))
	}
	for name, file := range map[string]string{"TEMPORAL_TLS_CERT": c.TemporalTLSCert, "TEMPORAL_TLS_KEY": c.TemporalTLSKey, "TEMPORAL_TLS_CA": c.TemporalTLSCA} {
		if file == "" {
			continue
		}
		if _, err := os.Stat(file); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: cannot read it (%w)", name, file, err))
		}
	}
	return errs
}

// TemporalTLS reports whether the Temporal connection uses TLS: any TLS setting or an API key.
func (c *Config) TemporalTLS() bool {
	return c.TemporalTLSCert != "" || c.TemporalTLSCA != "" || c.TemporalTLSServerName != "" || c.TemporalAPIKey != ""
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 0 && n <= 65535
}

// nameVariables rewrites the library's field-named parse errors to name the environment variable.
func nameVariables(err error) error {
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		return fmt.Errorf("configuration: %w", err)
	}
	var errs []error
	for _, e := range agg.Errors {
		var pe env.ParseError
		if !errors.As(e, &pe) {
			errs = append(errs, e)
			continue
		}
		f, _ := reflect.TypeOf(Config{}).FieldByName(pe.Name)
		errs = append(errs, fmt.Errorf("%s: cannot read it as %s: %w", f.Tag.Get("env"), pe.Type, pe.Err))
	}
	return errors.Join(errs...)
}

// Logger builds the logrus logger the settings ask for.
func (c *Config) Logger() *logrus.Logger {
	l := logrus.New()
	lvl, _ := logrus.ParseLevel(c.LogLevel)
	l.SetLevel(lvl)
	if c.LogFormat == "json" {
		l.SetFormatter(&logrus.JSONFormatter{})
	}
	return l
}

// RequireEncryptionKey reports the missing key the way an operator can act on.
func (c *Config) RequireEncryptionKey() error {
	if c.EncryptionKey == "" {
		return errors.New("WDS_ENCRYPTION_KEY is required: set it to the base64 of 32 random bytes " +
			"(for example `openssl rand -base64 32`); `wds dev` generates one for you")
	}
	return nil
}
