// Manual starts queued by a process without a Temporal client (`wds admin`), started by the workers
// at once instead of by the relay after its grace.

package dispatch

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/sirupsen/logrus"
	"gorm.io/gorm"

	"wds/models"
)

// DispatchChannel is the PostgreSQL notification channel on which a queued manual start (a resend or
// re-fire) is announced by its webhook_dispatches id.
const DispatchChannel = "wds_dispatches"

// DispatchNotifier is the dispatch starter of a process without a Temporal client, the CLI: it
// announces the starts it queued, after their commit, and every worker that listens starts them at
// once (duplicate starts are rejected by workflow id), as the Operator API's after-commit start does.
// The relay leaves a row to whoever committed it for its grace; without the announcement a CLI's
// resend waited that long. A notification no worker hears leaves the row to the relay, as before.
type DispatchNotifier struct {
	DB  *gorm.DB
	Log logrus.FieldLogger
}

// StartDispatches announces the given committed starts, in one statement however many there are.
func (n DispatchNotifier) StartDispatches(ctx context.Context, dispatchIDs ...uuid.UUID) {
	if len(dispatchIDs) == 0 {
		return
	}
	ids := make([]string, len(dispatchIDs))
	for i, id := range dispatchIDs {
		ids[i] = id.String()
	}
	err := n.DB.WithContext(ctx).Exec("SELECT pg_notify(?, id) FROM unnest(?::text[]) AS id", DispatchChannel, models.TextArray(ids)).Error
	if err != nil {
		n.Log.WithError(err).Warn("resend not announced to the workers; their relay starts it within seconds")
	}
}

// listenBackoff is the wait between attempts to listen again after the connection failed.
const listenBackoff = time.Second

// ListenDispatches starts the manual starts announced on DispatchChannel until ctx ends, on its own
// connection to url (LISTEN belongs to one session), connecting again after a failure. It logs when
// it starts failing and when it hears again, not every attempt.
func ListenDispatches(ctx context.Context, url string, s *Starter, log logrus.FieldLogger) {
	failing := false
	for {
		err := listenDispatchesOnce(ctx, url, s, func() {
			if failing {
				log.Info("listening for announced resends again")
				failing = false
			}
		})
		if ctx.Err() != nil {
			return
		}
		if !failing {
			log.WithError(err).Warn("cannot listen for announced resends; the relay starts them after its grace")
			failing = true
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(listenBackoff):
		}
	}
}

// listenDispatchesOnce runs one connection and returns why it ended; listening is called once the
// LISTEN is in place.
func listenDispatchesOnce(ctx context.Context, url string, s *Starter, listening func()) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() {
		// Bounded: a database that went away must not hold up a shutdown.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+DispatchChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	listening()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("wait for notification: %w", err)
		}
		if id, err := uuid.Parse(n.Payload); err == nil {
			s.StartDispatches(ctx, id)
		}
	}
}
