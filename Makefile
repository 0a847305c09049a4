# The clinic booking server. `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help
GO ?= go

# Starts local PostgreSQL and Redis unless DATABASE_URL / REDIS_URL are set,
# and exports the URLs to use (TEST_* for the test databases).
# (The assignment keeps devenv's exit status, which eval "$$(...)" would drop.)
WITH_SERVICES = devenv_env="$$($(GO) run ./cmd/devenv up -print-env)" && eval "$$devenv_env" &&
# The same, and Debian's Chromium for the browser tests (installed with
# apt-get when run as root; otherwise the exact command is printed).
WITH_TEST_SERVICES = devenv_env="$$($(GO) run ./cmd/devenv up -print-env -browser)" && eval "$$devenv_env" &&
# PostgreSQL and a local Redis Cluster of three masters and three replicas (127.0.0.1:63801-63806)
# instead of the one Redis, unless REDIS_URL is set.
WITH_CLUSTER = devenv_env="$$($(GO) run ./cmd/devenv up -cluster -print-env)" && eval "$$devenv_env" &&
# True when TEST_REDIS_URL names a Redis Cluster (a form redisx.ParseCluster reads).
TEST_REDIS_IS_CLUSTER = case "$$TEST_REDIS_URL" in *+cluster://*|*,*|*addr=*) true;; *) false;; esac

## help: list the targets
.PHONY: help
help:
	@grep -E '^## ' $(MAKEFILE_LIST) | sed 's/^## //' | awk -F': ' '{printf "  %-15s %s\n", $$1, $$2}'

## run: build, start services, migrate, seed the demo clinic and serve on :8080
.PHONY: run
run: static build
	@$(WITH_SERVICES) ./bin/clinic migrate && ./bin/clinic seed && exec ./bin/clinic serve

## test: start services (and install Chromium if missing), run every test with -race, then a short run on a Redis Cluster (see test-cluster; SKIP_CLUSTER_SHORT=1 leaves it out)
# Unless SKIP_CLUSTER_SHORT is set or REDIS_URL names one server, the
# cluster starts in the background meanwhile, and the test binaries of the
# short run's two packages are kept (go test -exec, see
# cmd/devenv/keep-test-binary.sh) so it needs no second compile and link.
SHORT_PACKAGES = web internal/faults
.PHONY: test
test: static
	@rm -rf $(SHORT_BINS); mkdir -p .data; keep=; \
	if [ -z "$(SKIP_CLUSTER_SHORT)" ] && [ -z "$$REDIS_URL" ]; then \
		keep="-exec $(CURDIR)/cmd/devenv/keep-test-binary.sh"; \
		{ $(GO) run ./cmd/devenv up -cluster >.data/cluster-up.log 2>&1 || true; } & \
	fi; \
	$(WITH_TEST_SERVICES) KEEP_TEST_BINARIES=$(SHORT_BINS) KEEP_TEST_PACKAGES="$(SHORT_PACKAGES)" \
		$(GO) test -race -count=1 $$keep ./...; status=$$?; wait; exit $$status
	@if [ -n "$(SKIP_CLUSTER_SHORT)" ]; then echo "SKIP_CLUSTER_SHORT set: no short Redis Cluster run"; else $(MAKE) --no-print-directory test-cluster-short SHORT_BINS=$(SHORT_BINS); fi

# The short run on a Redis Cluster that make test ends with (about 30 s):
# three instances, then one shard (a master and its replica) stopped (alone:
# it stops nodes the other tests would use). Skipped when REDIS_URL names one server (then devenv
# starts no cluster), and when SKIP_CLUSTER_SHORT is set: CI runs
# test-cluster after make test, which runs both tests again among the rest.
# With the test binaries make test kept in SHORT_BINS, it runs those (in
# their package's folder, as go test does) and removes them.
SHORT_BINS = $(CURDIR)/.data/short-test-binaries
.PHONY: test-cluster-short
test-cluster-short:
	@$(WITH_CLUSTER) if ! $(TEST_REDIS_IS_CLUSTER); then echo "REDIS_URL names one server: no short Redis Cluster run"; exit 0; fi; \
	if [ -x $(SHORT_BINS)/web.test ] && [ -x $(SHORT_BINS)/internal_faults.test ]; then \
		trap 'rm -rf $(SHORT_BINS)' EXIT; \
		short() { dir=$$1; shift; start=$$(date +%s); \
			if (cd $$dir && "$$@" -test.paniconexit0 -test.timeout=10m -test.count=1); then echo "ok  	$$dir (short Redis Cluster run)	$$(( $$(date +%s) - start ))s"; \
			else echo "FAIL	$$dir (short Redis Cluster run)"; return 1; fi; }; \
		short web $(SHORT_BINS)/web.test -test.run '^TestThreeInstancesActAsOne$$' && \
		short internal/faults env CLUSTER_FAULTS=1 $(SHORT_BINS)/internal_faults.test -test.run '^TestRedisClusterNodeStopped$$'; \
	else \
		$(GO) test -race -count=1 -run '^TestThreeInstancesActAsOne$$' ./web/ && \
		CLUSTER_FAULTS=1 $(GO) test -race -count=1 -run '^TestRedisClusterNodeStopped$$' ./internal/faults/; \
	fi

