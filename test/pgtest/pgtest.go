// Package pgtest gives each test its own real PostgreSQL database: one throwaway cluster per test
// binary, a template database migrated once, and a fresh clone of it per test.
package pgtest

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sirupsen/logrus"
	"gorm.io/gorm"

	"wds/internal/dev/pgcluster"
	"wds/internal/platform/database"
	"wds/migrations"
)

const template = "wds_template"

var (
	once    sync.Once
	cluster *pgcluster.Cluster
	admin   *gorm.DB
	dir     string
	initErr error
	counter atomic.Int64
	cloneMu sync.Mutex
)

// Main runs the package's tests and removes the cluster afterwards. Use it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if cluster != nil {
		_ = cluster.Stop(context.Background())
		_ = os.RemoveAll(dir)
	}
	os.Exit(code)
}

func start() {
	ctx := context.Background()
	dir, initErr = os.MkdirTemp("", "wds-pgtest-")
	if initErr != nil {
		return
	}
	if cluster, initErr = pgcluster.Start(ctx, pgcluster.Options{Dir: dir}); initErr != nil {
		return
	}
	if admin, initErr = database.Open(ctx, cluster.URL("postgres"), quietLog()); initErr != nil {
		return
	}
	if initErr = admin.Exec("CREATE DATABASE " + template).Error; initErr != nil {
		return
	}
	tdb, err := database.Open(ctx, cluster.URL(template), quietLog())
	if err != nil {
		initErr = err
		return
	}
	defer database.Close(tdb)
	sqlDB, _ := tdb.DB()
	_, initErr = migrations.Up(ctx, sqlDB)
}

// URL creates a fresh migrated database and returns its connection URL. A missing PostgreSQL is a
// failure, never a skip: these tests are the proof the feature works.
func URL(t testing.TB) string {
	t.Helper()
	once.Do(start)
	if initErr != nil {
		t.Fatalf("pgtest: cannot start PostgreSQL: %v", initErr)
	}
	name := fmt.Sprintf("t_%d_%d", os.Getpid(), counter.Add(1))
	cloneMu.Lock() // CREATE DATABASE ... TEMPLATE wants the template to itself
	err := admin.Exec(fmt.Sprintf("CREATE DATABASE %s TEMPLATE %s", name, template)).Error
	cloneMu.Unlock()
	if err != nil {
		t.Fatalf("pgtest: clone template: %v", err)
	}
	return cluster.URL(name)
}

// New returns a GORM handle on a fresh migrated database, closed when the test ends.
func New(t testing.TB) *gorm.DB {
	t.Helper()
	db, err := database.Open(context.Background(), URL(t), quietLog())
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { _ = database.Close(db) })
	return db
}

// ClusterURL returns a URL for database name on the shared test cluster (for tests of migrations).
func ClusterURL(t testing.TB, name string) string {
	t.Helper()
	once.Do(start)
	if initErr != nil {
		t.Fatalf("pgtest: cannot start PostgreSQL: %v", initErr)
	}
	if err := admin.Exec("CREATE DATABASE " + name).Error; err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	return cluster.URL(name)
}

// ServerURL is a URL for the shared test cluster's maintenance database, for programs that make
// databases of their own on it (the Temporal cluster of internal/dev/temporalcluster).
func ServerURL(t testing.TB) string {
	t.Helper()
	once.Do(start)
	if initErr != nil {
		t.Fatalf("pgtest: cannot start PostgreSQL: %v", initErr)
	}
	return cluster.URL("postgres")
}

func quietLog() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}
