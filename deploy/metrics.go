package deploy

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"

	"sigs.k8s.io/yaml"
)

var (
	// Dashboard is the Grafana dashboard, grafana/wds.json.
	//go:embed grafana/wds.json
	Dashboard []byte
	// AlertRules are the Prometheus alert rules, prometheus/alerts.yml.
	//go:embed prometheus/alerts.yml
	AlertRules []byte
)

// DashboardQueries are the PromQL expressions of the dashboard's panels, in panel order.
func DashboardQueries() ([]string, error) {
	var d struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(Dashboard, &d); err != nil {
		return nil, fmt.Errorf("grafana/wds.json: %w", err)
	}
	var out []string
	for _, p := range d.Panels {
		for _, t := range p.Targets {
			out = append(out, t.Expr)
		}
	}
	return out, nil
}

// AlertQueries are the PromQL expressions of the alert rules, by alert name.
func AlertQueries() (map[string]string, error) {
	var f struct {
		Groups []struct {
			Rules []struct {
				Alert string `json:"alert"`
				Expr  string `json:"expr"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.Unmarshal(AlertRules, &f); err != nil {
		return nil, fmt.Errorf("prometheus/alerts.yml: %w", err)
	}
	out := map[string]string{}
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			out[r.Alert] = r.Expr
		}
	}
	return out, nil
}

// metricName finds the series names a PromQL expression reads: ours (wds_), the Temporal SDK's
// (temporal_) and the Go runtime's (go_, process_). up is Prometheus's own and is left out; label
// values cannot match, since the job and task queue names use hyphens.
var metricName = regexp.MustCompile(`\b(?:wds|temporal|go|process)_[a-z0-9_]+\b`)

// MetricNames are the sample names (a histogram's _bucket series, not its family) the dashboard's
// and the alert rules' queries read, sorted and without repeats: each must appear on the /metrics of
// a running wds.
func MetricNames() ([]string, error) {
	queries, err := DashboardQueries()
	if err != nil {
		return nil, err
	}
	alerts, err := AlertQueries()
	if err != nil {
		return nil, err
	}
	for _, q := range alerts {
		queries = append(queries, q)
	}
	var names []string
	for _, q := range queries {
		names = append(names, metricName.FindAllString(q, -1)...)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}
