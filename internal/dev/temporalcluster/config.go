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
    default:
      sql:
        pluginName: postgres12
        databaseName: {{printf "%q" .DBName}}
        connectAddr: {{printf "%q" .PGAddr}}
        connectProtocol: tcp
        user: {{printf "%q" .PGUser}}
        password: {{printf "%q" .PGPass}}
        maxConns: 20
        maxIdleConns: 20
        maxConnLifetime: 1h
    visibility:
      sql:
        pluginName: postgres12
        databaseName: {{printf "%q" .VisibilityDB}}
        connectAddr: {{printf "%q" .PGAddr}}
        connectProtocol: tcp
        user: {{printf "%q" .PGUser}}
        password: {{printf "%q" .PGPass}}
        maxConns: 10
        maxIdleConns: 10
        maxConnLifetime: 1h
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
