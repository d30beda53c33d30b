# The two commands a newcomer needs: `make run` (everything, locally) and `make test` (every test).
GO ?= go
export GOFLAGS ?= -buildvcs=false

.PHONY: run run-cluster test test-deps build vet fuzz bench chaos screenshots

# The version `wds version` prints: the commit, marked when the tree has uncommitted changes.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o bin/wds ./cmd/wds

# The Temporal CLI (dev server + UI) lives in its own module so its dependencies never mix with ours.
bin/temporal: tools/temporal/go.mod tools/temporal/go.sum
	cd tools/temporal && $(GO) build -o ../../bin/temporal github.com/temporalio/cli/cmd/temporal

# Temporal's workflowcheck analyzer, in its own module for the same reason; `make vet` runs it.
bin/workflowcheck: tools/workflowcheck/go.mod tools/workflowcheck/go.sum
	cd tools/workflowcheck && $(GO) build -o ../../bin/workflowcheck go.temporal.io/sdk/contrib/tools/workflowcheck

# The Temporal server and its SQL schema tool, built from source at the release docker-compose.yml
# pins (deploy/compose_test.go checks the tags against tools/temporalserver/go.mod), in their own
# module for the same reason; the tests' cluster (internal/dev/temporalcluster) runs them. The
# release's PostgreSQL schema files go beside the tool, as admin-tools keeps them beside its own,
# without the Go files of that directory, which `go vet ./...` would otherwise take for ours.
bin/temporal-server: tools/temporalserver/go.mod tools/temporalserver/go.sum
	cd tools/temporalserver && $(GO) build -o ../../bin/temporal-server go.temporal.io/server/cmd/server

bin/temporal-sql-tool: tools/temporalserver/go.mod tools/temporalserver/go.sum
	cd tools/temporalserver && $(GO) build -o ../../bin/temporal-sql-tool go.temporal.io/server/cmd/tools/sql
	rm -rf bin/temporal-schema && mkdir -p bin/temporal-schema
	cp -R "$$(cd tools/temporalserver && $(GO) list -m -f '{{.Dir}}' go.temporal.io/server)/schema/postgresql" bin/temporal-schema/
	chmod -R u+w bin/temporal-schema
	find bin/temporal-schema -name '*.go' -delete

run: build bin/temporal
	./bin/wds dev

# wds in production's shape without a container engine: `wds dev` against the Temporal server built
# from source on PostgreSQL (what docker-compose.yml deploys), state in .wds/cluster. No Temporal UI.
run-cluster: build bin/temporal bin/temporal-server bin/temporal-sql-tool
	$(GO) build -o bin/runcluster ./cmd/runcluster
	./bin/runcluster -wds ./bin/wds

# workflowcheck fails on workflow code that is not deterministic (time.Now, goroutines, map ranges,
# ...; tools/workflowcheck/config.yaml adds what it misses); workflows/determinism_test.go holds the
# import rule and proves both catch a broken workflow. Test files are not workflow code: -test=false.
vet: bin/workflowcheck
	$(GO) vet ./...
	cd test/bench && $(GO) vet ./...
	./bin/workflowcheck -test=false -config tools/workflowcheck/config.yaml -show-pos ./workflows/...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi

# What the tests drive besides Go (PostgreSQL, Chromium, Node.js, Python 3, promtool, curl, openssl,
# iproute2), installed from Debian's packages when missing.
test-deps:
	./tools/test-deps

# The fault-injection scenarios (test/chaos) run after the other packages, on a machine of their
# own: they hold wds to its 10 s limit on a loopback receiver, which a browser test or another
# package's PostgreSQL and Temporal running beside them on 2 cores can make miss.
test: test-deps vet bin/temporal bin/temporal-server bin/temporal-sql-tool bin/workflowcheck
	$(GO) test -race -count=1 -timeout 45m $$($(GO) list ./... | grep -v '^wds/test/chaos$$')
	$(GO) test -race -count=1 -timeout 30m ./test/chaos
	cd test/bench && $(GO) test -race -count=1 -timeout 20m ./...

# A longer run of every fuzz target (not part of `make test`, whose seed corpora run as unit tests).
FUZZTIME ?= 30s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# The benchmark against same-run baselines (docs/benchmarks.md): 80 to 120 minutes (the noisy-neighbour line about 40 of them), its own PostgreSQL,
# Temporal dev server and wds processes; its delivery-only line runs again on the Temporal cluster
# built from source (at 1 and at 8 history shards), side by side with the dev server's. Not part of
# `make test`, which runs its smoke mode. It is a module of its own (test/bench/go.mod), so its
# plotting dependencies stay out of the service's.
bench: build bin/temporal bin/temporal-server bin/temporal-sql-tool
	cd test/bench && $(GO) run ./cmd/wdsbench -wds ../../bin/wds -results ../../docs/benchmarks/results.json \
	  -doc ../../docs/benchmarks.md -chart ../../docs/benchmarks/read-latency.png -temporal dev,cluster -cluster-shards 1,8

# The fault-injection scenarios at full length (docs/reliability.md): about 10 minutes, with the table
# of results written into docs/reliability.md. `make test` runs the same scenarios shortened.
chaos: bin/temporal bin/temporal-server bin/temporal-sql-tool
	$(GO) test -count=1 -timeout 60m -v -run . ./test/chaos -args -chaos.long -chaos.report $(CURDIR)/docs/reliability.md

# The console's screenshots in docs/console.md, made again over a real stack with the browser tests'
# Chromium (about 30 seconds). `make test` makes them into a temporary directory, never into docs/.
screenshots: bin/temporal
	$(GO) test -count=1 -run '^TestConsoleScreenshots$$' ./test/e2e -args -screenshots $(CURDIR)/docs/console
