// Package metrics is the process's Prometheus surface: HTTP requests, rate-limit refusals, the
// outbox backlog, webhook deliveries and the Temporal SDK's own metrics, served at /metrics on a
// listener of its own (WDS_METRICS_ADDR) so scraping never competes with, or is exposed like, the API.
package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Registry holds every collector of the process. It is ours rather than the global default so that
// only what we register (and the Go and process collectors) is exposed, under names we chose.
var Registry = prometheus.NewRegistry()

// Label values used when the real one would be unbounded or absent.
const (
	// RouteUnmatched labels requests that matched no route, so scanners probing random paths cannot
	// blow up the series count.
	RouteUnmatched = "unmatched"
)

var (
	httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wds_http_requests_total",
		Help: "HTTP requests answered, by route pattern, method and status code.",
	}, []string{"route", "method", "status"})

	httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "wds_http_request_duration_seconds",
		Help:    "Time from receiving a request to the end of its handler, by route pattern, method and status code.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
	}, []string{"route", "method", "status"})

	rateLimited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wds_rate_limited_total",
		Help: "Requests refused with 429 rate_limited, by API (read, integration, operator).",
	}, []string{"api"})

	keyCache = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wds_key_cache_lookups_total",
		Help: "API key authentications by how the key cache served them: hit (no database round trip), miss (looked up and kept), bypass (looked up because the key change listener is not listening), unknown (refused from memory: no key had it a moment ago).",
	}, []string{"result"})

	deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wds_webhook_deliveries_total",
		Help: "Webhook delivery attempts sent to a receiver, by outcome (succeeded; failed; dropped when it was the chain's last attempt) and attempt number.",
	}, []string{"outcome", "attempt"})

	deliveryDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "wds_webhook_delivery_duration_seconds",
		Help: "Time a delivery attempt took, from connecting to the receiver to reading its answer, by outcome.",
		// Outbound requests time out at 10 s (outbound requests are hostile territory), so the last bucket catches those.
		Buckets: []float64{.05, .1, .25, .5, 1, 2, 4, 8, 10, 15},
	}, []string{"outcome"})

	// dropped is per endpoint so an operator sees which receiver is losing events; endpoints are
	// made by operators, not by callers, so the label is bounded.
	dropped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wds_webhook_dropped_total",
		Help: "Delivery chains dropped (their last attempt failed), by endpoint id.",
	}, []string{"endpoint_id"})

	secretUnreadable = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "wds_webhook_secret_unreadable_total",
		Help: "Delivery attempts that sent nothing because the worker's keys (WDS_ENCRYPTION_KEY, WDS_ENCRYPTION_KEY_PREVIOUS) open neither the endpoint's signing secret nor its headers.",
	})

	relayPasses = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "wds_relay_passes_total",
		Help: "Passes of the outbox relay over undispatched rows, by result (ok: it could claim and start; failed: the database or Temporal refused).",
	}, []string{"result"})

	relayStarted = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "wds_relay_started_total",
		Help: "Rows the outbox relay started: events whose start right after commit did not happen (crash, Temporal away), plus re-fires and tests.",
	})

	relayRecoveries = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "wds_relay_recoveries_total",
		Help: "Times the outbox relay passed again after failing passes (Temporal or the database came back).",
	})

	gateWait = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "wds_db_gate_wait_seconds",
		Help: "Time a transaction or Read API query waited for a turn at the database (WDS_DB_CONCURRENCY); 0 when one was free.",
		// A turn is refused after 10 s (config.DBTurnWait), so the last bucket catches those.
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	})

	gateBusy = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "wds_db_gate_busy_total",
		Help: "Callers refused because no turn at the database became free within 10 s (answered 503 unavailable).",
	})
)

func init() {
	Registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		httpRequests, httpDuration, rateLimited, keyCache, deliveries, deliveryDuration, dropped,
		secretUnreadable, relayPasses, relayStarted, relayRecoveries, gateWait, gateBusy,
	)
}

// ObserveRequest records one answered HTTP request.
func ObserveRequest(route, method string, status int, d time.Duration) {
	if route == "" {
		route = RouteUnmatched
	}
	code := strconv.Itoa(status)
	httpRequests.WithLabelValues(route, method, code).Inc()
	httpDuration.WithLabelValues(route, method, code).Observe(d.Seconds())
}

// RateLimited counts one request refused by a rate limit of the named API.
func RateLimited(api string) { rateLimited.WithLabelValues(api).Inc() }

// The results of a key cache lookup (KeyCacheLookup).
const (
	KeyCacheHit    = "hit"
	KeyCacheMiss   = "miss"
	KeyCacheBypass = "bypass"
	// KeyCacheUnknown is a token answered invalid from memory: looked up within a minute and found
	// to be no key.
	KeyCacheUnknown = "unknown"
)

// KeyCacheLookup counts one authentication by how the key cache served it.
func KeyCacheLookup(result string) { keyCache.WithLabelValues(result).Inc() }

// DeliveryAttempt records one webhook delivery attempt to endpointID: its outcome (the delivery
// row's status, models.Status), its attempt number within the chain and how long it took, and
// whether it dropped the chain. The delivery activity calls it once per attempt it records.
func DeliveryAttempt(endpointID, outcome string, dropsChain bool, attempt int, d time.Duration) {
	deliveries.WithLabelValues(outcome, strconv.Itoa(attempt)).Inc()
	deliveryDuration.WithLabelValues(outcome).Observe(d.Seconds())
	if dropsChain {
		dropped.WithLabelValues(endpointID).Inc()
	}
}

// SecretUnreadable counts an attempt that could not open its endpoint's sealed secret or headers.
func SecretUnreadable() { secretUnreadable.Inc() }

// RelayPass records one pass of the outbox relay: whether it failed, how many rows it started, and
// whether it is the first good pass after failing ones.
func RelayPass(started int, failed, recovered bool) {
	if failed {
		relayPasses.WithLabelValues("failed").Inc()
		return
	}
	relayPasses.WithLabelValues("ok").Inc()
	relayStarted.Add(float64(started))
	if recovered {
		relayRecoveries.Inc()
	}
}

// GateWait records how long a caller waited for a turn at the database, and whether it got none.
func GateWait(d time.Duration, refused bool) {
	gateWait.Observe(d.Seconds())
	if refused {
		gateBusy.Inc()
	}
}
