package temporalcluster

import (
	"fmt"
	"os"
	"text/template"
)

// ports are the server's listeners: each of its four services has a gRPC port and a membership
// (ringpop) port; the frontend also serves HTTP.
type ports struct {
	Frontend, FrontendMembership, FrontendHTTP int
	History, HistoryMembership                 int
	Matching, MatchingMembership               int
	Worker, WorkerMembership                   int
}

// configData fills serverConfig.
type configData struct {
	Ports                  ports
	Shards                 int
	PGAddr, PGUser, PGPass string
	DBName, VisibilityDB   string
	LogLevel               string
	DynamicConfigFile      string
}

// datastore is one of the server's two SQL stores: persistence (default) or visibility.
type datastore struct {
	Name, DB string
	Conns    int
}

// Stores are the persistence and visibility stores, each in a database of its own.
func (d configData) Stores() []datastore {
	return []datastore{{Name: "default", DB: d.DBName, Conns: 20}, {Name: "visibility", DB: d.VisibilityDB, Conns: 10}}
}

// serverConfig is the topology docker-compose.yml runs (temporalio/server's own template renders the
// same from DB=postgres12 and its environment): every service in one process, the postgres12 plugin
// for persistence and for SQL visibility in a database of its own, several history shards, loopback
// only.
var serverConfig = template.Must(template.New("config").Parse(`log:
  stdout: true
  level: {{.LogLevel}}
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: {{.Shards}}
  datastores:
{{- range .Stores}}
    {{.Name}}:
      sql:
        pluginName: postgres12
        databaseName: {{printf "%q" .DB}}
        connectAddr: {{printf "%q" $.PGAddr}}
        connectProtocol: tcp
        user: {{printf "%q" $.PGUser}}
        password: {{printf "%q" $.PGPass}}
        maxConns: {{.Conns}}
        maxIdleConns: {{.Conns}}
        maxConnLifetime: 1h
{{- end}}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
services:
  frontend:
    rpc: {grpcPort: {{.Ports.Frontend}}, membershipPort: {{.Ports.FrontendMembership}}, httpPort: {{.Ports.FrontendHTTP}}, bindOnLocalHost: true}
  history:
    rpc: {grpcPort: {{.Ports.History}}, membershipPort: {{.Ports.HistoryMembership}}, bindOnLocalHost: true}
  matching:
    rpc: {grpcPort: {{.Ports.Matching}}, membershipPort: {{.Ports.MatchingMembership}}, bindOnLocalHost: true}
  worker:
    rpc: {grpcPort: {{.Ports.Worker}}, membershipPort: {{.Ports.WorkerMembership}}, bindOnLocalHost: true}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: 127.0.0.1:{{.Ports.Frontend}}
dcRedirectionPolicy:
  policy: noop
`))

// writeConfig renders the server's configuration into file.
func writeConfig(file string, d configData) error {
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("temporalcluster: write config: %w", err)
	}
	if err := serverConfig.Execute(f, d); err != nil {
		_ = f.Close()
		return fmt.Errorf("temporalcluster: render config: %w", err)
	}
	return f.Close()
}
