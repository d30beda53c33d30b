package activities

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"gorm.io/gorm"

	"wds/internal/delivery"
	"wds/internal/outbox"
	"wds/internal/platform/config"
	"wds/internal/platform/egress"
	"wds/internal/platform/metrics"
	"wds/internal/platform/tracing"
	"wds/models"
	"wds/webhook"
	"wds/workflows/contract"
)

// Delivery limits (docs/webhooks.md).
const (
	// MaxBody is the largest event delivered as is; larger ones are summarised.
	MaxBody = outbox.MaxBody
	// MaxResponse is how much of a receiver's answer is read and kept.
	MaxResponse = 64 << 10
	// UserAgent names the sender (docs/webhooks.md).
	UserAgent = "WDS-Webhook/1.0"
)

// Deliver makes one attempt: unless the chain must stop, it POSTs the event signed with the endpoint's
// current secret and a fresh timestamp, and records the attempt under in.DeliveryID. A task run again
// with the same id (a retried or duplicated task) returns the recorded outcome without sending again,
// and one that sent but could not record (the database went away) records what the POST came back
// with. An attempt that sends takes two statements: one reads everything (attempt), one records.
func (a *Activities) Deliver(ctx context.Context, in contract.AttemptInput) (contract.AttemptResult, error) {
	at, err := a.attempt(ctx, in)
	if err != nil {
		return contract.AttemptResult{}, err
	}
	if at.RecordedStatus != nil {
		// a retried or duplicated task: the attempt is already in the log (and an auto-disable the
		// first run could not finish is finished now)
		res := contract.AttemptResult{Outcome: *at.RecordedStatus, Error: deref(at.RecordedError), ResponseStatus: at.RecordedResponse}
		if err := a.afterDrop(ctx, in, res); err != nil {
			return res, err
		}
		return res, failure(in, res)
	}
	d := newRow(in, &at.Event, a.now())
	sent := false
	if !a.sentEarlier(ctx, d) {
		if reason := at.stopReason(); reason != "" {
			return a.stop(ctx, in, &at.Event, reason)
		}
		if at.RateLimit != nil {
			held, err := a.paced(ctx, in, at)
			if err != nil {
				return contract.AttemptResult{}, err
			}
			if held != nil {
				// Returned rather than waited for here: the workflow waits on a timer, holding no
				// activity slot, so a backlog at a slow endpoint never holds up the others.
				return *held, nil
			}
		}
		if err := a.send(ctx, d, at, in); err != nil {
			return contract.AttemptResult{}, err
		}
		sent = true
	}
	res, err := a.writeSent(ctx, d, sent, in.HandOffFailure)
	if res.Unrecorded != nil {
		return res, nil // RecordFailedAttempt records it, counts it and disables the endpoint if due
	}
	if err == nil {
		// Counted once the row is recorded: a task that is retried after this point returns early
		// above and is not counted twice.
		metrics.DeliveryAttempt(d.EndpointID.String(), string(d.Status), d.Status == models.StatusDropped, d.Attempt, time.Duration(d.DurationMS)*time.Millisecond)
		err = a.afterDrop(ctx, in, res)
	}
	if err != nil {
		return res, err
	}
	return res, failure(in, res)
}

// failure is the activity's failure for an attempt the receiver failed, when the workflow asks for
// one (contract.AttemptFailure), and nil otherwise. A chain stopped without sending (its endpoint
// disabled or deleted) failed nothing: its attempt completes.
func failure(in contract.AttemptInput, res contract.AttemptResult) error {
	if !in.ReportFailure || !res.ReceiverFailed() {
		return nil
	}
	return contract.AttemptFailure(in, res)
}

// paced takes the attempt's place under the endpoint's rate limit: the one it reserved when it was
// held (in.SlotAt), if not long past, else a new one. A place less than slotLead away is waited for
// here; a later one is returned as the held outcome, nil meaning the attempt sends now.
func (a *Activities) paced(ctx context.Context, in contract.AttemptInput, at *attemptState) (*contract.AttemptResult, error) {
	if in.SlotAt != nil {
		sleep, hold, usable := ownSlot(*in.SlotAt, at.DBNow)
		if usable && hold > 0 {
			return heldUntil(hold+slotLead, *in.SlotAt), nil
		}
		if usable {
			return nil, sleepFor(ctx, sleep)
		}
	}
	wait, slot, err := pace(ctx, a.DB, in.EndpointID, *at.RateLimit)
	switch {
	case err != nil:
		return nil, err
	case wait > slotLead:
		return heldUntil(wait, slot), nil
	}
	return nil, sleepFor(ctx, wait)
}

