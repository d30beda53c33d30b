package workflows

// The determinism check of workflows/ has two halves. `make vet` runs Temporal's workflowcheck
// analyzer (bin/workflowcheck) over ./workflows/...: it follows every function that takes a
// workflow.Context, and what it calls, for time.Now, time.Sleep, global randomness, goroutines,
// channels and map ranges. This file holds the other half, the import rule, and proves that both
// halves fail on a deliberately broken workflow (testdata/broken).

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// allowedImports are all the packages workflow code may import: the SDK's workflow and temporal
// packages, the types the workflows schedule and record, and standard packages that are
// deterministic (time for durations and time.Time values; workflowcheck catches time.Now and the
// wall-clock timers). Anything else, GORM, Gin, net/http, os, sync or math/rand among them, belongs
// in an activity.
var allowedImports = map[string]bool{
	"go.temporal.io/sdk/workflow": true,
	"go.temporal.io/sdk/temporal": true,
	"wds/workflows/contract":      true,
	"wds/activities":              true,
	"wds/models":                  true,
	"github.com/google/uuid":      true,
	"errors":                      true,
	"fmt":                         true,
	"strings":                     true,
	"strconv":                     true,
	"time":                        true,
}

// workflowcheckArgs are the flags `make vet` gives bin/workflowcheck; keep the two in step.
// -show-pos names the line of each offence, not only the workflow that reaches it.
var workflowcheckArgs = []string{"-test=false", "-config", "../tools/workflowcheck/config.yaml", "-show-pos"}

// importViolations parses the non-test Go files under dir, imports only, skipping what ./... skips
// (testdata, and directories starting with . or _), and returns how many files it read and one
// line, file:line:col first, per import that allowedImports lacks.
func importViolations(dir string) (files int, violations []string, err error) {
	fset := token.NewFileSet()
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != dir && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: %w", fset.Position(imp.Pos()), err)
			}
			if !allowedImports[p] {
				violations = append(violations, fmt.Sprintf("%s: imports %q, which workflow code may not: "+
					"move the code that needs it into an activity", fset.Position(imp.Pos()), p))
			}
		}
		return nil
	})
	return files, violations, err
}

// TestWorkflowImports is the import rule over the real workflows.
func TestWorkflowImports(t *testing.T) {
	files, violations, err := importViolations(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range violations {
		t.Error(v)
	}
	t.Logf("checked the imports of %d files", files)
}

// TestChecksCatchBrokenWorkflow proves that both halves of the check fail on testdata/broken, a
// workflow that calls time.Now, starts a goroutine, ranges over a map and imports net/http.
func TestChecksCatchBrokenWorkflow(t *testing.T) {
	const broken = "testdata/broken/broken.go"

	t.Run("workflowcheck", func(t *testing.T) {
		bin, err := filepath.Abs(filepath.Join("..", "bin", "workflowcheck"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("the analyzer is missing (%v): run `make bin/workflowcheck` (make test builds it)", err)
		}
		wants := wantedReasons(t, broken)
		out, err := exec.Command(bin, append(workflowcheckArgs, "./"+filepath.Dir(broken))...).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("workflowcheck passed the broken workflow (%v); it printed:\n%s", err, out)
		}
		for _, w := range wants {
			re := regexp.MustCompile(regexp.QuoteMeta("reason: "+w.reason+" at ") + `\S*` +
				regexp.QuoteMeta(broken) + ":" + strconv.Itoa(w.line) + `:\d+`)
			if !re.Match(out) {
				t.Errorf("workflowcheck did not report %q at %s:%d; it exited %d and printed:\n%s",
					w.reason, broken, w.line, exit.ExitCode(), out)
			}
		}
	})

	t.Run("imports", func(t *testing.T) {
		_, violations, err := importViolations(filepath.Dir(broken))
		if err != nil {
			t.Fatal(err)
		}
		if len(violations) != 1 || !strings.HasPrefix(violations[0], broken+":") ||
			!strings.Contains(violations[0], `imports "net/http"`) {
			t.Errorf("the import rule reported %q, want only %s importing net/http", violations, broken)
		}
	})
}

// wanted is an offence marked in a file with "// want: REASON".
type wanted struct {
	line   int
	reason string
}

// wantedReasons reads the marks of a file, in line order.
func wantedReasons(t *testing.T, path string) []wanted {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var wants []wanted
	for i, line := range strings.Split(string(src), "\n") {
		if _, reason, ok := strings.Cut(line, "// want: "); ok {
			wants = append(wants, wanted{line: i + 1, reason: strings.TrimSpace(reason)})
		}
	}
	if len(wants) == 0 {
		t.Fatalf("%s marks no offence with // want:", path)
	}
	return wants
}
