// Package doctest runs the shell blocks of Markdown pages verbatim, in order, one bash per page, so a
// doc edit that breaks a command fails the tests.
//
// Every fenced block tagged sh, bash, shell or console runs, unless the line right before its fence
// is one of these HTML comments (invisible when the page is rendered):
//
//	<!-- not run: REASON -->                               skipped; the reason is reported
//	<!-- run in background as NAME until it prints: TEXT -->
//
// A background block is a long-running command a reader starts in a second terminal (a server, a
// receiver): it runs in its own process group, the page goes on once it has printed TEXT, and it is
// stopped with SIGINT (a reader's Ctrl-C), and SIGKILL if it still runs a minute later, at the page's
// end or when another background block of the same NAME starts (a reader restarting it).
package doctest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Block is one fenced shell block of a page.
type Block struct {
	Page string // the page's name, for messages
	Line int    // the line of the opening fence
	Text string // the commands, verbatim

	Skip string // why it is not run; empty when it runs
	Job  *Job   // set for a block that runs in the background
}

// Job is how a background block is started and recognised as ready.
type Job struct {
	Name  string
	Ready string
}

// FirstLine is the block's first command, to name it in messages.
func (b Block) FirstLine() string {
	first, _, _ := strings.Cut(strings.TrimSpace(b.Text), "\n")
	return first
}

func (b Block) String() string { return fmt.Sprintf("%s:%d `%s`", b.Page, b.Line, b.FirstLine()) }

var (
	fence      = regexp.MustCompile("^(```+|~~~+)\\s*([A-Za-z0-9_-]*)")
	shellLangs = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true}
	marker     = regexp.MustCompile(`^<!--\s*(.*?)\s*-->$`)
	notRun     = regexp.MustCompile(`^not run\b:?\s*(.*)$`)
	background = regexp.MustCompile(`^run in background\b(?: as ([A-Za-z0-9_-]+) until it prints: (.+))?`)
)

// Parse returns the shell blocks of a page in order. A marker that is malformed (a "not run" without
// a reason, a background block without its name and ready text) is an error, so no block is skipped
// or left hanging silently.
func Parse(page string, src []byte) ([]Block, error) {
	var (
		blocks []Block
		prev   string
		open   string // the fence that opened the current block; empty outside one
		cur    *Block // the shell block being read; nil in another language's block
		body   []string
	)
	lines := strings.Split(string(src), "\n")
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		switch {
		case open != "" && strings.HasPrefix(trimmed, open) && strings.Trim(trimmed, open[:1]) == "":
			if cur != nil {
				cur.Text = strings.Join(body, "\n") + "\n"
				blocks = append(blocks, *cur)
			}
			open, cur, body = "", nil, nil
		case open != "":
			body = append(body, line)
		default:
			m := fence.FindStringSubmatch(trimmed)
			if m == nil {
				break
			}
			open = m[1]
			if !shellLangs[m[2]] {
				break
			}
			cur = &Block{Page: page, Line: i + 1}
			if err := cur.apply(markerText(prev)); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", page, i+1, err)
			}
		}
		prev = line
	}
	if open != "" {
		return nil, fmt.Errorf("%s: a code block is never closed", page)
	}
	return blocks, nil
}

// markerText is the text of an HTML comment on line, or "".
func markerText(line string) string {
	if m := marker.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
		return m[1]
	}
	return ""
}

// apply reads the marker before the block's fence into it.
func (b *Block) apply(m string) error {
	if n := notRun.FindStringSubmatch(m); n != nil {
		if strings.TrimSpace(n[1]) == "" {
			return errors.New(`"not run" needs a reason: <!-- not run: REASON -->`)
		}
		b.Skip = strings.TrimSpace(n[1])
		return nil
	}
	if bg := background.FindStringSubmatch(m); bg != nil {
		if bg[1] == "" {
			return errors.New(`a background block needs a name and ready text: <!-- run in background as NAME until it prints: TEXT -->`)
		}
		b.Job = &Job{Name: bg[1], Ready: strings.TrimSpace(bg[2])}
	}
	return nil
}

// Runner runs pages' blocks in Dir, a directory laid out as a checkout of the repository.
type Runner struct {
	Dir string
	Env []string // the whole environment of the page's shell
	// Logs holds each background block's output; the page's failure message names the files.
	Logs string
}

// BlockError is a block that failed: the page, the block and what it printed.
type BlockError struct {
	Block  Block
	Output string
	Err    error
}

