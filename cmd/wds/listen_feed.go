package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"wds/internal/platform/config"
	"wds/internal/platform/durations"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
)

// feedOptions are wds listen's flags for --feed.
type feedOptions struct {
	on                       *bool
	key, store, since, after *string
	api                      *string
	interval                 *time.Duration
}

func feedFlags(fs *flag.FlagSet) feedOptions {
	return feedOptions{
		on:       fs.Bool("feed", false, "tail the event feed over the Read API"),
		key:      fs.String("key", "", "read key (required with --feed)"),
		store:    fs.String("store", "", "store id"),
		since:    fs.String("since", "", "RFC 3339 time to start at"),
		after:    fs.String("after", "", "a page's next to resume from"),
		api:      fs.String("api", "", "the API's base URL"),
		interval: fs.Duration("interval", time.Second, "poll interval once caught up"),
	}
}

// webhookOnly and feedOnly are the flags that make sense in one of wds listen's two ways only.
var (
	webhookOnly = []string{"org", "actor", "forward-to", "addr"}
	feedOnly    = []string{"key", "store", "since", "after", "api", "interval"}
)

// onlyFlagsOf refuses a flag of the other way of listening, rather than ignore it.
func onlyFlagsOf(fs *flag.FlagSet, feed bool) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		switch {
		case err != nil:
		case feed && slices.Contains(webhookOnly, f.Name):
			err = problem.Fail(paging.ErrInvalidParameter, "--%s is not for --feed: the feed reads the org of its --key and registers no endpoint", f.Name)
		case !feed && slices.Contains(feedOnly, f.Name):
			err = problem.Fail(paging.ErrInvalidParameter, "--%s goes with --feed (wds listen --feed --key pck_live_...)", f.Name)
		}
	})
	return err
}

// tailFeed is wds listen --feed: it prints the org's events as the feed hands them out until ctx ends.
func tailFeed(ctx context.Context, cfg *config.Config, o feedOptions, types []string) error {
	if strings.TrimSpace(*o.key) == "" {
		return problem.Fail(paging.ErrInvalidParameter, "--key is required with --feed: a read key of the org (pck_live_...)")
	}
	if *o.interval <= 0 {
		return problem.Fail(paging.ErrInvalidParameter, "--interval must be a positive duration, such as 1s or 500ms")
	}
	base, err := feedBase(*o.api, cfg.HTTPAddr)
	if err != nil {
		return err
	}
	q := url.Values{}
	if len(types) > 0 {
		q.Set("types", strings.Join(types, ","))
	}
	for name, v := range map[string]string{"store_id": *o.store, "since": *o.since} {
		if v != "" {
			q.Set(name, v)
		}
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGHUP)
	defer stop()
	t := &feedTail{base: base + "/v1/events", query: q, key: *o.key, after: *o.after, interval: *o.interval,
		client: &http.Client{Timeout: 40 * time.Second}, out: os.Stdout, log: os.Stderr}
	return t.run(ctx)
}

