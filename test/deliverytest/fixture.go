// Package deliverytest helps the webhook packages' tests: an org with its webhook services over a
// fresh database (Fixture), a real TLS receiver (Receiver), and events put in the outbox without a
// business operation (Emit).
package deliverytest

import (
	"context"
	"crypto/x509"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/activities"
	"wds/internal/delivery"
	"wds/internal/deliverylog"
	"wds/internal/endpoints"
	"wds/internal/events"
	"wds/internal/eventsearch"
	"wds/internal/platform/egress"
	"wds/internal/platform/secrets"
	"wds/internal/recovery"
	"wds/internal/resend"
	"wds/internal/workspace"
	"wds/models"
	"wds/test/pgtest"
	"wds/workflows/contract"
)

// Fixture is an org with an owner and a member, and the webhook services over a fresh database.
type Fixture struct {
	T   testing.TB
	Ctx context.Context
	DB  *gorm.DB
	Box *secrets.Box
	Svc *endpoints.Service
	// Log is the org's delivery log, unpaced.
	Log *deliverylog.Service
	// Events is the support desk's event search, unpaced.
	Events *eventsearch.Service
	// Resends are the org's re-fires and resends, started by the relay.
	Resends *resend.Service
	// Recoveries are the org's recoveries, started by the relay.
	Recoveries *recovery.Service
	Org        uuid.UUID
	Owner      uuid.UUID
	Member     uuid.UUID
}

func NewFixture(t testing.TB) *Fixture {
	t.Helper()
	ctx := context.Background()
	db := pgtest.New(t)
	box, err := secrets.NewBox(secrets.GenerateKey())
	if err != nil {
		t.Fatal(err)
	}
	org, err := workspace.NewService(db).CreateOrg(ctx, "Acme")
	if err != nil {
		t.Fatal(err)
	}
	owner, _, err := workspace.NewService(db).CreateUser(ctx, org.ID, "owner@acme.test", models.RoleOwner)
	if err != nil {
		t.Fatal(err)
	}
	member, _, err := workspace.NewService(db).CreateUser(ctx, org.ID, "member@acme.test", models.RoleMember)
	if err != nil {
		t.Fatal(err)
	}
	return &Fixture{T: t, Ctx: ctx, DB: db, Box: box, Svc: endpoints.NewService(db, box, endpoints.Options{AllowPrivate: true}),
		Log: deliverylog.NewService(db, box, nil), Events: eventsearch.NewService(db, box, nil), Resends: resend.NewService(db, nil),
		Recoveries: recovery.NewService(db, nil, 0), Org: org.ID, Owner: owner.ID, Member: member.ID}
}

// Hit is one request a Receiver got.
type Hit struct {
	Header http.Header
	Body   []byte
	Path   string
}

// Answer replaces how the receiver answers; nil answers 200 with no body.
func (rc *Receiver) Answer(handle func(w http.ResponseWriter, r *http.Request)) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.handle = handle
}

// Receiver is a real TLS server answering with handle and recording every request.
type Receiver struct {
	Srv    *httptest.Server
	mu     sync.Mutex
	hits   []Hit
	handle func(w http.ResponseWriter, r *http.Request)
}

func NewReceiver(t *testing.T, handle func(w http.ResponseWriter, r *http.Request)) *Receiver {
	rc := &Receiver{handle: handle}
	rc.Srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.hits = append(rc.hits, Hit{Header: r.Header.Clone(), Body: b, Path: r.URL.Path})
		handle := rc.handle
		rc.mu.Unlock()
		if handle != nil {
			handle(w, r)
		}
	}))
	t.Cleanup(rc.Srv.Close)
	return rc
}

func (rc *Receiver) Got() []Hit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]Hit(nil), rc.hits...)
}

func (rc *Receiver) Roots() *x509.CertPool {
	return rc.Srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
}

func (f *Fixture) Endpoint(url string, types ...string) *endpoints.Created {
	f.T.Helper()
	if len(types) == 0 {
		types = []string{events.OrderCreated}
	}
	ep, err := f.Svc.Create(f.Ctx, endpoints.CreateInput{OrgID: f.Org, ActorID: f.Owner, URL: url, EventTypes: types})
	if err != nil {
		f.T.Fatal(err)
	}
	return ep
}

func (f *Fixture) Event(typ string, data any) uuid.UUID {
	f.T.Helper()
	id, err := Emit(f.Ctx, f.DB, f.Org, nil, typ, data)
	if err != nil {
		f.T.Fatal(err)
	}
	return id
}

func (f *Fixture) Acts(rc *Receiver, allowPrivate bool) *activities.Activities {
	f.T.Helper()
	c, err := egress.NewClient(egress.Options{RootCAs: rc.Roots(), AllowPrivate: allowPrivate})
	if err != nil {
		f.T.Fatal(err)
	}
	return &activities.Activities{DB: f.DB, Box: f.Box, HTTP: c}
}

func (f *Fixture) Rows(chainID uuid.UUID) []models.Delivery {
	f.T.Helper()
	var rows []models.Delivery
	if err := f.DB.Where("chain_id = ?", chainID).Order("attempt").Find(&rows).Error; err != nil {
		f.T.Fatal(err)
	}
	return rows
}

func Attempt(ev, ep uuid.UUID, n int, next *time.Time) contract.AttemptInput {
	return contract.AttemptInput{DeliveryID: uuid.New(), EventID: ev, EndpointID: ep, ChainID: uuid.New(),
		WorkflowID: "webhook-event/" + ev.String(), Attempt: n, NextAttemptAt: next}
}

func Later() *time.Time { t := time.Now().Add(time.Minute).UTC().Truncate(time.Microsecond); return &t }

// Create registers an endpoint at url subscribed to order.created.
func (f *Fixture) Create(url string) (*endpoints.Created, error) {
	return f.Svc.Create(f.Ctx, endpoints.CreateInput{OrgID: f.Org, ActorID: f.Owner, URL: url, EventTypes: []string{events.OrderCreated}})
}

// Delivery writes a row as the activity would.
func (f *Fixture) Delivery(ev, ep uuid.UUID, attempt int, status models.Status, at time.Time) models.Delivery {
	d := models.Delivery{ID: uuid.New(), OrgID: f.Org, EventID: ev, EndpointID: ep, EventType: events.OrderCreated,
		ChainID: uuid.New(), WorkflowID: contract.EventWorkflowID(ev), Attempt: attempt, Status: status, AttemptedAt: at}
	if ok, err := delivery.RecordAttempt(f.Ctx, f.DB, &d); err != nil || !ok {
		f.T.Fatalf("record delivery: %v %v", ok, err)
	}
	return d
}
