// Package openapitest holds every answer a test receives to the served OpenAPI documents, so the
// documents and the code cannot drift apart. Tests send their requests through Client (a real
// HTTP server) or Serve (a handler in process); each answer is checked against the document whose
// paths it belongs to, and a documented path's answer that the document does not describe, or an
// undocumented API path that answers anything but 404, fails the test.
package openapitest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"wds/api/openapi"
)

// document is one served description and the path prefixes it covers.
type document struct {
	name, key string
	prefixes  []string
	json      func() []byte
}

// documents are tried in order; the Read API's prefix is the widest, so it comes last.
var documents = []document{
	{"Integration API", "integration", []string{"/integrations/v1/"}, openapi.IntegrationJSON},
	{"Operator API", "operator", []string{"/admin/v1/"}, openapi.OperatorJSON},
	{"Read API", "read", []string{"/v1/"}, openapi.ReadJSON},
}

// undocumented are served paths that no document describes on purpose: the YAML form of a
// document, the console's HTML pages and the metrics listener.
var undocumented = []string{"/api/openapi.yaml", "/console", "/metrics"}

var (
	loadOnce sync.Once
	routes   []routers.Router
	loadErr  error
)

func load() ([]routers.Router, error) {
	loadOnce.Do(func() {
		for _, d := range documents {
			doc, err := openapi3.NewLoader().LoadFromData(d.json())
			if err != nil {
				loadErr = fmt.Errorf("the %s document does not load: %w", d.name, err)
				return
			}
			r, err := gorillamux.NewRouter(doc)
			if err != nil {
				loadErr = fmt.Errorf("the %s document does not route: %w", d.name, err)
				return
			}
			routes = append(routes, r)
		}
	})
	return routes, loadErr
}

// Check holds one answer to the document that covers the request's path.
// Both kin-openapi and Ajv in strict mode (ajv.go) must accept a JSON answer.
func Check(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	strict, err := startAjv(t)
	if err != nil {
		t.Fatal(err)
	}
	if err := check(strict, req, status, header, body); err != nil {
		t.Errorf("%s %s answered %d: %v\n%s", req.Method, req.URL.Path, status, err, body)
	}
}

func check(strict *ajv, req *http.Request, status int, header http.Header, body []byte) error {
	rs, err := load()
	if err != nil {
		return err
	}
	path := req.URL.Path
	for _, p := range undocumented {
		if strings.HasPrefix(path, p) {
			return nil
		}
	}
	for i, d := range documents {
		if !hasPrefix(path, d.prefixes) {
			continue
		}
		route, params, err := rs[i].FindRoute(req)
		if err != nil {
			if status == http.StatusNotFound {
				return nil // a probe of a path no API serves
			}
			return fmt.Errorf("not in the %s document, yet answered: %w", d.name, err)
		}
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, ExcludeRequestBody: true}}
		out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header,
			Body: io.NopCloser(bytes.NewReader(body)), Options: &openapi3filter.Options{IncludeResponseStatus: true}}
		if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
			return fmt.Errorf("the %s document does not describe this answer: %w", d.name, err)
		}
		if !strings.HasPrefix(header.Get("Content-Type"), "application/json") || len(body) == 0 {
			return nil
		}
		if err := strict.validate(d.key, route.Path, req.Method, status, body); err != nil {
			return fmt.Errorf("Ajv in strict mode finds the %s document does not describe this answer: %w", d.name, err)
		}
		return nil
	}
	if status != http.StatusNotFound {
		return fmt.Errorf("no document covers this path, yet it answered")
	}
	return nil
}

func hasPrefix(path string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// Client is an HTTP client whose every answer, each redirect's included, is checked with Check;
// base is its transport (nil: http.DefaultTransport).
func Client(t testing.TB, base http.RoundTripper) *http.Client {
	if base == nil {
		base = http.DefaultTransport
	}
	return &http.Client{Transport: &checking{t: t, base: base}}
}

type checking struct {
	t    testing.TB
	base http.RoundTripper
}

func (c *checking) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := c.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	Check(c.t, req, res.StatusCode, res.Header, body)
	return res, nil
}

// Serve runs req through h in process and checks the answer, for handler tests without a server.
func Serve(t testing.TB, h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	Check(t, req, w.Code, w.Header(), w.Body.Bytes())
	return w
}
