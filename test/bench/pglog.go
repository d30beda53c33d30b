package bench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// loggedStatement is one statement PostgreSQL logged with log_statement=all: its text and, for the
// extended protocol, the values of $1, $2, ... as PostgreSQL printed them (nil is NULL).
type loggedStatement struct {
	pid    int
	sql    string
	params []*string
	// trip numbers the round trip the statement went in (wireTap), where it was captured through one;
	// 0 is unknown, a round trip of its own.
	trip int
}

var (
	// logEntryRE is the start of an entry under the default log_line_prefix ('%m [%p] '), or under
	// the run's (watchedPrefix, '%m [%p] db=%d '); lines that
	// do not match continue the entry before (a statement's text keeps its own line breaks).
	logEntryRE = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? \S+ \[(\d+)\] (?:db=(\S*) )?([A-Z]+):  (.*)$`)
	// statementRE is a logged statement: "statement: SQL" (simple protocol) or "execute NAME: SQL".
	statementRE = regexp.MustCompile(`(?s)^(?:statement|execute [^:]+): (.*)$`)
)

// readStatements reads the statements logged in path from byte offset on, with their parameters.
func readStatements(path string, offset int64) ([]loggedStatement, error) {
	var out []loggedStatement
	err := readLog(path, offset, func(e logEntry) error {
		switch {
		case e.kind == "LOG":
			if m := statementRE.FindStringSubmatch(e.text); m != nil {
				out = append(out, loggedStatement{pid: e.pid, sql: m[1]})
			}
		case e.kind == "DETAIL" && strings.HasPrefix(e.text, "parameters: ") && len(out) > 0 && out[len(out)-1].pid == e.pid:
			params, err := parseParams(strings.TrimPrefix(e.text, "parameters: "))
			if err != nil {
				return err
			}
			out[len(out)-1].params = params
		}
		return nil
	})
	return out, err
}

// logEntry is one entry of PostgreSQL's log: the backend's pid, its database when the prefix names
// it, the entry's kind (LOG, DETAIL, CONTEXT, STATEMENT, ...) and its text, continuation lines
// included.
type logEntry struct {
	pid            int
	db, kind, text string
}

// readLog calls each with every entry logged in path from byte offset on.
func readLog(path string, offset int64, each func(logEntry) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	var e logEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		m := logEntryRE.FindStringSubmatch(sc.Text())
		if m == nil {
			e.text += "\n" + sc.Text()
			continue
		}
		if e.kind != "" {
			if err := each(e); err != nil {
				return err
			}
		}
		pid, _ := strconv.Atoi(m[1])
		e = logEntry{pid: pid, db: m[2], kind: m[3], text: m[4]}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("bench: read %s: %w", path, err)
	}
	if e.kind == "" {
		return nil
	}
	return each(e)
}

// parseParams reads PostgreSQL's "$1 = 'a', $2 = NULL" (a quote inside a value doubled) into values
// in $n order.
func parseParams(s string) ([]*string, error) {
	var out []*string
	for i := 1; s != ""; i++ {
		head := fmt.Sprintf("$%d = ", i)
		if !strings.HasPrefix(s, head) {
			return nil, fmt.Errorf("bench: logged parameters: want %q at %q", head, truncate(s, 40))
		}
		s = s[len(head):]
		if rest, ok := strings.CutPrefix(s, "NULL"); ok {
			out, s = append(out, nil), rest
		} else {
			v, rest, err := quoted(s)
			if err != nil {
				return nil, err
			}
			out, s = append(out, &v), rest
		}
		s = strings.TrimPrefix(s, ", ")
	}
	return out, nil
}

// quoted reads a single-quoted SQL literal at the start of s and returns its value and what follows.
func quoted(s string) (string, string, error) {
	if !strings.HasPrefix(s, "'") {
		return "", "", fmt.Errorf("bench: logged parameters: want a quoted value at %q", truncate(s, 40))
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != '\'' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == '\'' {
			b.WriteByte('\'')
			i++
			continue
		}
		return b.String(), s[i+1:], nil
	}
	return "", "", fmt.Errorf("bench: logged parameters: unterminated value")
}