// sleepFor waits d unless ctx ends first.
func sleepFor(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for the place: %w", ctx.Err())
	}
}

// afterDrop disables the endpoint for failing when the attempt dropped its chain and the endpoint
// has failed for long enough. A chain dropped because the endpoint was disabled or deleted does not
// count: nothing was sent.
func (a *Activities) afterDrop(ctx context.Context, in contract.AttemptInput, res contract.AttemptResult) error {
	if res.Outcome != models.StatusDropped || in.Test || res.Error == models.ReasonEndpointDisabled || res.Error == models.ReasonEndpointDeleted ||
		res.Error == models.ReasonSecretUnreadable { // wds's keys, not the receiver, failed
		return nil
	}
	return a.autoDisable(ctx, in.EndpointID)
}

// heartbeatTime is what a task keeps, out of its deadline, to hand its outcome to Temporal after a
// write that failed: the heartbeat itself, after the database's grace to acknowledge the write's
// cancellation.
const heartbeatTime = 3 * time.Second

// writeSent records the attempt. When the row cannot be written after a POST, the outcome is kept as
// the task's heartbeat (in the worker's memory for a local activity, keep), so the retry records it
// instead of sending again; when handOff, a failed attempt's outcome is returned instead, for the
// workflow to hand on to RecordFailedAttempt. Only then: a heartbeat is
// a request and a write on the Temporal server, which every attempt would otherwise pay for the
// rare task that sends and then loses its database. A worker killed between the POST and the row
// keeps nothing, and the retry sends again; receivers deduplicate on X-PC-Event-Id for that.
func (a *Activities) writeSent(ctx context.Context, d *models.Delivery, sent, handOff bool) (contract.AttemptResult, error) {
	wctx := ctx
	if deadline, ok := ctx.Deadline(); ok && sent {
		var cancel context.CancelFunc
		wctx, cancel = context.WithDeadline(ctx, deadline.Add(-config.DBCancelGrace-heartbeatTime))
		defer cancel()
	}
	res, err := a.write(wctx, d)
	switch {
	case err == nil:
		a.kept.Delete(d.ID)
	case !sent:
		// the outcome is an earlier run's, which kept it
	case handOff && (d.Status == models.StatusFailed || d.Status == models.StatusDropped):
		// The workflow hands a failed attempt on to RecordFailedAttempt, whose input in history keeps
		// the outcome through a worker's restart, where the worker's memory would not.
		o := outcomeOf(d)
		return contract.AttemptResult{Outcome: d.Status, Error: d.Error, ResponseStatus: d.ResponseStatus, Unrecorded: &o}, nil
	case activity.IsActivity(ctx) && !activity.GetInfo(ctx).IsLocalActivity:
		// On a context of its own: the task's may be cancelled (the worker stopping) right after
		// the POST, which is when the outcome matters most.
		hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), heartbeatTime)
		defer cancel()
		activity.RecordHeartbeat(hctx, outcomeOf(d))
	default:
		a.keep(d.ID, outcomeOf(d))
	}
	return res, err
}

// keptFor is how long the worker keeps a local attempt's unrecorded outcome: past the longest an
// attempt is retried through an outage (the workflows' 24 hours).
const keptFor = 25 * time.Hour

// keptOutcome is an outcome kept in the worker's memory, and since when.
type keptOutcome struct {
	outcome
	at time.Time
}

