// Package layout holds the import rule of docs/architecture.md: imports run down the map, never back
// up, so each folder can be read without the ones above it.
package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// imports lists each package of the module with the wds packages its non-test files import.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "wds/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	got := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, "wds/") {
				got[f[0]] = append(got[f[0]], imp)
			}
		}
	}
	return got
}

// under reports whether pkg is root or inside it.
func under(pkg, root string) bool { return pkg == root || strings.HasPrefix(pkg, root+"/") }

// upward names why pkg may not import imp, or "" when it may.
func upward(pkg, imp string) string {
	switch {
	case under(imp, "wds/cmd"):
		return "commands are the top: nothing imports them"
	case imp == "wds/worker" && pkg != "wds/cmd/wds":
		return "the worker process is run only by wds's commands"
	case under(pkg, "wds/internal") && (under(imp, "wds/api") || imp == "wds/activities" || under(imp, "wds/worker")):
		return "internal/ holds the services and the platform the handlers, activities and worker use"
	case under(pkg, "wds/models") && !under(imp, "wds/models"):
		return "models are the bottom: the rows and the domain's terms"
	case under(pkg, "wds/activities") && (under(imp, "wds/workflows") && imp != "wds/workflows/contract"):
		return "activities know the workflows only through their contract"
	case pkg == "wds/workflows/contract" && !under(imp, "wds/models"):
		return "the contract is what history records: names, ids and inputs over models only"
	case under(pkg, "wds/workflows") && imp != "wds/activities" && !under(imp, "wds/workflows") && !under(imp, "wds/models"):
		return "workflows are deterministic: the SDK, their contract, the models and the activities' type"
	}
	return ""
}

func TestNoPackageImportsUpward(t *testing.T) {
	for pkg, imps := range imports(t) {
		for _, imp := range imps {
			if why := upward(pkg, imp); why != "" {
				t.Errorf("%s imports %s: %s", pkg, imp, why)
			}
		}
	}
}

// The rule itself catches what it forbids, so the test above cannot pass by checking nothing.
func TestTheRuleRefusesUpwardImports(t *testing.T) {
	for _, c := range [][2]string{
		{"wds/internal/endpoints", "wds/api/console"},
		{"wds/internal/dispatch", "wds/worker"},
		{"wds/internal/ingest", "wds/activities"},
		{"wds/api", "wds/worker"},
		{"wds/models", "wds/internal/money"},
		{"wds/activities", "wds/workflows"},
		{"wds/api", "wds/cmd/wds"},
		{"wds/workflows/contract", "wds/activities"},
		{"wds/workflows", "wds/internal/delivery"},
	} {
		if upward(c[0], c[1]) == "" {
			t.Errorf("%s importing %s passes the rule", c[0], c[1])
		}
	}
	if got := imports(t); len(got["wds/cmd/wds"]) == 0 {
		t.Fatal("go list found no imports of wds/cmd/wds")
	}
}

// apiWiring are the files of cmd/wds that wire the HTTP APIs and the console, which wds serve and
// wds dev serve. Every other command (wds admin, wds listen, the demo workspace) reaches the domain
// services through cmd/wds's composition root (services.go) without the api packages, whose
// decoding and error answers live below them (ingest.Decode, internal/platform/answer).
var apiWiring = map[string]bool{"serve.go": true, "services.go": true}

// cmd/wds is one package, so the import rule above cannot tell its files apart: this reads each
// file's imports.
func TestOnlyTheServersWiringImportsAPI(t *testing.T) {
	wired := map[string]bool{}
	for f, file := range sources(t, "../../cmd/wds", parser.ImportsOnly) {
		name := filepath.Base(f)
		for _, imp := range file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !under(path, "wds/api") {
				continue
			}
			wired[name] = true
			if !apiWiring[name] {
				t.Errorf("cmd/wds/%s imports %s: only the servers' wiring (%v) imports api", name, path, apiWiring)
			}
		}
	}
	// The wiring does import api, so the test sees imports at all.
	if !wired["services.go"] {
		t.Fatal("cmd/wds/services.go imports no api package: the test reads nothing")
	}
}

// sqlCalls are the GORM methods that carry SQL or build a query.
var sqlCalls = map[string]bool{"Raw": true, "Exec": true, "Where": true, "Table": true, "Model": true, "Select": true, "Joins": true}

// Handlers hold no SQL: the APIs' handlers and the console's pages reach the database through the
// domain services, each behind a small interface declared beside them.
func TestHandlersAndPagesHoldNoSQL(t *testing.T) {
	calls := 0
	for _, dir := range []string{"../../api", "../../api/console"} {
		for f, file := range sources(t, dir, 0) {
			eachSelector(file, func(sel *ast.SelectorExpr) {
				calls++
				if sqlCalls[sel.Sel.Name] {
					t.Errorf("%s calls %s: handlers and pages hold no SQL", strings.TrimPrefix(f, "../../"), sel.Sel.Name)
				}
			})
		}
	}
	if calls == 0 {
		t.Fatal("read no selector in api/: the test reads nothing")
	}
}

// workflows imports package activities for one thing: the typed method references the SDK schedules
// activities by (workflow.ExecuteActivity(ctx, acts.Deliver, in)), so the compiler checks each
// activity's input and result and the SDK derives the name the worker registers. Those references
// are taken on a nil *activities.Activities, so no activity code, nor anything it imports, runs in a
// workflow; the test holds every use of the package to that type.
func TestWorkflowsUseActivitiesOnlyForTypedReferences(t *testing.T) {
	uses := 0
	for f, file := range sources(t, "../../workflows", 0) {
		eachSelector(file, func(sel *ast.SelectorExpr) {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "activities" {
				uses++
				if sel.Sel.Name != "Activities" {
					t.Errorf("%s uses activities.%s: workflows take only the activities' type, for typed references", filepath.Base(f), sel.Sel.Name)
				}
			}
		})
	}
	if uses == 0 {
		t.Fatal("workflows use no activities.Activities: the test reads nothing")
	}
}

// sources parses dir's Go files, tests aside, by path; a directory with none fails the test, which
// would otherwise read nothing.
func sources(t *testing.T, dir string, mode parser.Mode) map[string]*ast.File {
	t.Helper()
	files, err := filepath.Glob(dir + "/*.go")
	out := map[string]*ast.File{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, perr := parser.ParseFile(token.NewFileSet(), f, nil, mode)
		if perr != nil {
			t.Fatal(perr)
		}
		out[f] = file
	}
	if err != nil || len(out) == 0 {
		t.Fatalf("%s: %v, %d files", dir, err, len(out))
	}
	return out
}

// eachSelector calls fn with every selector expression (x.Name) in file.
func eachSelector(file *ast.File, fn func(*ast.SelectorExpr)) {
	ast.Inspect(file, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			fn(sel)
		}
		return true
	})
}
