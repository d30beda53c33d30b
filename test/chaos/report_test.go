package chaos

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// row is one scenario's line of docs/reliability.md.
type row struct {
	Scenario  string
	Load      string
	Written   int // order.created events in the outbox
	Due       int // deliveries owed: written events times subscribed endpoints
	Delivered int
	Lost      int
	Resent    int // POSTs of an event already received, absorbed by the receiver's deduplication
	Twice     int // side effects applied twice
	Answers   string
}

var (
	resultsMu sync.Mutex
	results   []row
)

func record(t *testing.T, r row) {
	t.Helper()
	t.Logf("%s: written %d, due %d, delivered %d, lost %d, re-sent %d, twice %d, answers %s",
		r.Scenario, r.Written, r.Due, r.Delivered, r.Lost, r.Resent, r.Twice, r.Answers)
	resultsMu.Lock()
	defer resultsMu.Unlock()
	results = append(results, r)
}

const (
	beginMark = "<!-- results:begin -->"
	endMark   = "<!-- results:end -->"
)

// table renders the rows as Markdown.
func table() string {
	resultsMu.Lock()
	defer resultsMu.Unlock()
	var b strings.Builder
	mode := "short (make test)"
	if *long {
		mode = "full length (make chaos)"
	}
	fmt.Fprintf(&b, "Run of %s, %s.\n\n", time.Now().UTC().Format("2006-01-02 15:04 MST"), mode)
	b.WriteString("| scenario | load | events written | deliveries due | delivered | lost | re-sent, absorbed by dedup | side effects twice | answers |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range results {
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %d | %s |\n",
			r.Scenario, r.Load, r.Written, r.Due, r.Delivered, r.Lost, r.Resent, r.Twice, r.Answers)
	}
	return b.String()
}

// writeReport prints the table and, with -chaos.report, puts it between the file's markers.
func writeReport() int {
	if len(results) == 0 {
		return 0
	}
	t := table()
	fmt.Print("\n" + t)
	if *reportFile == "" {
		return 0
	}
	doc, err := os.ReadFile(*reportFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	before, rest, ok1 := strings.Cut(string(doc), beginMark)
	_, after, ok2 := strings.Cut(rest, endMark)
	if !ok1 || !ok2 {
		fmt.Fprintf(os.Stderr, "%s has no %s ... %s section\n", *reportFile, beginMark, endMark)
		return 1
	}
	out := before + beginMark + "\n" + t + endMark + after
	if err := os.WriteFile(*reportFile, []byte(out), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
