package apikeys

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"
	"gorm.io/gorm"
)

// FlushInterval bounds how stale last_used_at may be (docs/integration-api.md allows 5 s).
const FlushInterval = 2 * time.Second

// LastUsed batches last_used_at writes so authentication costs no database write per request.
type LastUsed struct {
	db  *gorm.DB
	log logrus.FieldLogger

	mu      sync.Mutex
	pending map[string]map[uuid.UUID]time.Time // table -> key id -> last use
}

// NewLastUsed returns a batcher; run Run in a goroutine.
func NewLastUsed(db *gorm.DB, log logrus.FieldLogger) *LastUsed {
	return &LastUsed{db: db, log: log, pending: map[string]map[uuid.UUID]time.Time{}}
}

// Tables whose keys the batcher touches.
const (
	ReadKeysTable        = "read_keys"
	IntegrationKeysTable = "integration_keys"
)

// Touch records a use of key id in table.
func (l *LastUsed) Touch(table string, id uuid.UUID, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := l.pending[table]
	if m == nil {
		m = map[uuid.UUID]time.Time{}
		l.pending[table] = m
	}
	m[id] = at
}

// Run flushes every FlushInterval until ctx ends, then flushes once more.
func (l *LastUsed) Run(ctx context.Context) {
	t := time.NewTicker(FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			l.Flush(context.WithoutCancel(ctx))
			return
		case <-t.C:
			l.Flush(ctx)
		}
	}
}

// Flush writes pending uses, one statement per table.
func (l *LastUsed) Flush(ctx context.Context) {
	l.mu.Lock()
	batch := l.pending
	l.pending = map[string]map[uuid.UUID]time.Time{}
	l.mu.Unlock()
	for table, uses := range batch {
		values := make([]string, 0, len(uses))
		args := make([]any, 0, 2*len(uses))
		for id, at := range uses {
			values = append(values, "(?::uuid, ?::timestamptz)")
			args = append(args, id, at)
		}
		// table is one of two constants above, never outside input.
		err := l.db.WithContext(ctx).Exec(`UPDATE `+table+` k SET last_used_at = u.at
			FROM (VALUES `+strings.Join(values, ", ")+`) AS u(id, at)
			WHERE k.id = u.id AND (k.last_used_at IS NULL OR k.last_used_at < u.at)`, args...).Error
		if err != nil {
			l.log.WithError(err).Warn("could not record key last_used_at")
		}
	}
}
