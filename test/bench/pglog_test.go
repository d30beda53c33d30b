package bench

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadStatements reads a log as PostgreSQL writes it: a statement over several lines, its
// parameters (NULL, a doubled quote, a separator inside a value) on the entry after, and entries
// that are not statements.
func TestReadStatements(t *testing.T) {
	log := "2026-11-25 13:06:31.542 UTC [10] LOG:  database system is ready\n" +
		"2026-11-25 13:06:31.622 UTC [11] LOG:  execute stmtcache_1: SELECT $1,\n\t\t$2, $3\n" +
		"2026-11-25 13:06:31.622 UTC [11] DETAIL:  parameters: $1 = 'it''s', $2 = NULL, $3 = 'a, $2 = b'\n" +
		"2026-11-25 13:06:31.623 UTC [11] LOG:  statement: commit\n"
	path := filepath.Join(t.TempDir(), "postgres.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readStatements(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].sql != "SELECT $1,\n\t\t$2, $3" || got[1].sql != "commit" || len(got[1].params) != 0 {
		t.Fatalf("statements: %+v", got)
	}
	p := got[0].params
	if len(p) != 3 || *p[0] != "it's" || p[1] != nil || *p[2] != "a, $2 = b" {
		t.Fatalf("parameters: %v", p)
	}
}
