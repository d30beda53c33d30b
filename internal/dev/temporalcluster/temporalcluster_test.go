package temporalcluster

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"wds/test/pgtest"
	"wds/workflows/contract"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestClusterRunsComposeTopology starts the cluster and checks what compose promises: the namespace
// and every Wds* search attribute by type, SQL visibility in its own database, 8 history shards, and
// a server that comes back on the same data after a stop, and one-shots that can run again.
func TestClusterRunsComposeTopology(t *testing.T) {
	c := ForTest(t, Options{})
	ctx := context.Background()
	attrs, err := c.Client().OperatorService().ListSearchAttributes(ctx,
		&operatorservice.ListSearchAttributesRequest{Namespace: c.Namespace()})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range contract.SearchAttributeKeys() {
		if got := attrs.GetCustomAttributes()[k.GetName()]; got != k.GetValueType() {
			t.Errorf("search attribute %s is %v, want %v", k.GetName(), got, k.GetValueType())
		}
	}

	pg := openDB(t, c.o.Postgres, c.o.DBName)
	var shards int
	if err := pg.QueryRow("SELECT count(*) FROM shards").Scan(&shards); err != nil || shards != 8 {
		t.Errorf("history shards %d (%v), want 8", shards, err)
	}
	vis := openDB(t, c.o.Postgres, c.o.VisibilityDBName)
	if _, err := vis.Exec("SELECT 1 FROM executions_visibility LIMIT 1"); err != nil {
		t.Errorf("SQL visibility has no executions_visibility table: %v", err)
	}

	// compose runs both one-shots on every `up`: again on a set-up cluster, they change nothing.
	if err := runScript(ctx, schemaScript, c.schemaEnv()); err != nil {
		t.Errorf("schema again: %v", err)
	}
	if err := runScript(ctx, setupScript, c.setupEnv()); err != nil {
		t.Errorf("setup again: %v", err)
	}

	if c.Pid() <= 0 {
		t.Errorf("a running server's pid is %d", c.Pid())
	}
	if err := c.StopServer(); err != nil {
		t.Fatal(err)
	}
	if c.Pid() != 0 {
		t.Errorf("a stopped server's pid is %d, want 0", c.Pid())
	}
	down, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := c.Client().CheckHealth(down, &client.CheckHealthRequest{}); err == nil {
		t.Fatal("a stopped server answered")
	}
	if err := c.StartServer(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client().ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: "WdsDeliveryStatus = 'failed'"}); err != nil {
		t.Fatalf("after a restart: %v", err)
	}
}

// TestStartFailsClearlyWithoutPostgres: a PostgreSQL that is not there is an error naming the schema
// step, not a hang.
func TestStartFailsClearlyWithoutPostgres(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Start(ctx, Options{Postgres: "postgres://postgres@127.0.0.1:1/postgres", Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "schema.sh") {
		t.Fatalf("err = %v", err)
	}
}

func TestStartNeedsPostgresAndDir(t *testing.T) {
	if _, err := Start(context.Background(), Options{}); err == nil || errors.Is(err, ErrNoServer) {
		t.Fatalf("err = %v", err)
	}
}

func openDB(t *testing.T, server, name string) *sql.DB {
	t.Helper()
	u := strings.Replace(server, "/postgres?", "/"+name+"?", 1)
	db, err := sql.Open("pgx", u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}
