package deploy_test

import (
	"os/exec"
	"testing"
)

// promtool is Prometheus's own checker (Debian: apt-get install prometheus; make test installs it through tools/test-deps).
// A machine without it fails here: the alert rules would otherwise ship untested.
func promtool(t *testing.T, args ...string) {
	t.Helper()
	bin, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool not found (%v): install Debian's prometheus package (apt-get install prometheus), as make test does through tools/test-deps", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = "prometheus"
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool %v: %v\n%s", args, err, out)
	}
	t.Logf("promtool %v:\n%s", args, out)
}

// TestAlertRulesAreValid: every rule parses, its PromQL compiles and its templates render.
func TestAlertRulesAreValid(t *testing.T) { promtool(t, "check", "rules", "alerts.yml") }

// TestAlertRulesFireAndStayQuiet runs alerts_test.yml: each alert firing on the series that should
// raise it, with its labels and rendered annotations, and quiet on a near miss.
func TestAlertRulesFireAndStayQuiet(t *testing.T) { promtool(t, "test", "rules", "alerts_test.yml") }
