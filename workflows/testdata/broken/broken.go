// Package broken is a workflow that breaks the rules of workflows/ at once, for
// workflows/determinism_test.go to prove the checks catch it. It compiles (the analyzer needs that)
// but nothing runs it; being under testdata, ./... never builds or vets it.
//
// Each offence the analyzer must name is marked with a "want:" comment holding the reason it gives;
// the test finds the lines by those marks. The import of net/http is the import rule's to report.
package broken

import (
	"net/http"
	"time"

	"go.temporal.io/sdk/workflow"
)

// Ping asks every receiver at once, each from its own goroutine, and returns when it asked.
func Ping(ctx workflow.Context, receivers map[string]string) (time.Time, error) {
	asked := time.Now()             // want: calls non-deterministic function time.Now
	for _, url := range receivers { // want: iterates over map
		go ping(url) // want: starts goroutine
	}
	return asked, nil
}

func ping(url string) {
	resp, err := http.Get(url)
	if err == nil {
		_ = resp.Body.Close()
	}
}
