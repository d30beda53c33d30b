package activities

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"
)

// paceWindow is the window an endpoint's rate limit counts sends in: a second, and a margin for the
// time between taking a place and the request reaching the receiver (which varies with the worker's
// load and a new connection's handshake), so that no second the receiver sees holds more than the
// limit.
const paceWindow = time.Second + 100*time.Millisecond

// minHold is the shortest a held attempt waits, so a workflow never spins on a place about to free.
const minHold = 10 * time.Millisecond

// pace takes a place for one POST to an endpoint limited to rate a second, or says how long until
// one frees. Places are the endpoint's sends of the last paceWindow, counted by the database's clock
// under the endpoint's advisory lock, so every worker process shares one count.
func pace(ctx context.Context, db *gorm.DB, endpointID uuid.UUID, rate int) (time.Duration, error) {
	var wait time.Duration
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("SELECT pg_advisory_xact_lock(hashtextextended('wds.pace:' || ?::text, 0))", endpointID).Error; err != nil {
			return fmt.Errorf("lock endpoint pace: %w", err)
		}
		var r struct {
			N      int
			WaitUS int64
		}
		// The rate-th most recent send in the window frees its place one window after it was taken.
		err := tx.Raw(`SELECT count(*) AS n, coalesce(extract(epoch FROM min(sent_at) + make_interval(secs => ?) - clock_timestamp()) * 1e6, 0)::bigint AS wait_us
			FROM (SELECT sent_at FROM webhook_endpoint_sends WHERE endpoint_id = ? AND sent_at > clock_timestamp() - make_interval(secs => ?)
				ORDER BY sent_at DESC LIMIT ?) recent`, paceWindow.Seconds(), endpointID, paceWindow.Seconds(), rate).Scan(&r).Error
		if err != nil {
			return fmt.Errorf("count recent sends: %w", err)
		}
		if r.N >= rate {
			wait = max(time.Duration(r.WaitUS)*time.Microsecond, minHold)
			return nil
		}
		return tx.Exec(`WITH gone AS (DELETE FROM webhook_endpoint_sends WHERE endpoint_id = ? AND sent_at <= clock_timestamp() - make_interval(secs => ?))
			INSERT INTO webhook_endpoint_sends (endpoint_id, sent_at) VALUES (?, clock_timestamp())`,
			endpointID, paceWindow.Seconds(), endpointID).Error
	})
	return wait, err
}
