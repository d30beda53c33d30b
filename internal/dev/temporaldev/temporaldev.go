// Package temporaldev runs the Temporal CLI's dev server (server, SQLite and the Temporal UI) that
// `make bin/temporal` builds, for `wds dev` and the end-to-end tests, with wds's search attributes
// registered.
package temporaldev

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"wds/internal/platform/freeport"
	"wds/internal/platform/temporalclient"
	"wds/workflows/contract"
)

// Options configure a dev server. Zero ports pick free ones.
type Options struct {
	// Binary is the temporal executable; empty finds it with FindBinary.
	Binary string
	// DBFile persists the server's state; empty keeps it in memory.
	DBFile    string
	Port      int
	UI        bool
	UIPort    int
	Namespace string
	// Output receives the server's own log lines; nil discards them.
	Output io.Writer
	// NoEagerActivities leaves eager activity execution off, as a Temporal cluster runs by default:
	// every activity goes through the task queue, so the SDK reports its schedule-to-start latency.
	NoEagerActivities bool
}

// Server is a running dev server.
type Server struct {
	Address  string
	UIURL    string
	cmd      *exec.Cmd
	exited   chan struct{} // closed when the process has exited
	client   client.Client
	stopOnce sync.Once
	stopErr  error
}

// startTries is how often Start launches the server before giving up. The server picks free ports
// for its own services (HTTP, metrics, history, matching) as it starts, and a port free when picked
// may be taken before it binds it (another test's server, on a busy machine): it then exits, and a
// new start, which picks new ports, is the cure. A port Start picked itself is picked anew as well.
const startTries = 3

// readyTimeout bounds how long one start waits for the frontend to answer.
const readyTimeout = time.Minute

// Start launches the server and returns once its frontend answers, trying again (startTries) when
// the server exits or never answers.
func Start(ctx context.Context, o Options) (*Server, error) {
	var err error
	for range startTries {
		var s *Server
		if s, err = start(ctx, o); err == nil || ctx.Err() != nil {
			return s, err
		}
	}
	return nil, err
}

func start(ctx context.Context, o Options) (*Server, error) {
	bin := o.Binary
	if bin == "" {
		var err error
		if bin, err = FindBinary(); err != nil {
			return nil, err
		}
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	}
	if o.Port == 0 {
		var err error
		if o.Port, err = freeport.Port(); err != nil {
			return nil, err
		}
	}
	s := &Server{Address: net.JoinHostPort("127.0.0.1", strconv.Itoa(o.Port)), exited: make(chan struct{})}
	if o.UI && o.UIPort == 0 {
		o.UIPort = o.Port + 1000 // the CLI's own convention: 7233 -> 8233
	}
	if o.UI {
		s.UIURL = "http://localhost:" + strconv.Itoa(o.UIPort)
	}
	last := &tailWriter{}
	var out io.Writer = last
	if o.Output != nil {
		out = io.MultiWriter(o.Output, last)
	}
	s.cmd = exec.Command(bin, args(o)...)
	s.cmd.Stdout, s.cmd.Stderr = out, out
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start Temporal dev server (%s): %w", bin, err)
	}
	var waitErr error
	go func() { waitErr = s.cmd.Wait(); close(s.exited) }()
	c, err := s.waitReady(ctx, o.Namespace)
	if err != nil {
		_ = s.cmd.Process.Kill()
		<-s.exited
		return nil, fmt.Errorf("start Temporal dev server (%s) on %s: %w (exit: %v); its last output:\n%s",
			bin, s.Address, err, waitErr, last)
	}
	s.client = c
	return s, nil
}

