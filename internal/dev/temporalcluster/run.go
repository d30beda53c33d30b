package temporalcluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"wds/deploy/temporalsetup"
	"wds/internal/dev/temporaldev"
	"wds/internal/platform/temporalclient"
)

// ErrNoServer says how to get the server and its SQL tool.
var ErrNoServer = errors.New("the Temporal server is not built: run `make bin/temporal-server bin/temporal-sql-tool` " +
	"in the repository (or set WDS_TEMPORAL_SERVER_BIN and WDS_TEMPORAL_SQL_TOOL_BIN)")

// binaries are the programs the scripts and the cluster run; the schema files come with the SQL tool
// (the Makefile copies them from the same release into bin/temporal-schema).
type binaries struct {
	server, sqlTool, cli, schemaDir string
}

func findBinaries() (binaries, error) {
	var b binaries
	var err error
	if b.server, err = temporaldev.FindProgram("temporal-server", "WDS_TEMPORAL_SERVER_BIN", ErrNoServer); err != nil {
		return b, err
	}
	if b.sqlTool, err = temporaldev.FindProgram("temporal-sql-tool", "WDS_TEMPORAL_SQL_TOOL_BIN", ErrNoServer); err != nil {
		return b, err
	}
	if b.cli, err = temporaldev.FindBinary(); err != nil {
		return b, err
	}
	b.schemaDir = filepath.Join(filepath.Dir(b.sqlTool), "temporal-schema", "postgresql", "v12")
	if _, err := os.Stat(b.schemaDir); err != nil {
		return b, fmt.Errorf("temporalcluster: schema files: %w: %w", err, ErrNoServer)
	}
	return b, nil
}

type script struct{ name, text string }

var (
	schemaScript = script{"deploy/temporalsetup/schema.sh", temporalsetup.Schema}
	setupScript  = script{"deploy/temporalsetup/setup.sh", temporalsetup.Setup}
)

// runScript runs one of the compose one-shots' scripts the way compose does (sh -e), with env added.
func runScript(ctx context.Context, s script, env []string) error {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-ec", s.text, s.name)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("temporalcluster: %s: %w:\n%s", s.name, err, strings.TrimSpace(out.String()))
	}
	return nil
}

// schemaEnv is temporal-sql-tool's own environment (compose's temporal-schema sets the same).
func (c *Cluster) schemaEnv() []string {
	pg, _ := url.Parse(c.o.Postgres)
	pass, _ := pg.User.Password()
	return []string{"PATH=" + filepath.Dir(c.bins.sqlTool) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"SQL_PLUGIN=postgres12", "SQL_HOST=" + pg.Hostname(), "SQL_PORT=" + pg.Port(),
		"SQL_USER=" + pg.User.Username(), "SQL_PASSWORD=" + pass, "TEMPORAL_SCHEMA_DIR=" + c.bins.schemaDir,
		"TEMPORAL_DBNAME=" + c.o.DBName, "TEMPORAL_VISIBILITY_DBNAME=" + c.o.VisibilityDBName}
}

// setupEnv points the temporal CLI at the cluster (compose's temporal-setup sets the same).
func (c *Cluster) setupEnv() []string {
	return []string{"PATH=" + filepath.Dir(c.bins.cli) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"TEMPORAL_ADDRESS=" + c.Address, "TEMPORAL_NAMESPACE=" + c.o.Namespace}
}

// waitServing polls the frontend's health until it reports SERVING.
func waitServing(ctx context.Context, addr string) error {
	for {
		cl, err := client.Dial(client.Options{HostPort: addr, Logger: temporalclient.QuietLogger()})
		if err == nil {
			_, err = cl.CheckHealth(ctx, &client.CheckHealthRequest{})
			cl.Close()
			if err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("temporalcluster: the frontend at %s never served: %w", addr, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// waitSearchable waits until a list query over a Wds* search attribute is accepted: the frontend
// learns new search attributes from its namespace cache, which refreshes on a timer.
func waitSearchable(ctx context.Context, cl client.Client) error {
	for {
		_, err := cl.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "WdsDeliveryStatus = 'failed'"})
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("temporalcluster: the Wds* search attributes never became queryable: %w", err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// freePorts picks the server's ports below 32768, outside the kernel's ephemeral range (a port it
// hands out is a free port, but Temporal keeps membership ports in a PostgreSQL smallint and refuses
// to start on a higher one). Each is bound to prove it free, and all are released together.
func freePorts() (ports, error) {
	var nums [9]int
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for i, tries := 0, 0; i < len(nums); tries++ {
		p := lowPortMin + rand.IntN(lowPortMax-lowPortMin)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			if tries > 1000 {
				return ports{}, fmt.Errorf("temporalcluster: find a free port: %w", err)
			}
			continue
		}
		ls = append(ls, l)
		nums[i] = p
		i++
	}
	return ports{Frontend: nums[0], FrontendMembership: nums[1], FrontendHTTP: nums[2], History: nums[3],
		HistoryMembership: nums[4], Matching: nums[5], MatchingMembership: nums[6], Worker: nums[7],
		WorkerMembership: nums[8]}, nil
}

const lowPortMin, lowPortMax = 20000, 32767

// tail is the last n lines of file, for an error message.
func tail(file string, n int) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	lines = lines[max(0, len(lines)-n):]
	for i, l := range lines { // the server's JSON lines carry whole stack traces
		if len(l) > 400 {
			lines[i] = l[:400] + "..."
		}
	}
	return strings.Join(lines, "\n")
}
