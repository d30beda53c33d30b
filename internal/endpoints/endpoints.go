// Package endpoints is the operator's side of webhooks, which the Operator API, the console and
// `wds admin` all call: endpoint management (endpoints.go) and `wds listen`'s leases (lease.go).
// The support desk's other rooms are their own packages: the delivery log (deliverylog), the event
// search (eventsearch), re-fires, resends and test events (resend) and recoveries (recovery); the
// delivery engine's writes are package delivery's.
package endpoints

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"wds/internal/delivery"
	"wds/internal/events"
	"wds/internal/outbox"
	"wds/internal/platform/durations"
	"wds/internal/platform/egress"
	"wds/internal/platform/problem"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
	"wds/models"
)

// Limits of docs/webhooks.md.
const (
	MaxEnabledPerOrg   = 10
	DefaultMaxAttempts = 5
	maxURLLength       = 2048
)

// Service runs the endpoint and delivery operations over DB; Box seals and opens endpoint secrets
// and headers (nil: the operations that need it fail).
type Service struct {
	DB  *gorm.DB
	Box *secrets.Box
	Options
}

// Options are the rest of a Service's settings and the stopper it hands what it commits to. The
// zero Options are the strict rule with no stopper: the database-only CLI's.
type Options struct {
	// AllowPrivate accepts endpoint URLs that resolve to non-public addresses (WDS_WEBHOOK_ALLOW_PRIVATE).
	AllowPrivate bool
	// Resolver answers the addresses of endpoint hosts (nil: net.DefaultResolver); the worker's
	// client should resolve with the same one (egress.Options.Resolver).
	Resolver egress.Resolver
	// Stopper tells running chains of a disabled or deleted endpoint to stop now; nil leaves them to
	// stop at their next due time (the database-only CLI).
	Stopper ChainStopper
}

// NewService is the operations over db, sealing with box.
func NewService(db *gorm.DB, box *secrets.Box, o Options) *Service {
	return &Service{DB: db, Box: box, Options: o}
}

// ChainStopper signals the workflows of stopped chains after the change is committed.
type ChainStopper interface {
	StopChains(ctx context.Context, endpointID uuid.UUID, workflowIDs []string)
}

// CreateInput is an endpoint registration. MaxAttempts 0 means the default.
type CreateInput struct {
	OrgID       uuid.UUID
	ActorID     uuid.UUID
	URL         string
	EventTypes  []string
	MaxAttempts int
	// RateLimit is the most POSTs a second (1..MaxRateLimit); nil is none.
	RateLimit *int
	// Headers are sent on every attempt; nil is none.
	Headers map[string]string
	// Description says what the endpoint is for; "" is none.
	Description string
}

// Created is a new endpoint and its signing secret, shown only here.
type Created struct {
	models.Endpoint
	Secret string `json:"secret"`
}

// Create registers an endpoint. The ten-enabled limit is settled under a lock on the org row, so
// concurrent creates cannot both see nine.
func (s *Service) Create(ctx context.Context, in CreateInput) (*Created, error) {
	// The role comes first: a member learns that they may not, not what is wrong with their input
	// (nor, through url_not_allowed, what a host resolves to).
	if err := workspace.RequireRole(ctx, s.DB, in.OrgID, in.ActorID, workspace.Managers...); err != nil {
		return nil, err
	}
	if in.MaxAttempts == 0 {
		in.MaxAttempts = DefaultMaxAttempts
	}
	if in.MaxAttempts < 1 || in.MaxAttempts > 10 {
		return nil, problem.Fail(problem.Invalid, "max_attempts must be from 1 to 10")
	}
	if err := validRateLimit(in.RateLimit); err != nil {
		return nil, err
	}
	headers, err := validHeaders(in.Headers)
	if err != nil {
		return nil, err
	}
	description, err := validDescription(in.Description)
	if err != nil {
		return nil, err
	}
	types, err := validTypes(in.EventTypes)
	if err != nil {
		return nil, err
	}
	u, err := s.checkURL(ctx, in.URL)
	if err != nil {
		return nil, err
	}
	secret, err := secrets.NewSigningSecret()
	if err != nil {
		return nil, err
	}
	sealed, err := s.Box.Seal([]byte(secret))
	if err != nil {
		return nil, fmt.Errorf("seal endpoint secret: %w", err)
	}
	names, headersSealed, err := models.SealHeaders(s.Box, headers)
	if err != nil {
		return nil, err
	}
	ep := models.Endpoint{ID: uuid.New(), OrgID: in.OrgID, URL: u, Description: description, EventTypes: types, SecretSealed: sealed,
		Enabled: true, MaxAttempts: in.MaxAttempts, RateLimit: in.RateLimit, Headers: names, HeadersSealed: headersSealed,
		CreatedBy: in.ActorID, Health: &models.EndpointHealth{}}
	err = s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := roomForOneMore(ctx, tx, in.OrgID, uuid.Nil); err != nil {
			return err
		}
		// Taken last before the insert (created_at is clock_timestamp()): events written meanwhile wait
		// for the commit, and see the endpoint.
		if err := tx.Exec("SELECT "+outbox.EndpointsLock("?::uuid", false), in.OrgID).Error; err != nil {
			return fmt.Errorf("lock endpoints: %w", err)
		}
		if err := tx.Create(&ep).Error; err != nil {
			return fmt.Errorf("create endpoint: %w", err)
		}
		return workspace.Audit(ctx, tx, models.AuditEntry{OrgID: in.OrgID, ActorID: in.ActorID,
			Action: "webhook_endpoint.create", TargetType: "webhook_endpoint", TargetID: ep.ID,
			Details: map[string]any{"url": egress.RedactURL(ep.URL), "event_types": []string(types), "max_attempts": ep.MaxAttempts,
				"rate_limit": ep.RateLimit, "header_names": headerNames(headers), "description": description}})
	})
	if err != nil {
		return nil, err
	}
	ep.Headers = headers // the creator manages the endpoint: the answer shows what was set
	return &Created{Endpoint: ep, Secret: secret}, nil
}

