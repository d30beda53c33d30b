package bench

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// captureCreates sends creates, one at a time, to a `wds serve` of its own whose connections log
// every statement with its parameters (log_statement=all, asked for in the start-up packet of its
// connections only, so nothing else on the cluster logs), and returns each create's statements.
// The first create of a fresh process loads caches the others do not; only the later ones are
// returned. A short pause after each answer lets work the server does after it land in its create.
func (e *env) captureCreates(ctx context.Context, s *stack, g *ingester, n int) ([][]loggedStatement, error) {
	u, err := url.Parse(s.dbURL)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	q := u.Query()
	q.Set("log_statement", "all")
	u.RawQuery = q.Encode()
	p, base, err := e.startServe(ctx, "capture", append(s.environ[:len(s.environ):len(s.environ)], "DATABASE_URL="+u.String()))
	if err != nil {
		return nil, err
	}
	defer p.stop()
	g.base = base
	logPath := filepath.Join(e.dir, "pg", "postgres.log")
	var out [][]loggedStatement
	for i := 0; i <= n; i++ {
		fi, err := os.Stat(logPath)
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		if _, err := g.create(ctx); err != nil {
			return nil, fmt.Errorf("bench: capture: %w", err)
		}
		time.Sleep(300 * time.Millisecond)
		st, err := readStatements(logPath, fi.Size())
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out = append(out, st)
		}
	}
	return out, nil
}
