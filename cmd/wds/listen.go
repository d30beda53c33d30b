package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/google/uuid"

	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/internal/platform/config"
	"wds/internal/platform/database"
	"wds/internal/platform/durations"
	"wds/internal/platform/problem"
	"wds/webhook"
)

func init() {
	commands["listen"] = listenCmd
	commandHelp["listen"] = `usage: wds listen --org UUID --actor UUID [--events t1,t2] [--forward-to URL] [--addr HOST:PORT]
       wds listen --feed --key pck_live_... [--events t1,t2] [--store UUID] [--since TIME | --after NEXT]
                  [--api URL] [--interval 1s]

Like stripe listen, for wds: starts an HTTPS receiver on this laptop with a throwaway certificate from
wds dev's local CA, registers it as an endpoint of the org on the wds dev database, and prints every
delivery as it arrives (type, event id, delivery id, whether its signature verified, the body). With
--forward-to it also POSTs each delivery, headers and all, to a local app over plain HTTP and answers
wds with the app's status, so the delivery log records what the app said; a request whose signature
did not verify is answered 400 and never forwarded. Ctrl-C (or a closed terminal) deletes the
endpoint; should wds listen die without deleting it, the endpoint expires an hour after its last
renewal. Run wds dev first.

  --org UUID          the org whose events to receive (required)
  --actor UUID        an owner or admin of the org, who registers the endpoint (required)
  --events LIST       event types, comma separated (default: every type)
  --forward-to URL    a local app to forward each delivery to, e.g. http://localhost:3000/hooks
  --addr HOST:PORT    where to listen (default 127.0.0.1 on a free port)

With --feed it registers nothing and needs no database: it reads the org's event feed
(GET /v1/events) with a read key, prints every event in the feed's order, follows each page's next,
and once caught up polls again every --interval. It works against any wds it can reach over HTTP,
behind any firewall that lets the laptop out. Ctrl-C prints the iterator to resume from.

  --feed              tail the event feed instead of receiving webhooks
  --key KEY           a read key of the org, pck_live_... (required with --feed)
  --events LIST       event types, comma separated (default: every type but webhook.test)
  --store UUID        only the events of this store
  --since TIME        start at this RFC 3339 time (default: the oldest event kept)
  --after NEXT        resume from a page's next (as printed on Ctrl-C); wins over --since
  --api URL           the API's base URL (default: http://localhost and WDS_HTTP_ADDR's port)
  --interval DURATION how long to wait before polling again once caught up (default 1s)
`
}

// listener is one `wds listen` session: the endpoint it registered and where deliveries go.
type listener struct {
	secret    string
	forwardTo string
	client    *http.Client
	out       io.Writer
}

func listenCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("wds listen", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	org, actor := uuidFlag(fs, "org", "org id"), uuidFlag(fs, "actor", "acting user id")
	types, forward := fs.String("events", "", "event types"), fs.String("forward-to", "", "local app URL")
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	feed := feedFlags(fs)
	if err := fs.Parse(args); err != nil {
		// An unknown flag also shows the usage, so the right spelling is on screen.
		var usage func(io.Writer)
		if strings.HasPrefix(err.Error(), "flag provided but not defined") {
			usage = func(w io.Writer) { fmt.Fprint(w, commandHelp["listen"]) }
		}
		return &usageError{err: errors.New(unknownFlag(fs, err)), usage: usage}
	}
	// flag stops at the first word that is not a flag: refuse it rather than drop every flag after it.
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (flags after it would be ignored)", fs.Arg(0))
	}
	if err := onlyFlagsOf(fs, *feed.on); err != nil {
		return err
	}
	cfg, err := config.Load()
	if err != nil {
		return err
	}
	if *feed.on {
		return tailFeed(ctx, cfg, feed, splitList(*types))
	}
	if err := missingRequired(fs); err != nil {
		return err
	}
	cert, err := localCert(cfg.DataDir)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("--addr: %w", err)
	}
	defer ln.Close()
	svc, closeDB, err := listenService(ctx, cfg)
	if err != nil {
		return err
	}
	defer closeDB()
	// A closed terminal (SIGHUP) ends the session like Ctrl-C: the endpoint is deleted, not left
	// holding one of the org's ten slots.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGHUP)
	defer stop()
	return listen(ctx, svc, ln, cert, *org, *actor, splitList(*types), *forward)
}

// listenService opens the wds dev database (or DATABASE_URL's) for the endpoint operations.
func listenService(ctx context.Context, cfg *config.Config) (*endpoints.Service, func(), error) {
	url, err := databaseURL(cfg)
	if err != nil {
		return nil, nil, err
	}
	db, err := database.Open(ctx, url, cfg.Logger())
	if err != nil {
		return nil, nil, err
	}
	box, err := encryptionBox(cfg)
	if err != nil {
		database.Close(db)
		return nil, nil, err
	}
	// The receiver is on this laptop by design.
	local := *cfg
	local.WebhookAllowPrivate = true
	return newServices(&local, db, box, nil, cfg.Logger()).webhooks, func() { database.Close(db) }, nil
}

// listenDescription says, wherever the endpoint is shown, that it is wds listen's and temporary.
func listenDescription(forwardTo string) string {
	host, _ := os.Hostname()
	d := "Temporary: wds listen on " + host + ", deleted when it stops"
	if forwardTo != "" {
		d += "; forwards to " + forwardTo
	}
	return d
}

