# The clinic booking server. `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help
GO ?= go

# Starts local PostgreSQL and Redis unless DATABASE_URL / REDIS_URL are set,
# and exports the URLs to use (TEST_* for the test databases).
WITH_SERVICES = eval "$$($(GO) run ./cmd/devenv up -print-env)" &&

## help: list the targets
.PHONY: help
help:
	@grep -E '^## ' $(MAKEFILE_LIST) | sed 's/^## //' | awk -F': ' '{printf "  %-15s %s\n", $$1, $$2}'

## run: build, start services, migrate, seed the demo clinic and serve on :8080
.PHONY: run
run: build
	@$(WITH_SERVICES) ./bin/clinic migrate && ./bin/clinic seed && exec ./bin/clinic serve

## test: start services, then run every test with -race
.PHONY: test
test:
	@$(WITH_SERVICES) $(GO) test -race -count=1 ./...

## build: compile the server into bin/clinic
.PHONY: build
build:
	$(GO) build -o bin/clinic ./cmd/clinic

## generate: regenerate sqlc queries and templ views
.PHONY: generate
generate:
	$(GO) tool sqlc generate
	$(GO) tool templ generate -log-level error

## services: start local PostgreSQL (127.0.0.1:54320) and Redis (127.0.0.1:63790) under .data/
.PHONY: services
services:
	@$(GO) run ./cmd/devenv up

## services-stop: stop the local PostgreSQL and Redis
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
