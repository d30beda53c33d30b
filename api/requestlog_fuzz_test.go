package api_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"

	"wds/api"
	"wds/api/openapi/openapitest"
)

// FuzzRequestID feeds any X-Request-Id: the answer echoes either exactly that id, when it is short
// and plain, or a fresh UUID, and never anything a log line or header could be confused by.
func FuzzRequestID(f *testing.F) {
	for _, s := range []string{"", "abc-123", "req:1.2_3", "two words", "x\r\nSet-Cookie: a=b", `"},{"level":"panic`,
		string(make([]byte, 129)), "\u00e9t\u00e9", uuid.NewString()} {
		f.Add(s)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	r, err := api.NewRouter(api.Deps{Log: log})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, id string) {
		req := httptest.NewRequest(http.MethodGet, "/v1/health", nil)
		req.Header[api.HeaderRequestID] = []string{id}
		rec := openapitest.Serve(t, r, req)
		got := rec.Header().Get(api.HeaderRequestID)
		if got == id {
			if len(id) == 0 || len(id) > 128 {
				t.Fatalf("echoed an id of length %d", len(id))
			}
			for _, c := range id {
				if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-') {
					t.Fatalf("echoed %q with character %q", id, c)
				}
			}
			return
		}
		if uuid.Validate(got) != nil {
			t.Fatalf("id %q answered with %q, neither it nor a UUID", id, got)
		}
	})
}
