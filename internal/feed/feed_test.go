package feed_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/events"
	"wds/internal/feed"
	"wds/internal/outbox"
	"wds/internal/platform/paging"
	"wds/internal/workspace"
	"wds/test/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// env is an org with two stores over a fresh database, and the feed over it.
type env struct {
	t             *testing.T
	ctx           context.Context
	db            *gorm.DB
	feed          *feed.Service
	org           uuid.UUID
	store, store2 uuid.UUID
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, ctx: context.Background(), db: pgtest.New(t)}
	e.feed = feed.NewService(e.db, 0)
	e.org, e.store, e.store2 = mustOrg(t, e.db)
	return e
}

func mustOrg(t *testing.T, db *gorm.DB) (org, store, store2 uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	ws := workspace.NewService(db)
	o, err := ws.CreateOrg(ctx, "Acme")
	if err != nil {
		t.Fatal(err)
	}
	s1, err := ws.CreateStore(ctx, o.ID, "One", "EUR")
	if err != nil {
		t.Fatal(err)
	}
	s2, err := ws.CreateStore(ctx, o.ID, "Two", "EUR")
	if err != nil {
		t.Fatal(err)
	}
	return o.ID, s1.ID, s2.ID
}

// spec is one event to write: its type and store.
type spec struct {
	typ   string
	store *uuid.UUID
}

// write writes events in one transaction, as a business write does, and returns their ids.
func (e *env) write(tx *gorm.DB, org uuid.UUID, specs ...spec) []uuid.UUID {
	e.t.Helper()
	ids, err := writeEvents(e.ctx, tx, org, specs...)
	if err != nil {
		e.t.Fatal(err)
	}
	return ids
}

func writeEvents(ctx context.Context, tx *gorm.DB, org uuid.UUID, specs ...spec) ([]uuid.UUID, error) {
	var pending []outbox.PendingEvent
	var ids []uuid.UUID
	for _, s := range specs {
		ev, err := outbox.NewEvent(org, s.store, s.typ, map[string]string{"id": uuid.NewString()})
		if err != nil {
			return nil, err
		}
		pending = append(pending, ev)
		ids = append(ids, ev.ID)
	}
	_, err := outbox.WriteEvents(ctx, tx, pending)
	return ids, err
}

// row is what a feed row says of its event.
type row struct {
	ID      string  `json:"id"`
	Type    string  `json:"type"`
	StoreID *string `json:"store_id"`
}

func ids(t *testing.T, p feed.Page) []string {
	t.Helper()
	var out []string
	for _, raw := range p.Rows {
		var r row
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("row %s: %v", raw, err)
		}
		out = append(out, r.ID)
	}
	return out
}

func strs(u []uuid.UUID) []string {
	out := make([]string, len(u))
	for i, id := range u {
		out[i] = id.String()
	}
	return out
}

func (e *env) read(q feed.Query) feed.Page {
	e.t.Helper()
	if q.OrgID == uuid.Nil {
		q.OrgID = e.org
	}
	if q.Limit == 0 {
		q.Limit = paging.DefaultLimit
	}
	p, err := e.feed.Read(e.ctx, q)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// drain follows next from after until a page is done, and returns every id seen and the last next.
func (e *env) drain(q feed.Query) ([]string, string) {
	e.t.Helper()
	var seen []string
	for {
		p := e.read(q)
		seen = append(seen, ids(e.t, p)...)
		q.After = p.Next
		if p.Done {
			return seen, p.Next
		}
	}
}

func TestPagesFollowTheTransactionsInOrder(t *testing.T) {
	e := newEnv(t)
	s := &e.store
	var want []string
	for range 3 {
		want = append(want, strs(e.write(e.db, e.org, spec{events.OrderCreated, s}, spec{events.PaymentRecorded, s}, spec{events.ClientCreated, s}))...)
	}
	p := e.read(feed.Query{Limit: 4})
	if got := ids(t, p); len(got) != 4 || p.Done || p.Next == "" {
		t.Fatalf("first page: %d rows done=%v next=%q, want 4 rows and more", len(got), p.Done, p.Next)
	}
	got, next := e.drain(feed.Query{Limit: 4})
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("feed order:\n got %v\nwant %v", got, want)
	}
	// The last next is the consumer's checkpoint: nothing new past it, then exactly what comes next.
	if p := e.read(feed.Query{After: next}); len(p.Rows) != 0 || !p.Done {
		t.Fatalf("after the end: %d rows done=%v", len(p.Rows), p.Done)
	}
	later := strs(e.write(e.db, e.org, spec{events.VendorCreated, s}))
	if got, _ := e.drain(feed.Query{After: next}); strings.Join(got, ",") != strings.Join(later, ",") {
		t.Fatalf("after the checkpoint: got %v, want %v", got, later)
	}
	// Re-reading from an older iterator gives the same events in the same order.
	if again, _ := e.drain(feed.Query{Limit: 4}); strings.Join(again, ",") != strings.Join(append(want, later...), ",") {
		t.Fatalf("re-read: got %v", again)
	}
}

