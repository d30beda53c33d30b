package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"google.golang.org/grpc"

	"wds/internal/dev/temporaldev"
	"wds/internal/platform/temporalclient"
	"wds/workflows/contract"
)

// refusingAdmin is a namespace whose search attributes the worker may list but not change, as on
// Temporal Cloud without the namespace admin's right.
type refusingAdmin struct {
	temporalclient.SearchAttributeAdmin
}

func (refusingAdmin) AddSearchAttributes(context.Context, *operatorservice.AddSearchAttributesRequest, ...grpc.CallOption) (*operatorservice.AddSearchAttributesResponse, error) {
	return nil, serviceerror.NewPermissionDenied("Request unauthorized.", "")
}

// A release that adds search attributes meets a namespace set up by an older one (only the older
// attributes registered). Where the worker may not add the new ones, it says what to run and every
// order is still delivered, its workflow started without them; where it may, it adds them, and the
// next order's workflow is found by its order number and id.
func TestANamespaceWithOnlyTheOlderSearchAttributesKeepsDelivering(t *testing.T) {
	bin, err := temporaldev.FindBinary()
	if err != nil {
		t.Fatal(err)
	}
	older := temporal.NewSearchAttributes(contract.AttrOrgID.ValueSet(""), contract.AttrEventID.ValueSet(""),
		contract.AttrEventType.ValueSet(""), contract.AttrDeliveryStatus.ValueSet(""), contract.AttrEndpointIDs.ValueSet(nil))
	srv, err := testsuite.StartDevServer(context.Background(), testsuite.DevServerOptions{ExistingPath: bin, LogLevel: "error",
		ClientOptions: &client.Options{Logger: temporalclient.QuietLogger()}, SearchAttributes: older,
		ExtraArgs: []string{"--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal"}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c := srv.Client()

	var logged bytes.Buffer
	log := logrus.New()
	log.SetOutput(&logged)
	if err := temporalclient.EnsureSearchAttributes(context.Background(), refusingAdmin{c.OperatorService()}, "default", log); err != nil {
		t.Fatalf("a refusal to add the optional attributes stopped the worker: %v", err)
	}
	for _, cmd := range []string{"temporal operator search-attribute create --namespace default --name WdsOrderNumber --type Int",
		"temporal operator search-attribute create --namespace default --name WdsOrderId --type Keyword"} {
		if !strings.Contains(logged.String(), cmd) {
			t.Errorf("the worker's warning does not say %q:\n%s", cmd, logged.String())
		}
	}

	h := newHarness(t, c)
	h.starter.Log, h.starter.Namespace = log, "default"
	h.startWorker()
	rc := newReceiver(t, ok)
	h.endpoint(rc, 3, "order.created")
	number := h.deliveredOrder(rc, "ord-older-1")
	if n := h.workflowsWith("WdsEventType = 'order.created'"); n != 1 {
		t.Fatalf("%d order.created workflows, want 1", n)
	}
	if !strings.Contains(logged.String(), "workflows start without them") {
		t.Errorf("the start without the order's attributes was not logged:\n%s", logged.String())
	}
	h.stop()

	if err := temporalclient.EnsureSearchAttributes(context.Background(), c.OperatorService(), "default", log); err != nil {
		t.Fatal(err)
	}
	h = newHarness(t, c) // a process started after the attributes were added
	h.startWorker()
	rc = newReceiver(t, ok)
	h.endpoint(rc, 3, "order.created")
	number = h.deliveredOrder(rc, "ord-older-2")
	var orderID string
	h.db.Raw(`SELECT id::text FROM orders WHERE org_id = ? AND number = ?`, h.org, number).Scan(&orderID)
	waitFor(t, 10*time.Second, "the workflow found by its order", func() bool {
		return h.workflowsWith(fmt.Sprintf("WdsOrderNumber = %d AND WdsOrderId = '%s'", number, orderID)) == 1
	})
}

// deliveredOrder creates an order over the Integration API, waits for its order.created to reach rc
// and returns the order's number.
func (h *harness) deliveredOrder(rc *receiver, externalID string) int64 {
	h.t.Helper()
	before := rc.count()
	if status, out := h.order(externalID); status != http.StatusCreated {
		h.t.Fatalf("create order: %d %v", status, out)
	}
	waitFor(h.t, 10*time.Second, "the order's delivery", func() bool { return rc.count() == before+1 })
	var number int64
	h.db.Raw(`SELECT number FROM orders WHERE org_id = ? AND external_id = ?`, h.org, externalID).Scan(&number)
	return number
}
