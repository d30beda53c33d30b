package api_test

import (
	"net/http"
	"testing"

	"wds/internal/endpoints"
	"wds/internal/platform/egress/egresstest"
	"wds/models"
)

// Endpoint registration refuses every URL whose host is, or resolves to, an address that is not
// public (loopback, mapped loopback, unspecified, cloud metadata, private and shared ranges, IPv6
// unique-local and link-local), with 422 url_not_allowed in the error shape and no row written. The
// resolver is injected, so a name's answers are the test's.
func TestOperatorRefusesEndpointURLsThatReachTheInternalNetwork(t *testing.T) {
	dns := &egresstest.Resolver{}
	dns.Set("internal.example.com", "10.20.30.40")
	dns.Set("split.example.com", "93.184.216.34", "192.168.1.1")
	dns.Set("public.example.com", "93.184.216.34")
	e := newOpEnvWith(t, endpoints.Options{Resolver: dns})
	for _, url := range []string{
		"https://127.0.0.1/",
		"https://[::1]/",
		"https://[::ffff:127.0.0.1]/",
		"https://0.0.0.0/",
		"https://169.254.169.254/latest/meta-data",
		"https://10.1.2.3/",
		"https://172.16.0.1/",
		"https://192.168.1.1/",
		"https://100.64.0.1/",
		"https://[fc00::1]/",
		"https://[fe80::1]/",
		"https://internal.example.com/hook", // resolves private
		"https://split.example.com/hook",    // one public and one private answer
	} {
		status, body := e.create(url)
		if status != http.StatusUnprocessableEntity || body["error"] != "url_not_allowed" || len(body) != 2 {
			t.Errorf("%s: %d %v, want 422 url_not_allowed", url, status, body)
			continue
		}
		if detail, _ := body["detail"].(string); detail == "" {
			t.Errorf("%s: no detail in %v", url, body)
		}
	}
	for _, host := range []string{"internal.example.com", "split.example.com"} {
		if dns.Asked(host) != 1 {
			t.Errorf("%s was looked up %d times, want once", host, dns.Asked(host))
		}
	}
	var rows int64
	e.db.Model(&models.Endpoint{}).Where("org_id = ?", e.org.ID).Count(&rows)
	if rows != 0 {
		t.Fatalf("%d endpoint rows written for refused URLs", rows)
	}

	// The same service registers a name that resolves public only.
	if status, body := e.create("https://public.example.com/hook"); status != http.StatusCreated {
		t.Fatalf("public name: %d %v", status, body)
	}
	e.db.Model(&models.Endpoint{}).Where("org_id = ?", e.org.ID).Count(&rows)
	if rows != 1 {
		t.Fatalf("%d endpoint rows after one registration", rows)
	}
}
