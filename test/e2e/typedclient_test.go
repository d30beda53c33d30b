package e2e

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"wds/api/openapi/openapitest"
	"wds/internal/apikeys"
	"wds/internal/dev/temporaldev"
	"wds/internal/events"
	"wds/test/npmtest"
)

// typedClientDir holds the integrator's program, its strict compiler options, the linters' rulesets and
// the pinned npm packages (package-lock.json).
const typedClientDir = "../typedclient"

// What an integrator does with the served documents: openapi-typescript generates types from each,
// a strict TypeScript program written against them compiles with no cast, non-null assertion or any
// (nocast.mjs), and runs against a real wds that delivers to a real receiver, every answer it gets
// held to the documents by kin-openapi and Ajv in strict mode on the way; no schema generates as
// Record<string, never>, a type no answer fits; Redocly's recommended ruleset finds no error and
// Spectral's spectral:oas no warning in any of the three.
func TestATypedClientGeneratedFromTheDocumentsCompilesAndRuns(t *testing.T) {
	srv := startTemporal(t, temporaldev.Options{})
	h := newHarness(t, srv.Client())
	h.startWorker()
	ep := h.endpoint(newReceiver(t, ok), 5, events.Types()...)
	ik, err := apikeys.NewService(h.db, h.box).CreateIntegrationKey(h.ctx, apikeys.NewIntegrationKey{OrgID: h.org, StoreID: h.store,
		ActorID: h.owner, Scopes: []string{"orders:write", "orders:cancel", "payments:write", "payments:refund", "clients:write"}})
	if err != nil {
		t.Fatal(err)
	}
	tools := filepath.Join(npmtest.InstallLocked(t, typedClientDir), "node_modules")
	node := npmtest.LookPath(t, "node", "Node.js (Debian: apt-get install nodejs)")
	work := t.TempDir()
	for _, name := range []string{"client.ts", "nocast.mjs", "tsconfig.json", "package.json", ".spectral.yaml", "redocly.yaml"} {
		copyFile(t, filepath.Join(typedClientDir, name), filepath.Join(work, name))
	}
	if err := os.Symlink(tools, filepath.Join(work, "node_modules")); err != nil {
		t.Fatal(err)
	}
	run := func(env []string, name string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(h.ctx, 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir, cmd.Env = work, append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	bin := func(tool string) string { return filepath.Join(tools, ".bin", tool) }
	quiet := []string{"REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true", "NO_UPDATE_NOTIFIER=1"}
	for _, d := range []struct{ name, path string }{
		{"read", "/v1/openapi.json"}, {"integration", "/integrations/v1/openapi.json"}, {"operator", "/admin/v1/openapi.json"},
	} {
		doc := filepath.Join(work, d.name+".json")
		writeFile(t, doc, h.get(d.path))
		types := filepath.Join(work, d.name+".d.ts")
		run(quiet, bin("openapi-typescript"), doc, "-o", types)
		neverHolds(t, types)
		run(quiet, bin("redocly"), "lint", "--config", "redocly.yaml", "--format", "stylish", doc)
		run(quiet, bin("spectral"), "lint", "--ruleset", ".spectral.yaml", "--fail-severity", "warn", doc)
	}
	run(nil, node, "nocast.mjs", "client.ts")
	run(nil, bin("tsc"), "-p", ".")
	out := run([]string{"WDS_URL=" + h.checkingProxy(), "WDS_READ_KEY=" + h.readWriteKey, "WDS_INTEGRATION_KEY=" + ik.Plaintext,
		"WDS_OPERATOR_TOKEN=" + h.ownerToken, "WDS_ORG_ID=" + h.org.String(), "WDS_ENDPOINT_ID=" + ep.id.String()},
		node, filepath.Join("out", "client.js"))
	if !strings.Contains(out, "ok: order") {
		t.Fatalf("the typed client did not finish:\n%s", out)
	}
	t.Log(strings.TrimSpace(out))
}

// checkingProxy is the URL of a proxy to the API that holds every answer passing through it to the
// served documents (api/openapi/openapitest), as the Go tests' own requests are.
func (h *harness) checkingProxy() string {
	target, err := url.Parse(h.api.URL)
	if err != nil {
		h.t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport: openapitest.Client(h.t, nil).Transport}
	srv := httptest.NewServer(proxy)
	h.t.Cleanup(srv.Close)
	return srv.URL
}

// neverHolds fails the test when the generated types give a schema or an answer the type
// Record<string, never>; openapi-typescript writes it only for the document's absent webhooks and
// $defs.
func neverHolds(t *testing.T, types string) {
	t.Helper()
	data, err := os.ReadFile(types)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, "Record<string, never>") && !strings.HasPrefix(line, "export type webhooks =") &&
			!strings.HasPrefix(line, "export type $defs =") {
			t.Errorf("%s:%d generates a type no value has: %s", filepath.Base(types), i+1, strings.TrimSpace(line))
		}
	}
}

// get is a served document's body, held to its own description as every answer is.
func (h *harness) get(path string) []byte {
	h.t.Helper()
	res, err := openapitest.Client(h.t, nil).Get(h.api.URL + path)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		h.t.Fatalf("GET %s: %d %v", path, res.StatusCode, err)
	}
	return body
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, to, data)
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
