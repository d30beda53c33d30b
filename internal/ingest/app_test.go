package ingest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/events"
	"wds/internal/events/eventstest"
	"wds/internal/ingest"
	"wds/internal/order"
	"wds/internal/platform/problem"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/pgtest"
)

// appEnv is an org with a store, a member (any role may write in the app), and another org.
type appEnv struct {
	t                    *testing.T
	db                   *gorm.DB
	org, store           uuid.UUID
	member               uuid.UUID
	otherOrg, otherStore uuid.UUID
	otherOwner           uuid.UUID
}

func newAppEnv(t *testing.T) *appEnv {
	t.Helper()
	ctx := context.Background()
	e := &appEnv{t: t, db: pgtest.New(t)}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	org, err := workspace.NewService(e.db).CreateOrg(ctx, "Acme")
	must(err)
	store, err := workspace.NewService(e.db).CreateStore(ctx, org.ID, "Shop", "EUR")
	must(err)
	member, _, err := workspace.NewService(e.db).CreateUser(ctx, org.ID, uuid.NewString()+"@example.com", models.RoleMember)
	must(err)
	other, err := workspace.NewService(e.db).CreateOrg(ctx, "Elsewhere")
	must(err)
	otherStore, err := workspace.NewService(e.db).CreateStore(ctx, other.ID, "Far", "USD")
	must(err)
	otherOwner, _, err := workspace.NewService(e.db).CreateUser(ctx, other.ID, uuid.NewString()+"@example.com", models.RoleOwner)
	must(err)
	e.org, e.store, e.member, e.otherOrg, e.otherStore, e.otherOwner = org.ID, store.ID, member.ID, other.ID, otherStore.ID, otherOwner.ID
	return e
}

func (e *appEnv) order(body string) ingest.AppOrder {
	e.t.Helper()
	var in ingest.AppOrder
	if err := json.Unmarshal([]byte(body), &in); err != nil {
		e.t.Fatal(err)
	}
	if in.StoreID == nil {
		s := e.store.String()
		in.StoreID = &s
	}
	return in
}

// counts is how many rows each table a write may touch holds.
func (e *appEnv) counts() map[string]int64 {
	e.t.Helper()
	out := map[string]int64{}
	for _, table := range []string{"orders", "order_lines", "payments", "clients", "events", "audit_log", "external_refs"} {
		var n int64
		if err := e.db.Raw("SELECT count(*) FROM " + table).Find(&n).Error; err != nil {
			e.t.Fatal(err)
		}
		out[table] = n
	}
	return out
}

// eventTypes lists the types of the events written so far, oldest first, each body validated.
func (e *appEnv) eventTypes() []string { e.t.Helper(); return eventstest.Written(e.t, e.db) }

