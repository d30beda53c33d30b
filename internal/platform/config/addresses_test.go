package config

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestAddressAndFileErrorsNameTheVariable(t *testing.T) {
	cases := []struct {
		env   map[string]string
		names string
	}{
		{map[string]string{"WDS_HTTP_ADDR": "8080"}, "WDS_HTTP_ADDR"},
		{map[string]string{"WDS_HTTP_ADDR": ":http-alt"}, "WDS_HTTP_ADDR"},
		{map[string]string{"WDS_METRICS_ADDR": "localhost"}, "WDS_METRICS_ADDR"},
		{map[string]string{"WDS_METRICS_ADDR": ":70000"}, "WDS_METRICS_ADDR"},
		{map[string]string{"TEMPORAL_ADDRESS": "temporal"}, "TEMPORAL_ADDRESS"},
		{map[string]string{"WDS_HTTP_ADDR": ":9000", "WDS_METRICS_ADDR": "127.0.0.1:9000"}, "WDS_METRICS_ADDR"},
		{map[string]string{"WDS_WEBHOOK_CA_FILE": filepath.Join(t.TempDir(), "missing.pem")}, "WDS_WEBHOOK_CA_FILE"},
	}
	for _, c := range cases {
		t.Run(c.names, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			_, err := Load()
			if err == nil || !strings.Contains(err.Error(), c.names) {
				t.Fatalf("%v: err = %v, want it to name %s", c.env, err, c.names)
			}
		})
	}
}

func TestAddressesThatAreFine(t *testing.T) {
	for _, env := range []map[string]string{
		{"WDS_HTTP_ADDR": "127.0.0.1:0", "WDS_METRICS_ADDR": "127.0.0.1:0"}, // tests: two free ports
		{"WDS_HTTP_ADDR": "[::1]:8080", "WDS_METRICS_ADDR": ":9090", "TEMPORAL_ADDRESS": "temporal:7233"},
	} {
		for k, v := range env {
			t.Setenv(k, v)
		}
		if _, err := Load(); err != nil {
			t.Errorf("%v: %v", env, err)
		}
	}
}
