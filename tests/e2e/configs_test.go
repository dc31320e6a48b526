// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// syncProcessors are the processor types that hand each batch on before they return: they may sit
// in a pipeline of agent_log or agent_span. A processor that holds data and returns first (batch,
// groupbytrace, tail_sampling) would break the crash guarantee (docs/design/crash-guarantee.md).
// agent_native maps and rewrites each batch in place before it hands it on.
var syncProcessors = []string{"agent_native", "gen_ai_cost", "resource", "attributes", "transform", "filter", "redaction"}

// syncExporters are the exporter types that write before they return (no sending queue).
var syncExporters = []string{"agent_event", "file", "debug", "nop", "prometheus"}

// queuedExporters are the exporter types with a sending queue: only a persistent one
// (sending_queue.storage) or none (sending_queue.enabled: false) keeps the guarantee.
var queuedExporters = []string{"otlp_grpc", "otlp_http", "otlp", "otlphttp"}

// collectorConfig is the part of a collector configuration the ordering rule is about.
type collectorConfig struct {
	Receivers  map[string]map[string]any `yaml:"receivers"`
	Processors map[string]map[string]any `yaml:"processors"`
	Exporters  map[string]map[string]any `yaml:"exporters"`
	Connectors map[string]map[string]any `yaml:"connectors"`
	Service    struct {
		Pipelines map[string]struct {
			Receivers  []string `yaml:"receivers"`
			Processors []string `yaml:"processors"`
			Exporters  []string `yaml:"exporters"`
		} `yaml:"pipelines"`
	} `yaml:"service"`
}

// componentType is the type of a component id ("agent_event/agtrace" → "agent_event").
func componentType(id string) string {
	typ, _, _ := strings.Cut(id, "/")
	return typ
}

// orderingViolations lists what in cfg breaks the ordering rule (docs/design/crash-guarantee.md):
// the pipelines agent_log and agent_span feed hold nothing asynchronous — no processor that
// returns before it handed the data on, no exporter with an in-memory sending queue.
func orderingViolations(cfg collectorConfig) []string {
	var bad []string
	for name, p := range cfg.Service.Pipelines {
		ours := slices.ContainsFunc(p.Receivers, func(r string) bool {
			typ := componentType(r)
			return typ == "agent_log" || typ == "agent_span"
		})
		if !ours {
			continue
		}
		for _, proc := range p.Processors {
			if !slices.Contains(syncProcessors, componentType(proc)) {
				bad = append(bad, fmt.Sprintf("pipeline %s: processor %s may return before the data is handed on", name, proc))
			}
		}
		for _, exp := range p.Exporters {
			if _, isConnector := cfg.Connectors[exp]; isConnector {
				continue // connectors hand data on synchronously
			}
			typ := componentType(exp)
			switch {
			case slices.Contains(syncExporters, typ):
			case slices.Contains(queuedExporters, typ):
				q, _ := cfg.Exporters[exp]["sending_queue"].(map[string]any)
				if storage, _ := q["storage"].(string); storage == "" && q["enabled"] != false {
					bad = append(bad, fmt.Sprintf("pipeline %s: exporter %s queues in memory (set sending_queue.storage)", name, exp))
				}
			default:
				bad = append(bad, fmt.Sprintf("pipeline %s: exporter %s is not known to write before it returns", name, exp))
			}
		}
	}
	slices.Sort(bad)
	return bad
}

// statelessComponents lists the agent_log receivers and agent_span connectors of cfg's pipelines
// without storage: the receiver's read positions and the connector's open turns are the two
// halves of the crash guarantee.
func statelessComponents(cfg collectorConfig) []string {
	used := map[string]bool{}
	for _, p := range cfg.Service.Pipelines {
		for _, id := range slices.Concat(p.Receivers, p.Exporters) {
			used[id] = true
		}
	}
	var bad []string
	for id, r := range cfg.Receivers {
		if used[id] && componentType(id) == "agent_log" && r["storage"] == nil {
			bad = append(bad, "receiver "+id+" has no storage")
		}
	}
	for id, c := range cfg.Connectors {
		if used[id] && componentType(id) == "agent_span" && c["storage"] == nil {
			bad = append(bad, "connector "+id+" has no storage")
		}
	}
	slices.Sort(bad)
	return bad
}

// TestConfigsKeepTheOrderingRule: every shipped configuration, and every pipeline the READMEs and
// docs/ show, wires agent_log into agent_span with nothing asynchronous between them or after the
// connector, and keeps the receiver's and the connector's state in storage — what the crash
// guarantee rests on (docs/design/crash-guarantee.md).
func TestConfigsKeepTheOrderingRule(t *testing.T) {
	root := repoRoot(t)
	configs, err := filepath.Glob(filepath.Join(root, "config", "*.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, configs)
	checked := 0
	for _, path := range configs {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		var cfg collectorConfig
		require.NoError(t, yaml.Unmarshal(b, &cfg), path)
		name := filepath.Base(path)
		assert.Empty(t, orderingViolations(cfg), name)
		assert.Empty(t, statelessComponents(cfg), name)
		for id := range cfg.Receivers {
			if componentType(id) == "agent_log" {
				checked++
			}
		}
	}
	require.Positive(t, checked, "no config/*.yaml reads with agent_log")

	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```")
	shown := 0
	for _, doc := range documents(t, root) {
		for i, blk := range blocks.FindAllStringSubmatch(readDoc(t, root, doc), -1) {
			var cfg collectorConfig
			if yaml.Unmarshal([]byte(blk[1]), &cfg) != nil || len(cfg.Service.Pipelines) == 0 {
				continue // a fragment, not a collector configuration
			}
			shown++
			assert.Empty(t, orderingViolations(cfg), "%s, YAML block %d", doc, i+1)
			assert.Empty(t, statelessComponents(cfg), "%s, YAML block %d", doc, i+1)
		}
	}
	require.Positive(t, shown, "no document shows a collector configuration")
}

// TestOrderingViolationsAreFound: the checks above recognize what breaks the rule.
func TestOrderingViolationsAreFound(t *testing.T) {
	var cfg collectorConfig
	require.NoError(t, yaml.Unmarshal([]byte(`
receivers:
  agent_log:
  otlp:
processors:
  batch:
exporters:
  otlp_grpc:
    endpoint: x
  otlp_http/durable:
    sending_queue:
      storage: file_storage
  kafka:
connectors:
  agent_span:
service:
  pipelines:
    logs:
      receivers: [agent_log]
      processors: [batch]
      exporters: [agent_span]
    traces:
      receivers: [agent_span]
      exporters: [otlp_grpc, otlp_http/durable, kafka]
    traces/other:
      receivers: [otlp]
      processors: [batch]
      exporters: [otlp_grpc]
`), &cfg))
	assert.Equal(t, []string{
		"pipeline logs: processor batch may return before the data is handed on",
		"pipeline traces: exporter kafka is not known to write before it returns",
		"pipeline traces: exporter otlp_grpc queues in memory (set sending_queue.storage)",
	}, orderingViolations(cfg))
	assert.Equal(t, []string{"connector agent_span has no storage", "receiver agent_log has no storage"}, statelessComponents(cfg))
}
