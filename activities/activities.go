// Package activities is everything the workflows ask of the outside world: find the endpoints an
// event goes to, make one signed POST and record it (deliver.go), record an attempt that was lost,
// write the row of a failed attempt that Deliver could not and fail with it for the Temporal UI, pace an endpoint's
// rate limit, disable an endpoint that keeps failing, and queue a recovery's next
// batch. The workflows name them through method references on a nil *Activities; Register adds them
// to a worker under the names package contract gives them.
package activities

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"golang.org/x/sync/semaphore"
	"gorm.io/gorm"

	"wds/internal/delivery"
	"wds/internal/outbox"
	"wds/internal/platform/egress"
	"wds/internal/platform/metrics"
	"wds/internal/platform/secrets"
	"wds/models"
	"wds/workflows/contract"
)

// Activities holds what the activities share. HTTP must come from egress.NewClient. Use it by
// pointer: it holds the worker's budget for large bodies.
type Activities struct {
	DB   *gorm.DB
	Box  *secrets.Box
	HTTP *http.Client
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Batches starts the chains a recovery batch queues; nil leaves them to the relay.
	Batches BatchStarter
	// Events starts the webhook.endpoint_disabled events of auto-disables; nil leaves them to the relay.
	Events EventStarter
	// DisableAfter is WDS_WEBHOOK_DISABLE_AFTER: an endpoint failing this long is disabled when a
	// chain drops; 0 never disables one.
	DisableAfter time.Duration
	// RecoveryRate is WDS_RECOVERY_RATE: the chains a second one org's recoveries start together; 0
	// is delivery.DefaultOrgRecoveryRate.
	RecoveryRate int
	// Log is where an attempt says what an operator must fix (a secret no key opens); nil is
	// logrus's standard logger.
	Log logrus.FieldLogger
	// LargeBodyBudget is how many bytes of large bodies the worker holds at once; 0 is
	// DefaultLargeBodyBudget.
	LargeBodyBudget int64

	budgetOnce sync.Once
	budget     *semaphore.Weighted
	// kept holds the outcomes of local attempts that sent but could not be recorded (keep).
	kept sync.Map
}

// A worker runs up to a thousand attempts at once, and an event may be 6 MB: loading every body
// whole could take gigabytes. A body up to smallBody comes with the attempt's first statement; a
// larger one is loaded only once the worker's budget (DefaultLargeBodyBudget bytes unless
// LargeBodyBudget says otherwise) has room for it, and its room is given back when the attempt ends.
const (
	smallBody              = 64 << 10
	DefaultLargeBodyBudget = 64 << 20
)

// reserve waits until size bytes of the large-body budget are free and returns their release.
func (a *Activities) reserve(ctx context.Context, size int64) (release func(), err error) {
	a.budgetOnce.Do(func() { a.budget = semaphore.NewWeighted(cmp.Or(a.LargeBodyBudget, DefaultLargeBodyBudget)) })
	if err := a.budget.Acquire(ctx, size); err != nil {
		return nil, fmt.Errorf("wait for room to load a %d-byte body: %w", size, err)
	}
	return func() { a.budget.Release(size) }, nil
}

// Register adds the activities to a worker under the names the workflows schedule.
func (a *Activities) Register(r worker.ActivityRegistry) {
	r.RegisterActivityWithOptions(a.ResolveTargets, activity.RegisterOptions{Name: contract.ActivityResolveTargets})
	r.RegisterActivityWithOptions(a.Deliver, activity.RegisterOptions{Name: contract.ActivityDeliver})
	r.RegisterActivityWithOptions(a.RecordLostAttempt, activity.RegisterOptions{Name: contract.ActivityRecordLost})
	r.RegisterActivityWithOptions(a.RecordFailedAttempt, activity.RegisterOptions{Name: contract.ActivityRecordFailed})
	r.RegisterActivityWithOptions(a.RecoverBatch, activity.RegisterOptions{Name: contract.ActivityRecoverBatch})
}

func (a *Activities) log() logrus.FieldLogger {
	if a.Log != nil {
		return a.Log
	}
	return logrus.StandardLogger()
}

func (a *Activities) now() time.Time {
	if a.Now != nil {
		return a.Now().UTC()
	}
	return time.Now().UTC()
}

// ResolveTargets returns the endpoints an event goes to: those enabled, not deleted, subscribed to its
// type and created no later than the event (subscribed at event time), oldest first. For a re-fire or
// test (EndpointID set) it returns that endpoint whatever its state, so Deliver records why it stops.
func (a *Activities) ResolveTargets(ctx context.Context, in contract.ResolveInput) ([]contract.Target, error) {
	ev, err := a.event(ctx, in.EventID)
	if err != nil {
		return nil, err
	}
	q := a.DB.WithContext(ctx).Table("webhook_endpoints AS w").Select("w.id AS endpoint_id, w.url, w.max_attempts")
	if in.EndpointID != nil {
		q = q.Where("w.org_id = ? AND w.id = ?", ev.OrgID, *in.EndpointID)
	} else {
		q = q.Where(outbox.DeliversAtEventTime("?", "?", "?"), ev.OrgID, ev.Type, ev.CreatedAt)
	}
	targets := []contract.Target{}
	if err := q.Order(outbox.TargetOrder).Find(&targets).Error; err != nil {
		return nil, fmt.Errorf("resolve endpoints: %w", err)
	}
	// The targets go into the workflow's history, which the Temporal UI shows: no tokens in URLs.
	// Deliver reads the full URL from the database when it sends.
	for i := range targets {
		targets[i].URL = egress.RedactURL(targets[i].URL)
	}
	return targets, nil
}

type eventMeta struct {
	ID        uuid.UUID
	OrgID     uuid.UUID
	Type      string
	CreatedAt time.Time
	Size      int64
}

