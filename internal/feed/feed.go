// Package feed is the event feed: an org's events over the Read API, in the order they became
// visible, with no gaps (docs/read-api.md, "The event feed").
//
// Every event records the transaction that wrote it (events.xact_id). A page hands out only events
// of transactions below its statement's horizon, the oldest transaction still running
// (pg_snapshot_xmin): every transaction below it has committed or rolled back, and the statement's
// snapshot sees all those that committed. So the set of events before the horizon is final when a
// page reads it, and a consumer whose position is before the horizon can never have an event appear
// behind it later. Within the horizon the order is the transactions' (xact_id), then each event's
// time and id. A transaction left open holds the horizon, and so the feed, back until it ends; it
// never loses anything from it.
package feed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/events"
	"wds/internal/outbox"
	"wds/internal/platform/database"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/models"
)

// MaxPage bounds a page's rows by size, as every list's (paging.MaxPageBytes): a page ends before the
// row that would take it past 4 MB of JSON (its first row is always returned, whatever its size).
const MaxPage = paging.MaxPageBytes

// summarySize is what a summarized row (outbox.Summary) counts for against MaxPage: more than any
// summary takes.
const summarySize = 1024

// TransactionSkew is the longest a wds transaction that writes events runs between taking its
// transaction id and writing its last event: every write is bounded by a request's or an
// activity's deadline (config.RequestTimeout), well inside it. A start from a time (since) begins
// this much earlier, so that no event created at or after that time is behind the start.
const TransactionSkew = time.Minute

// Service reads the feed.
type Service struct {
	db *gorm.DB
	// retention is how long events are kept (WDS_RETENTION); an iterator older than it has expired.
	// 0 keeps events, and iterators, forever.
	retention time.Duration
	now       func() time.Time
}

// NewService reads the feed of db's events, kept for retention (0: forever).
func NewService(db *gorm.DB, retention time.Duration) *Service {
	return &Service{db: db, retention: retention, now: time.Now}
}

// Query is what a page asks for.
type Query struct {
	OrgID   uuid.UUID
	StoreID *uuid.UUID
	// Types are the event types read, each of the catalog; none reads every type.
	Types []string
	// After is the Next of an earlier page; "" starts at Since, or before the oldest event kept.
	After string
	Since *time.Time
	Limit int
}

// Page is one page of the feed: each row is an event's body exactly as its webhook delivery carries
// it. Done is true when the page reached what is visible now; Next is where the next page starts,
// whether or not it is done.
type Page struct {
	Rows []json.RawMessage
	Next string
	Done bool
}

// Read reads one page.
func (s *Service) Read(ctx context.Context, q Query) (Page, error) {
	from, err := s.from(ctx, q)
	if err != nil {
		return Page{}, err
	}
	sqlText, args := pageSQL(q, from)
	var (
		rows      []json.RawMessage
		horizon   position
		last      position
		nextXact  uint64
		more, cut bool
	)
	err = database.EachRow(ctx, s.db, sqlText, args, func(row database.Row) error {
		var r pageRow
		if err := row.Scan(&r.horizon, &r.nextXact, &r.readAt, &r.id, &r.xact, &r.createdAt, &r.size, &r.body, &r.head, &r.dataID, &r.fits); err != nil {
			return err
		}
		if horizon.Xact, err = strconv.ParseUint(r.horizon, 10, 64); err != nil {
			return fmt.Errorf("horizon %q: %w", r.horizon, err)
		}
		if nextXact, err = strconv.ParseUint(r.nextXact, 10, 64); err != nil {
			return fmt.Errorf("next transaction %q: %w", r.nextXact, err)
		}
		horizon.Time = r.readAt
		switch {
		case r.id == nil: // the horizon's row of an empty page
			return nil
		case len(rows) == q.Limit:
			more = true
			return nil
		case r.fits == nil || !*r.fits || cut:
			cut = true
			return nil
		}
		body, err := r.sent()
		if err != nil {
			return err
		}
		rows = append(rows, body)
		last, err = r.position()
		return err
	})
	if err != nil {
		return Page{}, fmt.Errorf("read the event feed: %w", err)
	}
	if from.Xact > nextXact {
		return Page{}, problem.Fail(ErrIteratorExpired, "the iterator is ahead of this database's transactions (it was restored from a dump, or is another database's): start again with since")
	}
	p := Page{Rows: rows, Done: !more && !cut}
	switch {
	case !p.Done:
		p.Next = last.encode()
	case from.after(horizon): // never hand out a position behind the one given
		p.Next = from.encode()
	default:
		p.Next = horizon.encode()
	}
	return p, nil
}