// listen registers the endpoint, serves deliveries until ctx ends, then disables and deletes it.
func listen(ctx context.Context, svc *endpoints.Service, ln net.Listener, cert tls.Certificate,
	org, actor uuid.UUID, types []string, forwardTo string) error {
	if len(types) == 0 {
		types = events.Types()
	}
	url := "https://" + ln.Addr().String() + "/hooks"
	ep, err := svc.Create(ctx, endpoints.CreateInput{OrgID: org, ActorID: actor, URL: url, EventTypes: types,
		Description: listenDescription(forwardTo)})
	if err != nil {
		return fmt.Errorf("register the endpoint: %s", problem.Detail(err))
	}
	// The endpoint lives on a lease renewed while this runs: if wds listen dies without deleting it,
	// its lease ends an hour later, and the org's next create or enable, or else the worker's prune,
	// deletes it.
	if err := svc.Renew(ctx, ep.ID); err != nil {
		_, _ = svc.Delete(context.WithoutCancel(ctx), ep.ID, actor)
		return fmt.Errorf("put endpoint %s on a lease: %w", ep.ID, err)
	}
	go renewLease(ctx, svc, ep.ID, os.Stderr)
	l := &listener{secret: ep.Secret, forwardTo: forwardTo, client: &http.Client{Timeout: 9 * time.Second}, out: os.Stdout}
	srv := newHTTPServer("", l)
	srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	go srv.ServeTLS(ln, "", "")
	fmt.Fprintf(l.out, "Ready: endpoint %s receives %s at %s\nSigning secret %s\n", ep.ID, strings.Join(types, ","), url, ep.Secret)
	if forwardTo != "" {
		fmt.Fprintf(l.out, "Forwarding each delivery to %s\n", forwardTo)
	}
	<-ctx.Done()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	// Delete alone turns the endpoint off (pending chains stop as on a disable): no earlier step
	// whose failure could leave it registered.
	if _, err := svc.Delete(sctx, ep.ID, actor); err != nil {
		return fmt.Errorf("delete endpoint %s: %w", ep.ID, err)
	}
	fmt.Fprintf(l.out, "Endpoint %s deleted\n", ep.ID)
	return nil
}

// renewLease renews the endpoint's lease every twelfth of it until ctx ends; a failed renewal is
// reported and tried again at the next tick, long before the lease runs out.
func renewLease(ctx context.Context, svc *endpoints.Service, id uuid.UUID, report io.Writer) {
	tick := time.NewTicker(endpoints.LeaseTTL / 12)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if err := svc.Renew(ctx, id); err != nil && ctx.Err() == nil {
				fmt.Fprintf(report, "cannot renew endpoint %s's lease (it ends within %s unless renewed): %v\n", id, durations.Text(endpoints.LeaseTTL), err)
			}
		}
	}
}

// ServeHTTP prints a delivery and answers it: 400 when its signature did not verify (and nothing is
// forwarded), else with the local app's answer when forwarding, else 200.
func (l *listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 7<<20))
	if err != nil {
		http.Error(w, "cannot read the body", http.StatusBadRequest)
		return
	}
	verified := "verified"
	// Verified as a receiver would, with the package receivers import, by either scheme: X-PC-Signature,
	// or the Standard Webhooks headers when a proxy passed only those.
	if err := webhook.VerifyHeaders(l.secret, r.Header, body, time.Now()); err != nil {
		verified = "NOT VERIFIED (" + err.Error() + ")"
	}
	fmt.Fprintf(l.out, "%s  %-24s event %s  delivery %s  %s\n  %s\n", time.Now().Format(time.TimeOnly),
		printable(r.Header.Get(webhook.HeaderEventType)), printable(r.Header.Get(webhook.HeaderEventID)),
		printable(r.Header.Get(webhook.HeaderDeliveryID)), printable(verified), printable(compact(body)))
	// The port is open to anything on this laptop, a web page included: only what wds signed reaches
	// the local app, which trusts what it is handed.
	if verified != "verified" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if l.forwardTo == "" {
		w.WriteHeader(http.StatusOK)
		return
	}
	l.forward(w, r, body)
}

// forward POSTs the delivery as it came to the local app and relays the app's status and body.
func (l *listener) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, l.forwardTo, bytes.NewReader(body))
	if err != nil {
		http.Error(w, "bad --forward-to", http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	resp, err := l.client.Do(req)
	if err != nil {
		fmt.Fprintf(l.out, "  -> %s: %v\n", l.forwardTo, err)
		http.Error(w, "the local app did not answer", http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	fmt.Fprintf(l.out, "  -> %s answered %d\n", l.forwardTo, resp.StatusCode)
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)
}

// compact is the body on one line, cut to a screen's width or two.
func compact(body []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, body) != nil {
		b.Reset()
		b.Write(body)
	}
	if r := []rune(b.String()); len(r) > 240 {
		return string(r[:240]) + "…"
	}
	return b.String()
}

// printable is untrusted text as it may reach a terminal: control characters (C0, DEL, C1), which
// could move the cursor, retitle the window or write the clipboard, are shown as \x escapes.
func printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			fmt.Fprintf(&b, `\x%02x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