func (e *BlockError) Error() string {
	return fmt.Sprintf("%s failed (%v); it printed:\n%s", e.Block, e.Err, e.Output)
}

func (e *BlockError) Unwrap() error { return e.Err }

// The lines the script prints between blocks, so the output names the block that failed.
const (
	blockMark = "@@doctest-block "
	endMark   = "@@doctest-end"
)

// Run runs the blocks that are not skipped in order in one bash (variables set by one block are seen
// by the next), with `set -euo pipefail`, in a private network and PID namespace: the pages' fixed
// ports (8080, 8233, 9443 ...) never meet another test's, and every process a page started dies with
// it. It returns a *BlockError naming the first block that failed.
func (r Runner) Run(ctx context.Context, blocks []Block) error {
	var run []Block
	for _, b := range blocks {
		if b.Skip == "" {
			run = append(run, b)
		}
	}
	script := filepath.Join(r.Logs, "page.sh")
	if err := os.WriteFile(script, []byte(r.script(run)), 0o644); err != nil {
		return err
	}
	// --kill-child with a PID namespace: when the page's bash ends, or the test's deadline kills it,
	// the kernel ends everything the page left behind.
	cmd := exec.CommandContext(ctx, "unshare", "--net", "--pid", "--fork", "--mount-proc", "--kill-child",
		"bash", "-c", `ip link set lo up && exec bash "$0"`, script)
	cmd.Dir, cmd.Env = r.Dir, r.Env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 10 * time.Second // the namespace's processes die with it; never wait on a stray pipe
	err := cmd.Run()
	output := out.String()
	// The end mark after the last block's: bash may still report a stopped background job after it.
	if err == nil && strings.LastIndex(output, endMark) > strings.LastIndex(output, blockMark) {
		return nil
	}
	if !strings.Contains(output, blockMark) {
		return fmt.Errorf("the page's shell did not start (unshare needs root, or CAP_SYS_ADMIN, for the private network namespace the pages' fixed ports need): %v\n%s", err, output)
	}
	failed, printed := lastBlock(output)
	if err == nil {
		err = errors.New("the shell ended before the page did")
	}
	return &BlockError{Block: run[failed], Output: printed, Err: err}
}

// lastBlock finds the block the output ended in, and what that block printed.
func lastBlock(output string) (index int, printed string) {
	at := strings.LastIndex(output, blockMark)
	rest := output[at+len(blockMark):]
	num, printed, _ := strings.Cut(rest, "\n")
	index, _ = strconv.Atoi(num)
	return index, printed
}

// prelude holds the helpers that start and stop background blocks. set -m gives each background
// block its own process group, so a SIGINT reaches a `go run` and the program it started alike.
const prelude = `set -euo pipefail
set -m
declare -A __jobs=()
__stop() {
  local pid=${__jobs[$1]:-}
  [ -n "$pid" ] || return 0
  kill -INT -- "-$pid" 2>/dev/null || true
  local i
  for ((i = 0; i < 600; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "background block $1 ignored Ctrl-C for 60 s; killing it"; kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  unset "__jobs[$1]"
}
__ready() {
  local i
  for ((i = 0; i < 1800; i++)); do
    grep -qF -- "$2" "$3" && return 0
    if ! kill -0 "${__jobs[$1]}" 2>/dev/null; then
      echo "background block $1 ended before printing \"$2\":"; cat "$3"; return 1
    fi
    sleep 0.1
  done
  echo "background block $1 did not print \"$2\" within 180 s:"; cat "$3"; return 1
}
trap 'for __n in "${!__jobs[@]}"; do __stop "$__n"; done' EXIT
`

// script is the page's bash script: each block verbatim, after a line naming it.
func (r Runner) script(blocks []Block) string {
	var s strings.Builder
	s.WriteString(prelude)
	for i, b := range blocks {
		fmt.Fprintf(&s, "printf '\\n%s%d\\n'\n", blockMark, i)
		if b.Job == nil {
			s.WriteString(b.Text)
			continue
		}
		log := filepath.Join(r.Logs, fmt.Sprintf("%s.%d.log", b.Job.Name, i))
		fmt.Fprintf(&s, "__stop %s\n(\n%s) >%s 2>&1 &\n__jobs[%s]=$!\n__ready %s %s %s\n",
			b.Job.Name, b.Text, quote(log), b.Job.Name, b.Job.Name, quote(b.Job.Ready), quote(log))
	}
	fmt.Fprintf(&s, "printf '\\n%s\\n'\n", endMark)
	return s.String()
}

// quote makes s one bash word.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
