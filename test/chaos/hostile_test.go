package chaos

import (
	"regexp"
	"testing"
	"time"
)

// hostile is a receiver that never accepts, and what the delivery log must say of each attempt.
type hostile struct {
	path      string
	behaviour behaviour
	status    *int           // the response status recorded, nil when there was no answer
	error     *regexp.Regexp // matches the recorded error
}

func TestHostileReceiversEndEachAttemptAndTheLadderGoesOn(t *testing.T) {
	s := newSystem(t, 0)
	s.startWorker()
	found, ok := 302, 200
	cases := []hostile{
		{path: "/hang", behaviour: hangPastLimit, error: regexp.MustCompile(`^timeout`)},
		{path: "/redirect", behaviour: redirect, status: &found, error: regexp.MustCompile(`^HTTP 302$`)},
		{path: "/trickle", behaviour: trickleBody, status: &ok, error: regexp.MustCompile(`^reading response: timeout`)},
		// A reset before any answer reads as the connection reset, or as EOF when TLS saw it first.
		{path: "/reset", behaviour: resetConnection, error: regexp.MustCompile(`reset by peer|EOF`)},
	}
	for _, c := range cases {
		s.endpoint(c.path, c.behaviour, 2)
	}
	// Beside them, receivers that do accept: one at once, one whose 200 comes with an endless body.
	s.endpoint(mainPath, answerOK, 5)
	s.endpoint("/endless", endlessBody, 2)
	s.rcv.add(followedPath, answerOK)
	d := dur(8*time.Second, 20*time.Second)
	l := underLoad(newLoad(s), func() { time.Sleep(d) })
	r := s.settle(t, l, "hostile receivers: hang past 10 s, 302, a body trickling 1 byte/s, a connection reset "+
		"(each attempt failed, then dropped on the ladder), beside a 200 with an endless body (succeeded)",
		loadOf(d), mainPath, "/endless")
	// How near the machine came to the 10 s limit: the slowest attempt to the receiver that answers
	// at once (a TLS handshake, a POST and its 200 on loopback).
	var slowest int64
	s.db.Raw("SELECT coalesce(max(duration_ms), 0) FROM webhook_deliveries WHERE endpoint_id::text = ?",
		s.rcv.endpointID(mainPath)).Scan(&slowest)
	t.Logf("the slowest attempt to %s took %d ms", mainPath, slowest)
	for _, c := range cases {
		s.checkLadder(t, c, r.Written)
	}
	if n := s.rcv.posts(followedPath); n != 0 {
		t.Errorf("%d redirects were followed", n)
	}
	var longestExcerpt int
	s.db.Raw("SELECT coalesce(max(octet_length(response_excerpt)), 0) FROM webhook_deliveries").Scan(&longestExcerpt)
	if longestExcerpt > 64<<10 {
		t.Errorf("a response excerpt of %d bytes was kept, over the 64 KiB read", longestExcerpt)
	}
}

// checkLadder reads the path's delivery log: for every event, attempt 1 failed with the expected
// error and a next attempt, attempt 2 came on the ladder's schedule and was dropped, and no attempt
// outlived the 10 s limit by more than the time to record it.
func (s *system) checkLadder(t *testing.T, c hostile, events int) {
	t.Helper()
	var rows []struct {
		EventID        string
		Attempt        int
		Status         string
		ResponseStatus *int
		Error          string
		DurationMS     int64
		AttemptedAt    time.Time
		NextAttemptAt  *time.Time
	}
	if err := s.db.Raw(`SELECT event_id::text AS event_id, attempt, status, response_status, error, duration_ms,
		attempted_at, next_attempt_at FROM webhook_deliveries WHERE endpoint_id::text = ? ORDER BY event_id, attempt`,
		s.rcv.endpointID(c.path)).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2*events {
		t.Errorf("%s: %d attempts logged for %d events, want 2 each", c.path, len(rows), events)
		for i, r := range rows {
			if i < 6 || (r.Attempt == 1 && (i+1 == len(rows) || rows[i+1].Attempt != 2)) {
				t.Logf("%+v", r)
			}
		}
		return
	}
	for i := 0; i < len(rows); i += 2 {
		first, second := rows[i], rows[i+1]
		want := first.Attempt == 1 && first.Status == "failed" && first.NextAttemptAt != nil &&
			second.Attempt == 2 && second.Status == "dropped" && second.NextAttemptAt == nil &&
			!second.AttemptedAt.Before(first.NextAttemptAt.Add(-100*time.Millisecond))
		if !want {
			t.Errorf("%s: event %s's ladder: %+v then %+v", c.path, first.EventID, first, second)
			return
		}
		for _, r := range []int{i, i + 1} {
			row := rows[r]
			if !c.error.MatchString(row.Error) || (c.status == nil) != (row.ResponseStatus == nil) ||
				(c.status != nil && *c.status != *row.ResponseStatus) || row.DurationMS > 11_000 {
				t.Errorf("%s: attempt %d ended %q (status %v) after %d ms, want %q", c.path, row.Attempt, row.Error,
					row.ResponseStatus, row.DurationMS, c.error)
				return
			}
		}
	}
}
