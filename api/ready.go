package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"gorm.io/gorm"

	"wds/internal/platform/problem"
	"wds/migrations"
)

// readyTimeout bounds the readiness checks: a load balancer's probe must get an answer, and a
// database slower than this is not one to send traffic to.
const readyTimeout = 2 * time.Second

// Readiness reports whether the database answers and its schema is the one this binary expects; a
// failure wraps ErrNotReady with a detail that names no host or user.
type Readiness interface {
	Ready(ctx context.Context) error
}

// schemaReadiness is Readiness over the database.
type schemaReadiness struct{ db *gorm.DB }

// Ready pings the database and compares its schema version with this binary's migrations.
func (r schemaReadiness) Ready(ctx context.Context) error {
	sqlDB, err := r.db.DB()
	if err != nil {
		return problem.Fail(ErrNotReady, "database unavailable")
	}
	if err := sqlDB.PingContext(ctx); err != nil {
		return &notReady{detail: "database unreachable", cause: err}
	}
	pending, err := migrations.Pending(ctx, sqlDB)
	if err != nil {
		return &notReady{detail: "cannot read the schema version", cause: err}
	}
	if pending {
		return problem.Fail(ErrNotReady, "database schema is older than this binary: run `wds migrate up`")
	}
	return nil
}

// ready answers whether this instance can serve: the database answers and its schema is the one this
// binary expects (a rolling deploy that ran ahead of `wds migrate up` reports not ready instead of
// failing requests). Liveness stays /v1/health, which never touches the database, so a database
// outage takes instances out of rotation without getting them restarted.
func (s *server) ready(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), readyTimeout)
	defer cancel()
	if err := s.Readiness.Ready(ctx); err != nil {
		_ = c.Error(err) // the cause goes to the request log; the answer names only what is wrong
		fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"ok": true})
}

// notReady keeps the cause for the log while the caller sees only the detail (a driver error can
// name hosts and users).
type notReady struct {
	detail string
	cause  error
}

func (e *notReady) Error() string { return e.detail + ": " + e.cause.Error() }
func (e *notReady) Unwrap() []error {
	return []error{problem.Fail(ErrNotReady, "%s", e.detail), e.cause}
}
