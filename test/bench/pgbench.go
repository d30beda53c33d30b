package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// pgbenchSpec is one pgbench run on the run's cluster: the baselines the service is compared with.
type pgbenchSpec struct {
	db      string            // database name
	name    string            // names the per-transaction log files
	script  string            // a custom script file; empty runs the built-in TPC-B-like script
	clients int               // concurrent connections
	seconds int               // pgbench's -T takes whole seconds
	defs    map[string]string // -D variables of the script
}

var (
	tpsRE       = regexp.MustCompile(`tps = ([0-9.]+) \(without initial connection time\)`)
	processedRE = regexp.MustCompile(`number of transactions actually processed: (\d+)`)
	failedRE    = regexp.MustCompile(`number of failed transactions: (\d+)`)
)

// pgbench runs s with prepared statements (as the service's driver caches them) and the same number
// of client connections as the service's measurement, and reads each transaction's latency from
// pgbench's own log.
func (e *env) pgbench(ctx context.Context, s pgbenchSpec) (sample, error) {
	prefix := filepath.Join(e.dir, s.name)
	args := []string{"-n", "-M", "prepared", "-c", strconv.Itoa(s.clients), "-j", strconv.Itoa(min(s.clients, 2)),
		"-T", strconv.Itoa(s.seconds), "-l", "--log-prefix=" + prefix,
		"-h", "127.0.0.1", "-p", strconv.Itoa(e.cluster.Port()), "-U", "postgres"}
	if s.script != "" {
		args = append(args, "-f", s.script)
	} else {
		args = append(args, "-b", "tpcb-like")
	}
	keys := make([]string, 0, len(s.defs))
	for k := range s.defs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "-D", k+"="+s.defs[k])
	}
	args = append(args, s.db)
	cmd := exec.CommandContext(ctx, e.pgbenchBin, args...)
	cmd.Dir = e.dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return sample{}, fmt.Errorf("bench: pgbench %s: %w: %s", s.name, err, out)
	}
	return parsePgbench(string(out), prefix, s.clients)
}

// parsePgbench reads pgbench's summary and its per-transaction logs (prefix.<pid>[.<thread>]). The
// time is what pgbench's own rate implies, which leaves out connection set-up as the HTTP clients'
// kept-alive connections do.
func parsePgbench(out, prefix string, clients int) (sample, error) {
	s := sample{clients: clients}
	tps := tpsRE.FindStringSubmatch(out)
	processed := processedRE.FindStringSubmatch(out)
	if tps == nil || processed == nil {
		return s, fmt.Errorf("bench: cannot read pgbench's summary: %s", out)
	}
	rate, _ := strconv.ParseFloat(tps[1], 64)
	s.ops, _ = strconv.Atoi(processed[1])
	if rate > 0 {
		s.seconds = float64(s.ops) / rate
	}
	if f := failedRE.FindStringSubmatch(out); f != nil {
		s.errors, _ = strconv.Atoi(f[1])
	}
	files, _ := filepath.Glob(prefix + ".*")
	for _, f := range files {
		l, err := readPgbenchLog(f)
		if err != nil {
			return s, err
		}
		s.lat = append(s.lat, l...)
		_ = os.Remove(f)
	}
	if len(s.lat) == 0 {
		return s, fmt.Errorf("bench: pgbench wrote no transaction log at %s.*", prefix)
	}
	return s, nil
}

// readPgbenchLog reads the latency column (the third, in microseconds) of a pgbench log; failed
// transactions say "failed" there and are counted by the summary instead.
func readPgbenchLog(path string) ([]time.Duration, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer f.Close()
	var lat []time.Duration
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		if us, err := strconv.ParseInt(fields[2], 10, 64); err == nil {
			lat = append(lat, time.Duration(us)*time.Microsecond)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("bench: read %s: %w", path, err)
	}
	return lat, nil
}

// pgbenchInit creates pgbench's TPC-B tables at the given scale (100,000 accounts per unit).
func (e *env) pgbenchInit(ctx context.Context, db string, scale int) error {
	cmd := exec.CommandContext(ctx, e.pgbenchBin, "-i", "-q", "-s", strconv.Itoa(scale),
		"-h", "127.0.0.1", "-p", strconv.Itoa(e.cluster.Port()), "-U", "postgres", db)
	cmd.Dir = e.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("bench: pgbench -i: %w: %s", err, out)
	}
	return nil
}
