package metrics

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gorm.io/gorm"
)

// outboxQueue is a queue whose undispatched rows wait for the relay, by its label, and the table
// that holds each row's dispatch.
type outboxQueue struct{ label, table string }

// outboxQueues are events (the outbox proper, whose dispatch is in each event's state row) and
// webhook_dispatches (re-fires and tests). Each table has a partial index on dispatched_at IS NULL,
// so the scrape reads only the backlog, however large the tables grow.
var outboxQueues = []outboxQueue{{"events", "event_states"}, {"webhook_dispatches", "webhook_dispatches"}}

// outboxScrapeTimeout bounds the query a scrape makes; a slow database must not hang Prometheus.
const outboxScrapeTimeout = 3 * time.Second

var (
	backlogDesc = prometheus.NewDesc("wds_outbox_backlog",
		"Rows not yet handed to Temporal, by queue (events: the outbox; webhook_dispatches: re-fires and tests).",
		[]string{"queue"}, nil)
	oldestDesc = prometheus.NewDesc("wds_outbox_oldest_age_seconds",
		"Age of the oldest row not yet handed to Temporal, by queue; 0 when the queue is empty.",
		[]string{"queue"}, nil)
)

// OutboxCollector reads the outbox backlog at scrape time, so the figure is exact whichever instance
// is scraped and needs no background loop.
type OutboxCollector struct {
	db  *gorm.DB
	now func() time.Time
}

// NewOutboxCollector watches the outbox of db.
func NewOutboxCollector(db *gorm.DB) *OutboxCollector {
	return &OutboxCollector{db: db, now: time.Now}
}

// Describe implements prometheus.Collector.
func (o *OutboxCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- backlogDesc
	ch <- oldestDesc
}

// Collect implements prometheus.Collector. A failed query is reported as an invalid metric, which
// the handler turns into a scrape error for these series while still serving every other metric.
func (o *OutboxCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), outboxScrapeTimeout)
	defer cancel()
	for _, q := range outboxQueues {
		n, oldest, err := o.backlog(ctx, q)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(backlogDesc, err)
			continue
		}
		age := 0.0
		if oldest.Valid {
			age = max(o.now().Sub(oldest.Time).Seconds(), 0)
		}
		ch <- prometheus.MustNewConstMetric(backlogDesc, prometheus.GaugeValue, float64(n), q.label)
		ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, age, q.label)
	}
}

func (o *OutboxCollector) backlog(ctx context.Context, q outboxQueue) (int64, sql.NullTime, error) {
	var row struct {
		N      int64
		Oldest sql.NullTime
	}
	// The table comes from outboxQueues, never from input.
	err := o.db.WithContext(ctx).Raw("SELECT count(*) AS n, min(created_at) AS oldest FROM " + q.table +
		" WHERE dispatched_at IS NULL").Find(&row).Error
	if err != nil {
		return 0, row.Oldest, fmt.Errorf("outbox backlog of %s: %w", q.label, err)
	}
	return row.N, row.Oldest, nil
}

// WatchOutbox adds db's outbox backlog to the process registry until the returned function is
// called, so a command (or a test running commands one after another) can register it again later.
func WatchOutbox(db *gorm.DB) (unwatch func(), err error) {
	c := NewOutboxCollector(db)
	if err := Registry.Register(c); err != nil {
		return nil, fmt.Errorf("outbox metrics: %w", err)
	}
	return func() { Registry.Unregister(c) }, nil
}