// from is where q's page starts: its iterator, the position before the events created at or after
// Since (less TransactionSkew), or the start.
func (s *Service) from(ctx context.Context, q Query) (position, error) {
	if q.After != "" {
		p, err := parseIterator(q.After)
		if err != nil {
			return p, err
		}
		if s.retention > 0 {
			if kept := s.now().Add(-s.retention); p.Time.Before(kept) {
				since := kept.UTC().Truncate(time.Second).Format(time.RFC3339)
				return p, problem.Fail(ErrIteratorExpired, "events created before %s are no longer kept: start again with since=%s", since, since)
			}
		}
		return p, nil
	}
	if q.Since == nil {
		return start, nil
	}
	// The last event created before since's skew comes before every event created from since on:
	// their transactions took their ids after it was written (TransactionSkew).
	var found []struct {
		Xact      string
		CreatedAt time.Time
		ID        uuid.UUID
	}
	err := s.db.WithContext(ctx).Raw(sinceSQL, q.OrgID, q.Since.Add(-TransactionSkew)).Scan(&found).Error
	if err != nil {
		return start, fmt.Errorf("find the feed's start: %w", err)
	}
	if len(found) == 0 {
		return start, nil
	}
	x, err := strconv.ParseUint(found[0].Xact, 10, 64)
	if err != nil {
		return start, fmt.Errorf("transaction %q: %w", found[0].Xact, err)
	}
	return position{Xact: x, At: found[0].CreatedAt, ID: found[0].ID, Time: *q.Since}, nil
}

// sinceSQL finds a start from a time: the org's last event created before it, one row of the index
// events_org (org_id, created_at DESC, id DESC), at any depth.
const sinceSQL = `SELECT xact_id::text AS xact, created_at, id FROM events
	WHERE org_id = ? AND created_at < ? ORDER BY created_at DESC, id DESC LIMIT 1`

// after reports whether p is later in the feed than o.
func (p position) after(o position) bool {
	if p.Xact != o.Xact {
		return p.Xact > o.Xact
	}
	if !p.At.Equal(o.At) {
		return p.At.After(o.At)
	}
	return bytes.Compare(p.ID[:], o.ID[:]) > 0 // PostgreSQL orders uuids by their bytes
}

// pageRow is one row of pageSQL.
type pageRow struct {
	horizon, nextXact string
	readAt            time.Time
	id, xact          *string
	createdAt         *time.Time
	size              *int64
	body, head        *string
	dataID            *string
	fits              *bool
}

// sent is the row as a delivery sends it: the stored body, or its summary when over outbox.MaxBody.
func (r pageRow) sent() (json.RawMessage, error) {
	if r.body != nil {
		return json.RawMessage(*r.body), nil
	}
	if r.head == nil || r.dataID == nil || r.size == nil {
		return nil, fmt.Errorf("event %s: neither its body nor its summary was read", *r.id)
	}
	return outbox.Summary(*r.head, *r.dataID, *r.size)
}

func (r pageRow) position() (position, error) {
	x, err := strconv.ParseUint(*r.xact, 10, 64)
	if err != nil {
		return position{}, fmt.Errorf("transaction %q: %w", *r.xact, err)
	}
	id, err := uuid.Parse(*r.id)
	if err != nil {
		return position{}, fmt.Errorf("event id %q: %w", *r.id, err)
	}
	return position{Xact: x, At: *r.createdAt, ID: id, Time: *r.createdAt}, nil
}

// readTypes is the types a page reads: q's, or every type the feed holds.
func readTypes(q Query) []string {
	if len(q.Types) > 0 {
		return q.Types
	}
	var all []string
	for _, t := range events.Types() {
		if t != events.WebhookTest {
			all = append(all, t)
		}
	}
	return all
}