// TestAnEventCommittedLateIsNotSkipped is the hole naive feeds have: a transaction that wrote its
// event first commits after a later one. The later event is held back until the first commits, and
// then both come after the consumer's checkpoint, the first one first.
func TestAnEventCommittedLateIsNotSkipped(t *testing.T) {
	e := newEnv(t)
	// The first write takes its transaction id and its event, then waits on a lock the test holds.
	lock := e.db.Begin()
	if err := lock.Exec(`SELECT pg_advisory_xact_lock(4242)`).Error; err != nil {
		t.Fatal(err)
	}
	firstDone := make(chan error, 1)
	var first []uuid.UUID
	go func() {
		firstDone <- e.db.Transaction(func(tx *gorm.DB) error {
			var err error
			if first, err = writeEvents(e.ctx, tx, e.org, spec{events.OrderCreated, &e.store}); err != nil {
				return err
			}
			return tx.Exec(`SELECT pg_advisory_xact_lock(4242)`).Error
		})
	}()
	waitForLockWait(t, e.db)
	later := strs(e.write(e.db, e.org, spec{events.OrderShipped, &e.store}, spec{events.OrderDelivered, &e.store}))

	seen, checkpoint := e.drain(feed.Query{})
	if len(seen) != 0 {
		t.Fatalf("while the first write is open the feed handed out %v: a consumer would move past the first event", seen)
	}
	if err := lock.Commit().Error; err != nil {
		t.Fatal(err)
	}
	if err := <-firstDone; err != nil {
		t.Fatal(err)
	}
	got, _ := e.drain(feed.Query{After: checkpoint})
	want := append(strs(first), later...)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("after the first write committed: got %v, want %v", got, want)
	}
}

