package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"wds/internal/platform/paging"
)

// FeedLag is how long after its commit a consumer polling the feed first saw each event, while
// clients created orders through the Integration API. An event's time is its created_at, written
// by its insert before the commit, so each lag is at least the event's real lag from its commit.
type FeedLag struct {
	Clients          int     `json:"clients"`
	Creates          int     `json:"creates"`
	CreateErrors     int     `json:"create_errors"`
	CreatesPerSecond float64 `json:"creates_per_second"`
	// Events is what the creates wrote, counted in the database; Seen the distinct events the consumer
	// read, Duplicates those it read more than once.
	Events     int     `json:"events"`
	Seen       int     `json:"seen"`
	Duplicates int     `json:"duplicates"`
	Pages      int     `json:"pages"`
	PauseMs    float64 `json:"pause_after_end_ms"`
	P50Ms      float64 `json:"p50_ms"`
	P99Ms      float64 `json:"p99_ms"`
	MaxMs      float64 `json:"max_ms"`
}

// feedPause is how long the lag's consumer waits after a page that reached the end, as a consumer
// of a quiet feed would, rather than asking again at once: each lag includes up to one pause.
const feedPause = 100 * time.Millisecond

// feedDrain bounds how long the consumer may take to see the last events after the creates end.
const feedDrain = 30 * time.Second

// lagConsumer follows one org's feed from its start and times each event's first sight.
type lagConsumer struct {
	r     *feedReader
	seen  map[string]bool
	lags  []time.Duration
	dups  int
	pages int
}

// feedLag creates orders in an org of its own for the measurement's length while a consumer polls
// its feed, then waits until the consumer has seen every event the creates wrote.
func (e *env) feedLag(ctx context.Context, o Options, s *stack) (FeedLag, error) {
	l := FeedLag{Clients: o.Clients, PauseMs: ms(feedPause)}
	t, err := newTenant(ctx, s.db, "Feed lag")
	if err != nil {
		return l, err
	}
	g, err := newIngester(ctx, s.db, s.box, t, s.base, "feed-lag-", int(2000*o.Duration.Seconds()), true)
	if err != nil {
		return l, err
	}
	// A page a pause, and a page for every MaxLimit events at well over the creates' rate.
	keys, err := mintReadKeys(ctx, s.db, t, int(100*(o.Duration+feedDrain).Seconds())/readKeyBudget+2)
	if err != nil {
		return l, err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}, Timeout: 30 * time.Second}
	c := &lagConsumer{r: &feedReader{base: s.base, client: client, keys: keys}, seen: map[string]bool{}}
	want := make(chan int, 1)
	followed := make(chan error, 1)
	go func() { followed <- c.follow(ctx, want) }()
	creates := drive(ctx, o.Clients, o.Duration, func(int) op {
		return func(ctx context.Context) error { _, err := g.create(ctx); return err }
	}).measure()
	l.Creates, l.CreateErrors, l.CreatesPerSecond = creates.Ops-creates.Errors, creates.Errors, creates.PerSecond
	var n int64
	if err := s.db.WithContext(ctx).Raw("SELECT count(*) FROM events WHERE org_id = ? AND type <> 'webhook.test'", t.orgID).Scan(&n).Error; err != nil {
		return l, fmt.Errorf("bench: count the lag's events: %w", err)
	}
	want <- int(n)
	if err := <-followed; err != nil {
		return l, err
	}
	var m Measure
	m.summarize(c.lags)
	l.Events, l.Seen, l.Duplicates, l.Pages, l.P50Ms, l.P99Ms, l.MaxMs = int(n), len(c.seen), c.dups, c.pages, m.P50Ms, m.P99Ms, m.MaxMs
	return l, nil
}

// follow reads the feed from its start, following next and pausing after each page that reached
// the end, until it has seen the count want is sent, or feedDrain after it was sent.
func (c *lagConsumer) follow(ctx context.Context, want <-chan int) error {
	buf := new(bytes.Buffer)
	after, total := "", -1
	var deadline time.Time
	for {
		p, err := c.page(ctx, after, buf)
		if err != nil {
			return err
		}
		after = p.Next
		select {
		case total = <-want:
			deadline = time.Now().Add(feedDrain)
		default:
		}
		switch {
		case total >= 0 && len(c.seen) >= total:
			return nil
		case total >= 0 && time.Now().After(deadline):
			return fmt.Errorf("bench: the feed's consumer saw %d of %d events %s after the creates ended", len(c.seen), total, feedDrain)
		case p.Done:
			time.Sleep(feedPause)
		}
	}
}

// page reads one page of the feed and times each of its events from its created_at.
func (c *lagConsumer) page(ctx context.Context, after string, buf *bytes.Buffer) (feedPage, error) {
	var p feedPage
	// The largest page, as a consumer keeping up with a busy feed asks for.
	if err := c.r.get(ctx, after, paging.MaxLimit, buf); err != nil {
		return p, err
	}
	sawAt := time.Now()
	c.pages++
	if err := json.Unmarshal(buf.Bytes(), &p); err != nil {
		return p, fmt.Errorf("bench: a feed page: %w", err)
	}
	for _, row := range p.Rows {
		var ev struct {
			ID        string    `json:"id"`
			CreatedAt time.Time `json:"created_at"`
		}
		if err := json.Unmarshal(row, &ev); err != nil {
			return p, fmt.Errorf("bench: a feed event: %w", err)
		}
		if c.seen[ev.ID] {
			c.dups++
			continue
		}
		c.seen[ev.ID] = true
		c.lags = append(c.lags, sawAt.Sub(ev.CreatedAt))
	}
	return p, nil
}