// keep holds the outcome of a local attempt whose row could not be written. A local activity has no
// heartbeat, but its retries run on the worker that runs its workflow, which finds the outcome here
// and records it without sending again. A worker that stops loses it, and the retry elsewhere sends
// again, as a killed worker's does. A failed attempt asked to hand its outcome on (HandOffFailure) is
// not kept: RecordFailedAttempt records it from history, on any worker.
func (a *Activities) keep(id uuid.UUID, o outcome) {
	now := time.Now()
	a.kept.Range(func(k, v any) bool { // rare (a database outage): prune what no retry will ask for
		if now.Sub(v.(keptOutcome).at) > keptFor {
			a.kept.Delete(k)
		}
		return true
	})
	a.kept.Store(id, keptOutcome{outcome: o, at: now})
}

// send POSTs the event and fills d with the outcome. A signing secret or header set that the worker's
// keys do not open is the attempt's outcome, not an error to retry: retrying cannot open it, and the
// attempt would hold its workflow task for a day with no row written. It fails as secret_unreadable,
// loudly (unreadable), and the ladder goes on, so the attempt after the keys are put right delivers.
func (a *Activities) send(ctx context.Context, d *models.Delivery, at *attemptState, in contract.AttemptInput) error {
	keys, err := a.openSecrets(at)
	var custom sentCustom
	if err == nil {
		// Opened like the signing secret: a set that does not open fails the attempt, never sends without it.
		var plaintext bool
		if custom.headers, plaintext, err = models.HeadersFromPlaintext(a.Box, at.Headers, at.HeadersSealed); err != nil {
			err = fmt.Errorf("open endpoint headers: %w", err)
		} else if !plaintext {
			custom.sealed = at.HeadersSealed
		}
	}
	if err != nil {
		a.unreadable(d, in, err)
		return nil
	}
	body, release, err := a.body(ctx, at)
	if err != nil {
		return err
	}
	defer release()
	tracePost(ctx, d, in, func(ctx context.Context) { a.post(ctx, d, at.URL, custom, in, keys, body) })
	return nil
}

// sentCustom is an endpoint's custom headers as an attempt sends them, and the endpoint's sealed set
// of them (nil when the endpoint keeps them in the clear), which the attempt records as is.
type sentCustom struct {
	headers models.Headers
	sealed  []byte
}

// unreadable records in d an attempt whose endpoint's sealed values the worker cannot open, and says
// so where an operator looks: the worker's log at error level, and a metric an alert watches.
func (a *Activities) unreadable(d *models.Delivery, in contract.AttemptInput, err error) {
	d.AttemptedAt = a.now()
	d.Status, d.Error = failedOrDropped(in), models.ReasonSecretUnreadable
	metrics.SecretUnreadable()
	a.log().WithError(err).WithField("endpoint_id", in.EndpointID).WithField("event_id", in.EventID).
		Error("cannot open the endpoint's signing secret or headers: nothing was sent; check that this worker's " +
			"WDS_ENCRYPTION_KEY is the one wds serve seals with, and that WDS_ENCRYPTION_KEY_PREVIOUS holds the old key during a key rotation")
}

// outcome is what a POST came back with. Kept as the task's heartbeat when the row could not be
// written, it lets the retry write the row instead of sending again.
type outcome = contract.Sent

func outcomeOf(d *models.Delivery) outcome {
	return outcome{Status: d.Status, ResponseStatus: d.ResponseStatus, ResponseExcerpt: d.ResponseExcerpt,
		Error: d.Error, DurationMS: d.DurationMS, AttemptedAt: d.AttemptedAt, NextAttemptAt: d.NextAttemptAt, Headers: d.Sent}
}

// sentEarlier fills d from the outcome an earlier run of this task sent and kept, as its heartbeat
// or in the worker's memory (keep), if there is one.
func (a *Activities) sentEarlier(ctx context.Context, d *models.Delivery) bool {
	var o outcome
	if v, ok := a.kept.Load(d.ID); ok {
		o = v.(keptOutcome).outcome
	} else if !activity.IsActivity(ctx) || !activity.HasHeartbeatDetails(ctx) || activity.GetHeartbeatDetails(ctx, &o) != nil {
		return false
	}
	d.Status, d.ResponseStatus, d.ResponseExcerpt, d.Error = o.Status, o.ResponseStatus, o.ResponseExcerpt, o.Error
	d.DurationMS, d.AttemptedAt, d.NextAttemptAt, d.Sent = o.DurationMS, o.AttemptedAt, o.NextAttemptAt, o.Headers
	return true
}

