package webhook

import (
	"errors"
	"fmt"
	"time"
)

// The ways a delivery fails to verify; match them with errors.Is. Every one means "answer 4xx and
// do nothing": only the message differs, to tell a misconfigured receiver from an attack.
var (
	// ErrMissingHeader: no X-PC-Signature, or an empty one. The request did not come from wds, or
	// a proxy in front of the receiver dropped the header.
	ErrMissingHeader = errors.New("webhook: X-PC-Signature header is missing")
	// ErrMalformedHeader: the header does not parse; the error is a *HeaderError saying why.
	ErrMalformedHeader = errors.New("webhook: X-PC-Signature header is malformed")
	// ErrBadSignature: no v1 matches. The secret is not the endpoint's (rotated, or another
	// endpoint's), or the body is not the raw bytes received (re-serialised, decoded, trimmed).
	ErrBadSignature = errors.New("webhook: no v1 signature in X-PC-Signature matches the body and secret")
	// ErrOutsideTolerance: t is more than Tolerance from now; the error is a *TimestampError and
	// matches ErrTooOld or ErrTooNew as well.
	ErrOutsideTolerance = errors.New("webhook: X-PC-Signature timestamp is more than 300 s from now")
	// ErrTooOld: t is over 300 s in the past: a replayed delivery, or the receiver's clock is ahead.
	ErrTooOld = fmt.Errorf("%w (too old)", ErrOutsideTolerance)
	// ErrTooNew: t is over 300 s in the future: one of the two clocks is wrong.
	ErrTooNew = fmt.Errorf("%w (too new)", ErrOutsideTolerance)
)

// HeaderError is a malformed X-PC-Signature, or Standard Webhooks header; it matches
// ErrMalformedHeader.
type HeaderError struct {
	// Reason describes the header's shape only, never its values, so it is safe to log and to
	// show to the sender.
	Reason string
	// Header names the Standard Webhooks header at fault; empty for X-PC-Signature.
	Header string
}

func (e *HeaderError) Error() string {
	if e.Header != "" {
		return "webhook: " + e.Header + " header is malformed: " + e.Reason
	}
	return ErrMalformedHeader.Error() + ": " + e.Reason
}

func (e *HeaderError) Unwrap() error { return ErrMalformedHeader }

func malformed(reason string) error { return &HeaderError{Reason: reason} }

// TimestampError is a signature whose t is more than Tolerance from the verifier's clock; it
// matches ErrTooOld or ErrTooNew, and both match ErrOutsideTolerance.
type TimestampError struct {
	Timestamp int64     // t from the header, Unix seconds
	Now       time.Time // the verifier's clock
	// Header is HeaderWebhookTimestamp when the Standard Webhooks headers were verified; empty for
	// X-PC-Signature's t.
	Header string
}

func (e *TimestampError) Error() string {
	side := "before"
	if e.tooNew() {
		side = "after"
	}
	what := "X-PC-Signature t"
	if e.Header != "" {
		what = e.Header
	}
	return fmt.Sprintf("webhook: %s=%d is more than %d s %s the receiver's clock (%d)",
		what, e.Timestamp, int(Tolerance/time.Second), side, e.Now.Unix())
}

func (e *TimestampError) Unwrap() error {
	if e.tooNew() {
		return ErrTooNew
	}
	return ErrTooOld
}

func (e *TimestampError) tooNew() bool { return e.Timestamp > e.Now.Unix() }

// checkTimestamp fails when |now - t| > Tolerance, exactly, including now's sub-second part.
// It works on whole seconds in uint64 because t comes from the outside and may be near the int64
// limits, where time.Unix(t, 0) or a signed subtraction would overflow.
func checkTimestamp(t int64, now time.Time) error {
	const tol = uint64(Tolerance / time.Second)
	n := now.Unix() // now == n + now.Nanosecond() ns, with 0 <= Nanosecond < 1e9
	var out bool
	if t > n {
		out = uint64(t)-uint64(n) > tol
	} else {
		d := uint64(n) - uint64(t)
		out = d > tol || (d == tol && now.Nanosecond() > 0)
	}
	if out {
		return &TimestampError{Timestamp: t, Now: now}
	}
	return nil
}

// MissingError is a Standard Webhooks header that is absent or empty; it matches ErrMissingHeader.
type MissingError struct {
	Header string // the header's name
}

func (e *MissingError) Error() string { return "webhook: " + e.Header + " header is missing" }

func (e *MissingError) Unwrap() error { return ErrMissingHeader }
