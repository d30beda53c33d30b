package deploy_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"wds/deploy"
)

// dashboardVariables are what the dashboard's queries may use besides PromQL, and what promtool is
// given in their place to compile them.
var dashboardVariables = strings.NewReplacer("$__rate_interval", "5m", "$serve_job", "wds-serve", "$worker_job", "wds-worker")

func TestDashboardIsWellFormed(t *testing.T) {
	var d struct {
		UID        string `json:"uid"`
		Title      string `json:"title"`
		Templating struct {
			List []struct{ Name, Type string } `json:"list"`
		} `json:"templating"`
		Panels []struct {
			ID         int    `json:"id"`
			Type       string `json:"type"`
			Title      string `json:"title"`
			Datasource *struct {
				UID string `json:"uid"`
			} `json:"datasource"`
			GridPos struct{ X, Y, W, H int } `json:"gridPos"`
			Targets []struct {
				Expr  string `json:"expr"`
				RefID string `json:"refId"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(deploy.Dashboard, &d); err != nil {
		t.Fatalf("grafana/wds.json: %v", err)
	}
	if d.UID == "" || d.Title == "" {
		t.Error("the dashboard needs a uid and a title, so imports update it instead of copying it")
	}
	if !slices.ContainsFunc(d.Templating.List, func(v struct{ Name, Type string }) bool {
		return v.Name == "datasource" && v.Type == "datasource"
	}) {
		t.Error("no datasource variable: the dashboard would be bound to one Grafana's data source")
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d repeats", p.ID)
		}
		ids[p.ID] = true
		if p.GridPos.X+p.GridPos.W > 24 || p.GridPos.W <= 0 || p.GridPos.H <= 0 {
			t.Errorf("panel %q lies outside the 24-column grid: %+v", p.Title, p.GridPos)
		}
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q does not query the chosen data source", p.Title)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			if q.RefID == "" || strings.TrimSpace(q.Expr) == "" {
				t.Errorf("panel %q has a query without refId or expression", p.Title)
			}
		}
	}
}

// TestDashboardQueriesCompile hands every panel's query to promtool as a recording rule, so a
// PromQL typo fails here rather than as an empty panel.
func TestDashboardQueriesCompile(t *testing.T) {
	queries, err := deploy.DashboardQueries()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, q := range queries {
		expr, _ := json.Marshal(dashboardVariables.Replace(q)) // a JSON string is a YAML string
		fmt.Fprintf(&b, "      - record: dashboard:query%d\n        expr: %s\n", i, expr)
	}
	file := filepath.Join(t.TempDir(), "dashboard-rules.yml")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	promtool(t, "check", "rules", file)
}

// TestDashboardShowsWhatAnOperatorNeeds names, for each question the dashboard answers, a series
// its queries must read.
func TestDashboardShowsWhatAnOperatorNeeds(t *testing.T) {
	queries, err := deploy.DashboardQueries()
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(queries, "\n")
	for topic, series := range map[string]string{
		"requests by route and status": "wds_http_requests_total",
		"latency":                      "wds_http_request_duration_seconds_bucket",
		"outbox backlog":               "wds_outbox_backlog",
		"oldest undispatched age":      "wds_outbox_oldest_age_seconds",
		"deliveries by outcome":        "wds_webhook_deliveries_total",
		"dropped rate per endpoint":    "wds_webhook_dropped_total",
		"recoveries":                   "wds_relay_recoveries_total",
		"relay starts":                 "wds_relay_started_total",
		"Temporal task latency":        "temporal_activity_execution_latency_seconds_bucket",
		"attempt latency":              "temporal_local_activity_execution_latency_seconds_bucket",
		"activity schedule-to-start":   "temporal_activity_schedule_to_start_latency_seconds_bucket",
		"workflow schedule-to-start":   "temporal_workflow_task_schedule_to_start_latency_seconds_bucket",
		"database gate waits":          "wds_db_gate_wait_seconds_bucket",
	} {
		if !strings.Contains(all, series) {
			t.Errorf("no panel shows %s (%s)", topic, series)
		}
	}
}

// TestEveryAlertHasARunbook checks that each alert points at its own section of docs/production.md.
func TestEveryAlertHasARunbook(t *testing.T) {
	alerts, err := deploy.AlertQueries()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/production.md")
	if err != nil {
		t.Fatal(err)
	}
	for name := range alerts {
		heading := "### " + name + "\n"
		if !strings.Contains(string(doc), heading) {
			t.Errorf("docs/production.md has no runbook heading %q", strings.TrimSpace(heading))
		}
		if !strings.Contains(string(deploy.AlertRules), "runbook: docs/production.md#"+strings.ToLower(name)+"\n") {
			t.Errorf("alert %s does not link its runbook", name)
		}
	}
}