// roomForOneMore locks the org row, deletes its endpoints whose lease has ended (lease.go), so one
// never takes a slot nor stays enabled beside the endpoint that takes it, then counts its enabled
// endpoints other than except. When except itself was on an ended lease it is gone: not found.
func roomForOneMore(ctx context.Context, tx *gorm.DB, orgID, except uuid.UUID) error {
	var org models.Org
	err := tx.WithContext(ctx).Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ?", orgID).Take(&org).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return problem.Fail(problem.NotFound, "org %s not found", orgID)
	}
	if err != nil {
		return fmt.Errorf("lock org: %w", err)
	}
	ended, err := expireLeases(ctx, tx, orgID)
	if err != nil {
		return err
	}
	if slices.Contains(ended, except) {
		return problem.Fail(problem.NotFound, "endpoint %s not found (its lease ended)", except)
	}
	var n int64
	err = tx.WithContext(ctx).Model(&models.Endpoint{}).
		Where("org_id = ? AND enabled AND deleted_at IS NULL AND id <> ?", orgID, except).Count(&n).Error
	if err != nil {
		return fmt.Errorf("count endpoints: %w", err)
	}
	if n >= MaxEnabledPerOrg {
		return problem.Fail(ErrEndpointLimit, "org already has %d enabled endpoints; disable or delete one first", n)
	}
	return nil
}

// MaxDescription is the most characters an endpoint's description holds.
const MaxDescription = 200

// validDescription trims a description: blank is none (nil); longer than MaxDescription characters,
// or holding a control character (a line break, an escape), it is refused.
func validDescription(in string) (*string, error) {
	d := strings.TrimSpace(in)
	switch {
	case d == "":
		return nil, nil
	case utf8.RuneCountInString(d) > MaxDescription:
		return nil, problem.Fail(problem.Invalid, "description: at most %d characters, not %d", MaxDescription, utf8.RuneCountInString(d))
	case !utf8.ValidString(d) || strings.IndexFunc(d, unicode.IsControl) >= 0:
		return nil, problem.Fail(problem.Invalid, "description: one line of text, without control characters")
	}
	return &d, nil
}

