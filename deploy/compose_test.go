package deploy_test

import (
	"context"
	"net"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"

	"wds/config"
)

// secrets the compose file must take from the operator's environment, never hold.
var requiredSecrets = map[string]string{
	"POSTGRES_PASSWORD":  "pg-pass-from-env",
	"WDS_ENCRYPTION_KEY": "S2V5RnJvbVRoZUVudmlyb25tZW50MTIzNDU2Nzg5MDE=",
}

// devOnly are settings only `wds dev` reads; containers have no use for them.
var devOnly = map[string]bool{"WDS_DATA_DIR": true}

func load(t *testing.T, env map[string]string) (*types.Project, error) {
	t.Helper()
	var list []string
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	opts, err := cli.NewProjectOptions([]string{"../docker-compose.yml"},
		cli.WithName("wds"), cli.WithWorkingDirectory(".."), cli.WithEnv(list), cli.WithDiscardEnvFile)
	if err != nil {
		t.Fatal(err)
	}
	return opts.LoadProject(context.Background())
}

func project(t *testing.T) *types.Project {
	t.Helper()
	p, err := load(t, requiredSecrets)
	if err != nil {
		t.Fatalf("docker-compose.yml does not load: %v", err)
	}
	return p
}

// envVars are the variables config.Config reads, from its env tags, so this list cannot go stale.
func envVars(t *testing.T) []string {
	t.Helper()
	var out []string
	ct := reflect.TypeOf(config.Config{})
	for i := range ct.NumField() {
		if name := ct.Field(i).Tag.Get("env"); name != "" {
			out = append(out, name)
		}
	}
	for name := range devOnly {
		if !slices.Contains(out, name) {
			t.Errorf("devOnly names %s, which config.Config no longer reads", name)
		}
	}
	return out
}

func TestComposeNamesEveryService(t *testing.T) {
	p := project(t)
	images := map[string]string{
		"postgres": "postgres:", "temporal": "temporalio/auto-setup:", "temporal-ui": "temporalio/ui:",
		"migrate": "wds:", "serve": "wds:", "worker": "wds:",
	}
	if len(p.Services) != len(images) {
		t.Errorf("services %v, want exactly %d", p.ServiceNames(), len(images))
	}
	for name, prefix := range images {
		s, err := p.GetService(name)
		if err != nil {
			t.Errorf("service %s: %v", name, err)
			continue
		}
		if !strings.HasPrefix(s.Image, prefix) {
			t.Errorf("%s runs image %q, want %s...", name, s.Image, prefix)
		}
	}
	for _, name := range []string{"migrate", "serve", "worker"} {
		if s, _ := p.GetService(name); s.Build == nil || s.Build.Dockerfile != "Dockerfile" {
			t.Errorf("%s is not built from the repository's Dockerfile", name)
		}
	}
	commands := map[string][]string{"migrate": {"migrate", "up"}, "serve": {"serve"}, "worker": {"worker"}}
	for name, want := range commands {
		if s, _ := p.GetService(name); !slices.Equal(s.Command, want) {
			t.Errorf("%s runs %v, want %v (README.md, Commands)", name, s.Command, want)
		}
	}
	if _, ok := p.Volumes["postgres-data"]; !ok {
		t.Error("PostgreSQL data has no named volume")
	}
	if pg, _ := p.GetService("postgres"); len(pg.Volumes) != 1 || pg.Volumes[0].Target != "/var/lib/postgresql/data" {
		t.Errorf("postgres volumes %+v, want postgres-data on /var/lib/postgresql/data", pg.Volumes)
	}
}

func TestComposeHealthchecksAndDependencies(t *testing.T) {
	p := project(t)
	for _, name := range []string{"postgres", "temporal", "serve", "worker"} {
		s, _ := p.GetService(name)
		if s.HealthCheck == nil || len(s.HealthCheck.Test) < 2 || s.HealthCheck.Disable {
			t.Errorf("%s has no healthcheck", name)
		}
	}
	want := map[string]map[string]string{
		"temporal":    {"postgres": types.ServiceConditionHealthy},
		"temporal-ui": {"temporal": types.ServiceConditionHealthy},
		"migrate":     {"postgres": types.ServiceConditionHealthy, "temporal": types.ServiceConditionHealthy},
		"serve": {"postgres": types.ServiceConditionHealthy,
			"migrate": types.ServiceConditionCompletedSuccessfully},
		"worker": {"postgres": types.ServiceConditionHealthy,
			"migrate":  types.ServiceConditionCompletedSuccessfully,
			"temporal": types.ServiceConditionHealthy},
	}
	for name, deps := range want {
		s, _ := p.GetService(name)
		if len(s.DependsOn) != len(deps) {
			t.Errorf("%s depends on %v, want %v", name, s.DependsOn, deps)
		}
		for dep, cond := range deps {
			if got := s.DependsOn[dep].Condition; got != cond {
				t.Errorf("%s waits for %s with %q, want %q", name, dep, got, cond)
			}
		}
	}
	for _, name := range []string{"migrate", "serve", "worker"} {
		if s, _ := p.GetService(name); s.Restart != types.RestartPolicyOnFailure {
			t.Errorf("%s restarts %q, want on-failure", name, s.Restart)
		}
	}
}

