// Package deploy holds the operator's files beside the code they describe: the Grafana dashboard
// (grafana/wds.json) and the Prometheus alert rules (prometheus/alerts.yml), embedded so tests
// elsewhere can check them against a running wds (test/chaos/metrics_test.go). Its own tests check the
// deployment files at the repository root (docker-compose.yml and Dockerfile) against what the code
// actually needs, since no container engine runs where the tests do, and the rules with promtool.
package deploy