// args are the CLI's start-dev arguments for o.
func args(o Options) []string {
	a := []string{"server", "start-dev", "--ip", "127.0.0.1", "--port", strconv.Itoa(o.Port),
		"--namespace", o.Namespace, "--log-level", "error",
		"--dynamic-config-value", "frontend.enableServerVersionCheck=false",
		// WAL and relaxed fsync make SQLite several times faster; a dev server's data is disposable.
		"--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal",
		// Eager activities hand a scheduled attempt straight back to the worker that scheduled it,
		// saving a round trip through a task queue: event-to-receipt drops from ~80 ms to ~40 ms.
		"--dynamic-config-value", "system.enableActivityEagerExecution=" + strconv.FormatBool(!o.NoEagerActivities),
		"--dynamic-config-value", "system.enableEagerWorkflowStart=true",
		// One task-queue partition: on a single node more buy nothing, and the benchmark saw workflow
		// tasks wait a whole 60 s long poll on a partition no poller was waiting on.
		"--dynamic-config-value", "matching.numTaskqueueReadPartitions=1",
		"--dynamic-config-value", "matching.numTaskqueueWritePartitions=1"}
	if o.UI {
		a = append(a, "--ui-port", strconv.Itoa(o.UIPort))
	} else {
		a = append(a, "--headless")
	}
	if o.DBFile != "" {
		a = append(a, "--db-filename", o.DBFile)
	}
	for attr := range searchAttributes().GetUntypedValues() {
		a = append(a, "--search-attribute", attr.GetName()+"="+attr.GetValueType().String())
	}
	return a
}

// waitReady dials the frontend until it answers, failing at once if the process exits.
func (s *Server) waitReady(ctx context.Context, namespace string) (client.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	opts := client.Options{HostPort: s.Address, Namespace: namespace, Logger: temporalclient.QuietLogger()}
	for {
		c, err := client.DialContext(ctx, opts)
		if err == nil {
			return c, nil
		}
		select {
		case <-s.exited:
			return nil, errors.New("the server exited")
		case <-ctx.Done():
			return nil, fmt.Errorf("no answer within %v: %w", readyTimeout, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Client is a client of the server's namespace, closed by Stop.
func (s *Server) Client() client.Client { return s.client }

// stopGrace is how long Stop waits for the server to exit after its interrupt before killing it.
const stopGrace = 30 * time.Second

// Stop interrupts the server, waits for it to exit and closes the client; later calls do nothing.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		s.client.Close()
		_ = s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.exited:
		case <-time.After(stopGrace):
			_ = s.cmd.Process.Kill()
			<-s.exited
			s.stopErr = fmt.Errorf("the Temporal dev server did not stop within %v; killed", stopGrace)
		}
	})
	return s.stopErr
}

// tailWriter keeps the last tailBytes written to it: a failed start's error shows why.
type tailWriter struct {
	mu  sync.Mutex
	buf []byte
}

const tailBytes = 4 << 10

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > tailBytes {
		w.buf = w.buf[len(w.buf)-tailBytes:]
	}
	return len(p), nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}

func searchAttributes() temporal.SearchAttributes {
	return temporal.NewSearchAttributes(
		contract.AttrOrgID.ValueSet(""), contract.AttrEventID.ValueSet(""), contract.AttrEventType.ValueSet(""),
		contract.AttrDeliveryStatus.ValueSet(""), contract.AttrEndpointIDs.ValueSet(nil),
		contract.AttrOrderNumber.ValueSet(0), contract.AttrOrderID.ValueSet(""),
	)
}

// ErrNoBinary says how to get the Temporal CLI.
var ErrNoBinary = errors.New("the Temporal CLI is not built: run `make bin/temporal` in the repository " +
	"(or set WDS_TEMPORAL_BIN, or TEMPORAL_ADDRESS to use a running server)")

// FindBinary looks for the temporal executable (FindProgram's search, under WDS_TEMPORAL_BIN).
func FindBinary() (string, error) { return FindProgram("temporal", "WDS_TEMPORAL_BIN", ErrNoBinary) }

// FindProgram looks for an executable the Makefile builds into bin/: the path in envVar, name beside
// the wds executable, bin/name in the executable's directory, the working directory or any of their
// parents (tests run in package directories), then PATH. Not found, it returns missing.
func FindProgram(name, envVar string, missing error) (string, error) {
	if p := os.Getenv(envVar); p != "" {
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("%s=%s is not an executable: %w", envVar, p, missing)
	}
	var starts []string
	if exe, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), name); isExecutable(p) {
			return p, nil
		}
		starts = append(starts, filepath.Dir(exe))
	}
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	for _, dir := range starts {
		for d := dir; ; d = filepath.Dir(d) {
			if p := filepath.Join(d, "bin", name); isExecutable(p) {
				return p, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", missing
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}