func TestComposePassesEverySettingByEnvironment(t *testing.T) {
	p := project(t)
	vars := envVars(t)
	for _, name := range []string{"migrate", "serve", "worker"} {
		s, _ := p.GetService(name)
		for _, v := range vars {
			if _, ok := s.Environment[v]; !ok && !devOnly[v] {
				t.Errorf("%s does not set %s", name, v)
			}
		}
		for secret, value := range requiredSecrets {
			if secret == "WDS_ENCRYPTION_KEY" && *s.Environment[secret] != value {
				t.Errorf("%s: WDS_ENCRYPTION_KEY is not the operator's value", name)
			}
		}
		u, err := url.Parse(*s.Environment["DATABASE_URL"])
		if pass, _ := u.User.Password(); err != nil || u.Host != "postgres:5432" || pass != requiredSecrets["POSTGRES_PASSWORD"] {
			t.Errorf("%s DATABASE_URL %q, want the compose PostgreSQL with the operator's password", name, *s.Environment["DATABASE_URL"])
		}
		if got := *s.Environment["TEMPORAL_ADDRESS"]; got != "temporal:7233" {
			t.Errorf("%s TEMPORAL_ADDRESS %q", name, got)
		}
		checkConfigLoads(t, name, s.Environment)
	}
}

// checkConfigLoads applies a service's environment and runs the real configuration check, so a
// default written in the compose file that the binary would reject fails here, not at deploy time.
func checkConfigLoads(t *testing.T, service string, env types.MappingWithEquals) {
	t.Helper()
	for k, v := range env {
		if v != nil {
			t.Setenv(k, *v)
		}
	}
	if _, err := config.Load(); err != nil {
		t.Errorf("%s: its environment fails configuration: %v", service, err)
	}
}

func TestComposeRefusesToStartWithoutSecrets(t *testing.T) {
	for secret := range requiredSecrets {
		env := map[string]string{}
		for k, v := range requiredSecrets {
			if k != secret {
				env[k] = v
			}
		}
		if _, err := load(t, env); err == nil || !strings.Contains(err.Error(), secret) {
			t.Errorf("without %s: %v, want an error naming it", secret, err)
		}
	}
}

func TestComposeHealthchecksProbeTheConfiguredListeners(t *testing.T) {
	p := project(t)
	probes := map[string]string{"serve": "WDS_HTTP_ADDR", "worker": "WDS_METRICS_ADDR"}
	paths := map[string]string{"serve": "/v1/ready", "worker": "/metrics"}
	for name, addrVar := range probes {
		s, _ := p.GetService(name)
		_, port, err := net.SplitHostPort(*s.Environment[addrVar])
		if err != nil {
			t.Fatalf("%s %s: %v", name, addrVar, err)
		}
		want := "http://127.0.0.1:" + port + paths[name]
		if !slices.Contains(s.HealthCheck.Test, want) {
			t.Errorf("%s healthcheck %v does not probe %s", name, s.HealthCheck.Test, want)
		}
	}
	serve, _ := p.GetService("serve")
	_, port, _ := net.SplitHostPort(*serve.Environment["WDS_HTTP_ADDR"])
	if len(serve.Ports) != 1 || strconv.Itoa(int(serve.Ports[0].Target)) != port {
		t.Errorf("serve publishes %+v, want its API port %s", serve.Ports, port)
	}
}

// TestComposeRegistersSearchAttributes checks the one-shot that registers them: `wds migrate up` with
// TEMPORAL_ADDRESS, once Temporal is healthy (cmd/wds tests what the command registers).
func TestComposeRegistersSearchAttributes(t *testing.T) {
	p := project(t)
	s, _ := p.GetService("migrate")
	if strings.Join(s.Command, " ") != "migrate up" {
		t.Errorf("migrate runs %v, want migrate up", s.Command)
	}
	if addr := s.Environment["TEMPORAL_ADDRESS"]; addr == nil || *addr == "" {
		t.Error("migrate has no TEMPORAL_ADDRESS, so it would skip the search attributes")
	}
}