// event loads an event's metadata and body size, never its body.
func (a *Activities) event(ctx context.Context, id uuid.UUID) (*eventMeta, error) {
	var ev eventMeta
	err := a.DB.WithContext(ctx).Raw(`SELECT id, org_id, type, created_at, octet_length(body::text) AS size FROM events WHERE id = ?`, id).Find(&ev).Error
	if err != nil {
		return nil, fmt.Errorf("load event: %w", err)
	}
	if ev.ID == uuid.Nil {
		// Events are never deleted; a missing one is a bug no retry can fix.
		return nil, temporal.NewNonRetryableApplicationError("event "+id.String()+" not found", "event_not_found", nil)
	}
	return &ev, nil
}

// recorded returns the outcome of an attempt already in the log, if it is.
func (a *Activities) recorded(ctx context.Context, deliveryID uuid.UUID) (*contract.AttemptResult, error) {
	var rows []models.Delivery
	if err := a.DB.WithContext(ctx).Where("id = ?", deliveryID).Limit(1).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("load delivery: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return &contract.AttemptResult{Outcome: rows[0].Status, Error: rows[0].Error, ResponseStatus: rows[0].ResponseStatus}, nil
}

// write inserts the attempt's row once, keeping the endpoint's health with it: a retried task with
// the same delivery id, or a second attempt number in the same chain, changes nothing. It returns the
// outcome the log holds.
func (a *Activities) write(ctx context.Context, d *models.Delivery) (contract.AttemptResult, error) {
	inserted, err := delivery.RecordAttempt(ctx, a.DB, d)
	if err != nil {
		return contract.AttemptResult{}, err
	}
	if inserted {
		return contract.AttemptResult{Outcome: d.Status, Error: d.Error, ResponseStatus: d.ResponseStatus}, nil
	}
	got, err := a.recorded(ctx, d.ID)
	if err != nil {
		return contract.AttemptResult{}, err
	}
	if got == nil {
		// The chain already holds this attempt number under another id: that row is the attempt.
		var res contract.AttemptResult
		err := a.DB.WithContext(ctx).Raw(`SELECT status AS outcome, error, response_status FROM webhook_deliveries WHERE chain_id = ? AND attempt = ?`,
			d.ChainID, d.Attempt).Find(&res).Error
		if err != nil {
			return contract.AttemptResult{}, fmt.Errorf("load delivery: %w", err)
		}
		return res, nil
	}
	return *got, nil
}

// RecordLostAttempt writes the row of an attempt whose Deliver task failed without recording one.
// If Deliver did record it before failing, that row stands.
func (a *Activities) RecordLostAttempt(ctx context.Context, l contract.LostAttempt) (contract.AttemptResult, error) {
	ev, err := a.event(ctx, l.Attempt.EventID)
	if err != nil {
		return contract.AttemptResult{}, err
	}
	d := newRow(l.Attempt, ev, a.now())
	d.Error = truncate(l.Error, 1000)
	d.Status = failedOrDropped(l.Attempt)
	if d.Status == models.StatusDropped {
		d.NextAttemptAt = nil
	}
	return a.write(ctx, d)
}

// RecordFailedAttempt is the regular activity that follows a local attempt the receiver failed: it
// writes the attempt's row if Deliver could not (f.Result.Unrecorded), once however often Temporal
// runs it, and then fails with the attempt's outcome (contract.AttemptFailure), non-retryable, so the
// Temporal UI shows the failed attempt as a failed activity, as a local one is not. It never sends.
func (a *Activities) RecordFailedAttempt(ctx context.Context, f contract.FailedAttemptInput) (contract.AttemptResult, error) {
	res := f.Result
	if sent := res.Unrecorded; sent != nil {
		ev, err := a.event(ctx, f.Attempt.EventID)
		if err != nil {
			return contract.AttemptResult{}, err
		}
		d := newRow(f.Attempt, ev, a.now())
		d.Status, d.ResponseStatus, d.ResponseExcerpt, d.Error = sent.Status, sent.ResponseStatus, sent.ResponseExcerpt, sent.Error
		d.DurationMS, d.AttemptedAt, d.NextAttemptAt, d.Sent = sent.DurationMS, sent.AttemptedAt, sent.NextAttemptAt, sent.Headers
		if res, err = a.write(ctx, d); err != nil {
			return contract.AttemptResult{}, err
		}
		if err := a.afterDrop(ctx, f.Attempt, res); err != nil {
			return contract.AttemptResult{}, err
		}
		// Counted last, so a run that failed before does not count it twice.
		metrics.DeliveryAttempt(d.EndpointID.String(), string(d.Status), d.Status == models.StatusDropped, d.Attempt, time.Duration(d.DurationMS)*time.Millisecond)
	}
	if !res.ReceiverFailed() {
		return res, nil
	}
	return res, contract.AttemptFailure(f.Attempt, res)
}

func newRow(in contract.AttemptInput, ev *eventMeta, at time.Time) *models.Delivery {
	return &models.Delivery{ID: in.DeliveryID, OrgID: ev.OrgID, EventID: in.EventID, EndpointID: in.EndpointID,
		EventType: ev.Type, ChainID: in.ChainID, WorkflowID: in.WorkflowID, Attempt: in.Attempt,
		AttemptedAt: at, NextAttemptAt: in.NextAttemptAt}
}

// failedOrDropped is the status of a failed attempt: the last one drops the chain.
func failedOrDropped(in contract.AttemptInput) models.Status {
	if in.NextAttemptAt == nil {
		return models.StatusDropped
	}
	return models.StatusFailed
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	// Cut before a character that does not fit whole: the column is text, and PostgreSQL refuses
	// invalid UTF-8.
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
