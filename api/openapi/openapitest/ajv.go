package openapitest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"wds/test/npmtest"
)

// ajv is a node process running Ajv 8 in strict mode over the served documents
// (test/typedclient/ajv-check.mjs), so every answer a test checks is held to a strict JavaScript
// validator as well as to kin-openapi: a document both accept is one an integrator's validator
// accepts too. One process serves every test of the test binary.
type ajv struct {
	mu  sync.Mutex
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

// stop ends the process: it exits when its input does.
func (a *ajv) stop() error {
	a.in.Close()
	return a.cmd.Wait()
}

var (
	ajvOnce sync.Once
	ajvProc *ajv
	ajvErr  error
)

// startAjv starts the one process that checks answers against the served documents.
func startAjv(t testing.TB) (*ajv, error) {
	ajvOnce.Do(func() {
		docs := map[string][]byte{}
		for _, d := range documents {
			docs[d.key] = d.json()
		}
		ajvProc, ajvErr = spawnAjv(t, docs)
	})
	return ajvProc, ajvErr
}

// spawnAjv installs the pinned packages (once per machine), writes the script and the documents
// (by name) to a directory of the test process's own, and starts it there.
func spawnAjv(t testing.TB, docs map[string][]byte) (*ajv, error) {
	project := filepath.Join(repoRoot(), "test", "typedclient")
	modules := filepath.Join(npmtest.InstallLocked(t, project), "node_modules")
	node := npmtest.LookPath(t, "node", "Node.js (Debian: apt-get install nodejs)")
	dir, err := os.MkdirTemp("", "wds-ajv-")
	if err != nil {
		return nil, err
	}
	// ES modules find packages beside the script, not on NODE_PATH: the script runs from a
	// directory of its own that links the installed packages.
	script, err := os.ReadFile(filepath.Join(project, "ajv-check.mjs"))
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "ajv-check.mjs"), script, 0o644)
	}
	if err == nil {
		err = os.Symlink(modules, filepath.Join(dir, "node_modules"))
	}
	if err != nil {
		return nil, err
	}
	args := []string{filepath.Join(dir, "ajv-check.mjs")}
	for name, doc := range docs {
		path := filepath.Join(dir, name+".json")
		if err := os.WriteFile(path, doc, 0o644); err != nil {
			return nil, err
		}
		args = append(args, name+"="+path)
	}
	cmd := exec.Command(node, args...)
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start Ajv: %w", err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	return &ajv{cmd: cmd, in: in, out: sc}, nil
}

// validate holds a JSON answer to the schema the document gives its operation and status.
func (a *ajv) validate(doc, path, method string, status int, body []byte) error {
	line, err := json.Marshal(map[string]any{"doc": doc, "path": path, "method": strings.ToLower(method),
		"status": status, "body": json.RawMessage(body)})
	if err != nil {
		return nil // not JSON: kin-openapi has already said so
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, err := a.in.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("Ajv: %w", err)
	}
	if !a.out.Scan() {
		return errors.New("Ajv stopped")
	}
	if v := a.out.Text(); v != "ok" {
		return errors.New(v)
	}
	return nil
}

// repoRoot is the directory of the module's go.mod, found upwards from this package's tests.
func repoRoot() string {
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "."
		}
		dir = parent
	}
}
