package apikeys

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sirupsen/logrus"
)

// ChangeChannel is the PostgreSQL notification channel on which every change to a key row is
// announced with the row's key_hash in hex (migration 00022's trigger).
const ChangeChannel = "wds_key_changes"

// How the listener watches its connection. A connection can die without a word (a dropped network
// path sends no reset), so an idle listener pings; while a ping goes unanswered the cache is still
// trusted, so listenPing + pingTimeout bounds how late such a silent failure is noticed.
const (
	listenPing    = 5 * time.Second
	pingTimeout   = 2 * time.Second
	listenBackoff = time.Second // between attempts to reconnect
)

// Connect opens the listener's own connection, outside the pool: LISTEN belongs to one session.
type Connect func(ctx context.Context) (*pgx.Conn, error)

// ConnectURL connects to the database at url with pgx.
func ConnectURL(url string) Connect {
	return func(ctx context.Context) (*pgx.Conn, error) { return pgx.Connect(ctx, url) }
}

// Listen keeps the cache in step with key changes until ctx ends: it connects, LISTENs on
// ChangeChannel, clears the cache and trusts it, then drops each key a notification names. When the
// connection fails it stops trusting the cache at once (lookups go to the database), and tries
// again every second; changes made meanwhile are covered by the clearing that precedes trust.
func (c *Cache) Listen(ctx context.Context, connect Connect, log logrus.FieldLogger) {
	defer c.setLive(false)
	for {
		err := c.listenOnce(ctx, connect)
		c.setLive(false)
		if ctx.Err() != nil {
			return
		}
		log.WithError(err).Warn("key cache bypassed: the key change listener lost its database connection; reconnecting")
		select {
		case <-ctx.Done():
			return
		case <-time.After(listenBackoff):
		}
	}
}

// listenOnce runs one connection: it returns why the connection ended.
func (c *Cache) listenOnce(ctx context.Context, connect Connect) error {
	conn, err := connect(ctx)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() {
		// Bounded: a database that went away must not hold up a shutdown.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pingTimeout)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+ChangeChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	c.setLive(true)
	for {
		waitCtx, cancel := context.WithTimeout(ctx, listenPing)
		n, err := conn.WaitForNotification(waitCtx)
		cancel()
		switch {
		case err == nil:
			c.drop(n.Payload)
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			if err := ping(ctx, conn); err != nil {
				return err
			}
		default:
			return fmt.Errorf("wait for notification: %w", err)
		}
	}
}

func ping(ctx context.Context, conn *pgx.Conn) error {
	pctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	if err := conn.Ping(pctx); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	return nil
}
