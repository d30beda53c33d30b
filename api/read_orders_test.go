package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"wds/internal/workspace"
)

func catalogStore(ctx context.Context, e *readEnv) (uuid.UUID, error) {
	s, err := workspace.NewService(e.db).CreateStore(ctx, e.org.ID, "second", "USD")
	if err != nil {
		return uuid.Nil, err
	}
	return s.ID, nil
}

// insertOrder writes an order with two lines and a payment directly, as any writer would.
func insertOrder(t *testing.T, e *readEnv, orgID, storeID uuid.UUID) uuid.UUID {
	t.Helper()
	id := uuid.New()
	err := e.db.Exec(`INSERT INTO orders (id, org_id, store_id, number, currency, subtotal_cents, shipping_cents,
		tax_cents, total_cents, amount_paid_cents, status, metadata)
		VALUES (?, ?, ?, nextval(wds_order_number_sequence(?)::regclass), 'EUR', 2500, 500, 200, 3200, 1000, 'partially_paid', '{"channel":"web"}')`,
		id, orgID, storeID, orgID).Error
	if err != nil {
		t.Fatal(err)
	}
	e.db.Exec(`INSERT INTO order_lines (order_id, position, description, quantity, unit_price_cents, metadata)
		VALUES (?, 0, 'Mug', 2, 1000, '{"sku":"MUG"}'), (?, 1, 'Tea', 1, 500, '{}')`, id, id)
	e.db.Exec(`INSERT INTO payments (id, order_id, amount_cents, method) VALUES (?, ?, 1000, 'card')`, uuid.New(), id)
	return id
}

func TestOrdersListAndGet(t *testing.T) {
	e := newReadEnv(t)
	id := insertOrder(t, e, e.org.ID, e.store.ID)
	other, otherStore, _ := mustOrg(t, e.db, "Other")
	theirs := insertOrder(t, e, other.ID, otherStore.ID)

	status, list := e.get("/v1/orders", e.key)
	p := decodePage(t, list)
	if status != http.StatusOK || len(p.Rows) != 1 || p.Rows[0].ID != id || p.NextCursor != nil {
		t.Fatalf("orders: %s", list)
	}
	status, body := e.get("/v1/orders/"+id.String(), e.key)
	var o struct {
		Number          string `json:"number"`
		TotalCents      int64  `json:"total_cents"`
		AmountPaidCents int64  `json:"amount_paid_cents"`
		Lines           []struct {
			Quantity   int64          `json:"quantity"`
			TotalCents int64          `json:"total_cents"`
			Metadata   map[string]any `json:"metadata"`
		} `json:"lines"`
		Payments []struct {
			AmountCents int64 `json:"amount_cents"`
			Refunded    bool  `json:"refunded"`
		} `json:"payments"`
		Source struct{ Kind string } `json:"source"`
	}
	if err := json.Unmarshal(body, &o); err != nil || status != http.StatusOK {
		t.Fatalf("order: %d %s", status, body)
	}
	if o.Number != "1001" || o.TotalCents != 3200 || o.AmountPaidCents != 1000 || len(o.Lines) != 2 ||
		o.Lines[0].TotalCents != 2000 || o.Lines[0].Metadata["sku"] != "MUG" || len(o.Payments) != 1 ||
		o.Payments[0].Refunded || o.Source.Kind != "app" {
		t.Fatalf("order object wrong: %s", body)
	}
	// The whole object is compact, nested lines and payments too, as encoding/json writes it, and a
	// payment that named no provider says null.
	for _, b := range [][]byte{body, list} {
		var compact bytes.Buffer
		if err := json.Compact(&compact, b); err != nil || !bytes.Equal(compact.Bytes(), b) {
			t.Fatalf("the answer is not compact JSON: %s", b)
		}
	}
	if !bytes.Contains(body, []byte(`"provider":null,"provider_payment_id":null`)) {
		t.Fatalf("a payment without a provider: %s", body)
	}
	status, body = e.get("/v1/orders/"+theirs.String(), e.key)
	wantError(t, status, body, http.StatusNotFound, "not_found")
	_ = context.Background()
}

func TestClientsList(t *testing.T) {
	e := newReadEnv(t)
	id := uuid.New()
	e.db.Exec(`INSERT INTO clients (id, org_id, store_id, email, display_name, tags, billing_address, source_label)
		VALUES (?, ?, ?, 'a@example.com', 'Ann', '{vip}', '{"city":"Oslo"}', 'shopify')`, id, e.org.ID, e.store.ID)
	status, body := e.get("/v1/clients", e.key)
	p := decodePage(t, body)
	if status != http.StatusOK || len(p.Rows) != 1 || p.Rows[0].ID != id {
		t.Fatalf("clients: %s", body)
	}
	if status, body := e.get("/v1/clients/"+id.String(), e.key); status != http.StatusOK {
		t.Fatalf("client: %d %s", status, body)
	}
}
