package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"wds/internal/platform/secrets/reencrypt"
)

// writeSQL finds the table a statement writes: INSERT INTO t, UPDATE t (not FOR UPDATE, nor an
// upsert's DO UPDATE SET) and DELETE FROM t.
var writeSQL = regexp.MustCompile(`(?i)(?:^|[^a-z_])(insert\s+into|(?:^|[^a-z_])update|delete\s+from)\s+([a-z_][a-z0-9_]*)`)

// dynamicWriteSQL finds a write whose table the literal does not name: "UPDATE %s ..." for Sprintf,
// or a literal ending in "UPDATE " that code completes with the table.
var dynamicWriteSQL = regexp.MustCompile(`(?i)(?:^|[^a-z_])(for\s+(?:no\s+key\s+)?)?(insert\s+into|update|delete\s+from)\s+(%s|$)`)

// dynamic is the one package allowed to write tables it names at run time, with where it takes
// them from: re-encryption walks every sealed column (reencrypt.Columns), which the test reads.
const dynamic = "internal/platform/secrets/reencrypt"

// gormWrites are the GORM methods that write the rows of their model.
var gormWrites = map[string]bool{"Create": true, "Save": true, "Updates": true, "Update": true, "UpdateColumn": true,
	"UpdateColumns": true, "Delete": true, "FirstOrCreate": true}

// writers maps each table to the packages whose non-test code writes it: through SQL in a string
// literal, or through GORM on a value written models.T{...} (or &models.T{...}) or a Model(&models.T{})
// in the same call chain. A GORM write on a variable is not seen; the SQL statements, which most
// writes are, all are.
func writers(t *testing.T) map[string]map[string]bool {
	t.Helper()
	tables, known := tableOfModel(t), migratedTables(t)
	got := map[string]map[string]bool{}
	note := func(table, pkg string) {
		if !known[table] {
			return // a word in a message ("update order: ..."), not a table
		}
		if got[table] == nil {
			got[table] = map[string]bool{}
		}
		got[table][pkg] = true
	}
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("../..", path)
		if d.IsDir() {
			if rel != "." && (rel == "test" || rel == "migrations" || rel == "tools" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(rel))
		var locals map[string]string
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				locals = modelVars(n)
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(n.Value)
				if err != nil {
					return true
				}
				if m := dynamicWriteSQL.FindStringSubmatch(s); m != nil && m[1] == "" { // not FOR UPDATE
					if pkg != dynamic {
						t.Errorf("%s writes a table named at run time (%q): name it in the SQL, so this test sees the writer", pkg, s)
						return true
					}
					for _, c := range reencrypt.Columns {
						note(c.Table, pkg)
					}
				}
				for _, m := range writeSQL.FindAllStringSubmatch(s, -1) {
					table := strings.ToLower(m[2])
					if table == "set" || table == "of" || table == "nowait" || table == "skip" {
						continue // DO UPDATE SET, FOR UPDATE OF, FOR UPDATE NOWAIT|SKIP LOCKED
					}
					if strings.Contains(strings.ToLower(s[:strings.Index(s, m[0])+len(m[0])]), "for update "+table) {
						continue
					}
					note(table, pkg)
				}
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok || !gormWrites[sel.Sel.Name] {
					return true
				}
				for _, model := range modelsIn(n, locals) {
					if table, ok := tables[model]; ok {
						note(table, pkg)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// modelsIn names the models.T of a GORM call's arguments and of a Model(...) earlier in its chain:
// a literal models.T{...}, or a variable of the function that locals types.
func modelsIn(call *ast.CallExpr, locals map[string]string) []string {
	var out []string
	lit := func(e ast.Expr) {
		if u, ok := e.(*ast.UnaryExpr); ok {
			e = u.X
		}
		if id, ok := e.(*ast.Ident); ok && locals[id.Name] != "" {
			out = append(out, locals[id.Name])
		}
		if m := modelType(e); m != "" {
			out = append(out, m)
		}
	}
	for _, a := range call.Args {
		lit(a)
	}
	for e := call.Fun; ; {
		sel, ok := e.(*ast.SelectorExpr)
		if !ok {
			break
		}
		inner, ok := sel.X.(*ast.CallExpr)
		if !ok {
			break
		}
		if s, ok := inner.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "Model" && len(inner.Args) == 1 {
			lit(inner.Args[0])
		}
		e = inner.Fun
	}
	return out
}

// modelType is T when e is models.T{...}, &models.T{...}, models.T, *models.T or []models.T.
func modelType(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.UnaryExpr:
		return modelType(x.X)
	case *ast.StarExpr:
		return modelType(x.X)
	case *ast.ArrayType:
		return modelType(x.Elt)
	case *ast.CompositeLit:
		return modelType(x.Type)
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok && id.Name == "models" {
			return x.Sel.Name
		}
	}
	return ""
}

// modelVars types the function's parameters and variables that hold models: var v models.T,
// v := models.T{...} (or &models.T{...}) and parameters of such types.
func modelVars(fn *ast.FuncDecl) map[string]string {
	out := map[string]string{}
	if fn.Type.Params != nil {
		for _, f := range fn.Type.Params.List {
			for _, n := range f.Names {
				if m := modelType(f.Type); m != "" {
					out[n.Name] = m
				}
			}
		}
	}
	ast.Inspect(fn, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ValueSpec:
			if m := modelType(n.Type); m != "" {
				for _, id := range n.Names {
					out[id.Name] = m
				}
			}
			for i, v := range n.Values {
				if m := modelType(v); m != "" && i < len(n.Names) {
					out[n.Names[i].Name] = m
				}
			}
		case *ast.AssignStmt:
			for i, v := range n.Rhs {
				if id, ok := n.Lhs[min(i, len(n.Lhs)-1)].(*ast.Ident); ok {
					if m := modelType(v); m != "" {
						out[id.Name] = m
					}
				}
			}
		}
		return true
	})
	return out
}

// migratedTables are the tables migrations/ creates.
func migratedTables(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob("../../migrations/*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migrations: %v, %d files", err, len(files))
	}
	create := regexp.MustCompile(`(?i)create\s+(?:unlogged\s+)?table\s+(?:if\s+not\s+exists\s+)?([a-z_][a-z0-9_]*)`)
	out := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range create.FindAllStringSubmatch(string(b), -1) {
			out[strings.ToLower(m[1])] = true
		}
	}
	return out
}