// openSecrets opens the endpoint's signing secret and, during a rotation's grace, the previous one.
func (a *Activities) openSecrets(at *attemptState) ([]string, error) {
	var out []string
	for _, sealed := range [][]byte{at.SecretSealed, at.PreviousSealed} {
		if sealed == nil {
			continue
		}
		s, err := a.Box.Open(sealed)
		if err != nil {
			return nil, fmt.Errorf("open endpoint secret: %w", err)
		}
		out = append(out, string(s))
	}
	return out, nil
}

// body is what the attempt sends: the body the attempt read, a large one loaded within the worker's
// budget (release gives its room back), or the summary of one over MaxBody.
func (a *Activities) body(ctx context.Context, at *attemptState) (body []byte, release func(), err error) {
	switch {
	case at.Body != nil:
		return []byte(*at.Body), func() {}, nil
	case at.Event.Size > MaxBody:
		body, err = a.summary(ctx, &at.Event)
		return body, func() {}, err
	}
	if release, err = a.reserve(ctx, at.Event.Size); err != nil {
		return nil, nil, err
	}
	var text []string
	if err := a.DB.WithContext(ctx).Raw(`SELECT body::text FROM events WHERE id = ?`, at.Event.ID).Find(&text).Error; err != nil || len(text) != 1 {
		release()
		return nil, nil, fmt.Errorf("load event body: %d rows, %w", len(text), err)
	}
	return []byte(text[0]), release, nil
}

// attemptState is everything an attempt reads: the event (its body when it is small), the
// endpoint, the reason an earlier row of the chain was dropped, and the row this delivery id
// already has, if a task ran before.
type attemptState struct {
	Event            eventMeta `gorm:"embedded"`
	Body             *string
	EndpointFound    bool
	URL              string
	Headers          models.Headers // the endpoint's custom headers: names only, unless a legacy row
	HeadersSealed    []byte         // the whole set, sealed (models.OpenHeaders)
	RateLimit        *int           // POSTs a second at most; nil is no limit
	SecretSealed     []byte
	PreviousSealed   []byte // the rotated-out secret while its grace lasts
	Enabled          bool
	DeletedAt        *time.Time
	Dropped          *string
	RecordedStatus   *models.Status
	RecordedError    *string
	RecordedResponse *int
	// DBNow is the database's clock as the attempt read: a reserved place is timed by it.
	DBNow time.Time
}

// attempt reads an attempt's state in one statement. The body is json, so its text is the stored
// text; it comes along only when it is small (Activities.body loads a larger one).
func (a *Activities) attempt(ctx context.Context, in contract.AttemptInput) (*attemptState, error) {
	var rows []attemptState
	err := a.DB.WithContext(ctx).Raw(`SELECT e.id, e.org_id, e.type, e.created_at, octet_length(e.body::text) AS size,
			CASE WHEN octet_length(e.body::text) <= ? THEN e.body::text END AS body,
			w.id IS NOT NULL AS endpoint_found, w.url, w.headers, w.headers_sealed, w.rate_limit, w.secret_sealed, coalesce(w.enabled, false) AS enabled, w.deleted_at,
			CASE WHEN w.previous_secret_until > clock_timestamp() THEN w.previous_secret_sealed END AS previous_sealed,
			(SELECT coalesce(nullif(x.error, ''), x.status) FROM webhook_deliveries x
				WHERE x.chain_id = ? AND x.status = ? LIMIT 1) AS dropped,
			d.status AS recorded_status, d.error AS recorded_error, d.response_status AS recorded_response, clock_timestamp() AS db_now
		FROM events e
		LEFT JOIN webhook_endpoints w ON w.id = ?
		LEFT JOIN webhook_deliveries d ON d.id = ?
		WHERE e.id = ?`, smallBody, in.ChainID, models.StatusDropped, in.EndpointID, in.DeliveryID, in.EventID).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("load attempt: %w", err)
	}
	if len(rows) == 0 {
		// Events are pruned only long after any chain ends (WDS_RETENTION, at least 7 days): a
		// missing one cannot be delivered by a retry.
		return nil, temporal.NewNonRetryableApplicationError("event "+in.EventID.String()+" not found", "event_not_found", nil)
	}
	if !rows[0].EndpointFound && rows[0].RecordedStatus == nil {
		return nil, fmt.Errorf("load attempt: endpoint %s not found", in.EndpointID)
	}
	return &rows[0], nil
}

