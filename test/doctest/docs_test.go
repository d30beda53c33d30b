package doctest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The pages a newcomer reads, each run as a reader would: in a fresh clone, with `make run` (that is
// ./bin/wds dev) going in another terminal.
func pages(t *testing.T, root string) []string {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join(root, "README.md")}, docs...)
}

// devStack is what `make run` leaves running: the harness starts it before each page's blocks.
var devStack = Block{Page: "make run", Text: "./bin/wds dev\n", Job: &Job{Name: "wds-dev", Ready: "wds dev is up"}}

// Every shell block of README.md and docs/*.md runs verbatim, in order, against a fresh `wds dev`
// of its own, unless it is marked not run (the reason is logged).
func TestDocsRunVerbatim(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	wds := buildWDS(t, root)
	for _, page := range pages(t, root) {
		name, _ := filepath.Rel(root, page)
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			blocks, err := Parse(name, src)
			if err != nil {
				t.Fatal(err)
			}
			runnable := 0
			for _, b := range blocks {
				if b.Skip != "" {
					t.Logf("not run: %s: %s", b, b.Skip)
					continue
				}
				runnable++
			}
			if runnable == 0 {
				return
			}
			clone := freshClone(t, root, wds)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			r := Runner{Dir: clone, Env: readerEnv(clone), Logs: t.TempDir()}
			if err := r.Run(ctx, append([]Block{devStack}, blocks...)); err != nil {
				logTails(t, r.Logs)
				t.Fatal(err)
			}
		})
	}
}

// buildWDS builds bin/wds once for every page, from the repository (whose build cache is warm).
func buildWDS(t *testing.T, root string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "wds")
	build := exec.Command("go", "build", "-o", out, "./cmd/wds")
	build.Dir = root
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/wds: %v\n%s", err, b)
	}
	return out
}

// freshClone lays out a directory like a clone after `make build bin/temporal`: the repository's
// files (linked), bin/wds and bin/temporal, and no .wds yet.
func freshClone(t *testing.T, root, wds string) string {
	t.Helper()
	// Not t.TempDir: its 0700 parents would keep PostgreSQL's own user out of .wds when run as root.
	dir, err := os.MkdirTemp("", "wds-doctest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch e.Name() {
		case "bin", ".wds", ".git":
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	temporal := filepath.Join(root, "bin", "temporal")
	if _, err := os.Stat(temporal); err != nil {
		t.Fatalf("%v: the docs run the Temporal dev server from bin/temporal (make bin/temporal)", err)
	}
	must(t, os.Mkdir(filepath.Join(dir, "bin"), 0o755))
	must(t, os.Symlink(temporal, filepath.Join(dir, "bin", "temporal")))
	must(t, os.Symlink(wds, filepath.Join(dir, "bin", "wds")))
	// curl's HTTP errors fail the block, with the body the server sent, without editing commands.
	must(t, os.WriteFile(filepath.Join(dir, ".curlrc"), []byte("fail-with-body\nshow-error\n"), 0o644))
	return dir
}

// readerEnv is the test's environment without anything that points wds elsewhere than the clone's
// own wds dev: a reader following the pages has none of it set.
func readerEnv(clone string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "WDS_") || name == "DATABASE_URL" || name == "TEMPORAL_ADDRESS" || name == "CURL_HOME" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "CURL_HOME="+clone)
}

// logTails shows the end of what each background block printed, to explain a failure.
func logTails(t *testing.T, dir string) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Log(err)
			continue
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		t.Logf("background %s ended with:\n%s", filepath.Base(l), strings.Join(lines[max(0, len(lines)-30):], "\n"))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// In a clone, curl's HTTP errors fail the block as the pages are written (curl -s, no --fail): a
// page whose URL broke is a failing test, not a 404 body printed and passed over.
func TestCurlHTTPErrorsFailTheBlock(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	clone := freshClone(t, root, filepath.Join(t.TempDir(), "wds"))
	page := "<!-- run in background as web until it prints: Serving HTTP -->\n```sh\npython3 -u -m http.server 8080\n```\n\n" +
		"```sh\ncurl -s localhost:8080/README.md >/dev/null\n```\n\n```sh\ncurl -s localhost:8080/no-such-page\necho not reached\n```\n"
	blocks, err := Parse("page.md", []byte(page))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = Runner{Dir: clone, Env: readerEnv(clone), Logs: t.TempDir()}.Run(ctx, blocks)
	var be *BlockError
	if !errors.As(err, &be) || be.Block.Line != 10 || !strings.Contains(be.Output, "404") || strings.Contains(be.Output, "not reached") {
		t.Fatalf("want the 404 to fail page.md:10, got %v", err)
	}
}
