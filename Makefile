# agentotel — build, run and test the otelcol-agentotel collector.
#   make run    build the collector and run it on your agent logs (config/default.yaml)
#   make test   every test: unit, golden, corpus (ccusage), restart, end-to-end through Jaeger, brief fuzzing
#   make bench  the side-by-side benchmark; writes docs/benchmark.md (BENCH_BASELINE=<bench build> to compare)
#   make check  the fidelity table (tokens three ways against ccusage, statuses, duplicates, orphans)
#               over ../shared/fixtures; `make check HOME_DIR=~` over your own history (read only)
#   make chaos  the fault-injection suite (tests/faults) with at least 100 kills per scenario
#   make fuzz   the fuzz targets, FUZZTIME (default 5m) each
SHELL := /bin/bash
export CGO_ENABLED := 0
CACHE ?= $(HOME)/.cache/agentotel
TOOLS := $(CACHE)/bin
export PATH := $(TOOLS):$(PATH)
OCB_VERSION := v0.159.0
OCB := $(TOOLS)/builder
MDATAGEN := $(TOOLS)/mdatagen
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(TOOLS)/golangci-lint
# What `make lint` checks (e.g. `make lint LINT_PKGS=./internal/agentevent/...`); internal/tools is
# its own module and stays out.
LINT_PKGS ?= ./...
COLLECTOR := _build/otelcol-agentotel
# Where `make run` keeps read positions/open turns and writes traces (never the agents' folders).
export AGENTOTEL_STATE_DIR ?= $(CACHE)/state
export AGENTOTEL_OUT_DIR ?= $(CURDIR)/_out
export OTLP_ENDPOINT ?= 127.0.0.1:4317
GO_SOURCES := $(shell find . -name '*.go' -not -path './_build/*' -not -path './internal/tools/*') go.mod go.sum
CONFIG ?= config/default.yaml
# make bench: size of the generated history (MB); BENCH_OUT: where the JSON report goes;
# BENCH_BASELINE: a bench build of another checkout to run beside this one (unset: none).
BENCH_CORPUS_MB ?= 1024
BENCH_BASELINE ?=
BENCH_COLLECTOR := _build/bench/otelcol-agentotel-bench
# How long each fuzz target runs: briefly in `make test`, longer in `make fuzz` (a duration or a
# count of inputs, e.g. 1000000x). `make test` gives a count: with a duration, Go 1.26's fuzz
# coordinator can fail at its own deadline with "context deadline exceeded" and no failing input
# (golang/go#75804, fixed in Go 1.27), which would make the suite fail at random.
FUZZTIME ?= 5m
# The decoders compared with the typed decode on mutated real lines run slower per input.
FUZZTIME_DECODE ?= $(FUZZTIME)

.PHONY: run build test test-unit check chaos fuzz generate lint jaeger bench bench-collector tools clean

run: $(COLLECTOR)
	@mkdir -p "$(AGENTOTEL_STATE_DIR)" "$(AGENTOTEL_OUT_DIR)"
	@echo "agentotel: traces -> $(AGENTOTEL_OUT_DIR)/traces.jsonl, state -> $(AGENTOTEL_STATE_DIR) (Ctrl-C to stop)"
	$(COLLECTOR) --config $(CONFIG)

build: $(COLLECTOR)

$(COLLECTOR): $(OCB) builder-config.yaml $(GO_SOURCES)
	$(OCB) --config builder-config.yaml

$(OCB):
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) go install go.opentelemetry.io/collector/cmd/builder@$(OCB_VERSION)

$(MDATAGEN): internal/tools/go.mod internal/tools/go.sum
	@mkdir -p $(TOOLS)
	cd internal/tools && GOBIN=$(TOOLS) go install go.opentelemetry.io/collector/cmd/mdatagen

$(GOLANGCI_LINT):
	@mkdir -p $(TOOLS)
	GOBIN=$(TOOLS) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

tools: $(OCB) $(MDATAGEN) $(GOLANGCI_LINT)

# Prints the path of ocb (installed first when missing), for tests that build a distribution.
.PHONY: ocb
ocb: $(OCB)
	@echo $(OCB)

# The end-to-end tests use the collector built here and a Jaeger built from source (cached);
# AGENTOTEL_FAULTS=1 runs the fault-injection suite (tests/faults) in its short form.
test: $(COLLECTOR)
	AGENTOTEL_COLLECTOR=$(CURDIR)/$(COLLECTOR) AGENTOTEL_JAEGER=$$(scripts/ensure-jaeger.sh) AGENTOTEL_FAULTS=1 \
		go test -count=1 -timeout 30m ./...
	$(MAKE) fuzz FUZZTIME=20000x FUZZTIME_DECODE=5000x
	$(MAKE) memory

# The memory bounds that need a process-wide heap reading, so benchmarks (run once each, alone in
# their test binary) that fail over their bound: the heap the Claude Code and Codex parsers' state
# holds after large records, and what the receiver keeps per file (tailer, progress), per listed
# OpenCode session and per snapshot thread.
.PHONY: memory
memory:
	go test -count=1 -run '^$$' -bench '^BenchmarkStateHeldHeap$$' -benchtime 1x ./internal/vendors/claudecode/ ./internal/vendors/codex/
	go test -count=1 -run '^$$' -bench 'MemoryPerFile|MemoryPerSession|DoesNotPinFiles' -benchtime 1x ./receiver/...

