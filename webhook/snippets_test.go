package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"wds/api/signing"
	"wds/test/npmtest"
	"wds/webhook"
)

// The Node.js and Python snippets of docs/webhooks.md are files so that these tests run them, and
// the doc must show them verbatim so the two cannot drift. Stripe's published Node verifier is run
// on the same deliveries: integrators who already have it can reuse it.

const (
	jsSnippet = "../docs/snippets/verify.js"
	pySnippet = "../docs/snippets/verify.py"
	// stripeVersion is pinned so the test does not change under us; any release with receivedAt
	// (the last argument of constructEvent, to check at a fixed clock) will do.
	stripeVersion = "23.1.0"
)

// snippetCase is one delivery given to a snippet, with the outcome it must report: "ok", or the
// snippet's error message. stripe says whether Stripe's verifier gets it too (it only rejects
// stale timestamps, not future ones, and reads t with parseInt).
type snippetCase struct {
	Name   string  `json:"name"`
	Secret string  `json:"secret"`
	Header string  `json:"header"`
	Body   []byte  `json:"body"` // base64 in JSON, so any bytes arrive intact
	Now    float64 `json:"now"`
	want   string
	stripe bool
}

const (
	mismatch  = "signature mismatch"
	stale     = "timestamp outside the 300 s tolerance"
	malformed = "malformed X-PC-Signature"
)

// snippetCases are deliveries signed by the service's own signer (what the deliverer sends) for
// each test vector, and the ways they go wrong.
func snippetCases(t *testing.T) []snippetCase {
	var cases []snippetCase
	for _, v := range vectors {
		body := []byte(v.body)
		header := signing.SignPC([]byte(v.secret), v.t, body)
		if header != v.header {
			t.Fatalf("the service signs %q as %q, the vector says %q", v.name, header, v.header)
		}
		tampered := bytes.Clone(body)
		tampered[len(tampered)-2] ^= 0x01
		now := float64(v.t)
		cases = append(cases,
			snippetCase{v.name, v.secret, header, body, now + 1.5, "ok", true},
			snippetCase{v.name + ", 300 s later", v.secret, header, body, now + 300, "ok", true},
			snippetCase{v.name + ", tampered body", v.secret, header, tampered, now, mismatch, true},
			snippetCase{v.name + ", other secret", v.secret + "x", header, body, now, mismatch, true},
			snippetCase{v.name + ", 301 s old", v.secret, header, body, now + 301, stale, true},
			snippetCase{v.name + ", 301 s early", v.secret, header, body, now - 301, stale, false},
		)
	}
	v := vectors[0]
	sig := strings.TrimPrefix(v.header, "t=1700000000,v1=")
	other := "t=1700000000,v1=" + sigB
	newline := []byte(v.body + "\r\n") // a snippet must not trim what it signs
	return append(cases,
		snippetCase{"body ending in CRLF", v.secret, signing.SignPC([]byte(v.secret), v.t, newline), newline, float64(v.t), "ok", true},
		snippetCase{"rotation: the second v1 matches", v.secret, other + ",v1=" + sig, []byte(v.body), float64(v.t), "ok", true},
		snippetCase{"rotation: no v1 matches", v.secret, other + ",v1=" + sigB, []byte(v.body), float64(v.t), mismatch, true},
		snippetCase{"empty header", v.secret, "", []byte(v.body), float64(v.t), malformed, true},
		snippetCase{"no t", v.secret, "v1=" + sig, []byte(v.body), float64(v.t), malformed, true},
		snippetCase{"no v1", v.secret, "t=1700000000", []byte(v.body), float64(v.t), malformed, true},
		snippetCase{"signed t", v.secret, "t=+1700000000,v1=" + sig, []byte(v.body), float64(v.t), malformed, false},
	)
}

// nodeHarness and pyHarness load the snippet named by their argument, verify every case read from
// stdin, and print the outcomes as a JSON array.
const nodeHarness = `
const { verify } = require(process.argv[2]);
const cases = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
console.log(JSON.stringify(cases.map((c) => {
  try { verify(c.secret, c.header, Buffer.from(c.body, "base64"), c.now); return "ok"; }
  catch (e) { return e.message; }
})));
`

const pyHarness = `
import base64, importlib.util, json, sys
spec = importlib.util.spec_from_file_location("verify", sys.argv[1])
snippet = importlib.util.module_from_spec(spec)
spec.loader.exec_module(snippet)
out = []
for c in json.load(sys.stdin):
    try:
        snippet.verify(c["secret"], c["header"], base64.b64decode(c["body"]), c["now"])
        out.append("ok")
    except ValueError as e:  # anything else is a bug in the snippet and fails the test
        out.append(str(e))
print(json.dumps(out))
`

