package apikeys

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/sirupsen/logrus"
	"gorm.io/gorm"
)

// ChangeChannel is the PostgreSQL notification channel on which every change to a key row is
// announced with the row's key_hash in hex (migration 00022's trigger).
const ChangeChannel = "wds_key_changes"

// How the listener proves it hears. A connection can die without a word (a dropped network path
// sends no reset), and one can stay up yet hear nothing (PgBouncer in transaction mode gives LISTEN
// to a server connection the next NOTIFY never reaches). So an idle listener sends a probe through
// the pool every listenProbe, as key changes are announced, and must hear it within probeTimeout;
// until it has heard its first probe the cache is not trusted, and while a probe is on its way it
// still is, so listenProbe + probeTimeout bounds how late a listener that went deaf is noticed.
const (
	listenProbe   = 5 * time.Second
	probeTimeout  = 5 * time.Second
	listenBackoff = time.Second // between attempts to reconnect
)

// probePrefix starts a probe's payload; a key change's payload is the key's hash in hex.
const probePrefix = "probe:"

// insertPrefix marks a new key's announcement (migration 00032): a key cached under its hash is the
// very key inserted, so only the memory that no key had the hash is forgotten.
const insertPrefix = "new:"

// errDeaf is a listener that did not hear its own probe.
var errDeaf = errors.New("the listener did not hear a notification sent through the pool (is LISTEN behind a transaction-mode pooler? set WDS_LISTEN_DATABASE_URL)")

// Connect opens the listener's own connection, outside the pool: LISTEN belongs to one session.
type Connect func(ctx context.Context) (*pgx.Conn, error)

// ConnectURL connects to the database at url with pgx.
func ConnectURL(url string) Connect {
	return func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, url) }
}

// Notify announces payload on ChangeChannel through the pool, the way key changes are announced.
type Notify func(ctx context.Context, payload string) error

// NotifyDB sends notifications through db.
func NotifyDB(db *gorm.DB) Notify {
	return func(ctx context.Context, payload string) error {
		if err := db.WithContext(ctx).Exec("SELECT pg_notify(?, ?)", ChangeChannel, payload).Error; err != nil {
			return fmt.Errorf("notify: %w", err)
		}
		return nil
	}
}

// Listen keeps the cache in step with key changes until ctx ends: it connects, LISTENs on
// ChangeChannel, proves it hears what notify sends through the pool, clears the cache and trusts it,
// then drops each key a notification names. When the connection fails or goes deaf it stops
// trusting the cache at once (lookups go to the database), and tries again every second; changes
// made meanwhile are covered by the clearing that precedes trust. It logs when it starts failing and
// when it is back, not every attempt.
func (c *Cache) Listen(ctx context.Context, connect Connect, notify Notify, log logrus.FieldLogger) {
	defer c.setLive(false)
	failing := false
	for {
		err := c.listenOnce(ctx, connect, notify, func() {
			if failing {
				log.Info("key cache in use again: the key change listener hears the database")
				failing = false
			}
		})
		c.setLive(false)
		if ctx.Err() != nil {
			return
		}
		if !failing {
			log.WithError(err).Warn("key cache bypassed: the key change listener cannot hear the database; reconnecting")
			failing = true
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(listenBackoff):
		}
	}
}

// listenOnce runs one connection: it returns why the connection ended. live is called once the
// cache is trusted.
func (c *Cache) listenOnce(ctx context.Context, connect Connect, notify Notify, live func()) error {
	conn, err := connect(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() {
		// Bounded: a database that went away must not hold up a shutdown.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeTimeout)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+ChangeChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if err := c.hear(ctx, conn, notify); err != nil {
		return err
	}
	c.setLive(true)
	live()
	for {
		waitCtx, cancel := context.WithTimeout(ctx, listenProbe)
		n, err := conn.WaitForNotification(waitCtx)
		cancel()
		switch {
		case err == nil:
			c.handle(n.Payload)
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			if err := c.hear(ctx, conn, notify); err != nil {
				return err
			}
		default:
			return fmt.Errorf("wait for notification: %w", err)
		}
	}
}

// hear sends a probe through the pool and waits probeTimeout to hear it on conn, handling what else
// it hears meanwhile.
func (c *Cache) hear(ctx context.Context, conn *pgx.Conn, notify Notify) error {
	probe := probePrefix + uuid.NewString()
	if err := notify(ctx, probe); err != nil {
		return fmt.Errorf("send a probe: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	for {
		n, err := conn.WaitForNotification(wctx)
		switch {
		case err == nil && n.Payload == probe:
			return nil
		case err == nil:
			c.handle(n.Payload)
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			return errDeaf
		default:
			return fmt.Errorf("wait for the probe: %w", err)
		}
	}
}

// handle acts on one notification: a key change drops the key; another instance's probe is nothing.
func (c *Cache) handle(payload string) {
	switch {
	case strings.HasPrefix(payload, probePrefix):
	case strings.HasPrefix(payload, insertPrefix):
		c.minted(strings.TrimPrefix(payload, insertPrefix))
	default:
		c.drop(payload)
	}
}
