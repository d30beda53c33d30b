package models_test

import (
	"testing"

	"wds/internal/platform/secrets"
	"wds/models"
)

// The sealed set is the endpoint's only while the column beside it is its names with blank values;
// a row written before values were sealed, or rewritten since by a version that does not seal them
// (during a roll-out), is read from the plaintext column.
func TestHeadersAreReadFromWhicheverFormWasWrittenLast(t *testing.T) {
	box, _ := secrets.NewBox(secrets.GenerateKey())
	names, sealed, err := models.SealHeaders(box, models.Headers{"Authorization": "Bearer new", "X-Tenant": "acme"})
	if err != nil || len(names) != 2 || names["Authorization"] != "" || names["X-Tenant"] != "" {
		t.Fatalf("SealHeaders = %v, %v", names, err)
	}
	cases := []struct {
		name        string
		stored      models.Headers
		sealed      []byte
		want        string // Authorization as read
		inPlaintext bool
	}{
		{"sealed", names, sealed, "Bearer new", false},
		{"written before sealing", models.Headers{"Authorization": "Bearer legacy"}, nil, "Bearer legacy", true},
		{"a value rewritten by an older version", models.Headers{"Authorization": "Bearer edited", "X-Tenant": "acme"}, sealed, "Bearer edited", true},
		{"a name removed by an older version", models.Headers{"X-Tenant": ""}, sealed, "", true},
		{"cleared by an older version", models.Headers{}, sealed, "", true},
	}
	for _, c := range cases {
		got, plain, err := models.HeadersFromPlaintext(box, c.stored, c.sealed)
		if err != nil || got["Authorization"] != c.want || plain != c.inPlaintext {
			t.Errorf("%s: %v plaintext=%v %v", c.name, got, plain, err)
		}
	}
	other, _ := secrets.NewBox(secrets.GenerateKey())
	if _, err := models.OpenHeaders(other, names, sealed); err == nil {
		t.Fatal("headers sealed under another key opened")
	}
}
