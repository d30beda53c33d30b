package npmtest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// StandardWebhooksVersion is the standardwebhooks package the tests install, pinned so it does not
// change under them.
const StandardWebhooksVersion = "1.1.1"

// standardWebhooksReceiver verifies, with the npm package's Webhook class, each delivery read as a
// JSON line from stdin, and prints "ok" or the package's error message as a JSON line.
const standardWebhooksReceiver = `
const { Webhook } = require(process.argv[2]);
const lines = require("node:readline").createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const c = JSON.parse(line);
  let out = "ok";
  try { new Webhook(c.secret).verify(Buffer.from(c.body, "base64"), c.headers); }
  catch (e) { out = String(e && e.message || e); }
  process.stdout.write(JSON.stringify(out) + "\n");
});
`

// StandardWebhooks starts node with the official standardwebhooks package from npm and returns a
// verifier that hands it each delivery (secret, request headers, raw body): nil when the package
// accepts it, else an error with the package's message. The package checks the timestamp against
// the real clock, as a receiver does. The node process ends with the test.
func StandardWebhooks(t testing.TB) func(secret string, h http.Header, body []byte) error {
	t.Helper()
	node := LookPath(t, "node", "Node.js 18 or later (Debian: apt-get install nodejs)")
	pkg := Install(t, "standardwebhooks", StandardWebhooksVersion)
	script := filepath.Join(t.TempDir(), "receiver.js")
	if err := os.WriteFile(script, []byte(standardWebhooksReceiver), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, script, pkg)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	out := bufio.NewScanner(outPipe)
	var mu sync.Mutex // one delivery at a time: the answers come back in order
	return func(secret string, h http.Header, body []byte) error {
		headers := map[string]string{}
		for k := range h {
			headers[k] = h.Get(k)
		}
		line, err := json.Marshal(map[string]any{"secret": secret, "headers": headers, "body": body})
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if _, err := in.Write(append(line, '\n')); err != nil {
			return err
		}
		if !out.Scan() {
			return fmt.Errorf("the node receiver ended: %v", out.Err())
		}
		var verdict string
		if err := json.Unmarshal(out.Bytes(), &verdict); err != nil {
			return err
		}
		if verdict != "ok" {
			return errors.New(verdict)
		}
		return nil
	}
}
