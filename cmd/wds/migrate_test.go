package main

import (
	"context"
	"strings"
	"testing"

	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"wds/internal/dev/temporaldev"
	"wds/internal/platform/temporalclient"
	"wds/test/pgtest"
	"wds/workflows/contract"
)

// TestMigrateUpRegistersSearchAttributes runs the production one-shot against a bare Temporal (no
// custom attributes, as a fresh cluster starts) and a fresh database, twice: the second run is a no-op.
func TestMigrateUpRegistersSearchAttributes(t *testing.T) {
	bin, err := temporaldev.FindBinary()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := testsuite.StartDevServer(context.Background(), testsuite.DevServerOptions{ExistingPath: bin, LogLevel: "error",
		ClientOptions: &client.Options{Logger: temporalclient.QuietLogger()}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	t.Setenv("DATABASE_URL", pgURLEmpty(t))
	t.Setenv("TEMPORAL_ADDRESS", srv.FrontendHostPort())
	t.Setenv("WDS_METRICS_ADDR", "127.0.0.1:0")
	for range 2 {
		if err := migrateCmd(context.Background(), []string{"up"}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := srv.Client().OperatorService().ListSearchAttributes(context.Background(),
		&operatorservice.ListSearchAttributesRequest{Namespace: "default"})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range contract.SearchAttributeKeys() {
		if _, ok := got.GetCustomAttributes()[k.GetName()]; !ok {
			t.Errorf("%s not registered", k.GetName())
		}
	}
}

func TestMigrateUpWithoutTemporalOnlyMigrates(t *testing.T) {
	t.Setenv("DATABASE_URL", pgURLEmpty(t))
	t.Setenv("TEMPORAL_ADDRESS", "")
	if err := migrateCmd(context.Background(), []string{"up"}); err != nil {
		t.Fatal(err)
	}
	if err := migrateCmd(context.Background(), []string{"status"}); err != nil {
		t.Fatal(err)
	}
	if err := migrateCmd(context.Background(), []string{"down"}); err == nil {
		t.Fatal("an unknown verb must fail")
	}
}

// pgURLEmpty is a fresh database with no schema at all.
func pgURLEmpty(t *testing.T) string {
	t.Helper()
	return pgtest.ClusterURL(t, "empty_"+strings.ToLower(strings.ReplaceAll(t.Name(), "/", "_")))
}
