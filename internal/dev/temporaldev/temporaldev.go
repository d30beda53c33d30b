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

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"wds/worker"
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
	dev      *testsuite.DevServer
	Address  string
	UIURL    string
	stopOnce sync.Once
	stopErr  error
}

// startTries is how often Start tries a port it picked itself. The port is free when picked but may
// be taken before the server binds it (another test's server, on a busy machine), and the server
// then never answers; a fresh port is the cure.
const startTries = 3

// Start launches the server and returns once its frontend answers. Without a given port it picks a
// free one, and another if the server does not come up on it.
func Start(ctx context.Context, o Options) (*Server, error) {
	if o.Port != 0 {
		return start(ctx, o)
	}
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
	if o.Output == nil {
		o.Output = io.Discard
	}
	port := o.Port
	if port == 0 {
		var err error
		if port, err = freePort(); err != nil {
			return nil, err
		}
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	opts := testsuite.DevServerOptions{
		ExistingPath:     bin,
		ClientOptions:    &client.Options{HostPort: addr, Namespace: o.Namespace, Logger: worker.QuietLogger()},
		DBFilename:       o.DBFile,
		LogLevel:         "error",
		SearchAttributes: searchAttributes(),
		// WAL and relaxed fsync make SQLite several times faster; a dev server's data is disposable.
		// Eager activities hand a scheduled attempt straight back to the worker that scheduled it,
		// saving a round trip through a task queue: event-to-receipt drops from ~80 ms to ~40 ms.
		// One task-queue partition: on a single node more buy nothing, and the benchmark saw workflow
		// tasks wait a whole 60 s long poll on a partition no poller was waiting on.
		ExtraArgs: []string{"--sqlite-pragma", "journal_mode=wal", "--sqlite-pragma", "synchronous=normal",
			"--dynamic-config-value", "system.enableActivityEagerExecution=" + strconv.FormatBool(!o.NoEagerActivities),
			"--dynamic-config-value", "system.enableEagerWorkflowStart=true",
			"--dynamic-config-value", "matching.numTaskqueueReadPartitions=1",
			"--dynamic-config-value", "matching.numTaskqueueWritePartitions=1"},
		Stdout: o.Output,
		Stderr: o.Output,
	}
	s := &Server{Address: addr}
	if o.UI {
		opts.EnableUI = true
		uiPort := o.UIPort
		if uiPort == 0 {
			uiPort = port + 1000 // the CLI's own convention: 7233 -> 8233
		}
		opts.UIPort = strconv.Itoa(uiPort)
		s.UIURL = "http://localhost:" + opts.UIPort
	}
	dev, err := testsuite.StartDevServer(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("start Temporal dev server (%s): %w", bin, err)
	}
	s.dev = dev
	return s, nil
}

// Client is a client of the server's namespace, closed by Stop.
func (s *Server) Client() client.Client { return s.dev.Client() }

// Stop interrupts the server, waits for it to exit and closes the client; later calls do nothing.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		s.stopErr = s.dev.Stop()
		s.dev.Client().Close()
	})
	return s.stopErr
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

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