## test-cluster: start a Redis Cluster of three masters with a replica each, then run on it the Redis packages' tests, three instances, the hold and booking races, a shard stopped and a master killed under hold load (its replica takes over) (about 3 min)
CLUSTER_WEB_TESTS = ^(TestThreeInstances|TestHotSlot)
CLUSTER_BOOKING_TESTS = ^(TestBookConcurrent|TestBookEmptyDayFirstSlotOneWinner|TestBookRace|TestMoveRaces)
.PHONY: test-cluster
test-cluster: static
	@set -o pipefail; $(WITH_CLUSTER) \
	{ $(TEST_REDIS_IS_CLUSTER) || { echo "TEST_REDIS_URL ($$TEST_REDIS_URL) is not a Redis Cluster"; exit 1; }; } && \
	$(GO) test -race -count=1 ./internal/platform/redisx/ ./internal/holds/ ./internal/slots/ && \
	$(GO) test -race -count=1 -run '$(CLUSTER_BOOKING_TESTS)' ./internal/booking/ && \
	$(GO) test -race -count=1 -v -run '$(CLUSTER_WEB_TESTS)' ./web/ | grep -E '^(--- |PASS|FAIL|ok )|_test.go' && \
	CLUSTER_FAULTS=1 $(GO) test -race -count=1 -v -run '^TestRedisCluster(NodeStopped|MasterKilled)$$' ./internal/faults/ | grep -E '^(=== RUN|--- |PASS|FAIL|ok )|(rediscluster|failover|failoverholds)_test.go'

## test-pitr: point-in-time recovery tried on two PostgreSQL instances of its own (WAL archived to a folder, a base backup, a restore to the moment before a mistaken update; about 30 s)
.PHONY: test-pitr
test-pitr: build
	@./internal/deploy/pitr-trial.sh

# A pg_auto_failover formation (monitor 127.0.0.1:54361, primary and
# synchronous secondary on 54362-54363) whatever DATABASE_URL says: its
# primary is killed, so it must be the one started here.
WITH_HA = devenv_env="$$(env -u DATABASE_URL -u TEST_DATABASE_URL $(GO) run ./cmd/devenv up -ha -print-env)" && eval "$$devenv_env" &&

## test-ha: start a pg_auto_failover formation (installing postgresql-15-auto-failover if missing) and kill its primary under the booking load of two instances; asserts no booking lost or doubled, no 500, every e-mail once, and reports the time to the first booking (about 1 min)
.PHONY: test-ha
test-ha: static
	@$(WITH_HA) HA_FAULTS=1 $(GO) test -race -count=1 -v -run '^TestPostgresPrimaryKilled$$' ./internal/faults/

## static: install the pinned front-end packages and copy them into static/vendor
.PHONY: static
static: static/vendor/htmx.min.js static/vendor/sse.js

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund

static/vendor/htmx.min.js: node_modules/.package-lock.json
	@mkdir -p static/vendor
	cp node_modules/htmx.org/dist/htmx.min.js $@

static/vendor/sse.js: node_modules/.package-lock.json
	@mkdir -p static/vendor
	cp node_modules/htmx-ext-sse/dist/sse.min.js $@

## build: compile the server into bin/clinic
.PHONY: build
build: static
	$(GO) build -o bin/clinic ./cmd/clinic

## image: build the server's OCI image from scratch with podman (installed if missing) as localhost/clinic:latest and bin/clinic-image.oci.tar
.PHONY: image
image: static
	@GO=$(GO) ./internal/deploy/image.sh