// stopReason says why the chain must not send: the endpoint is deleted or disabled, or an earlier
// row of the chain was already dropped (by disabling, even if the endpoint was enabled again since).
func (s *attemptState) stopReason() string {
	switch {
	case s.DeletedAt != nil:
		return models.ReasonEndpointDeleted
	case !s.Enabled:
		return models.ReasonEndpointDisabled
	}
	return deref(s.Dropped)
}

// stop ends the chain without sending: its last row becomes dropped with the reason (the disable or
// delete normally did that already; this covers an attempt that was in flight at that moment). A chain
// with no row yet records this attempt as dropped, so the log says why nothing was sent.
func (a *Activities) stop(ctx context.Context, in contract.AttemptInput, ev *eventMeta, reason string) (contract.AttemptResult, error) {
	var rows int64
	err := a.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := delivery.DropChain(ctx, tx, in.ChainID, reason); err != nil {
			return err
		}
		return tx.Model(&models.Delivery{}).Where("chain_id = ?", in.ChainID).Count(&rows).Error
	})
	if err != nil {
		return contract.AttemptResult{}, fmt.Errorf("drop chain: %w", err)
	}
	if rows == 0 {
		d := newRow(in, ev, a.now())
		d.Status, d.Error, d.NextAttemptAt = models.StatusDropped, reason, nil
		return a.write(ctx, d)
	}
	return contract.AttemptResult{Outcome: models.StatusDropped, Error: reason}, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// summary is docs/webhooks.md's replacement for an event over the cap (outbox.Summary).
func (a *Activities) summary(ctx context.Context, ev *eventMeta) ([]byte, error) {
	var row struct{ Head, DataID string }
	err := a.DB.WithContext(ctx).Raw(`SELECT `+outbox.SummaryHeadSQL("e")+` AS head, `+outbox.SummaryDataIDSQL("e")+` AS data_id
		FROM events e WHERE e.id = ?`, ev.ID).Find(&row).Error
	if err != nil {
		return nil, fmt.Errorf("summarise event: %w", err)
	}
	out, err := outbox.Summary(row.Head, row.DataID, ev.Size)
	if err != nil {
		return nil, fmt.Errorf("event %s: %w", ev.ID, err)
	}
	return out, nil
}

// post sends the request and fills the row's outcome. Success is a 2xx within egress.Timeout;
// anything else (3xx included: redirects are not followed) is a failure.
func (a *Activities) post(ctx context.Context, d *models.Delivery, url string, custom sentCustom, in contract.AttemptInput, keys []string, body []byte) {
	start := time.Now()
	ts := a.now().Unix()
	eventID, webhookID := in.EventID.String(), in.EventID.String()
	if in.Test {
		// a test event has no id; the Standard Webhooks id is then the attempt's (docs/webhooks.md#standard-webhooks)
		eventID, webhookID = "null", d.ID.String()
	}
	// The deadline is the request's own, not only the client's Timeout, so that a body cut short by
	// it can be told from a complete one: the transport may report the cut as a clean end.
	ctx, cancel := context.WithTimeout(ctx, egress.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		d.Status, d.Error = failedOrDropped(in), "invalid_url"
		return
	}
	h := req.Header
	// The endpoint's own headers first: the service's below cannot be overridden (and the names are
	// refused when the headers are set).
	for name, value := range custom.headers {
		h.Set(name, value)
	}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", UserAgent)
	h.Set(webhook.HeaderEventType, d.EventType)
	h.Set(webhook.HeaderEventID, eventID)
	h.Set(webhook.HeaderDeliveryID, d.ID.String())
	h.Set(webhook.HeaderTimestamp, strconv.FormatInt(ts, 10))
	h.Set(webhook.HeaderSignature, webhook.Sign(keys[0], time.Unix(ts, 0), body, keys[1:]...))
	// The Standard Webhooks headers, from the same secrets and instant. Every secret wds made decodes
	// (webhook.StandardKey), so the error is for a secret that did not come from here.
	if sig, err := webhook.SignStandard(webhookID, time.Unix(ts, 0), body, keys...); err == nil {
		h.Set(webhook.HeaderWebhookID, webhookID)
		h.Set(webhook.HeaderWebhookTimestamp, strconv.FormatInt(ts, 10))
		h.Set(webhook.HeaderWebhookSignature, sig)
	}
	d.Sent = a.sentHeaders(h, custom)
	d.AttemptedAt = a.now()
	resp, err := a.HTTP.Do(req)
	if err != nil {
		d.DurationMS = time.Since(start).Milliseconds()
		d.Status, d.Error = failedOrDropped(in), describe(err)
		return
	}
	defer resp.Body.Close()
	excerpt, readErr := io.ReadAll(io.LimitReader(resp.Body, MaxResponse))
	if readErr == nil && ctx.Err() != nil {
		readErr = ctx.Err()
	}
	d.DurationMS = time.Since(start).Milliseconds()
	d.ResponseStatus = &resp.StatusCode
	d.ResponseExcerpt = delivery.Redact(printable(excerpt), custom.headers, keys)
	switch {
	case readErr != nil:
		d.Status, d.Error = failedOrDropped(in), "reading response: "+describe(readErr)
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		d.Status, d.NextAttemptAt = models.StatusSucceeded, nil
	default:
		d.Status, d.Error = failedOrDropped(in), "HTTP "+strconv.Itoa(resp.StatusCode)
	}
}

