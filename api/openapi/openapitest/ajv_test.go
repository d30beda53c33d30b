package openapitest

import (
	"strings"
	"testing"
)

// The strict validator runs over the served documents: it accepts an answer they describe and names
// what is wrong in one they do not, so a check that passes has been made by both validators.
func TestAjvHoldsAnswersToTheDocuments(t *testing.T) {
	strict, err := startAjv(t)
	if err != nil {
		t.Fatal(err)
	}
	good := `{"error":"not_found","detail":"order not found"}`
	if err := strict.validate("read", "/v1/orders/{id}", "GET", 404, []byte(good)); err != nil {
		t.Errorf("a documented error: %v", err)
	}
	for body, want := range map[string]string{
		`{"error":"not_a_code","detail":"x"}`:    "allowed values",
		`{"error":"not_found"}`:                  "detail",
		`{"rows":[{"id":1}],"next_cursor":null}`: "",
	} {
		path, status := "/v1/orders/{id}", 404
		if strings.HasPrefix(body, `{"rows"`) {
			path, status = "/v1/orders", 200
		}
		err := strict.validate("read", path, "GET", status, []byte(body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error naming %q", body, err, want)
		}
	}
}