// tableOfModel maps each model type to its table, read from the TableName methods of models/.
func tableOfModel(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("../../models/*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Name.Name != "TableName" || fn.Recv == nil || len(fn.Body.List) != 1 {
				continue
			}
			ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
			if !ok || len(ret.Results) != 1 {
				continue
			}
			lit, ok := ret.Results[0].(*ast.BasicLit)
			if !ok {
				continue
			}
			typ := fn.Recv.List[0].Type
			if s, ok := typ.(*ast.StarExpr); ok {
				typ = s.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				out[id.Name], _ = strconv.Unquote(lit.Value)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("models/ has no TableName methods: the GORM writes cannot be placed")
	}
	return out
}

// shared are the tables more than one package writes, each with the packages and why. The list is
// exact: a table that gains a writer fails the test, and so does one that lost one until it is
// struck from here.
var shared = map[string]struct {
	writers []string
	why     string
}{
	"integration_keys": {[]string{"internal/apikeys", dynamic},
		"wds admin secrets reencrypt re-seals every sealed column, whichever table holds it"},
	"webhook_endpoints": {[]string{"internal/delivery", "internal/endpoints", dynamic},
		"endpoints manages them; the delivery engine keeps their health and auto-disables; wds admin secrets reencrypt " +
			"re-seals their secrets"},
	"webhook_recoveries": {[]string{"internal/delivery", "internal/dispatch", "internal/recovery"},
		"the support desk starts and cancels a recovery; the delivery engine's batches move its cursor and finish it; " +
			"the relay marks its workflow started"},
}

// Each table is written by one package, bar the few listed in shared with the reason: migrations and
// tests aside, a table's rules live beside its only writer.
func TestEachTableHasOneWriter(t *testing.T) {
	got := writers(t)
	for table, pkgs := range got {
		var names []string
		for p := range pkgs {
			names = append(names, p)
		}
		slices.Sort(names)
		want, listed := shared[table]
		switch {
		case !listed && len(names) > 1:
			t.Errorf("%s is written by %d packages: %v", table, len(names), names)
		case listed && !slices.Equal(names, want.writers):
			t.Errorf("%s is written by %v; shared lists %v (%s)", table, names, want.writers, want.why)
		}
	}
	for table := range shared {
		if got[table] == nil {
			t.Errorf("%s is in shared but no package writes it", table)
		}
	}
}

// The scan sees the writes it must, so the test above cannot pass by seeing nothing: SQL in a
// constant, GORM on a variable of a model, a migration-created table only a GORM Create writes, and
// re-encryption's tables named at run time.
func TestTheWriterScanSeesWrites(t *testing.T) {
	got := writers(t)
	for table, pkg := range map[string]string{"webhook_deliveries": "internal/delivery", "console_sessions": "internal/workspace",
		"vendors": "internal/catalog", "shipments": "internal/fulfillment", "integration_keys": dynamic} {
		if !got[table][pkg] {
			t.Errorf("the scan did not see %s write %s: %v", pkg, table, got[table])
		}
	}
	if got["order"] != nil || got["client"] != nil {
		t.Error(`a word of a message ("update order: %w") was taken for a table`)
	}
}
