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
	"strings"
	"time"

	"github.com/google/uuid"

	"wds/config"
	"wds/database"
	"wds/delivery"
	"wds/events"
	"wds/problem"
	"wds/webhook"
)

func init() {
	commands["listen"] = listenCmd
	commandHelp["listen"] = `usage: wds listen --org UUID --actor UUID [--events t1,t2] [--forward-to URL] [--addr HOST:PORT]

Like stripe listen, for wds: starts an HTTPS receiver on this laptop with a throwaway certificate from
wds dev's local CA, registers it as an endpoint of the org on the wds dev database, and prints every
delivery as it arrives (type, event id, delivery id, whether its signature verified, the body). With
--forward-to it also POSTs each delivery, headers and all, to a local app over plain HTTP and answers
wds with the app's status, so the delivery log records what the app said. Ctrl-C disables and
deletes the endpoint. Run wds dev first.

  --org UUID          the org whose events to receive (required)
  --actor UUID        an owner or admin of the org, who registers the endpoint (required)
  --events LIST       event types, comma separated (default: every type)
  --forward-to URL    a local app to forward each delivery to, e.g. http://localhost:3000/hooks
  --addr HOST:PORT    where to listen (default 127.0.0.1 on a free port)
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
	if err := fs.Parse(args); err != nil {
		return errors.New(dashDash(err.Error()))
	}
	// flag stops at the first word that is not a flag: refuse it rather than drop every flag after it.
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (flags after it would be ignored)", fs.Arg(0))
	}
	if err := missingRequired(fs); err != nil {
		return err
	}
	cfg, err := config.Load()
	if err != nil {
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
	return listen(ctx, svc, ln, cert, *org, *actor, splitList(*types), *forward)
}

// listenService opens the wds dev database (or DATABASE_URL's) for the endpoint operations.
func listenService(ctx context.Context, cfg *config.Config) (*delivery.Service, func(), error) {
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
	return &delivery.Service{DB: db, Box: box, AllowPrivate: true}, func() { database.Close(db) }, nil
}

// listen registers the endpoint, serves deliveries until ctx ends, then disables and deletes it.
func listen(ctx context.Context, svc *delivery.Service, ln net.Listener, cert tls.Certificate,
	org, actor uuid.UUID, types []string, forwardTo string) error {
	if len(types) == 0 {
		types = events.Types()
	}
	url := "https://" + ln.Addr().String() + "/hooks"
	ep, err := svc.Create(ctx, delivery.CreateInput{OrgID: org, ActorID: actor, URL: url, EventTypes: types})
	if err != nil {
		return fmt.Errorf("register the endpoint: %s", problem.Detail(err))
	}
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
	if _, err := svc.Disable(sctx, ep.ID, actor); err != nil {
		return fmt.Errorf("disable endpoint %s: %w", ep.ID, err)
	}
	if _, err := svc.Delete(sctx, ep.ID, actor); err != nil {
		return fmt.Errorf("delete endpoint %s: %w", ep.ID, err)
	}
	fmt.Fprintf(l.out, "Endpoint %s disabled and deleted\n", ep.ID)
	return nil
}

// ServeHTTP prints a delivery and answers it: with the local app's answer when forwarding, else 200
// when its signature verified and 400 when not.
func (l *listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 7<<20))
	if err != nil {
		http.Error(w, "cannot read the body", http.StatusBadRequest)
		return
	}
	verified := "verified"
	// Verified as a receiver would, with the package receivers import.
	if err := webhook.Verify(l.secret, r.Header.Get(webhook.HeaderSignature), body, time.Now()); err != nil {
		verified = "NOT VERIFIED (" + err.Error() + ")"
	}
	fmt.Fprintf(l.out, "%s  %-24s event %s  delivery %s  %s\n  %s\n", time.Now().Format(time.TimeOnly),
		r.Header.Get(webhook.HeaderEventType), r.Header.Get(webhook.HeaderEventID), r.Header.Get(webhook.HeaderDeliveryID), verified, compact(body))
	if l.forwardTo == "" {
		if verified != "verified" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
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