func TestAppOrderFollowsTheIntegrationRulesAndIsAudited(t *testing.T) {
	e := newAppEnv(t)
	ctx := context.Background()
	res, err := ingest.NewService(e.db, nil).CreateAppOrder(ctx, e.org, e.member, e.order(`{"external_id": "POS-1",
		"lines": [{"description": "Mug", "quantity": 2, "unit_price_cents": 1500}], "shipping_cents": 500, "tax_cents": 100,
		"client": {"external_id": "ignored", "email": "Ann@Example.com", "first_name": "Ann"},
		"payment": {"external_id": "ignored-too", "amount_cents": 1000, "method": "cash"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != order.PartiallyPaid || res.TotalCents != 3600 || res.AmountPaidCents != 1000 ||
		res.ExternalID != "POS-1" || res.Duplicate || res.ClientID == nil || res.PaymentID == nil || res.Number != "1001" {
		t.Fatalf("envelope %+v", res)
	}
	var src struct {
		Kind  string
		Key   *uuid.UUID
		Label *string
		Store uuid.UUID
	}
	e.db.Raw(`SELECT source_kind AS kind, source_integration_key_id AS key, source_label AS label, store_id AS store
		FROM orders WHERE id = ?`, res.ID).Find(&src)
	if src.Kind != "app" || src.Key != nil || src.Label != nil || src.Store != e.store {
		t.Fatalf("source %+v", src)
	}
	var stamps []struct{ PaymentExternalID, ClientSource *string }
	e.db.Raw(`SELECT p.external_id AS payment_external_id, c.source_label AS client_source
		FROM payments p, clients c WHERE p.order_id = ? AND c.id = ?`, res.ID, res.ClientID).Find(&stamps)
	if len(stamps) != 1 || stamps[0].PaymentExternalID != nil || stamps[0].ClientSource != nil || e.counts()["external_refs"] != 0 {
		t.Fatalf("an app order kept an integration's external id or stamp: %+v", stamps)
	}
	if got := e.eventTypes(); fmt.Sprint(got) != fmt.Sprint([]string{events.ClientCreated, events.OrderCreated, events.PaymentRecorded}) {
		t.Fatalf("events %v", got)
	}
	var audit []models.AuditEntry
	e.db.Where("org_id = ?", e.org).Find(&audit)
	if len(audit) != 1 || audit[0].Action != "order.create" || audit[0].TargetID != res.ID || audit[0].ActorID != e.member {
		t.Fatalf("audit %+v", audit)
	}

	// Zero total without payment is paid; no external_id twice makes two orders.
	for range 2 {
		r, err := ingest.NewService(e.db, nil).CreateAppOrder(ctx, e.org, e.member, e.order(`{"lines": [{"quantity": 1}]}`))
		if err != nil || r.Status != order.Paid || r.ExternalID != "" || r.Duplicate {
			t.Fatalf("free order: %+v, %v", r, err)
		}
	}
	if n := e.counts()["orders"]; n != 3 {
		t.Fatalf("%d orders", n)
	}
}

func TestAppOrderMatchesTheClientByEmailInTheStore(t *testing.T) {
	e := newAppEnv(t)
	ctx := context.Background()
	email := "ann@example.com"
	c, err := ingest.NewService(e.db, nil).CreateClient(ctx, e.org, e.member, newClient(e.store, `{"email": "ann@example.com", "first_name": "Ann"}`))
	if err != nil || c.Email == nil || *c.Email != email || c.DisplayName != "Ann" || c.Source != nil {
		t.Fatalf("client %+v, %v", c, err)
	}
	// Same fields: matched, unchanged, no client.updated.
	r, err := ingest.NewService(e.db, nil).CreateAppOrder(ctx, e.org, e.member, e.order(`{"lines": [{"quantity": 1, "unit_price_cents": 10}],
		"client": {"email": "ann@example.com", "first_name": "Ann"}}`))
	if err != nil || r.ClientID == nil || *r.ClientID != c.ID {
		t.Fatalf("matched %+v, %v", r, err)
	}
	// Matched whatever the case; the fields sent overwrite the stored ones: client.updated.
	r, err = ingest.NewService(e.db, nil).CreateAppOrder(ctx, e.org, e.member, e.order(`{"lines": [{"quantity": 1, "unit_price_cents": 10}],
		"client": {"email": "ANN@example.com", "phone": "+1 555"}}`))
	if err != nil || *r.ClientID != c.ID {
		t.Fatalf("matched again %+v, %v", r, err)
	}
	// No email: a new client each time.
	r, err = ingest.NewService(e.db, nil).CreateAppOrder(ctx, e.org, e.member, e.order(`{"lines": [{"quantity": 1, "unit_price_cents": 10}],
		"client": {"first_name": "Bob", "last_name": "Stone"}}`))
	if err != nil || *r.ClientID == c.ID {
		t.Fatalf("no email %+v, %v", r, err)
	}
	want := []string{events.ClientCreated, events.OrderCreated, events.ClientUpdated, events.OrderCreated,
		events.ClientCreated, events.OrderCreated}
	if got := e.eventTypes(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	var bob struct{ DisplayName string }
	e.db.Raw(`SELECT display_name FROM clients WHERE id = ?`, r.ClientID).Find(&bob)
	if bob.DisplayName != "Bob Stone" {
		t.Fatalf("display name %q", bob.DisplayName)
	}
}

func TestAppOrderRepeatedExternalIDAnswersTheOriginalAndChangesNothing(t *testing.T) {
	e := newAppEnv(t)
	ctx := context.Background()
	body := `{"external_id": "POS-7", "lines": [{"quantity": 1, "unit_price_cents": 700}], "client": {"email": "c@example.com"}}`
	first, err := ingest.NewService(e.db, nil).CreateAppOrder(ctx, e.org, e.member, e.order(body))
	if err != nil {
		t.Fatal(err)
	}
	// Another store, another client block, a payment: still the original, and nothing is written.
	second, _ := workspace.NewService(e.db).CreateStore(ctx, e.org, "Second", "EUR")
	before := e.counts()
	repeat := e.order(`{"external_id": "POS-7", "store_id": "` + second.ID.String() + `", "lines": [{"quantity": 9}],
		"client": {"email": "someone-else@example.com"}, "payment": {"amount_cents": 1}}`)
	repeat.Payment.AmountCents = 0 // a free order takes no payment: validation still runs first
	if _, err := ingest.NewService(e.db, nil).CreateAppOrder(ctx, e.org, e.member, repeat); !errors.Is(err, problem.Invalid) {
		t.Fatalf("invalid repeat: %v", err)
	}
	repeat.Payment = nil
	dup, err := ingest.NewService(e.db, nil).CreateAppOrder(ctx, e.org, e.member, repeat)
	if err != nil || !dup.Duplicate || dup.ID != first.ID || dup.Number != first.Number || dup.ClientID == nil || *dup.ClientID != *first.ClientID {
		t.Fatalf("repeat %+v (first %+v), %v", dup, first, err)
	}
	if after := e.counts(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a repeat wrote rows: %v -> %v", before, after)
	}
	// External ids are per org: another org may use the same one.
	if r, err := ingest.NewService(e.db, nil).CreateAppOrder(ctx, e.otherOrg, e.otherOwner, ingest.AppOrder{StoreID: ptr(e.otherStore.String()),
		Order: ingest.Order{ExternalID: "POS-7", Lines: []ingest.Line{{Quantity: 1}}}}); err != nil || r.Duplicate {
		t.Fatalf("other org: %+v, %v", r, err)
	}
	e.eventTypes()
}

func TestConcurrentAppOrderCreatesOfOneExternalIDMakeOneOrder(t *testing.T) {
	e := newAppEnv(t)
	ctx := context.Background()
	const n = 20
	results := make([]*ingest.OrderResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = ingest.NewService(e.db, nil).CreateAppOrder(ctx, e.org, e.member, e.order(`{"external_id": "RACE",
				"lines": [{"quantity": 1, "unit_price_cents": 500}], "client": {"email": "race@example.com"},
				"payment": {"amount_cents": 500}}`))
		})
	}
	wg.Wait()
	created, dups := 0, 0
	var id uuid.UUID
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("create %d: %v", i, errs[i])
		}
		if results[i].Duplicate {
			dups++
		} else {
			created++
			id = results[i].ID
		}
	}
	if created != 1 || dups != n-1 {
		t.Fatalf("%d created, %d duplicates", created, dups)
	}
	for _, r := range results {
		if r.ID != id {
			t.Fatalf("a duplicate answered %s, not %s", r.ID, id)
		}
	}
	c := e.counts()
	if c["orders"] != 1 || c["payments"] != 1 || c["clients"] != 1 || c["events"] != 3 || c["audit_log"] != 1 {
		t.Fatalf("rows %v", c)
	}
	e.eventTypes()
}

func TestAppOrderRefusalsChangeNothing(t *testing.T) {
	e := newAppEnv(t)
	ctx := context.Background()
	before := e.counts()
	cases := []struct {
		org, actor uuid.UUID
		body       string
		want       error
	}{
		{e.org, e.otherOwner, `{"lines": [{"quantity": 1}]}`, problem.NotFound},
		{e.org, e.otherOwner, `{"store_id": "", "lines": []}`, problem.NotFound}, // the org comes first
		{e.org, e.member, `{"store_id": "", "lines": [{"quantity": 1}]}`, problem.Invalid},
		{e.org, e.member, `{"store_id": "x", "lines": [{"quantity": 1}]}`, problem.Invalid},
		{e.org, e.member, `{"store_id": "` + e.otherStore.String() + `", "lines": [{"quantity": 1}]}`, problem.NotFound},
		{e.org, e.member, `{"store_id": "` + uuid.NewString() + `", "lines": [{"quantity": 1}]}`, problem.NotFound},
		{e.org, e.member, `{"lines": []}`, ingest.ErrLinesRequired},
		{e.org, e.member, `{"lines": [{"quantity": 0}]}`, problem.Invalid},
		{e.org, e.member, `{"currency": "EURO", "lines": [{"quantity": 1}]}`, problem.Invalid},
		{e.org, e.member, `{"external_id": "` + strings.Repeat("x", 256) + `", "lines": [{"quantity": 1}]}`, problem.Invalid},
		{e.org, e.member, `{"lines": [{"quantity": 1, "unit_price_cents": 5}], "payment": {"amount_cents": 6}}`, ingest.ErrAmountExceedsBalance},
		{e.org, e.member, `{"lines": [{"quantity": 1}], "client": {"client_type": "vip"}}`, problem.Invalid},
		{e.org, e.member, `{"lines": [{"quantity": 1}], "client": {"first_name": "` + strings.Repeat("n", 201) + `"}}`, problem.Invalid},
	}
	for _, c := range cases {
		if _, err := ingest.NewService(e.db, nil).CreateAppOrder(ctx, c.org, c.actor, e.order(c.body)); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.body, err, c.want)
		}
	}
	if after := e.counts(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("refusals wrote rows: %v -> %v", before, after)
	}
}

func newClient(store uuid.UUID, fields string) ingest.NewClient {
	var in ingest.NewClient
	if err := json.Unmarshal([]byte(fields), &in); err != nil {
		panic(err)
	}
	s := store.String()
	in.StoreID = &s
	return in
}

func clientFields(t *testing.T, body string) ingest.ClientFields {
	t.Helper()
	var f ingest.ClientFields
	if err := json.Unmarshal([]byte(body), &f); err != nil {
		t.Fatal(err)
	}
	return f
}

func ptr[T any](v T) *T { return &v }

func TestClientCreateAndEdit(t *testing.T) {
	e := newAppEnv(t)
	ctx := context.Background()
	c, err := ingest.NewService(e.db, nil).CreateClient(ctx, e.org, e.member, newClient(e.store, `{"email": " Dee@Example.com ", "display_name": "Dee",
		"first_name": "D", "last_name": "E", "phone": "+44", "client_type": "wholesale", "tags": ["vip", "b2b"],
		"billing_address": {"address_line1": "1 Way", "city": "Leeds", "state": "", "postal_code": "LS1", "country": "GB"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if *c.Email != "Dee@Example.com" || c.ClientType != "wholesale" || len(c.Tags) != 2 || string(c.BillingAddress) == "null" || c.Source != nil {
		t.Fatalf("created %+v", c)
	}
	// Nothing changes: no event, no audit row, no updated_at change.
	same, err := ingest.NewService(e.db, nil).UpdateClient(ctx, e.member, c.ID, clientFields(t, `{"email": "Dee@Example.com", "tags": ["vip", "b2b"], "unknown": 1}`))
	if err != nil || !same.UpdatedAt.Equal(c.UpdatedAt) {
		t.Fatalf("no-op edit %+v, %v", same, err)
	}
	// null clears each optional field; client_type goes back to its default.
	cleared, err := ingest.NewService(e.db, nil).UpdateClient(ctx, e.member, c.ID, clientFields(t, `{"email": null, "display_name": null,
		"first_name": null, "last_name": null, "phone": null, "client_type": null, "tags": null, "billing_address": null}`))
	if err != nil {
		t.Fatal(err)
	}
	if cl := cleared; cl.Email != nil || cl.DisplayName != "" || cl.FirstName != "" || cl.Phone != "" || cl.ClientType != "retail" ||
		len(cl.Tags) != 0 || string(cl.BillingAddress) != "null" || !cl.UpdatedAt.After(c.UpdatedAt) {
		t.Fatalf("cleared %+v", cl)
	}
	// Only the fields sent change.
	renamed, err := ingest.NewService(e.db, nil).UpdateClient(ctx, e.member, c.ID, clientFields(t, `{"first_name": "Deirdre"}`))
	if err != nil || renamed.FirstName != "Deirdre" || renamed.LastName != "" || renamed.ClientType != "retail" {
		t.Fatalf("renamed %+v, %v", renamed, err)
	}
	if got := e.eventTypes(); fmt.Sprint(got) != fmt.Sprint([]string{events.ClientCreated, events.ClientUpdated, events.ClientUpdated}) {
		t.Fatalf("events %v", got)
	}
	var actions []string
	e.db.Raw(`SELECT action FROM audit_log ORDER BY created_at`).Find(&actions)
	if fmt.Sprint(actions) != "[client.create client.update client.update]" {
		t.Fatalf("audit %v", actions)
	}
}

func TestClientEmailsAreOnePerStore(t *testing.T) {
	e := newAppEnv(t)
	ctx := context.Background()
	a, err := ingest.NewService(e.db, nil).CreateClient(ctx, e.org, e.member, newClient(e.store, `{"email": "a@example.com"}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ingest.NewService(e.db, nil).CreateClient(ctx, e.org, e.member, newClient(e.store, `{"email": "b@example.com"}`))
	if err != nil {
		t.Fatal(err)
	}
	before := e.counts()
	if _, err := ingest.NewService(e.db, nil).CreateClient(ctx, e.org, e.member, newClient(e.store, `{"email": "A@EXAMPLE.com"}`)); !errors.Is(err, problem.Conflict) {
		t.Fatalf("second client with an email: %v", err)
	}
	if _, err := ingest.NewService(e.db, nil).UpdateClient(ctx, e.member, b.ID, clientFields(t, `{"email": "a@example.com"}`)); !errors.Is(err, problem.Conflict) {
		t.Fatalf("edit to a taken email: %v", err)
	}
	if after := e.counts(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("refusals wrote rows: %v -> %v", before, after)
	}
	// A client keeps its own email in another case; another store may hold the same address.
	if _, err := ingest.NewService(e.db, nil).UpdateClient(ctx, e.member, a.ID, clientFields(t, `{"email": "A@example.com"}`)); err != nil {
		t.Fatal(err)
	}
	second, _ := workspace.NewService(e.db).CreateStore(ctx, e.org, "Second", "EUR")
	if _, err := ingest.NewService(e.db, nil).CreateClient(ctx, e.org, e.member, newClient(second.ID, `{"email": "a@example.com"}`)); err != nil {
		t.Fatal(err)
	}
}

func TestClientRefusalsChangeNothing(t *testing.T) {
	e := newAppEnv(t)
	ctx := context.Background()
	c, err := ingest.NewService(e.db, nil).CreateClient(ctx, e.org, e.member, newClient(e.store, `{"first_name": "Zed"}`))
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := ingest.NewService(e.db, nil).CreateClient(ctx, e.otherOrg, e.otherOwner, newClient(e.otherStore, `{"first_name": "Far"}`))
	if err != nil {
		t.Fatal(err)
	}
	before := e.counts()
	long := func(field string, n int) string { return `{"` + field + `": "` + strings.Repeat("x", n) + `"}` }
	edits := []struct {
		id    uuid.UUID
		actor uuid.UUID
		body  string
		want  error
		field string
	}{
		{theirs.ID, e.member, `{"first_name": "Mine"}`, problem.NotFound, ""},
		{uuid.New(), e.member, `{}`, problem.NotFound, ""},
		{c.ID, e.otherOwner, `{"first_name": "Mine"}`, problem.NotFound, ""},
		{c.ID, e.member, `{"email": "not-an-address"}`, problem.Invalid, "email"},
		{c.ID, e.member, `{"client_type": "vip"}`, problem.Invalid, "client_type"},
		{c.ID, e.member, long("email", 321), problem.Invalid, "email"},
		{c.ID, e.member, long("phone", 201), problem.Invalid, "phone"},
		{c.ID, e.member, long("display_name", 201), problem.Invalid, "display_name"},
		{c.ID, e.member, `{"tags": ["` + strings.Repeat("t", 101) + `"]}`, problem.Invalid, "tags[0]"},
		{c.ID, e.member, `{"tags": [` + strings.TrimSuffix(strings.Repeat(`"t",`, 101), ",") + `]}`, problem.Invalid, "tags"},
		{c.ID, e.member, `{"billing_address": {"city": "` + strings.Repeat("c", 201) + `"}}`, problem.Invalid, "billing_address.city"},
	}
	for _, ed := range edits {
		_, err := ingest.NewService(e.db, nil).UpdateClient(ctx, ed.actor, ed.id, clientFields(t, ed.body))
		if !errors.Is(err, ed.want) || !strings.HasPrefix(problem.Detail(err), ed.field) {
			t.Errorf("%.60s: %v, want %v naming %q", ed.body, err, ed.want, ed.field)
		}
	}
	creates := []struct {
		org, actor uuid.UUID
		in         ingest.NewClient
		want       error
	}{
		{e.org, e.otherOwner, newClient(e.store, `{}`), problem.NotFound},
		{e.org, e.member, newClient(e.otherStore, `{}`), problem.NotFound},
		{e.org, e.member, ingest.NewClient{}, problem.Invalid},
	}
	for i, cr := range creates {
		if _, err := ingest.NewService(e.db, nil).CreateClient(ctx, cr.org, cr.actor, cr.in); !errors.Is(err, cr.want) {
			t.Errorf("create %d: %v, want %v", i, err, cr.want)
		}
	}
	if after := e.counts(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("refusals wrote rows: %v -> %v", before, after)
	}
}

// An operator's order is the integration create: a new order with a new client sends its claim and
// both inserts in one pgx batch with the BEGIN, so GORM runs only the checks before the transaction
// (the actor's role, the store) and the audit row inside it; the events go with the COMMIT.
func TestAppOrderSendsItsInsertsInOneBatch(t *testing.T) {
	e := newAppEnv(t)
	var statements []string
	count := func(tx *gorm.DB) { statements = append(statements, tx.Statement.SQL.String()) }
	cb := e.db.Callback()
	for _, err := range []error{cb.Create().After("gorm:create").Register("test:count", count),
		cb.Query().After("gorm:query").Register("test:count", count), cb.Raw().After("gorm:raw").Register("test:count", count),
		cb.Row().After("gorm:row").Register("test:count", count), cb.Update().After("gorm:update").Register("test:count", count)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	res, err := ingest.NewService(e.db, nil).CreateAppOrder(context.Background(), e.org, e.member, e.order(`{"external_id": "POS-1",
		"lines": [{"quantity": 1, "unit_price_cents": 1500}], "client": {"email": "new@example.com"}}`))
	if err != nil || res.Duplicate || res.ClientID == nil {
		t.Fatalf("create: %+v, %v", res, err)
	}
	if len(statements) != 3 {
		t.Fatalf("GORM ran %d statements, want 3 (role, store, audit):\n%s", len(statements), strings.Join(statements, "\n"))
	}
}