// stripeHarness gives each case to stripe.webhooks.constructEvent with a 300 s tolerance, at the
// case's clock; the header is the X-PC-Signature value, used where Stripe-Signature would be.
const stripeHarness = `
const Stripe = require(process.argv[2]);
const stripe = new Stripe("sk_test_unused");
const cases = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
console.log(JSON.stringify(cases.map((c) => {
  try { stripe.webhooks.constructEvent(Buffer.from(c.body, "base64"), c.header, c.secret, 300, undefined, c.now * 1000); return "ok"; }
  catch (e) { return e.message; }
})));
`

// docs/webhooks.md shows the tested code verbatim: both snippet files, and the documented
// receiver's handler as the Go example.
func TestDocsShowSnippetsVerbatim(t *testing.T) {
	doc := readFile(t, "../docs/webhooks.md")
	receiver := readFile(t, "../docs/receiver/main.go")
	start := strings.Index(receiver, "func (rc *receiver) ServeHTTP")
	end := strings.Index(receiver[max(start, 0):], "\n}\n")
	if start < 0 || end < 0 {
		t.Fatal("docs/receiver/main.go has no receiver.ServeHTTP")
	}
	for name, block := range map[string]string{
		jsSnippet:                 "```js\n" + readFile(t, jsSnippet) + "```\n",
		pySnippet:                 "```python\n" + readFile(t, pySnippet) + "```\n",
		"docs/receiver ServeHTTP": "```go\n" + receiver[start:start+end+3] + "```\n",
		"the pinned stripe":       "`stripe@" + stripeVersion + "`",
	} {
		if !strings.Contains(doc, block) {
			t.Errorf("docs/webhooks.md does not show %s verbatim:\n%s", name, block)
		}
	}
}

func TestNodeSnippet(t *testing.T) {
	node := npmtest.LookPath(t, "node", "Node.js 18 or later (Debian: apt-get install nodejs)")
	checkOutcomes(t, runHarness(t, node, nodeHarness, ".js", abs(t, jsSnippet), snippetCases(t)), snippetCases(t), false)
}

func TestPythonSnippet(t *testing.T) {
	python := npmtest.LookPath(t, "python3", "Python 3.7 or later (Debian: apt-get install python3)")
	checkOutcomes(t, runHarness(t, python, pyHarness, ".py", abs(t, pySnippet), snippetCases(t)), snippetCases(t), false)
}

func TestStripeVerifierAcceptsWdsSignatures(t *testing.T) {
	node := npmtest.LookPath(t, "node", "Node.js 18 or later (Debian: apt-get install nodejs)")
	pkg := installStripe(t, npmtest.LookPath(t, "npm", "npm (Debian: apt-get install npm)"))
	var cases []snippetCase
	for _, c := range snippetCases(t) {
		if c.stripe {
			cases = append(cases, c)
		}
	}
	checkOutcomes(t, runHarness(t, node, stripeHarness, ".js", pkg, cases), cases, true)
}

// checkOutcomes compares a harness's outcomes with the cases'; anyReject accepts any message for
// a rejection (Stripe words its own).
func checkOutcomes(t *testing.T, got []string, cases []snippetCase, anyReject bool) {
	t.Helper()
	if len(got) != len(cases) {
		t.Fatalf("%d outcomes for %d cases: %q", len(got), len(cases), got)
	}
	for i, c := range cases {
		ok := got[i] == c.want || (anyReject && c.want != "ok" && got[i] != "ok" && got[i] != "")
		if !ok {
			t.Errorf("%s: got %q, want %q", c.Name, got[i], c.want)
		}
	}
}

// runHarness runs script (written to a file with ext) with arg, the cases as JSON on stdin, and
// decodes the JSON array of outcomes it prints.
func runHarness(t *testing.T, interpreter, script, ext, arg string, cases any) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "harness"+ext)
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, interpreter, path, arg)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", interpreter, arg, err, stderr.String())
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s printed %q: %v", interpreter, out, err)
	}
	return got
}

// installStripe installs the pinned stripe package once into the repository's ignored bin/npm and
// returns its directory; later runs reuse it.
func installStripe(t *testing.T, _ string) string {
	t.Helper()
	return npmtest.Install(t, "stripe", stripeVersion)
}

