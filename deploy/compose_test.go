package deploy_test

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"

	"wds/deploy/temporalsetup"
	"wds/internal/dev/temporalcluster"
	"wds/internal/platform/config"
	"wds/workflows/contract"
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

// images are the services and the image each runs: Temporal's supported server image, with its
// schema and namespace set up by admin-tools one-shots (temporalio/auto-setup is deprecated).
var images = map[string]string{
	"postgres": "postgres:", "temporal-schema": "temporalio/admin-tools:", "temporal": "temporalio/server:",
	"temporal-setup": "temporalio/admin-tools:", "temporal-ui": "temporalio/ui:",
	"migrate": "wds:", "serve": "wds:", "worker": "wds:",
}

// oneShots run to completion on every `up`; the others run until stopped.
var oneShots = map[string]bool{"temporal-schema": true, "temporal-setup": true, "migrate": true}

// wdsServices run the wds image and read config.Config.
var wdsServices = []string{"migrate", "serve", "worker"}

func TestComposeNamesEveryService(t *testing.T) {
	p := project(t)
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
	for _, name := range wdsServices {
		if s, _ := p.GetService(name); s.Build == nil || s.Build.Dockerfile != "Dockerfile" {
			t.Errorf("%s is not built from the repository's Dockerfile", name)
		}
	}
	commands := map[string][]string{"migrate": {"migrate", "up"}, "serve": {"serve"}, "worker": {"worker"}}
	for name, want := range commands {
		if s, _ := p.GetService(name); !slices.Equal(s.Command, want) {
			t.Errorf("%s runs %v, want %v (docs/cli.md, Commands)", name, s.Command, want)
		}
	}
	if _, ok := p.Volumes["postgres-data"]; !ok {
		t.Error("PostgreSQL data has no named volume")
	}
	if pg, _ := p.GetService("postgres"); len(pg.Volumes) != 1 || pg.Volumes[0].Target != "/var/lib/postgresql/data" {
		t.Errorf("postgres volumes %+v, want postgres-data on /var/lib/postgresql/data", pg.Volumes)
	}
}

// pinnedVersion matches a release tag: digits first, never latest or a moving major like 1.28.
var pinnedVersion = regexp.MustCompile(`^\d+\.\d+(\.\d+)?(-[a-z0-9.-]+)?$`)

func TestComposePinsEveryImage(t *testing.T) {
	p := project(t)
	tags := map[string]string{}
	for name, s := range p.Services {
		if slices.Contains(wdsServices, name) {
			continue // built from this checkout
		}
		_, tag, ok := strings.Cut(s.Image, ":")
		if !ok || !pinnedVersion.MatchString(tag) {
			t.Errorf("%s image %q is not pinned to a release", name, s.Image)
		}
		tags[name] = tag
	}
	for _, name := range []string{"temporal", "temporal-ui"} {
		if strings.Count(tags[name], ".") != 2 {
			t.Errorf("%s tag %q: pin the patch release", name, tags[name])
		}
	}
	// admin-tools' schema files must be those of the server release that runs on them.
	for _, name := range []string{"temporal-schema", "temporal-setup"} {
		if !strings.HasPrefix(tags[name], tags["temporal"]+"-") && tags[name] != tags["temporal"] {
			t.Errorf("%s runs admin-tools %q, not the server's release %q", name, tags[name], tags["temporal"])
		}
	}
}

// serverRequire is the Temporal server release tools/temporalserver builds (`make bin/temporal-server`).
var serverRequire = regexp.MustCompile(`(?m)^\s*(?:require\s+)?go\.temporal\.io/server v(\d+\.\d+\.\d+)\s*$`)

