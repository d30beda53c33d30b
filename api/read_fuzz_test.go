package api_test

import (
	"net/http"
	"net/url"
	"testing"

	"wds/api/openapi/openapitest"
)

// FuzzReadAPIInput sends arbitrary paths and query strings to the Read API: whatever arrives, the
// answer is a deliberate one (never a 500) in the error shape.
func FuzzReadAPIInput(f *testing.F) {
	e := newReadEnv(f)
	mustVendor(f, e.db, e.org.ID, e.store.ID, "v")
	for _, seed := range [][2]string{
		{"/v1/orders", "limit=5"},
		{"/v1/vendors", "limit=-1&cursor_at=2026-01-01T00:00:00Z&cursor_id=x"},
		{"/v1/clients", "cursor_at=9999-12-31T23:59:59.999999999%2B14:00&cursor_id=00000000-0000-0000-0000-000000000000"},
		{"/v1/products/%00", "store_id=%zz"},
		{"/v1/orders/00000000-0000-0000-0000-000000000000", "limit=1e9"},
		{"/v1/vendors", "cursor_at=0001-01-01T00:00:00Z&cursor_id=ffffffff-ffff-ffff-ffff-ffffffffffff"},
		// The event feed: an iterator at the last transaction number, one at the first time and the
		// last id, since at both ends of the times it takes, an empty types.
		{"/v1/events", "after=eyJ2IjoxLCJ4IjoiMTg0NDY3NDQwNzM3MDk1NTE2MTUiLCJ0IjowfQ&types=order.created,webhook.test"},
		{"/v1/events", "after=eyJ2IjoxLCJ4IjoiMyIsImEiOiIwMDAxLTAxLTAxVDAwOjAwOjAwWiIsImkiOiJmZmZmZmZmZi1mZmZmLWZmZmYtZmZmZi1mZmZmZmZmZmZmZmYiLCJ0IjotNjIxMzU1OTY4MDB9"},
		{"/v1/events", "since=9999-12-31T23:59:59-14:00&store_id=00000000-0000-0000-0000-000000000000"},
		{"/v1/events", "since=0001-01-01T00:00:00Z&limit=1e9"},
		{"/v1/events/%00", "types="},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, path, rawQuery string) {
		u := &url.URL{Scheme: "http", Host: e.srv.Listener.Addr().String(), Path: path, RawQuery: rawQuery}
		req, err := http.NewRequest(http.MethodGet, u.String(), nil)
		if err != nil {
			return // not a request a client could send
		}
		req.Header.Set("Authorization", "Bearer "+e.key)
		res, err := openapitest.Client(t, nil).Do(req)
		if err != nil {
			return
		}
		res.Body.Close()
		if res.StatusCode >= 500 {
			t.Fatalf("GET %s?%s answered %d", path, rawQuery, res.StatusCode)
		}
	})
}
