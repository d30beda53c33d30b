package activities

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/models"
	"wds/workflows/contract"
)

// paceWindow is the window an endpoint's rate limit counts sends in: a second, and a margin for the
// time between taking a place and the request reaching the receiver (which varies with the worker's
// load and a new connection's handshake), so that no second the receiver sees holds more than the
// limit. 100 ms proved too little on a loaded 2-core machine (a request reached the receiver 111 ms
// after its place); a busy endpoint gets its limit over 1.25 s rather than ever more than it a second.
const paceWindow = time.Second + 250*time.Millisecond

// minHold is the shortest a held attempt waits, so a workflow never spins on a place about to free.
const minHold = 10 * time.Millisecond

// slotLate is how late an attempt may send in the place it reserved: the part of paceWindow beyond
// the second, which allows for exactly this delay. Later (a worker was down), it takes another.
const slotLate = paceWindow - time.Second

// pace reserves a place for one POST to an endpoint limited to rate a second: now when one is free,
// else the earliest moment one frees, which no other attempt can take; it says how long until the
// place and when it is. A held attempt then waits on a timer until its own place, once, however
// long the backlog (a reservation, not a poll). Places are the endpoint's sends of the last
// paceWindow and the places reserved after it, counted by the database's clock under the endpoint's
// advisory lock, so every worker process shares one count: the rate-th latest place frees one
// window after it, and a place there keeps every window of the limit.
func pace(ctx context.Context, db *gorm.DB, endpointID uuid.UUID, rate int) (time.Duration, time.Time, error) {
	var r struct {
		SlotAt time.Time
		WaitUS int64
	}
	err := db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("SELECT pg_advisory_xact_lock(hashtextextended('wds.pace:' || ?::text, 0))", endpointID).Error; err != nil {
			return fmt.Errorf("lock endpoint pace: %w", err)
		}
		err := tx.Raw(`WITH recent AS (SELECT sent_at FROM webhook_endpoint_sends
				WHERE endpoint_id = @ep AND sent_at > clock_timestamp() - make_interval(secs => @window)
				ORDER BY sent_at DESC LIMIT @rate),
			slot AS (SELECT CASE WHEN count(*) >= @rate THEN greatest(min(sent_at) + make_interval(secs => @window), clock_timestamp())
				ELSE clock_timestamp() END AS at FROM recent),
			gone AS (DELETE FROM webhook_endpoint_sends WHERE endpoint_id = @ep AND sent_at <= clock_timestamp() - make_interval(secs => @window))
			INSERT INTO webhook_endpoint_sends (endpoint_id, sent_at) SELECT @ep, at FROM slot
			RETURNING sent_at AS slot_at, (extract(epoch FROM sent_at - clock_timestamp()) * 1e6)::bigint AS wait_us`,
			map[string]any{"ep": endpointID, "window": paceWindow.Seconds(), "rate": rate}).Find(&r).Error
		if err != nil {
			return fmt.Errorf("reserve a place: %w", err)
		}
		return nil
	})
	if err != nil || r.WaitUS <= 0 {
		return 0, r.SlotAt, err
	}
	return max(time.Duration(r.WaitUS)*time.Microsecond, minHold), r.SlotAt, nil
}

// slotLead is how early a held attempt is asked again before its place: the wake-up's own latency
// (the timer's workflow task, the activity's start) is spent before the place rather than after it,
// and the attempt waits the rest in the activity, so it sends in its place, not late.
const slotLead = 250 * time.Millisecond

// ownSlot says how an attempt that reserved the place at slotAt stands at the database's time now:
// due within slotLead (wait that long in the activity, then send), earlier (be held until slotLead
// before it), or too late to use it (reserve again).
func ownSlot(slotAt, now time.Time) (sleep, hold time.Duration, usable bool) {
	switch late := now.Sub(slotAt); {
	case late < -slotLead:
		return 0, -late - slotLead, true
	case late < 0:
		return -late, 0, true
	case late <= slotLate:
		return 0, 0, true
	}
	return 0, 0, false
}

// heldUntil is the held outcome of an attempt whose place is wait away: asked again slotLead early.
func heldUntil(wait time.Duration, slotAt time.Time) *contract.AttemptResult {
	return &contract.AttemptResult{Outcome: models.StatusHeld, Wait: max(wait-slotLead, minHold), SlotAt: &slotAt}
}
