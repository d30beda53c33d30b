package feed

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"time"

	"github.com/google/uuid"

	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
)

// position is a place in the feed: after every event whose (xact, at, id) comes before or at it, in
// that order. An event's own position is its transaction id, its creation time and its id. A
// position with a zero At and a nil ID stands before every event of transaction Xact: it is where a
// page that reached the horizon leaves its consumer, and start (Xact 0) is before everything.
type position struct {
	Xact uint64
	At   time.Time
	ID   uuid.UUID
	// Time is when the position was current (the event's creation, or the read that reached the
	// horizon): an iterator older than what is kept has expired.
	Time time.Time
}

// start is the position before every event.
var start = position{}

// iterator is a position as the API hands it out: JSON in base64url, opaque to consumers.
type iterator struct {
	V int    `json:"v"`
	X string `json:"x"`
	A string `json:"a,omitempty"`
	I string `json:"i,omitempty"`
	T int64  `json:"t"`
}

// iteratorVersion is the iterator's layout; another is refused as malformed.
const iteratorVersion = 1

// maxIterator bounds an iterator's length before it is decoded (one encodes in about 150 bytes).
const maxIterator = 512

// ErrIteratorExpired is an iterator from before the oldest event kept. A malformed iterator is the
// lists' paging.ErrInvalidCursor.
var ErrIteratorExpired = problem.New(problem.Gone, "iterator_expired", "the iterator is older than the events kept")

// encode is the iterator of p.
func (p position) encode() string {
	it := iterator{V: iteratorVersion, X: strconv.FormatUint(p.Xact, 10), T: p.Time.Unix()}
	if p.ID != uuid.Nil {
		it.A, it.I = p.At.UTC().Format(time.RFC3339Nano), p.ID.String()
	}
	raw, err := json.Marshal(it)
	if err != nil { // a struct of strings and integers always encodes
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(raw)
}

// parseIterator reads an iterator the feed handed out. Anything else is paging.ErrInvalidCursor.
func parseIterator(s string) (position, error) {
	bad := func(why string) (position, error) {
		return position{}, problem.Fail(paging.ErrInvalidCursor, "after is not an iterator of this feed (%s): pass the next of an earlier page unchanged", why)
	}
	if len(s) == 0 || len(s) > maxIterator {
		return bad("empty or too long")
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return bad("not base64url")
	}
	var it iterator
	if err := json.Unmarshal(raw, &it); err != nil || it.V != iteratorVersion {
		return bad("not its JSON")
	}
	p := position{Time: time.Unix(it.T, 0).UTC()}
	if p.Xact, err = strconv.ParseUint(it.X, 10, 64); err != nil {
		return bad("no transaction")
	}
	if it.A == "" && it.I == "" {
		return p, nil
	}
	if p.At, err = time.Parse(time.RFC3339Nano, it.A); err != nil || p.At.Year() < 1 || p.At.Year() > 9999 {
		return bad("no time")
	}
	if p.ID, err = uuid.Parse(it.I); err != nil || p.ID == uuid.Nil {
		return bad("no event id")
	}
	return p, nil
}