// feedBase is --api, or else the local wds on WDS_HTTP_ADDR's port (a host it binds everywhere on is
// reached as localhost).
func feedBase(api, httpAddr string) (string, error) {
	if api != "" {
		u, err := url.Parse(api)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", problem.Fail(paging.ErrInvalidParameter, "--api must be an http:// or https:// URL, such as http://localhost:8080")
		}
		return strings.TrimRight(api, "/"), nil
	}
	host, port, err := net.SplitHostPort(httpAddr)
	if err != nil {
		return "", fmt.Errorf("WDS_HTTP_ADDR: %w", err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

// feedTail follows the feed: each page's next, then a poll every interval once caught up.
type feedTail struct {
	base     string     // the feed's URL
	query    url.Values // types, store_id, since: the same on every page
	key      string
	after    string // the iterator to read from next; empty before the first page
	interval time.Duration
	client   *http.Client
	out, log io.Writer
}

// feedPage is the feed's answer.
type feedPage struct {
	Rows []json.RawMessage `json:"rows"`
	Next string            `json:"next"`
	Done bool              `json:"done"`
}

// transientWait is how long to wait after a failure that passes (the network, a restart) when the
// API names no Retry-After.
const transientWait = 5 * time.Second

func (t *feedTail) run(ctx context.Context) error {
	fmt.Fprintf(t.out, "Reading the event feed at %s\n", t.base)
	caughtUp := false
	for {
		p, err := t.page(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return t.stopped()
			}
			return err
		}
		for _, row := range p.Rows {
			t.print(row)
		}
		t.after = p.Next
		var wait time.Duration
		if p.Done {
			if !caughtUp {
				fmt.Fprintf(t.out, "Caught up; polling every %s (Ctrl-C to stop)\n", durations.Text(t.interval))
				caughtUp = true
			}
			wait = t.interval
		}
		if !sleep(ctx, wait) {
			return t.stopped()
		}
	}
}

// stopped says where to resume: the next of the last page read, which every event printed is behind.
func (t *feedTail) stopped() error {
	if t.after != "" {
		fmt.Fprintf(t.out, "Stopped; resume with --after %s\n", t.after)
	}
	return nil
}

// page reads the next page, waiting out what passes (429, 503, a connection refused) until ctx ends.
func (t *feedTail) page(ctx context.Context) (feedPage, error) {
	for {
		p, retry, err := t.get(ctx)
		if err == nil || retry == 0 || ctx.Err() != nil {
			return p, err
		}
		fmt.Fprintf(t.log, "%v; trying again in %s\n", err, retry)
		if !sleep(ctx, retry) {
			return p, ctx.Err()
		}
	}
}

// get asks for one page; retry is non-zero when the failure passes and the request should be sent again.
func (t *feedTail) get(ctx context.Context) (p feedPage, retry time.Duration, err error) {
	q := url.Values{}
	for k, v := range t.query {
		q[k] = v
	}
	if t.after != "" {
		q.Set("after", t.after)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.base+"?"+q.Encode(), nil)
	if err != nil {
		return p, 0, fmt.Errorf("--api: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+t.key)
	res, err := t.client.Do(req)
	if err != nil {
		return p, transientWait, fmt.Errorf("GET %s: %w", t.base, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return p, transientWait, fmt.Errorf("GET %s: %w", t.base, err)
	}
	if res.StatusCode == http.StatusOK {
		if err := json.Unmarshal(body, &p); err != nil {
			return p, 0, fmt.Errorf("GET %s answered what is not a page of the feed: %w", t.base, err)
		}
		return p, 0, nil
	}
	err = fmt.Errorf("GET %s answered %d %s", t.base, res.StatusCode, problemText(body))
	switch res.StatusCode {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable, http.StatusBadGateway, http.StatusGatewayTimeout:
		return p, retryAfter(res.Header.Get("Retry-After")), err
	case http.StatusGone:
		return p, 0, fmt.Errorf("%w; start again with --since, and dedupe by event id what you saw before", err)
	}
	return p, 0, err
}

// problemText is the error body's "code: detail", or the body itself when it is not one.
func problemText(body []byte) string {
	var e struct{ Error, Detail string }
	if json.Unmarshal(body, &e) == nil && e.Error != "" {
		return printable(e.Error + ": " + e.Detail)
	}
	return printable(compact(body))
}

// retryAfter is Retry-After in seconds, or transientWait when it names none.
func retryAfter(v string) time.Duration {
	if n, err := strconv.Atoi(v); err == nil && n > 0 && n <= 3600 {
		return time.Duration(n) * time.Second
	}
	return transientWait
}

// print shows one event as wds listen shows a delivery: when, type, id, then the body on one line.
func (t *feedTail) print(row json.RawMessage) {
	var e struct {
		ID        string `json:"id"`
		Type      string `json:"type"`
		CreatedAt string `json:"created_at"`
	}
	_ = json.Unmarshal(row, &e)
	fmt.Fprintf(t.out, "%s  %-24s event %s  created %s\n  %s\n", time.Now().Format(time.TimeOnly),
		printable(e.Type), printable(e.ID), printable(e.CreatedAt), printable(compact(row)))
}

// sleep waits d, or less when ctx ends first; false when it did.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}