// TestComposeRunsTheServerTheTestsRun ties compose to what the tests' cluster ran: the server and
// admin-tools images at the release built from tools/temporalserver/go.mod, and its history shards.
func TestComposeRunsTheServerTheTestsRun(t *testing.T) {
	b, err := os.ReadFile("../tools/temporalserver/go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := serverRequire.FindSubmatch(b)
	if m == nil {
		t.Fatal("tools/temporalserver/go.mod requires no release of go.temporal.io/server")
	}
	built := string(m[1])
	p := project(t)
	for _, name := range []string{"temporal", "temporal-schema", "temporal-setup"} {
		s, _ := p.GetService(name)
		if _, tag, _ := strings.Cut(s.Image, ":"); tag != built {
			t.Errorf("%s runs %s, the tests built and ran server %s", name, s.Image, built)
		}
	}
	temporal, _ := p.GetService("temporal")
	if v := temporal.Environment["NUM_HISTORY_SHARDS"]; v == nil || *v != strconv.Itoa(temporalcluster.DefaultShards) {
		t.Errorf("temporal NUM_HISTORY_SHARDS %v, the tests' cluster runs %d", v, temporalcluster.DefaultShards)
	}
}

func TestComposeHealthchecksAndDependencies(t *testing.T) {
	p := project(t)
	for name, s := range p.Services {
		hasCheck := s.HealthCheck != nil && len(s.HealthCheck.Test) >= 2 && !s.HealthCheck.Disable
		switch {
		case oneShots[name] && hasCheck:
			t.Errorf("%s is a one-shot: dependents wait for it to complete, not to be healthy", name)
		case !oneShots[name] && !hasCheck && name != "temporal-ui":
			t.Errorf("%s has no healthcheck", name)
		}
		if oneShots[name] && s.Restart != types.RestartPolicyOnFailure {
			t.Errorf("%s restarts %q, want on-failure (a one-shot retried until it succeeds)", name, s.Restart)
		}
	}
	want := map[string]map[string]string{
		"temporal-schema": {"postgres": types.ServiceConditionHealthy},
		"temporal":        {"temporal-schema": types.ServiceConditionCompletedSuccessfully},
		"temporal-setup":  {"temporal": types.ServiceConditionHealthy},
		"temporal-ui":     {"temporal-setup": types.ServiceConditionCompletedSuccessfully},
		"migrate": {"postgres": types.ServiceConditionHealthy,
			"temporal-setup": types.ServiceConditionCompletedSuccessfully},
		"serve": {"postgres": types.ServiceConditionHealthy,
			"migrate": types.ServiceConditionCompletedSuccessfully},
		"worker": {"postgres": types.ServiceConditionHealthy,
			"migrate":        types.ServiceConditionCompletedSuccessfully,
			"temporal-setup": types.ServiceConditionCompletedSuccessfully},
	}
	for name, s := range p.Services {
		deps := want[name]
		if len(s.DependsOn) != len(deps) {
			t.Errorf("%s depends on %v, want %v", name, s.DependsOn, deps)
		}
		for dep, cond := range deps {
			if got := s.DependsOn[dep].Condition; got != cond {
				t.Errorf("%s waits for %s with %q, want %q", name, dep, got, cond)
			}
		}
	}
	for _, name := range wdsServices {
		if s, _ := p.GetService(name); s.Restart != types.RestartPolicyOnFailure {
			t.Errorf("%s restarts %q, want on-failure", name, s.Restart)
		}
	}
}

// scriptDir is where the one-shots' scripts live in the repository and where compose mounts them.
const scriptDir, scriptMount = "./deploy/temporalsetup", "/etc/wds-temporal"

// script is a one-shot's shell program: compose must run the repository's file (mounted read-only,
// run with sh -e), whose text is what the tests' cluster runs (temporalsetup embeds the same file).
func script(t *testing.T, s types.ServiceConfig, file, text string) string {
	t.Helper()
	if want := []string{"/bin/sh", "-e", scriptMount + "/" + file}; !slices.Equal(s.Entrypoint, want) || len(s.Command) != 0 {
		t.Fatalf("%s: entrypoint %v command %v, want %v and no command", s.Name, s.Entrypoint, s.Command, want)
	}
	mounted := slices.ContainsFunc(s.Volumes, func(v types.ServiceVolumeConfig) bool {
		return v.Type == types.VolumeTypeBind && v.Target == scriptMount && v.ReadOnly &&
			strings.HasSuffix(filepath.ToSlash(v.Source), strings.TrimPrefix(scriptDir, "."))
	})
	if !mounted {
		t.Fatalf("%s: volumes %+v, want %s mounted read-only on %s", s.Name, s.Volumes, scriptDir, scriptMount)
	}
	b, err := os.ReadFile(filepath.Join("..", scriptDir, file))
	if err != nil || string(b) != text {
		t.Fatalf("%s: %s is not the script the tests' cluster runs (%v)", s.Name, file, err)
	}
	return text
}

// TestComposeSetsUpTemporalInTheSamePostgres checks that Temporal's databases live in the PostgreSQL
// server wds uses, under names of their own, and that the schema one-shot makes exactly those.
func TestComposeSetsUpTemporalInTheSamePostgres(t *testing.T) {
	p := project(t)
	serve, _ := p.GetService("serve")
	wdsURL, err := url.Parse(*serve.Environment["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	pass, _ := wdsURL.User.Password()
	host, port, _ := net.SplitHostPort(wdsURL.Host)
	wdsDB := strings.TrimPrefix(wdsURL.Path, "/")

	temporal, _ := p.GetService("temporal")
	env := func(s types.ServiceConfig, k string) string {
		if v := s.Environment[k]; v != nil {
			return *v
		}
		return ""
	}
	for k, want := range map[string]string{"DB": "postgres12", "POSTGRES_SEEDS": host, "DB_PORT": port,
		"POSTGRES_USER": wdsURL.User.Username(), "POSTGRES_PWD": pass} {
		if got := env(temporal, k); got != want {
			t.Errorf("temporal %s=%q, want %q (the PostgreSQL wds uses)", k, got, want)
		}
	}
	dbs := []string{env(temporal, "DBNAME"), env(temporal, "VISIBILITY_DBNAME")}
	if slices.Contains(dbs, wdsDB) || dbs[0] == dbs[1] || slices.Contains(dbs, "") {
		t.Errorf("Temporal databases %v must be named, distinct, and not wds's %q", dbs, wdsDB)
	}

	schema, _ := p.GetService("temporal-schema")
	for k, want := range map[string]string{"SQL_PLUGIN": "postgres12", "SQL_HOST": host, "SQL_PORT": port,
		"SQL_USER": wdsURL.User.Username(), "SQL_PASSWORD": pass} {
		if got := env(schema, k); got != want {
			t.Errorf("temporal-schema %s=%q, want %q", k, got, want)
		}
	}
	sh := script(t, schema, "schema.sh", temporalsetup.Schema)
	for i, v := range []string{"${TEMPORAL_DBNAME:-%s}:temporal", "${TEMPORAL_VISIBILITY_DBNAME:-%s}:visibility"} {
		if dir := v[strings.LastIndex(v, ":")+1:]; !strings.Contains(sh, fmt.Sprintf(v, dbs[i])) {
			t.Errorf("temporal-schema does not set up database %s from schema %s", dbs[i], dir)
		}
	}
	for _, step := range []string{"create-database", "setup-schema -v 0.0", "update-schema -d"} {
		if !strings.Contains(sh, `temporal-sql-tool --db "$name" `+step) {
			t.Errorf("temporal-schema does not run temporal-sql-tool %s", step)
		}
	}
}

// attrLine is one registration in temporal-setup's script: attr NAME TYPE.
var attrLine = regexp.MustCompile(`(?m)^attr (\w+) (\w+)$`)

// TestComposeRegistersSearchAttributes checks the one-shot that creates the namespace and the
// search attributes against the ones the workflows set (contract.SearchAttributeKeys), by name and
// type, and that it talks to the Temporal and namespace wds uses.
func TestComposeRegistersSearchAttributes(t *testing.T) {
	p := project(t)
	setup, _ := p.GetService("temporal-setup")
	got := map[string]string{}
	sh := script(t, setup, "setup.sh", temporalsetup.Setup)
	for _, m := range attrLine.FindAllStringSubmatch(sh, -1) {
		got[m[1]] = m[2]
	}
	want := map[string]string{}
	for _, k := range contract.SearchAttributeKeys() {
		want[k.GetName()] = k.GetValueType().String()
	}
	if !maps.Equal(got, want) {
		t.Errorf("temporal-setup registers %v, the workflows set %v", got, want)
	}
	worker, _ := p.GetService("worker")
	for _, k := range []string{"TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE"} {
		if *setup.Environment[k] != *worker.Environment[k] {
			t.Errorf("temporal-setup %s=%q, the worker's is %q", k, *setup.Environment[k], *worker.Environment[k])
		}
	}
	for _, step := range []string{"temporal operator cluster health", "temporal operator namespace create"} {
		if !strings.Contains(sh, step) {
			t.Errorf("temporal-setup does not run %s", step)
		}
	}
	migrate, _ := p.GetService("migrate")
	if addr := migrate.Environment["TEMPORAL_ADDRESS"]; addr == nil || *addr == "" {
		t.Error("migrate has no TEMPORAL_ADDRESS, so it would not check the search attributes")
	}
}

func TestComposePassesEverySettingByEnvironment(t *testing.T) {
	p := project(t)
	vars := envVars(t)
	for _, name := range wdsServices {
		s, _ := p.GetService(name)
		for k := range s.Environment {
			if !slices.Contains(vars, k) {
				t.Errorf("%s sets %s, which config.Config does not read (misspelt or stale?)", name, k)
			}
		}
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
