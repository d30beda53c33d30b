package bench

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// cpuMeter reads how much CPU time each part of the stack has used, from /proc, so a measurement can
// say where a request's CPU goes: on two shared cores, CPU per request is what bounds throughput.
type cpuMeter struct {
	parts map[string]func() []int // name -> pids whose CPU counts (the first one's reaped children too)
}

// clockTicks is USER_HZ, 100 on every Linux this runs on.
const clockTicks = 100

// ticks is a process's CPU time in clock ticks; withChildren adds its reaped children's (PostgreSQL's
// postmaster reaps the backends of closed connections, whose time would otherwise vanish).
func ticks(pid int, withChildren bool) int64 {
	f, ok := statFields(pid)
	if !ok {
		return 0
	}
	n := func(i int) int64 { v, _ := strconv.ParseInt(f[i], 10, 64); return v }
	t := n(11) + n(12) // utime, stime
	if withChildren {
		t += n(13) + n(14) // cutime, cstime
	}
	return t
}

// snapshot is each part's CPU time so far, in milliseconds.
func (m *cpuMeter) snapshot() map[string]float64 {
	out := map[string]float64{}
	for name, pids := range m.parts {
		var t int64
		for i, pid := range pids() {
			t += ticks(pid, i == 0)
		}
		out[name] = float64(t) * 1000 / clockTicks
	}
	return out
}

// metered wraps a measurement so that the CPU each part spends during it is added to acc.
func (m *cpuMeter) metered(acc map[string]float64, fn func() (sample, error)) func() (sample, error) {
	return func() (sample, error) {
		before := m.snapshot()
		s, err := fn()
		m.settle()
		for name, v := range m.snapshot() {
			acc[name] += v - before[name]
		}
		return s, err
	}
}

// settle waits, a few seconds at most, until the parts' processes stop changing. When pgbench
// returns, PostgreSQL is still ending and reaping the backends of its connections, and a snapshot
// then reads a backend's stat before the postmaster's reap, or the postmaster's before the backend's:
// taken as pgbench returned, it missed from 6 to 94 % of the round's PostgreSQL CPU, which the next
// round (wds's) was charged with.
func (m *cpuMeter) settle() {
	last := m.processes()
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		now := m.processes()
		if slices.Equal(now, last) && !slices.ContainsFunc(now, exiting) {
			return
		}
		last = now
	}
}

// processes lists the pids of every part, sorted.
func (m *cpuMeter) processes() []int {
	var all []int
	for _, pids := range m.parts {
		all = append(all, pids()...)
	}
	slices.Sort(all)
	return all
}

// exiting reports a process that has ended and is not reaped yet (a zombie), or is being reaped.
func exiting(pid int) bool {
	f, ok := statFields(pid)
	return !ok || len(f) > 0 && (f[0] == "Z" || f[0] == "X") // !ok: gone between the listing and now
}

// statFields are the fields of /proc/PID/stat after the command name, which is in parentheses and may
// hold spaces: the state first, then the parent's pid; false if the process is gone.
func statFields(pid int) ([]string, bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil, false
	}
	return strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])), true
}

// perOp divides CPU milliseconds by the operations they served.
func perOp(acc map[string]float64, ops int) map[string]float64 {
	out := map[string]float64{}
	for name, v := range acc {
		if ops > 0 {
			out[name] = round2(v / float64(ops))
		}
	}
	return out
}

// postgresPids is the postmaster of the cluster in dataDir and its live children.
func postgresPids(dataDir string) []int {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return nil
	}
	pm, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0]))
	if err != nil {
		return nil
	}
	return append([]int{pm}, childrenOf(pm)...)
}

// childrenOf lists the live children of pid.
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if f, ok := statFields(child); ok && len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// pidListening finds the process whose command line holds every one of words (the Temporal dev
// server, which the SDK's test suite starts without telling its pid).
func pidListening(words ...string) []int {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		cmd := strings.ReplaceAll(string(b), "\x00", " ")
		all := true
		for _, w := range words {
			all = all && strings.Contains(cmd, w)
		}
		if all {
			return []int{pid}
		}
	}
	return nil
}
