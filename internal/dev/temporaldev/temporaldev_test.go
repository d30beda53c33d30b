package temporaldev

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFindBinaryExplainsHowToBuildIt(t *testing.T) {
	t.Setenv("WDS_TEMPORAL_BIN", filepath.Join(t.TempDir(), "nope"))
	_, err := FindBinary()
	if !errors.Is(err, ErrNoBinary) || !strings.Contains(err.Error(), "make bin/temporal") {
		t.Fatalf("err = %v", err)
	}
}

func TestFindBinaryFindsTheRepositoryBuild(t *testing.T) {
	// Tests run in the package directory; the repository's bin/temporal is one level up.
	p, err := FindBinary()
	if err != nil {
		t.Fatalf("bin/temporal not found (run make bin/temporal): %v", err)
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
}

// A server that exits as it starts (a port taken under it) fails its start at once, each of
// startTries, with the reason it printed: not after a minute's silent dialling.
func TestAServerThatExitsFailsItsStartWithItsOutput(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "temporal")
	counter := filepath.Join(dir, "starts")
	script := "#!/bin/sh\necho start >> " + counter + "\necho 'listen tcp 127.0.0.1:1234: bind: address already in use' >&2\nexit 1\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	_, err := Start(context.Background(), Options{Binary: bin, Port: 7999})
	if err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("err = %v, want the server's own output", err)
	}
	if took := time.Since(began); took > 10*time.Second {
		t.Fatalf("the failed start took %v", took)
	}
	if b, _ := os.ReadFile(counter); strings.Count(string(b), "start") != startTries {
		t.Fatalf("started %d times, want %d", strings.Count(string(b), "start"), startTries)
	}
}
