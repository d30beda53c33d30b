package main

import "runtime/debug"

// gcPercent is the Go collector's target when GOGC is unset: between collections the heap may grow
// to four times what is live instead of twice. wds's live heap is a few megabytes, and collecting
// the garbage of each request's rows took a fifth of wds serve's CPU on a Read API page; at 300 its
// CPU per page fell 13 to 17% in paired runs (docs/benchmarks.md).
const gcPercent = 300

// memoryLimit is the Go runtime's soft memory limit when GOMEMLIMIT is unset: near it the collector
// runs as often as it must, so the wider target cannot grow a busy process's heap without end.
const memoryLimit = 256 << 20

// tuneGC applies gcPercent and memoryLimit where the environment does not choose its own. Only
// `wds serve` does: its live heap is small and measured. The worker's holds Temporal's cache of
// running workflows, which a backlog can grow toward any fixed limit.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
}
