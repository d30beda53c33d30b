package console_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"wds/internal/ingest"
	"wds/models"
)

// The vendors and clients pages use one word each (Vendors, never "supplier"), a client's Type is
// chosen from the types the service takes, email inputs are email inputs sized for one, and an
// order whose client has only an email shows that email once.
func TestTheCRMPagesSpeakOneWordAndShowAnEmailOnce(t *testing.T) {
	e := newEnv(t)
	c, csrf := e.signIn(e.ownerToken)
	var store models.Store
	e.db.Take(&store)
	s := store.ID.String()
	e.do(c, "POST", "/console/vendors", url.Values{"csrf": {csrf}, "store_id": {s}, "name": {"Clay"}})
	_, page := e.do(c, "GET", "/console/vendors", nil)
	if strings.Contains(strings.ToLower(page), "supplier") || !strings.Contains(page, "<h2>Add a vendor</h2>") {
		t.Errorf("the vendors page says supplier or lacks its add form:\n%s", page)
	}
	if !strings.Contains(page, `name="email" class="email"`) {
		t.Errorf("the vendor grid's email input is not sized for an email:\n%s", page)
	}

	res, _ := e.do(c, "POST", "/console/clients", url.Values{"csrf": {csrf}, "store_id": {s}, "email": {"ada.lovelace@example.test"}, "client_type": {"wholesale"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("add client: %d", res.StatusCode)
	}
	_, page = e.do(c, "GET", "/console/clients", nil)
	if strings.Contains(page, `<input name="client_type"`) || strings.Contains(page, `name="client_type" value=`) {
		t.Errorf("the client type is typed, not chosen:\n%s", page)
	}
	if !regexp.MustCompile(`<select form="client-[^"]+" name="client_type" aria-labelledby="c-type"><option>retail</option><option selected>wholesale</option></select>`).MatchString(page) ||
		!strings.Contains(page, `<select name="client_type"><option>retail</option><option>wholesale</option></select>`) {
		t.Errorf("the client type selects lack the types or the row's own:\n%s", page)
	}

	var client struct{ ID string }
	e.db.Raw(`SELECT id::text AS id FROM clients WHERE email = 'ada.lovelace@example.test'`).Find(&client)
	email := "ada.lovelace@example.test"
	order, err := ingest.NewService(e.db, nil).CreateAppOrder(context.Background(), e.org.ID, e.userOf(e.ownerToken), ingest.AppOrder{StoreID: &s,
		Order: ingest.Order{Client: &ingest.Client{ExternalID: "ada", Email: &email}, Lines: []ingest.Line{{Description: "Mug", Quantity: 1, UnitPriceCents: 900}}}})
	if err != nil {
		t.Fatal(err)
	}
	_, page = e.do(c, "GET", "/console/orders/"+order.ID.String(), nil)
	if n := strings.Count(page, email); n != 1 {
		t.Errorf("the order page shows the client's email %d times, want once:\n%s", n, page)
	}
}