func validTypes(in []string) (models.TextArray, error) {
	if len(in) == 0 {
		return nil, problem.Fail(problem.Invalid, "event_types must name at least one event type")
	}
	out := models.TextArray{}
	for _, t := range in {
		t = strings.TrimSpace(t)
		if !events.Known(t) {
			return nil, problem.Fail(problem.Invalid, "event_types: unknown event type %q; known: %s", t, events.Names())
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// checkURL applies the address rules: https only, a host, no credentials, and (unless private
// addresses are allowed) a host that resolves only to public addresses. The worker checks again at
// every connection, because DNS answers change.
func (s *Service) checkURL(ctx context.Context, raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if len(raw) > maxURLLength {
		return "", problem.Fail(problem.Invalid, "url is longer than %d characters", maxURLLength)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		if u != nil && u.Scheme != "" && !strings.EqualFold(u.Scheme, "https") {
			return "", problem.Fail(ErrHTTPSRequired, "url must start with https://")
		}
		return "", problem.Fail(problem.Invalid, "url must be an absolute https:// URL")
	}
	if !strings.EqualFold(u.Scheme, "https") {
		return "", problem.Fail(ErrHTTPSRequired, "url must start with https://, not %s://", u.Scheme)
	}
	if u.User != nil {
		return "", problem.Fail(problem.Invalid, "url must not carry credentials; authenticate deliveries with the signature")
	}
	u.Scheme = "https"
	if u.Fragment != "" {
		return "", problem.Fail(problem.Invalid, "url must not have a #fragment")
	}
	if s.AllowPrivate {
		return u.String(), nil
	}
	if err := egress.CheckHost(ctx, s.Resolver, u.Hostname()); err != nil {
		if errors.Is(err, egress.ErrAddressNotAllowed) {
			return "", problem.Fail(ErrURLNotAllowed, "url host %s resolves to a non-public address", u.Hostname())
		}
		return "", problem.Fail(ErrURLNotAllowed, "url host %s does not resolve", u.Hostname())
	}
	return u.String(), nil
}

// List returns the org's endpoints (not deleted), newest first. A nil actor is the database's own
// operator (`wds admin`), who may read anything; an actor must be a member of the org. Header values
// are shown to owners and admins only (showHeaders); the database's operator gets the names alone.
func (s *Service) List(ctx context.Context, orgID uuid.UUID, actorID *uuid.UUID) ([]models.Endpoint, error) {
	manager := false
	if actorID != nil {
		role, err := workspace.RoleOf(ctx, s.DB, orgID, *actorID)
		if err != nil {
			return nil, err
		}
		manager = slices.Contains(workspace.Managers, role)
	}
	rows := []models.Endpoint{}
	err := s.DB.WithContext(ctx).Where("org_id = ? AND deleted_at IS NULL", orgID).
		Order("created_at DESC, id DESC").Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("list endpoints: %w", err)
	}
	views := make([]*models.Endpoint, len(rows))
	for i := range rows {
		views[i] = &rows[i]
	}
	if err := delivery.FillHealth(ctx, s.DB, views...); err != nil {
		return nil, err
	}
	s.showHeaders(manager, views...)
	return rows, nil
}

// Disable stops deliveries to an endpoint, including the pending chains of earlier events.
func (s *Service) Disable(ctx context.Context, id, actorID uuid.UUID) (*models.Endpoint, error) {
	return s.stop(ctx, id, actorID, "webhook_endpoint.disable", models.ReasonEndpointDisabled, func(ep *models.Endpoint) map[string]any {
		ep.Enabled, ep.DisabledReason = false, ptr(models.DisabledManual)
		return map[string]any{"enabled": false, "disabled_reason": models.DisabledManual}
	})
}

// stop turns an endpoint off with the changes turnOff makes (and returns as columns), drops its
// pending chains in the same transaction and, once that is committed, signals their workflows.
func (s *Service) stop(ctx context.Context, id, actorID uuid.UUID, action, reason string,
	turnOff func(*models.Endpoint) map[string]any) (*models.Endpoint, error) {
	var chains []string
	ep, err := s.mutate(ctx, id, actorID, action, func(tx *gorm.DB, ep *models.Endpoint) (map[string]any, error) {
		if err := tx.Model(ep).Updates(turnOff(ep)).Error; err != nil {
			return nil, fmt.Errorf("%s: %w", action, err)
		}
		var err error
		chains, err = delivery.DropPendingChains(ctx, tx, ep.ID, reason)
		return nil, err
	})
	if err != nil {
		return nil, err
	}
	s.stopChains(ctx, ep.ID, chains)
	return ep, nil
}

// stopChains signals the workflows whose chains the committed change dropped.
func (s *Service) stopChains(ctx context.Context, endpointID uuid.UUID, workflowIDs []string) {
	if s.Stopper != nil && len(workflowIDs) > 0 {
		s.Stopper.StopChains(ctx, endpointID, workflowIDs)
	}
}

// Enable resumes deliveries for events fired from now on, within the ten-enabled limit, and starts
// the endpoint's health afresh: the failures before it no longer count towards auto-disable.
func (s *Service) Enable(ctx context.Context, id, actorID uuid.UUID) (*models.Endpoint, error) {
	return s.mutate(ctx, id, actorID, "webhook_endpoint.enable", func(tx *gorm.DB, ep *models.Endpoint) (map[string]any, error) {
		if ep.Enabled {
			return nil, nil
		}
		if err := roomForOneMore(ctx, tx, ep.OrgID, ep.ID); err != nil {
			return nil, err
		}
		var reset time.Time
		err := tx.Raw(`UPDATE webhook_endpoints SET enabled = true, disabled_reason = NULL, `+delivery.ResetHealthSQL+`
			WHERE id = ? RETURNING health_reset_at`, ep.ID).Row().Scan(&reset)
		if err != nil {
			return nil, fmt.Errorf("enable endpoint: %w", err)
		}
		ep.Enabled, ep.DisabledReason, ep.HealthResetAt = true, nil, &reset
		ep.FailingSince, ep.ConsecutiveDropped = nil, 0
		return nil, nil
	})
}

// Delete removes an endpoint (softly: its delivery log stays) and stops its pending chains.
func (s *Service) Delete(ctx context.Context, id, actorID uuid.UUID) (*models.Endpoint, error) {
	return s.stop(ctx, id, actorID, "webhook_endpoint.delete", models.ReasonEndpointDeleted, func(ep *models.Endpoint) map[string]any {
		now := time.Now().UTC()
		ep.Enabled, ep.DeletedAt = false, &now
		return map[string]any{"enabled": false, "deleted_at": now}
	})
}

// Rotated is an endpoint's new secret, shown only here.
type Rotated struct {
	ID     uuid.UUID `json:"id"`
	Secret string    `json:"secret"`
}

// MaxRotationGrace is the longest a rotated-out secret may go on signing.
const MaxRotationGrace = 7 * 24 * time.Hour

// RotateSecret replaces the signing secret; every attempt from now on, including retries of earlier
// events, signs with the new one. Without a grace old signatures stop verifying at once, as the
// contract says; with one (up to MaxRotationGrace) deliveries also carry a v1= for the old secret
// until it ends, so receivers can switch without failed verifications, as Stripe and Svix allow.
func (s *Service) RotateSecret(ctx context.Context, id, actorID uuid.UUID, grace time.Duration) (*Rotated, error) {
	secret, err := secrets.NewSigningSecret()
	if err != nil {
		return nil, err
	}
	sealed, err := s.Box.Seal([]byte(secret))
	if err != nil {
		return nil, fmt.Errorf("seal endpoint secret: %w", err)
	}
	_, err = s.mutate(ctx, id, actorID, "webhook_endpoint.rotate_secret", func(tx *gorm.DB, ep *models.Endpoint) (map[string]any, error) {
		if grace < 0 || grace > MaxRotationGrace {
			return nil, problem.Fail(problem.Invalid, "the grace period must be from 0 to %s", durations.Text(MaxRotationGrace))
		}
		// With a grace the current secret goes on signing beside the new one until it ends.
		err := tx.Exec(`UPDATE webhook_endpoints SET
			previous_secret_sealed = CASE WHEN ?::bigint > 0 THEN secret_sealed END,
			previous_secret_until = CASE WHEN ?::bigint > 0 THEN clock_timestamp() + ?::bigint * interval '1 second' END,
			secret_sealed = ? WHERE id = ?`, int64(grace.Seconds()), int64(grace.Seconds()), int64(grace.Seconds()), sealed, ep.ID).Error
		if err != nil {
			return nil, fmt.Errorf("rotate secret: %w", err)
		}
		return map[string]any{"grace_seconds": int64(grace.Seconds())}, nil
	})
	if err != nil {
		return nil, err
	}
	return &Rotated{ID: id, Secret: secret}, nil
}

// mutate loads a live endpoint under a row lock, checks the actor may manage its org, applies change
// and writes the audit row, all in one transaction. To an actor outside its org the endpoint does
// not exist: 404 naming only the id asked for, never its org.
func (s *Service) mutate(ctx context.Context, id, actorID uuid.UUID, action string,
	change func(tx *gorm.DB, ep *models.Endpoint) (map[string]any, error)) (*models.Endpoint, error) {
	var ep models.Endpoint
	err := s.DB.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("id = ? AND deleted_at IS NULL", id).Take(&ep).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return problem.Fail(problem.NotFound, "endpoint %s not found", id)
		}
		if err != nil {
			return fmt.Errorf("load endpoint: %w", err)
		}
		if err := workspace.RequireRowRole(ctx, tx, ep.OrgID, actorID, "endpoint", id, workspace.Managers...); err != nil {
			return err
		}
		details, err := change(tx, &ep)
		if err != nil {
			return err
		}
		return workspace.Audit(ctx, tx, models.AuditEntry{OrgID: ep.OrgID, ActorID: actorID, Action: action,
			TargetType: "webhook_endpoint", TargetID: ep.ID, Details: details})
	})
	if err != nil {
		return nil, err
	}
	if err := delivery.FillHealth(ctx, s.DB, &ep); err != nil {
		return nil, err
	}
	s.showHeaders(true, &ep) // the actor manages the endpoint (checked above)
	return &ep, nil
}

func ptr[T any](v T) *T { return &v }
