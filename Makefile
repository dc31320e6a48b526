# agentotel — build, run and test the otelcol-agentotel collector.
SHELL := /bin/bash
export CGO_ENABLED := 0
CACHE ?= $(HOME)/.cache/agentotel
TOOLS := $(CACHE)/bin
export PATH := $(TOOLS):$(PATH)
OCB_VERSION := v0.159.0
OCB := $(TOOLS)/builder
MDATAGEN := $(TOOLS)/mdatagen
DIST := _build
COLLECTOR := $(DIST)/otelcol-agentotel
GO_SOURCES := $(shell find . -name '*.go' -not -path './_build/*') go.mod go.sum builder-config.yaml

.PHONY: run build test generate lint jaeger bench tools

$(MDATAGEN): internal/tools/go.mod
	cd internal/tools && GOBIN=$(TOOLS) go install go.opentelemetry.io/collector/cmd/mdatagen

$(OCB):
	GOBIN=$(TOOLS) go install go.opentelemetry.io/collector/cmd/builder@$(OCB_VERSION)

tools: $(MDATAGEN) $(OCB)

generate: $(MDATAGEN)
	go generate ./...

lint:
	gofmt -l . | tee /dev/stderr | (! read)
	go vet ./...