// waitForLockWait returns once a session waits on an advisory lock.
func waitForLockWait(t *testing.T, db *gorm.DB) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		var n int64
		if err := db.Raw(`SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
	}
	t.Fatal("the first write never waited on the lock")
}

func TestTypesAndStoreFilter(t *testing.T) {
	e := newEnv(t)
	a := e.write(e.db, e.org, spec{events.OrderCreated, &e.store}, spec{events.ClientCreated, &e.store},
		spec{events.OrderCreated, &e.store2}, spec{events.VendorCreated, nil}, spec{events.WebhookTest, &e.store})
	other, _, _ := mustOrg(t, e.db)
	e.write(e.db, other, spec{events.OrderCreated, nil})

	all, _ := e.drain(feed.Query{})
	if want := strs(a[:4]); strings.Join(all, ",") != strings.Join(want, ",") {
		t.Errorf("every type: got %v, want %v (no test event, no other org's)", all, want)
	}
	orders, _ := e.drain(feed.Query{Types: []string{events.OrderCreated}})
	if want := []string{a[0].String(), a[2].String()}; strings.Join(orders, ",") != strings.Join(want, ",") {
		t.Errorf("types=order.created: got %v, want %v", orders, want)
	}
	two, _ := e.drain(feed.Query{Types: []string{events.ClientCreated, events.VendorCreated}})
	if want := []string{a[1].String(), a[3].String()}; strings.Join(two, ",") != strings.Join(want, ",") {
		t.Errorf("two types: got %v, want %v", two, want)
	}
	store, _ := e.drain(feed.Query{StoreID: &e.store})
	if want := []string{a[0].String(), a[1].String()}; strings.Join(store, ",") != strings.Join(want, ",") {
		t.Errorf("store: got %v, want %v", store, want)
	}
	both, _ := e.drain(feed.Query{StoreID: &e.store2, Types: []string{events.OrderCreated}})
	if want := []string{a[2].String()}; strings.Join(both, ",") != strings.Join(want, ",") {
		t.Errorf("store and type: got %v, want %v", both, want)
	}
}

func TestSinceStartsBeforeEveryEventCreatedFromThen(t *testing.T) {
	e := newEnv(t)
	old := e.write(e.db, e.org, spec{events.OrderCreated, nil})
	// Age the first event past the start's skew, as if written long ago.
	if err := e.db.Exec(`UPDATE events SET created_at = created_at - interval '1 hour' WHERE id = ?`, old[0]).Error; err != nil {
		t.Fatal(err)
	}
	since := time.Now()
	fresh := e.write(e.db, e.org, spec{events.OrderShipped, nil})
	got, _ := e.drain(feed.Query{Since: &since})
	if strings.Join(got, ",") != strings.Join(strs(fresh), ",") {
		t.Fatalf("since: got %v, want %v", got, strs(fresh))
	}
	future := time.Now().Add(time.Hour)
	if got, _ := e.drain(feed.Query{Since: &future}); len(got) != 0 {
		t.Fatalf("since an hour from now: got %v, want nothing", got)
	}
}

func TestAnOldIteratorHasExpired(t *testing.T) {
	e := newEnv(t)
	e.write(e.db, e.org, spec{events.OrderCreated, nil})
	_, next := e.drain(feed.Query{})
	kept := feed.NewService(e.db, time.Hour)
	if _, err := kept.Read(e.ctx, feed.Query{OrgID: e.org, After: next, Limit: 10}); err != nil {
		t.Fatalf("a fresh iterator: %v", err)
	}
	feed.SetClock(kept, func() time.Time { return time.Now().Add(2 * time.Hour) })
	_, err := kept.Read(e.ctx, feed.Query{OrgID: e.org, After: next, Limit: 10})
	if !errors.Is(err, feed.ErrIteratorExpired) || !strings.Contains(err.Error(), "since=") {
		t.Fatalf("an iterator older than the retention: %v, want iterator_expired naming the oldest time kept", err)
	}
}

// A page that reached the end hands out a next as recent as the read, however old its last event:
// a consumer polling a quiet feed never falls behind the retention window.
func TestPollingAQuietFeedKeepsTheIteratorFresh(t *testing.T) {
	e := newEnv(t)
	e.write(e.db, e.org, spec{events.OrderCreated, nil})
	if err := e.db.Exec(`UPDATE events SET created_at = created_at - interval '2 hours'`).Error; err != nil {
		t.Fatal(err)
	}
	kept := feed.NewService(e.db, time.Hour)
	p, err := kept.Read(e.ctx, feed.Query{OrgID: e.org, Limit: 10})
	if err != nil || len(p.Rows) != 1 || !p.Done {
		t.Fatalf("the first page: %d rows done=%v %v, want the old event and the end", len(p.Rows), p.Done, err)
	}
	for range 2 { // the end's next, and the next of a page after it that held nothing
		if p, err = kept.Read(e.ctx, feed.Query{OrgID: e.org, After: p.Next, Limit: 10}); err != nil || len(p.Rows) != 0 || !p.Done {
			t.Fatalf("polling at the end: %d rows done=%v %v, want an empty page and no expiry", len(p.Rows), p.Done, err)
		}
	}
}

// An iterator past this database's transactions (handed out by another database, or by this one
// before it was restored from a dump) has expired too: following it would skip every event written
// until the transaction numbers caught up with it.
func TestAnIteratorAheadOfTheDatabaseHasExpired(t *testing.T) {
	e := newEnv(t)
	e.write(e.db, e.org, spec{events.OrderCreated, nil})
	ahead := feed.Iterator(1<<40, time.Now(), uuid.New())
	_, err := e.feed.Read(e.ctx, feed.Query{OrgID: e.org, After: ahead, Limit: 10})
	if !errors.Is(err, feed.ErrIteratorExpired) || !strings.Contains(err.Error(), "since") {
		t.Fatalf("an iterator ahead of the database: %v, want iterator_expired saying to start again with since", err)
	}
}

func TestAMalformedIteratorIsInvalidCursor(t *testing.T) {
	e := newEnv(t)
	for _, after := range []string{"x", "eyJ2IjoyfQ", strings.Repeat("a", 600), "eyJ2IjoxLCJ4IjoiLTEiLCJ0IjowfQ"} {
		if _, err := e.feed.Read(e.ctx, feed.Query{OrgID: e.org, After: after, Limit: 10}); !errors.Is(err, paging.ErrInvalidCursor) {
			t.Errorf("after=%q: %v, want invalid_cursor", after, err)
		}
	}
}

func TestRowsAreTheDeliveredBodies(t *testing.T) {
	e := newEnv(t)
	id := e.write(e.db, e.org, spec{events.OrderCreated, &e.store})[0]
	var stored string
	if err := e.db.Raw(`SELECT body::text FROM events WHERE id = ?`, id).Scan(&stored).Error; err != nil {
		t.Fatal(err)
	}
	p := e.read(feed.Query{})
	if len(p.Rows) != 1 || string(p.Rows[0]) != stored {
		t.Fatalf("row %s, want the stored body %s", p.Rows, stored)
	}
	one, err := e.feed.Event(e.ctx, e.org, id)
	if err != nil || string(one) != stored {
		t.Fatalf("Event = %s %v, want the stored body", one, err)
	}
	other, _, _ := mustOrg(t, e.db)
	if _, err := e.feed.Event(e.ctx, other, id); err == nil {
		t.Fatal("another org read the event")
	}
}

// A page ends before the row that would take it past MaxPage; a body over the delivery cap is its
// summary, as its deliveries send it.
func TestPagesAreBoundedBySize(t *testing.T) {
	e := newEnv(t)
	big := strings.Repeat("x", feed.MaxPage/3)
	var want []string
	for range 3 {
		ev, err := outbox.NewEvent(e.org, nil, events.ClientUpdated, map[string]string{"id": uuid.NewString(), "notes": big})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := outbox.WriteEvents(e.ctx, e.db, []outbox.PendingEvent{ev}); err != nil {
			t.Fatal(err)
		}
		want = append(want, ev.ID.String())
	}
	huge, err := outbox.NewEvent(e.org, nil, events.ClientUpdated, map[string]string{"id": "c-huge", "notes": strings.Repeat("y", outbox.MaxBody)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := outbox.WriteEvents(e.ctx, e.db, []outbox.PendingEvent{huge}); err != nil {
		t.Fatal(err)
	}
	p := e.read(feed.Query{})
	if got := ids(t, p); len(got) != 2 || p.Done {
		t.Fatalf("first page: %d rows done=%v, want 2 rows (a third would pass %d bytes)", len(got), p.Done, feed.MaxPage)
	}
	got, _ := e.drain(feed.Query{})
	if strings.Join(got, ",") != strings.Join(append(want, huge.ID.String()), ",") {
		t.Fatalf("rows: got %v", got)
	}
	rest := e.read(feed.Query{After: p.Next})
	var summary struct {
		Summarized bool              `json:"summarized"`
		Data       map[string]string `json:"data"`
	}
	if len(rest.Rows) != 2 || json.Unmarshal(rest.Rows[1], &summary) != nil || !summary.Summarized || summary.Data["id"] != "c-huge" {
		t.Fatalf("the huge event's row: %d rows, last %.300s", len(rest.Rows), rest.Rows[len(rest.Rows)-1])
	}
}
