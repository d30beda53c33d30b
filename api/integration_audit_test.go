package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"wds/internal/apikeys"
	"wds/internal/platform/secrets"
	"wds/internal/workspace"
	"wds/models"
)

// An integration key's cancel and refund are in the audit log with the key as the actor, in the
// transaction of the change: a refused refund or cancel, and one that changes nothing (already
// refunded or cancelled), writes no row. The Operator API's audit log names the key in actor_key_id
// (actor_id null), so "who cancelled order 1017?" has an answer.
func TestIntegrationCancelAndRefundAreAuditedWithTheKeyAsActor(t *testing.T) {
	e := newIntEnv(t)
	k := e.mint(apikeys.NewIntegrationKey{Label: "Shop"})
	o := e.post("/integrations/v1/orders", k, orderBody("audited", 0, 0, ptr[int64](1000), [2]int64{1, 1000})).want(t, http.StatusCreated, "")
	keyRows := func() int64 { return e.count(`SELECT count(*) FROM audit_log WHERE actor_key_id = ?`, k.ID) }

	refund := "/integrations/v1/payments/" + o["payment_id"].(string) + "/refund"
	e.post(refund, k, `{"amount_cents":999}`).want(t, http.StatusUnprocessableEntity, "partial_refund_not_supported")
	e.post("/integrations/v1/orders/00000000-0000-4000-8000-000000000000/cancel", k, "").want(t, http.StatusNotFound, "not_found")
	if n := keyRows(); n != 0 {
		t.Fatalf("refused requests wrote %d audit rows", n)
	}
	e.post(refund, k, `{"amount_cents":1000}`).want(t, http.StatusOK, "")
	e.post(refund, k, "").want(t, http.StatusOK, "")
	cancel := "/integrations/v1/orders/" + o["id"].(string) + "/cancel"
	e.post(cancel, k, "").want(t, http.StatusOK, "")
	e.post(cancel, k, "").want(t, http.StatusOK, "")
	if n := keyRows(); n != 2 {
		t.Fatalf("a refund and a cancel, each repeated, wrote %d audit rows with the key as actor, want 2", n)
	}

	tok, hash, err := secrets.NewAPIKey(workspace.OperatorTokenPrefix)
	if err != nil {
		t.Fatal(err)
	}
	e.db.Model(&models.User{}).Where("id = ?", e.owner.ID).Update("token_hash", hash)
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/admin/v1/orgs/"+e.org.ID.String()+"/audit-log?limit=10", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	e.validate(req, res, body) // the answer as the OpenAPI document describes it
	var page struct {
		Rows []struct {
			ActorID    *string        `json:"actor_id"`
			ActorKeyID *string        `json:"actor_key_id"`
			Action     string         `json:"action"`
			TargetType string         `json:"target_type"`
			TargetID   string         `json:"target_id"`
			Details    map[string]any `json:"details"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(body, &page); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("audit log: %d %v", res.StatusCode, err)
	}
	want := map[string]string{"order.cancel": "order " + o["id"].(string), "payment.refund": "payment " + o["payment_id"].(string)}
	for _, r := range page.Rows {
		target, ok := want[r.Action]
		if !ok {
			continue
		}
		delete(want, r.Action)
		if r.ActorID != nil || r.ActorKeyID == nil || *r.ActorKeyID != k.ID.String() || r.TargetType+" "+r.TargetID != target {
			t.Errorf("%s: actor %v, key %v, target %s %s; want the key and %s", r.Action, r.ActorID, r.ActorKeyID, r.TargetType, r.TargetID, target)
		}
		if r.Action == "payment.refund" && (r.Details["order_id"] != o["id"] || r.Details["amount_cents"] != float64(1000)) {
			t.Errorf("refund details %v", r.Details)
		}
	}
	if len(want) != 0 {
		t.Fatalf("the Operator API's audit log lacks %v", want)
	}
}