# Fuzz targets (their seeds also run as unit tests in every `go test`): agentevent.Decode, the
# agent_span connector's ConsumeLogs on arbitrary pdata, and storagecodec.Decode on arbitrary stored
# bytes.
fuzz:
	go test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./internal/agentevent/
	go test -run '^$$' -fuzz '^FuzzDecode$$' -fuzztime $(FUZZTIME) ./internal/storagecodec/
	go test -run '^$$' -fuzz '^FuzzConsumeLogs$$' -fuzztime $(FUZZTIME) ./connector/agentspanconnector/
	go test -run '^$$' -fuzz '^FuzzSkip$$' -fuzztime $(FUZZTIME) ./internal/jsonx/
	go test -run '^$$' -fuzz '^FuzzFastDecode$$' -fuzztime $(FUZZTIME_DECODE) ./internal/vendors/claudecode/
	go test -run '^$$' -fuzz '^FuzzScanMatchesTyped$$' -fuzztime $(FUZZTIME_DECODE) ./internal/vendors/codex/
	go test -run '^$$' -fuzz '^FuzzRawScan$$' -fuzztime $(FUZZTIME_DECODE) ./internal/vendors/claudecode/
	go test -run '^$$' -fuzz '^FuzzScanEntry$$' -fuzztime $(FUZZTIME_DECODE) ./internal/vendors/pi/

test-unit:
	go test -short ./...

# The fidelity check (cmd/agentcheck): the built collector over a home — the fixtures placed into each
# agent's default location in a temporary home, or HOME_DIR read as it is (nothing is written there:
# state and outputs go to a temporary directory) — one table per agent, non-zero exit on any problem
# or unexplained difference. `make test` runs it over the fixtures (cmd/agentcheck TestFixtures).
HOME_DIR ?=
FIXTURES ?= ../shared/fixtures
check: $(COLLECTOR)
	@cc=$$(scripts/ensure-ccusage.sh) && go run ./cmd/agentcheck -collector $(COLLECTOR) -ccusage "$$cc" \
		$(if $(HOME_DIR),-home "$(HOME_DIR)",-fixtures "$(FIXTURES)")

# The collector killed (kill -9) and stopped (SIGTERM) at random moments, compared with an
# uninterrupted run; a failing seed is logged, AGENTOTEL_FAULTS_SEED=<seed> repeats its schedule.
chaos: $(COLLECTOR)
	AGENTOTEL_CHAOS=1 AGENTOTEL_COLLECTOR=$(CURDIR)/$(COLLECTOR) \
		go test -count=1 -v -timeout 60m ./tests/faults/

generate: $(MDATAGEN)
	go generate ./...

# golangci-lint with .golangci.yml (contrib's linter set); its formatters (gci, gofumpt, goimports)
# include gofmt's rules and its govet runs every vet analyzer.
lint: $(GOLANGCI_LINT)
	$(GOLANGCI_LINT) run $(LINT_PKGS)

# Jaeger built from source: offline, API only. The source build has no UI embedded (its page at
# :16686 is a placeholder); for the UI run Jaeger's official image or release archive
# (docs/recipes/jaeger-tempo.md).
jaeger:
	@bin=$$(scripts/ensure-jaeger.sh) && \
		echo "Jaeger (built from source) on 127.0.0.1: API http://127.0.0.1:16686/api/services, OTLP 127.0.0.1:4317 (gRPC) and :4318 (HTTP)." && \
		echo "This build has no UI embedded (the page at :16686 is a placeholder). For the UI run the official image instead:" && \
		echo "  docker run --rm -p 127.0.0.1:16686:16686 -p 127.0.0.1:4317:4317 -p 127.0.0.1:4318:4318 jaegertracing/jaeger:2.13.0" && \
		exec $$bin --config config/jaeger-server.yaml

# The side-by-side benchmark: a history of BENCH_CORPUS_MB made from the shared fixtures, read end
# to end, events only, by contrib's file_log, by ccusage and by the decode floor; the memory growth
# from a quarter of that history to all of it (median of BENCH_GROWTH_RUNS runs, 3 by default); the
# live latency. Prints the tables, writes them to docs/benchmark.md (BENCH_DOC=none leaves it as it
# is) and as JSON to _build/bench/. BENCH_BASELINE=<path> (a bench build of another checkout, e.g.
# main's _build/bench/otelcol-agentotel-bench from `make bench-collector` there) also runs the end to
# end and events-only readers with it, in the same run, as rows labelled baseline. The
# micro-benchmarks of the mapping path (BenchmarkParse*, for pprof) run with
# `go test -bench Parse ./tests/bench/`.
bench: $(BENCH_COLLECTOR)
	AGENTOTEL_BENCH_CORPUS_MB=$(BENCH_CORPUS_MB) AGENTOTEL_BENCH_COLLECTOR=$(CURDIR)/$(BENCH_COLLECTOR) \
		AGENTOTEL_BENCH_BASELINE=$(if $(BENCH_BASELINE),$(abspath $(BENCH_BASELINE))) \
		go test -run '^$$' -bench '^BenchmarkSideBySide$$' -benchtime 1x -count 1 -timeout 120m ./tests/bench/

bench-collector: $(BENCH_COLLECTOR)

# The bench build: the distribution plus filelog and nop (tests/bench/builder-filelog.yaml).
$(BENCH_COLLECTOR): $(OCB) tests/bench/builder-filelog.yaml $(GO_SOURCES)
	@mkdir -p _build
	$(OCB) --config tests/bench/builder-filelog.yaml

clean:
	rm -rf _build _out
