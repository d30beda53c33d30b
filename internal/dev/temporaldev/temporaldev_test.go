package temporaldev

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
