package deploy_test

import (
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"wds/internal/platform/config"
)

// stage is one FROM ... block of the Dockerfile, its instructions with continuation lines joined.
type stage struct {
	from  string
	name  string
	lines []string
}

func dockerfileStages(t *testing.T) []stage {
	t.Helper()
	raw, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.ReplaceAll(string(raw), "\\\n", " ")
	var stages []stage
	for _, line := range strings.Split(joined, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if strings.EqualFold(f[0], "FROM") {
			st := stage{from: f[1]}
			if len(f) == 4 && strings.EqualFold(f[2], "AS") {
				st.name = f[3]
			}
			stages = append(stages, st)
			continue
		}
		if len(stages) == 0 {
			t.Fatalf("instruction before FROM: %s", line)
		}
		stages[len(stages)-1].lines = append(stages[len(stages)-1].lines, line)
	}
	return stages
}

func (s stage) instr(name string) []string {
	var out []string
	for _, l := range s.lines {
		if f := strings.Fields(l); strings.EqualFold(f[0], name) {
			out = append(out, strings.TrimSpace(l[len(f[0]):]))
		}
	}
	return out
}

func TestDockerfileBuildsStaticBinaryIntoSmallNonRootImage(t *testing.T) {
	stages := dockerfileStages(t)
	if len(stages) < 2 {
		t.Fatalf("%d stages, want a build stage and a runtime stage", len(stages))
	}
	build, final := stages[0], stages[len(stages)-1]
	if !strings.HasPrefix(build.from, "golang:") {
		t.Errorf("build stage from %s, want the Go toolchain", build.from)
	}
	var static bool
	for _, r := range build.instr("RUN") {
		static = static || strings.Contains(r, "CGO_ENABLED=0") && strings.Contains(r, "go build") && strings.Contains(r, "./cmd/wds")
	}
	if !static {
		t.Error("no RUN builds ./cmd/wds with CGO_ENABLED=0")
	}
	if strings.HasPrefix(final.from, "golang") || !(strings.HasPrefix(final.from, "alpine:") || strings.Contains(final.from, "distroless")) {
		t.Errorf("runtime image %s is not a small base", final.from)
	}
	users := final.instr("USER")
	if len(users) == 0 {
		t.Fatal("runtime stage has no USER: the process would run as root")
	}
	user, _, _ := strings.Cut(users[len(users)-1], ":")
	if user == "root" || user == "0" || user == "" {
		t.Errorf("runtime USER %q is root", users[len(users)-1])
	}
	copies := final.instr("COPY")
	if !slices.ContainsFunc(copies, func(c string) bool { return strings.Contains(c, "--from="+build.name) }) {
		t.Errorf("runtime stage copies nothing from the build stage %q: %v", build.name, copies)
	}
	if ep := final.instr("ENTRYPOINT"); len(ep) != 1 || !strings.Contains(ep[0], "/wds") {
		t.Errorf("ENTRYPOINT %v, want the wds binary", ep)
	}
	// EXPOSE documents the default listeners; derive them from the configuration's defaults.
	ct := reflect.TypeOf(config.Config{})
	exposed := strings.Fields(strings.Join(final.instr("EXPOSE"), " "))
	for _, field := range []string{"HTTPAddr", "MetricsAddr"} {
		f, _ := ct.FieldByName(field)
		_, port, err := net.SplitHostPort(f.Tag.Get("envDefault"))
		if err != nil || !slices.Contains(exposed, port) {
			t.Errorf("EXPOSE %v lacks %s's default port %s", exposed, f.Tag.Get("env"), port)
		}
	}
}

func TestDockerignoreKeepsLocalStateOut(t *testing.T) {
	raw, err := os.ReadFile("../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	for _, p := range []string{".git", ".wds", "bin"} {
		if !slices.Contains(lines, p) {
			t.Errorf(".dockerignore lets %s into the build context", p)
		}
	}
}

// TestImageEntrypointRunsEveryRole runs the binary the Dockerfile installs as its ENTRYPOINT with the
// image's default CMD and with each compose service's command, asking for help: a command the
// binary does not have exits non-zero, so a renamed subcommand fails here instead of in a container.
func TestImageEntrypointRunsEveryRole(t *testing.T) {
	final := dockerfileStages(t)[len(dockerfileStages(t))-1]
	var entry, cmd []string
	if err := json.Unmarshal([]byte(final.instr("ENTRYPOINT")[0]), &entry); err != nil || len(entry) != 1 {
		t.Fatalf("ENTRYPOINT %v: want the exec form naming one binary (%v)", final.instr("ENTRYPOINT"), err)
	}
	installed := slices.ContainsFunc(final.instr("COPY"), func(c string) bool { return strings.HasSuffix(c, " "+entry[0]) })
	if !installed {
		t.Errorf("ENTRYPOINT %s is not where the runtime stage copies the binary: %v", entry[0], final.instr("COPY"))
	}
	if err := json.Unmarshal([]byte(final.instr("CMD")[0]), &cmd); err != nil {
		t.Fatalf("CMD %v: want the exec form (%v)", final.instr("CMD"), err)
	}
	bin := filepath.Join(t.TempDir(), "wds")
	if out, err := exec.Command("go", "build", "-o", bin, "wds/cmd/wds").CombinedOutput(); err != nil {
		t.Fatalf("build wds: %v\n%s", err, out)
	}
	roles := [][]string{cmd}
	p := project(t)
	for _, name := range wdsServices {
		s, _ := p.GetService(name)
		if len(s.Entrypoint) != 0 {
			t.Errorf("%s overrides the image's ENTRYPOINT with %v", name, s.Entrypoint)
		}
		roles = append(roles, s.Command)
	}
	for _, args := range roles {
		out, err := exec.Command(bin, append(slices.Clone(args), "-h")...).CombinedOutput()
		if err != nil {
			t.Errorf("wds %v -h: %v\n%s", args, err, out)
		}
	}
	if out, err := exec.Command(bin, "no-such-role", "-h").CombinedOutput(); err == nil {
		t.Errorf("wds no-such-role -h succeeded, so this test could not catch a missing command:\n%s", out)
	}
}