func abs(t *testing.T, path string) string {
	t.Helper()
	p, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// standardCase is one delivery's Standard Webhooks headers given to a snippet's verifyStandard,
// with the outcome it must report.
type standardCase struct {
	Name      string  `json:"name"`
	Secret    string  `json:"secret"`
	ID        string  `json:"id"`
	Timestamp string  `json:"timestamp"`
	Signature string  `json:"signature"`
	Body      []byte  `json:"body"`
	Now       float64 `json:"now"`
	want      string
}

const malformedStandard = "malformed webhook-signature"

// standardCases are the vectors' Standard Webhooks headers as the service signs them, and the ways
// they go wrong; the vectors hold secrets of both forms (older base64url, and standard base64).
func standardCases(t *testing.T) []standardCase {
	var cases []standardCase
	for _, v := range vectors {
		body := []byte(v.body)
		sig, err := webhook.SignStandard(v.id, time.Unix(v.t, 0), body, v.secret)
		if err != nil || sig != v.standard {
			t.Fatalf("the service signs %q as %q (%v), the vector says %q", v.name, sig, err, v.standard)
		}
		ts := strconv.FormatInt(v.t, 10)
		tampered := bytes.Clone(body)
		tampered[len(tampered)-2] ^= 0x01
		other, _ := webhook.SignStandard(v.id, time.Unix(v.t, 0), body, "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
		now := float64(v.t)
		cases = append(cases,
			standardCase{v.name, v.secret, v.id, ts, sig, body, now + 1.5, "ok"},
			standardCase{v.name + ", 300 s later", v.secret, v.id, ts, sig, body, now + 300, "ok"},
			standardCase{v.name + ", tampered body", v.secret, v.id, ts, sig, tampered, now, mismatch},
			standardCase{v.name + ", another id", v.secret, v.id + "x", ts, sig, body, now, mismatch},
			standardCase{v.name + ", another secret's signature", v.secret, v.id, ts, other, body, now, mismatch},
			standardCase{v.name + ", rotation: the second v1 matches", v.secret, v.id, ts, other + " " + sig, body, now, "ok"},
			standardCase{v.name + ", another scheme beside v1", v.secret, v.id, ts, "v1a,c2lnbmF0dXJl " + sig, body, now, "ok"},
			standardCase{v.name + ", 301 s old", v.secret, v.id, ts, sig, body, now + 301, stale},
			standardCase{v.name + ", 301 s early", v.secret, v.id, ts, sig, body, now - 301, stale},
		)
	}
	v := vectors[0]
	ts := strconv.FormatInt(v.t, 10)
	return append(cases,
		standardCase{"no webhook-id", v.secret, "", ts, v.standard, []byte(v.body), float64(v.t), malformedStandard},
		standardCase{"no v1", v.secret, v.id, ts, "v1a,c2lnbmF0dXJl", []byte(v.body), float64(v.t), malformedStandard},
		standardCase{"signed timestamp", v.secret, v.id, "+" + ts, v.standard, []byte(v.body), float64(v.t), malformedStandard},
	)
}

const nodeStandardHarness = `
const { verifyStandard } = require(process.argv[2]);
const cases = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
console.log(JSON.stringify(cases.map((c) => {
  try { verifyStandard(c.secret, c.id, c.timestamp, c.signature, Buffer.from(c.body, "base64"), c.now); return "ok"; }
  catch (e) { return e.message; }
})));
`

const pyStandardHarness = `
import base64, importlib.util, json, sys
spec = importlib.util.spec_from_file_location("verify", sys.argv[1])
snippet = importlib.util.module_from_spec(spec)
spec.loader.exec_module(snippet)
out = []
for c in json.load(sys.stdin):
    try:
        snippet.verify_standard(c["secret"], c["id"], c["timestamp"], c["signature"], base64.b64decode(c["body"]), c["now"])
        out.append("ok")
    except ValueError as e:  # anything else is a bug in the snippet and fails the test
        out.append(str(e))
print(json.dumps(out))
`

func TestNodeSnippetVerifiesStandardWebhooks(t *testing.T) {
	node := npmtest.LookPath(t, "node", "Node.js 18 or later (Debian: apt-get install nodejs)")
	checkStandard(t, runHarness(t, node, nodeStandardHarness, ".js", abs(t, jsSnippet), standardCases(t)))
}

func TestPythonSnippetVerifiesStandardWebhooks(t *testing.T) {
	python := npmtest.LookPath(t, "python3", "Python 3.7 or later (Debian: apt-get install python3)")
	checkStandard(t, runHarness(t, python, pyStandardHarness, ".py", abs(t, pySnippet), standardCases(t)))
}

func checkStandard(t *testing.T, got []string) {
	t.Helper()
	cases := standardCases(t)
	if len(got) != len(cases) {
		t.Fatalf("%d outcomes for %d cases: %q", len(got), len(cases), got)
	}
	for i, c := range cases {
		if got[i] != c.want {
			t.Errorf("%s: got %q, want %q", c.Name, got[i], c.want)
		}
	}
}