// pageSQL is the page's statement: one row for the horizon when nothing is visible past from, else
// one per event (at most Limit+1, the last only telling that more follow), each with the horizon.
// Each type's events are one index range (events_feed, or events_feed_store with a store), read in
// feed order and merged, so the page reads its own rows and no others at any depth. A row that
// would take the page past MaxPage is marked as not fitting and sent without its body.
//
// The org, the store and the types reach the branches through the horizon's row, values the
// planner cannot see when it plans, so every page has the plan of an average org and type. Given
// them, the planner estimates an org or a type the statistics do not know yet (created, or grown,
// since the table was last analyzed) at one row, and then prefers events_org and a sort, which
// reads the org's whole history for every page.
func pageSQL(q Query, from position) (string, []any) {
	var branches []string
	types, store, inStore := readTypes(q), "NULL", ""
	args := []any{q.OrgID}
	if q.StoreID != nil {
		store, inStore = "?", " AND e.store_id = h.store AND e.store_id IS NOT NULL"
		args = append(args, *q.StoreID)
	}
	args = append(args, models.TextArray(types), outbox.MaxBody, outbox.MaxBody, outbox.MaxBody, MaxPage, outbox.MaxBody, summarySize)
	for i := range types {
		branches = append(branches, `(SELECT e.id, e.xact_id, e.created_at, e.body FROM events e
			WHERE e.org_id = h.org AND e.type = h.types[`+strconv.Itoa(i+1)+`] AND e.type <> '`+events.WebhookTest+`'`+inStore+`
				AND (e.xact_id, e.created_at, e.id) > (?::text::xid8, ?::timestamptz, ?::uuid) AND e.xact_id < h.below
			ORDER BY e.xact_id, e.created_at, e.id LIMIT ?)`)
		args = append(args, strconv.FormatUint(from.Xact, 10), from.At, from.ID, q.Limit+1)
	}
	args = append(args, q.Limit+1)
	return `WITH horizon AS MATERIALIZED (
			SELECT pg_snapshot_xmin(s) AS below, pg_snapshot_xmax(s) AS next, clock_timestamp() AS read_at,
				?::uuid AS org, ` + store + `::uuid AS store, ?::text[] AS types
			FROM pg_current_snapshot() AS s)
		SELECT h.below::text, h.next::text, h.read_at, p.id::text, p.xact_id::text, p.created_at, p.size,
			CASE WHEN p.fits AND p.size <= ? THEN p.body::text END,
			CASE WHEN p.fits AND p.size > ? THEN ` + outbox.SummaryHeadSQL("p") + ` END,
			CASE WHEN p.fits AND p.size > ? THEN ` + outbox.SummaryDataIDSQL("p") + ` END,
			p.fits
		FROM horizon h LEFT JOIN LATERAL (
			SELECT s.*, (row_number() OVER w = 1 OR sum(s.sent) OVER w <= ?) AS fits FROM (
				SELECT u.*, octet_length(u.body::text) AS size,
					CASE WHEN octet_length(u.body::text) <= ? THEN octet_length(u.body::text) ELSE ? END + 1 AS sent
				FROM (` + strings.Join(branches, " UNION ALL ") + `) u
				ORDER BY u.xact_id, u.created_at, u.id LIMIT ?) s
			WINDOW w AS (ORDER BY s.xact_id, s.created_at, s.id)) p ON true
		ORDER BY p.xact_id, p.created_at, p.id`, args
}

// Event is one event of the org's feed, as its deliveries send it.
func (s *Service) Event(ctx context.Context, orgID, id uuid.UUID) (json.RawMessage, error) {
	var rows []struct {
		ID     string
		Size   int64
		Body   *string
		Head   *string
		DataID *string
	}
	err := s.db.WithContext(ctx).Raw(`SELECT e.id::text AS id, octet_length(e.body::text) AS size,
			CASE WHEN octet_length(e.body::text) <= ? THEN e.body::text END AS body,
			CASE WHEN octet_length(e.body::text) > ? THEN `+outbox.SummaryHeadSQL("e")+` END AS head,
			CASE WHEN octet_length(e.body::text) > ? THEN `+outbox.SummaryDataIDSQL("e")+` END AS data_id
		FROM events e WHERE e.id = ? AND e.org_id = ? AND e.type <> ?`,
		outbox.MaxBody, outbox.MaxBody, outbox.MaxBody, id, orgID, events.WebhookTest).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("read event %s: %w", id, err)
	}
	if len(rows) == 0 {
		return nil, problem.Fail(problem.NotFound, "event not found")
	}
	r := pageRow{id: &rows[0].ID, size: &rows[0].Size, body: rows[0].Body, head: rows[0].Head, dataID: rows[0].DataID}
	return r.sent()
}
