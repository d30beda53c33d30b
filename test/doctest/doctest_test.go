package doctest

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

const fakePage = "# A page\n\n" +
	"```sh\nGREETING=hello\necho \"$GREETING, reader\"\n```\n\n" +
	"Not shell, never run:\n\n```go\npanic(1)\n```\n\n```\nexit 1\n```\n\n" +
	"<!-- not run: it needs a production cluster -->\n```bash\nexit 1\n```\n\n" +
	"<!-- run in background as server until it prints: serving -->\n```sh\n" +
	"echo serving; echo \"$GREETING\" >from-server; sleep 600\n```\n\n" +
	"```console\ntest \"$(cat from-server)\" = hello\n```\n"

func TestParseFindsShellBlocksAndTheirMarkers(t *testing.T) {
	blocks, err := Parse("page.md", []byte(fakePage))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 4 {
		t.Fatalf("%d blocks, want 4 (sh, bash, background sh, console): %+v", len(blocks), blocks)
	}
	if b := blocks[0]; b.Line != 3 || b.Text != "GREETING=hello\necho \"$GREETING, reader\"\n" || b.Skip != "" || b.Job != nil {
		t.Errorf("first block: %+v", b)
	}
	if b := blocks[1]; b.Skip != "it needs a production cluster" {
		t.Errorf("not-run block: %+v", b)
	}
	if b := blocks[2]; b.Job == nil || *b.Job != (Job{Name: "server", Ready: "serving"}) {
		t.Errorf("background block: %+v", b)
	}
	if got := blocks[0].String(); got != "page.md:3 `GREETING=hello`" {
		t.Errorf("block named %q", got)
	}
}

// A marker that would skip a block silently, or start one the harness cannot wait for, is refused.
func TestParseRefusesMarkersItCannotHonour(t *testing.T) {
	for _, page := range []string{
		"<!-- not run -->\n```sh\nexit 1\n```\n",
		"<!-- not run: -->\n```sh\nexit 1\n```\n",
		"<!-- run in background -->\n```sh\nsleep 1\n```\n",
		"<!-- run in background as x -->\n```sh\nsleep 1\n```\n",
		"```sh\necho never closed\n",
	} {
		if _, err := Parse("page.md", []byte(page)); err == nil {
			t.Errorf("accepted:\n%s", page)
		}
	}
}

func runPage(t *testing.T, page string) error {
	t.Helper()
	blocks, err := Parse("page.md", []byte(page))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	return Runner{Dir: dir, Env: os.Environ(), Logs: dir}.Run(ctx, blocks)
}

// Variables carry from block to block, a background block is waited for and sees them too, and
// skipped blocks are not run.
func TestRunRunsAPageInOrder(t *testing.T) {
	if err := runPage(t, fakePage); err != nil {
		t.Fatal(err)
	}
}

// A doc edit that breaks a command fails the page, naming the block and what it printed; so does a
// failure in the middle of a pipeline, and a background block that never becomes ready.
func TestRunFailsOnABrokenBlock(t *testing.T) {
	cases := []struct{ page, block, printed string }{
		{"```sh\necho fine\n```\n\n```sh\necho about to fail\nfalse\necho not reached\n```\n",
			"page.md:5 `echo about to fail`", "about to fail"},
		{"```sh\nfalse | cat\necho not reached\n```\n", "page.md:1 `false | cat`", ""},
		{"```sh\necho $UNSET_BY_ANY_BLOCK\n```\n", "page.md:1 `echo $UNSET_BY_ANY_BLOCK`", "unbound variable"},
		{"<!-- run in background as srv until it prints: ready -->\n```sh\necho crashed; exit 3\n```\n",
			"page.md:2 `echo crashed; exit 3`", "ended before printing \"ready\""},
	}
	for _, c := range cases {
		err := runPage(t, c.page)
		var be *BlockError
		if !errors.As(err, &be) {
			t.Errorf("page:\n%s\nerror %v, want a *BlockError", c.page, err)
			continue
		}
		if be.Block.String() != c.block || !strings.Contains(be.Output, c.printed) || strings.Contains(be.Output, "not reached") {
			t.Errorf("page:\n%s\nblamed %s with output %q; want %s printing %q", c.page, be.Block, be.Output, c.block, c.printed)
		}
	}
}

// A background block is stopped by Ctrl-C (SIGINT) when the page ends, so a server can clean up as
// it would for a reader, and the page waits for it.
func TestRunStopsBackgroundBlocksWithInterrupt(t *testing.T) {
	dir := t.TempDir()
	page := "<!-- run in background as srv until it prints: up -->\n```sh\n" +
		"trap 'echo stopped >" + dir + "/stopped; exit 0' INT\necho up\nwhile :; do sleep 0.1; done\n```\n"
	if err := runPage(t, page); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(dir + "/stopped"); err != nil || string(b) != "stopped\n" {
		t.Fatalf("the background block was not interrupted: %q %v", b, err)
	}
}
