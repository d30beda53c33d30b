package ingest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/platform/problem"
)

// Idempotency-Key rules (docs/integration-api.md).
const (
	// IdempotencyTTL is how long a key replays its first answer.
	IdempotencyTTL = 24 * time.Hour
	// MaxIdempotencyKeyLen is the longest accepted key, in characters.
	MaxIdempotencyKeyLen = 255
	// idempotencyWait bounds how long a request waits for another one executing with its key.
	idempotencyWait = 10 * time.Second
	// abandonedAfter is when a claim whose request never finished (the process died mid-request) may
	// be taken over; no request runs that long.
	abandonedAfter = time.Minute
	// purgeBatch is how many expired entries a claim deletes on its way.
	purgeBatch = 10
)

// Replay is a stored answer.
type Replay struct {
	Status int
	Body   []byte
}

// Claim is the right to execute a request under an Idempotency-Key. Exactly one of Replay and Claim
// is set by ClaimIdempotency. While a claim executes, its row has no status and response_body holds
// the claim's token; Finish and Release match on it, so a request that outlived abandonedAfter
// cannot touch an entry another request took over.
type Claim struct {
	db    *gorm.DB
	keyID uuid.UUID
	key   string
	token uuid.UUID // identifies this claim so a late finisher cannot overwrite a takeover
}

// RequestIdentity is what an Idempotency-Key is bound to: method, path (with its ids) and the raw
// body bytes (docs/integration-api.md hashes the body; Stripe also refuses a key reused on another endpoint).
func RequestIdentity(method, path string, body []byte) []byte {
	id := make([]byte, 0, len(method)+len(path)+2+len(body))
	id = append(append(append(append(id, method...), ' '), path...), '\n')
	return append(id, body...)
}

// CheckIdempotencyKey validates the header value: 1 to 255 characters of UTF-8 text.
func CheckIdempotencyKey(key string) error {
	if key == "" || !Storable(key) || utf8.RuneCountInString(key) > MaxIdempotencyKeyLen {
		return problem.Fail(ErrInvalidIdempotencyKey, "Idempotency-Key must be 1 to %d characters", MaxIdempotencyKeyLen)
	}
	return nil
}

// ClaimIdempotency starts a request under key for the integration key keyID. The first request (or
// the first after the entry expired) gets a Claim and must execute, then Finish or Release it.
// request is what identifies the call: its method, path and raw body (RequestIdentity). The same
// request gets the stored answer; a different one, idempotency_conflict, so a key reused for another
// order's cancel or another endpoint is refused rather than answered with the first call's reply. A
// request arriving while the first still executes waits for it (up to 10 s) and replays its answer,
// so two requests with one key never both execute. The unique (integration key, key) row decides who
// is first.
func (s *Service) ClaimIdempotency(ctx context.Context, keyID uuid.UUID, key string, request []byte, now func() time.Time) (*Claim, *Replay, error) {
	sum := sha256.Sum256(request)
	deadline := now().Add(idempotencyWait)
	for pause := 20 * time.Millisecond; ; pause = min(2*pause, 250*time.Millisecond) {
		c, r, err := tryClaim(ctx, s.db, keyID, key, sum[:], now())
		if err != nil || c != nil || r != nil {
			return c, r, err
		}
		if !now().Before(deadline) {
			return nil, nil, problem.Fail(ErrIdempotencyConflict,
				"a request with this Idempotency-Key is still in progress; retry later")
		}
		select {
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("wait for idempotent request: %w", ctx.Err())
		case <-time.After(pause):
		}
	}
}

// tryClaim makes one attempt: claim, replay, conflict, or (nil, nil, nil) while another request runs.
func tryClaim(ctx context.Context, db *gorm.DB, keyID uuid.UUID, key string, sum []byte, now time.Time) (*Claim, *Replay, error) {
	token := uuid.New()
	var won []uuid.UUID
	// The purge CTE deletes a few expired entries of any key in the same round trip: each claim adds at
	// most one row and removes up to purgeBatch, so the table stays near one day of traffic without a
	// separate cleaner. It skips this request's own entry, which the upsert below may reuse.
	err := db.WithContext(ctx).Raw(`WITH purge AS (
			DELETE FROM idempotency_keys WHERE ctid = ANY(ARRAY(
				SELECT ctid FROM idempotency_keys
				WHERE expires_at <= ? AND NOT (integration_key_id = ? AND key = ?)
				ORDER BY expires_at LIMIT ? FOR UPDATE SKIP LOCKED)))
		INSERT INTO idempotency_keys AS k
		(integration_key_id, key, body_sha256, response_body, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (integration_key_id, key) DO UPDATE
		SET body_sha256 = excluded.body_sha256, status = NULL, response_body = excluded.response_body,
			created_at = excluded.created_at, expires_at = excluded.expires_at
		WHERE k.expires_at <= ? OR (k.status IS NULL AND k.created_at <= ?)
		RETURNING integration_key_id`,
		now, keyID, key, purgeBatch,
		keyID, key, sum, token[:], now, now.Add(IdempotencyTTL), now, now.Add(-abandonedAfter)).Find(&won).Error
	if err != nil {
		return nil, nil, fmt.Errorf("claim idempotency key: %w", err)
	}
	if len(won) == 1 {
		return &Claim{db: db, keyID: keyID, key: key, token: token}, nil, nil
	}
	var rows []struct {
		BodySha256   []byte
		Status       *int
		ResponseBody []byte
	}
	err = db.WithContext(ctx).Raw(`SELECT body_sha256, status, response_body FROM idempotency_keys
		WHERE integration_key_id = ? AND key = ?`, keyID, key).Find(&rows).Error
	if err != nil {
		return nil, nil, fmt.Errorf("read idempotency key: %w", err)
	}
	switch {
	case len(rows) == 0:
		return nil, nil, nil // released between our two statements: try again
	case string(rows[0].BodySha256) != string(sum):
		return nil, nil, problem.Fail(ErrIdempotencyConflict,
			"this Idempotency-Key was used for a different request (method, path or body) in the last 24 hours")
	case rows[0].Status == nil:
		return nil, nil, nil
	default:
		return nil, &Replay{Status: *rows[0].Status, Body: rows[0].ResponseBody}, nil
	}
}

// Finish stores the answer to replay for the rest of the entry's 24 hours.
func (c *Claim) Finish(ctx context.Context, status int, body []byte) error {
	err := c.db.WithContext(ctx).Exec(`UPDATE idempotency_keys SET status = ?, response_body = ?
		WHERE integration_key_id = ? AND key = ? AND status IS NULL AND response_body = ?`,
		status, body, c.keyID, c.key, c.token[:]).Error
	if err != nil {
		return fmt.Errorf("store idempotent response: %w", err)
	}
	return nil
}

// Release forgets the claim: the request ended before executing (or must not be replayed), so the
// next request with the key executes afresh.
func (c *Claim) Release(ctx context.Context) error {
	err := c.db.WithContext(ctx).Exec(`DELETE FROM idempotency_keys
		WHERE integration_key_id = ? AND key = ? AND status IS NULL AND response_body = ?`,
		c.keyID, c.key, c.token[:]).Error
	if err != nil {
		return fmt.Errorf("release idempotency key: %w", err)
	}
	return nil
}