## test-image: build the image, run it unpacked in a chroot as its user against PostgreSQL and Redis (root only), check the systemd unit, compose file and nginx config
.PHONY: test-image
test-image: image
	@./internal/deploy/need.sh /usr/bin/systemd-analyze systemd
	@./internal/deploy/need.sh /usr/sbin/nginx nginx
	@$(WITH_SERVICES) CLINIC_IMAGE_ARCHIVE=$(CURDIR)/bin/clinic-image.oci.tar $(GO) test -count=1 -v ./internal/deploy/

## bench: every load scenario against fresh servers, one table with references (a few minutes)
.PHONY: bench
bench: build
	@go build -o bin/loadgen ./cmd/loadgen
	@$(WITH_SERVICES) ./bin/loadgen -mode suite -patients 8 -duration 15s
	@echo "slot engine, pooled four weeks, 20 specialists, 2,000 bookings: without rooms (the reference), then with 5 rooms and 2,000 bookings of theirs"
	@$(GO) test -run '^$$' -bench '^BenchmarkComputePooled4Weeks20Specialists(5Rooms)?$$' -benchmem ./internal/availability/ | grep '^Benchmark'

## abuse: serve a build with its default limits and run an attacker's scripts against it (invented patients, e-mail bombing, hold renewal, cooldown spellings, names with links, streams, bad UTF-8, /metrics); prints what each got
.PHONY: abuse
abuse: build
	@go build -o bin/loadgen ./cmd/loadgen
	@$(WITH_SERVICES) ./bin/loadgen -mode abuse -spawn bin/clinic

## faults: the fault tests under longer load (PostgreSQL restarted, an instance killed, one killed during a mail outage, SIGTERM, Redis stopped)
.PHONY: faults
faults: static
	@set -o pipefail; $(WITH_SERVICES) FAULTS_LONG=1 $(GO) test -race -count=1 -v -run 'TestPostgresRestarted|TestKilledInstance|TestSIGTERM|TestRedisStopped' ./internal/faults/ ./web/ \
		| grep -E '^(=== RUN|--- |PASS|FAIL|ok )|: [0-9]+ requests|took|exited|answered|load across'

## test-upgrade: upgrades, three instances migrating one database together, then two instances restarted in turn under load (SIGTERM, drain, a new process on the same port), with the figures (about 40 s)
.PHONY: test-upgrade
test-upgrade: static
	@set -o pipefail; $(WITH_SERVICES) $(GO) test -race -count=1 -v -run '^TestThreeInstancesMigrateTogether$$' ./internal/platform/postgres/ | grep -E '^(--- |PASS|FAIL|ok )|_test.go' && \
	ROLLING_RESTART=1 $(GO) test -race -count=1 -v -run '^TestRollingRestartUnderLoad$$' ./internal/faults/ | grep -E '^(--- |PASS|FAIL|ok )|rolling_test.go'

## fuzz: run every fuzz target for FUZZTIME each (default 30s); make test runs only their seeds
FUZZTIME ?= 30s
.PHONY: fuzz
fuzz: static
	@$(WITH_SERVICES) for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "== $$pkg $$f ($(FUZZTIME))"; \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

## generate: regenerate sqlc queries and templ views
.PHONY: generate
generate:
	$(GO) tool sqlc generate
	$(GO) tool templ generate -log-level error

## services: start local PostgreSQL (127.0.0.1:54320) and Redis (127.0.0.1:63790) under .data/
.PHONY: services
services:
	@$(GO) run ./cmd/devenv up

## services-stop: stop the local PostgreSQL and Redis (and the Redis Cluster of test-cluster)
.PHONY: services-stop
services-stop:
	@$(GO) run ./cmd/devenv down

## migrate: apply pending migrations
.PHONY: migrate
migrate: build
	@$(WITH_SERVICES) ./bin/clinic migrate

## seed: create the demo clinic (idempotent)
.PHONY: seed
seed: build
	@$(WITH_SERVICES) ./bin/clinic seed

## audit: gofmt, go vet, go.mod tidy, generated code up to date
.PHONY: audit
audit: generate
	@test -z "$$(gofmt -l $$(git ls-files '*.go' | grep -v '_templ.go$$'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet ./...
	$(GO) mod tidy -diff
	@git diff --exit-code -- internal/db views >/dev/null && test -z "$$(git status --porcelain -- internal/db views)" \
		|| { echo "generated code is stale: run make generate and commit"; git status --short -- internal/db views; exit 1; }