// sentHeaders records the headers the request carries (models.SentHeaders) under the names the
// wire carries them by, the custom set as the endpoint keeps it sealed. The HTTP client adds Host,
// Content-Length and Accept-Encoding itself. Sealing (only a set the endpoint keeps in the clear)
// fails only with a box that cannot seal, which has just opened the endpoint's secrets: the headers
// then go unrecorded (the log says so) rather than the attempt failing for it.
func (a *Activities) sentHeaders(h http.Header, custom sentCustom) *models.RequestHeaders {
	sent := make(map[string]string, len(h))
	for name, values := range h {
		sent[name] = strings.Join(values, ", ")
	}
	r, err := models.SentHeaders(a.Box, sent, custom.headers, custom.sealed)
	if err != nil {
		a.log().WithError(err).Warn("cannot record the attempt's request headers")
		return nil
	}
	return r
}

// describe turns a transport error into a short reason without the URL (it may carry a token).
func describe(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	switch {
	case errors.Is(err, egress.ErrAddressNotAllowed):
		return egress.ErrAddressNotAllowed.Error()
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return "timeout: no complete 2xx answer within 10 s"
	}
	return truncate(err.Error(), 500)
}

// printable keeps a response excerpt storable as text: valid UTF-8 without NUL bytes.
func printable(b []byte) string {
	return strings.ReplaceAll(strings.ToValidUTF8(string(b), "\uFFFD"), "\x00", "\uFFFD")
}

// tracePost runs post, the outbound POST of attempt in to d's endpoint, inside a client span that
// names the event, the endpoint and the attempt, and records what the receiver answered. The span
// is a child of the activity attempt's (Temporal's tracing interceptor carries the trace there from
// the request that wrote the event).
func tracePost(ctx context.Context, d *models.Delivery, in contract.AttemptInput, post func(context.Context)) {
	ctx, span := otel.Tracer("wds/activities").Start(ctx, "webhook POST", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		tracing.AttrEventID.String(in.EventID.String()), tracing.AttrEndpointID.String(in.EndpointID.String()),
		tracing.AttrAttempt.Int(in.Attempt), tracing.AttrDeliveryID.String(d.ID.String()),
		attribute.String("http.request.method", "POST")))
	defer span.End()
	post(ctx)
	span.SetAttributes(tracing.AttrOutcome.String(string(d.Status)))
	if d.ResponseStatus != nil {
		span.SetAttributes(attribute.Int("http.response.status_code", *d.ResponseStatus))
	}
	if d.Status != models.StatusSucceeded {
		span.SetStatus(codes.Error, d.Error)
	}
}
