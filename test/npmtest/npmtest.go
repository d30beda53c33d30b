// Package npmtest installs pinned npm packages for tests that run published JavaScript verifiers
// (Stripe's, the Standard Webhooks project's) against what wds sends.
package npmtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Install installs name@version once into the repository's ignored bin/npm/<name>-<version> and
// returns the package's directory (require() it); later runs reuse it. A missing npm fails the test:
// make test installs it (tools/test-deps).
func Install(t testing.TB, name, version string) string {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "bin", "npm", name+"-"+version)
	pkg := filepath.Join(dir, "node_modules", name)
	installOnce(t, dir, filepath.Join(pkg, "package.json"), name+"@"+version, func(tmp string) {},
		"install", "--prefix", "{dir}", "--no-audit", "--no-fund", "--loglevel=error", name+"@"+version)
	return pkg
}

// LookPath finds a program the test needs, failing the test with how to install it when it is
// missing.
func LookPath(t testing.TB, name, install string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not on PATH: install %s (make test does, through tools/test-deps)", name, install)
	}
	return path
}

// repoRoot is the directory of the module's go.mod, found upwards from the test's directory.
func repoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// InstallLocked installs the project whose package.json and package-lock.json are in dir, exactly as
// the lock file pins every package, once into the ignored bin/npm/<dir's name>-<the lock's hash>, and
// returns that directory (its node_modules/.bin holds the tools). A changed lock file installs anew.
func InstallLocked(t testing.TB, dir string) string {
	t.Helper()
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := os.ReadFile(filepath.Join(dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(lock)
	out := filepath.Join(repoRoot(t), "bin", "npm", filepath.Base(dir)+"-"+hex.EncodeToString(sum[:6]))
	installOnce(t, out, filepath.Join(out, "node_modules", ".package-lock.json"), dir, func(tmp string) {
		for name, data := range map[string][]byte{"package.json": manifest, "package-lock.json": lock} {
			if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}, "ci", "--prefix", "{dir}", "--no-audit", "--no-fund", "--loglevel=error")
	return out
}

// installOnce runs npm with args ({dir} standing for the directory being filled) unless ready
// exists. The install goes to a fresh directory, prepared by prepare, renamed to dir when complete,
// so a concurrent or interrupted run never leaves a half-installed package behind.
func installOnce(t testing.TB, dir, ready, what string, prepare func(tmp string), args ...string) {
	t.Helper()
	if _, err := os.Stat(ready); err == nil {
		return
	}
	npm := LookPath(t, "npm", "npm (Debian: apt-get install npm)")
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "installing-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	prepare(tmp)
	for i, a := range args {
		if a == "{dir}" {
			args[i] = tmp
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, npm, args...).CombinedOutput(); err != nil {
		t.Fatalf("npm %s for %s (the npm registry must be reachable): %v\n%s", args[0], what, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(ready); statErr != nil { // no concurrent run's install either
			t.Fatalf("install %s: %v", what, err)
		}
	}
}
