package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// The collector's settings are wds's unless GOGC or GOMEMLIMIT chooses them.
func TestTuneGCLeavesWhatTheEnvironmentChose(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	env := map[string]string{}
	tuneGC(func(k string) string { return env[k] })
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Errorf("GC percent %d, want %d", got, gcPercent)
	}
	if got := debug.SetMemoryLimit(math.MaxInt64); got != memoryLimit {
		t.Errorf("memory limit %d, want %d", got, memoryLimit)
	}
	env["GOGC"], env["GOMEMLIMIT"] = "50", "1GiB"
	tuneGC(func(k string) string { return env[k] })
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set, GC percent %d, want it untouched", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set, memory limit %d, want it untouched", got)
	}
}
