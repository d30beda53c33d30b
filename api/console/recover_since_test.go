package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"wds/internal/delivery"
	"wds/internal/events"
	"wds/models"
	"wds/test/deliverytest"
	"wds/workflows/contract"
)

// A since Count refuses answers 422 beside its field, with the rest of the endpoint's page as
// without it; a member, who has no Recover form, gets the page as it is.
func TestARefusedSinceAnswersBesideItsField(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	c, csrf := e.signIn(e.ownerToken)
	e.do(c, "POST", "/console/webhooks", url.Values{"csrf": {csrf}, "url": {"https://127.0.0.1/h"}, "events": {"order.created"}})
	var ep models.Endpoint
	e.db.Take(&ep)
	ev, _ := deliverytest.Emit(ctx, e.db, e.org.ID, nil, events.OrderCreated, map[string]any{"id": uuid.New()})
	d := &models.Delivery{ID: uuid.New(), OrgID: e.org.ID, EventID: ev, EndpointID: ep.ID, EventType: events.OrderCreated, ChainID: uuid.New(),
		WorkflowID: contract.EventWorkflowID(ev), Attempt: 1, Status: models.StatusDropped, Error: "timeout", AttemptedAt: time.Now()}
	if _, err := delivery.RecordAttempt(ctx, e.db, d); err != nil {
		t.Fatal(err)
	}
	path := "/console/webhooks/" + ep.ID.String()
	for since, detail := range map[string]string{time.Now().Add(time.Hour).UTC().Format(time.RFC3339): "since is in the future",
		"soon": "since must be a date and time"} {
		res, page := e.do(c, "GET", path+"?recover_since="+url.QueryEscape(since), nil)
		if res.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(page, `id="recover-error" role="alert"><code>invalid_parameter</code> `+detail) ||
			!strings.Contains(page, `<tr id="delivery-`+d.ID.String()+`">`) || !strings.Contains(page, "Every attempt, newest first, 20 a page") ||
			strings.Contains(page, `class="error"`) || strings.Contains(page, `id="preview"`) || !strings.Contains(page, `value="`+since+`"`) {
			t.Fatalf("since %q: %d\n%s", since, res.StatusCode, page)
		}
	}
	if _, page := e.do(c, "GET", path, nil); strings.Count(page, `?recover_since=`) < 4 || !strings.Contains(page, `>7 d</a>`) {
		t.Fatalf("the presets:\n%s", page)
	}
	m, _ := e.signIn(e.memberToken)
	if res, page := e.do(m, "GET", path+"?recover_since=soon", nil); res.StatusCode != http.StatusOK || strings.Contains(page, "recover-error") {
		t.Fatalf("a member's page: %d\n%s", res.StatusCode, page)
	}
}
