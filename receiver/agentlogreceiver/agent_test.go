// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/agentotel/agentotel/internal/agents"
)

// TestEveryAgentHasSettings: every registered agent has its block in
// Config (an AgentConfig field named by its source), on by default.
func TestEveryAgentHasSettings(t *testing.T) {
	require.NotEmpty(t, agents.All())
	require.Len(t, registered(), len(agents.All()), "registered agents the receiver reads")
	cfg := createDefaultConfig().(*Config)
	for _, d := range agents.All() {
		_, ok := agentFields()[string(d.Source)]
		if !assert.True(t, ok, "%s is registered, but Config has no field `AgentConfig `mapstructure:\"%s\"``", d.Source, d.Source) {
			continue
		}
		a := agentByKey(string(d.Source))
		assert.True(t, a.config(cfg).Enabled, "%s is on by default", d.Source)
	}
	assert.Len(t, agentFields(), len(agents.All()), "an AgentConfig field of no registered agent")
}

// TestLifecycleConfigCoversEveryAgent: the generated lifecycle tests start
// the receiver with metadata.yaml's tests::config, which must point every
// registered agent into the test's own folder, never into the home of
// whoever runs them.
func TestLifecycleConfigCoversEveryAgent(t *testing.T) {
	cm, err := confmaptest.LoadConf("metadata.yaml")
	require.NoError(t, err)
	sub, err := cm.Sub("tests::config")
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, sub.Unmarshal(cfg))
	for _, a := range registered() {
		ac := a.config(cfg)
		if !ac.Enabled {
			continue
		}
		if assert.NotEmpty(t, ac.Include, "metadata.yaml tests::config: %s reads its default location", a.key) {
			for _, p := range ac.Include {
				assert.True(t, strings.HasPrefix(filepath.ToSlash(p), "./testdata/"), "%s: %s is not below ./testdata", a.key, p)
			}
		}
	}
}

// TestREADMEDefaultLocations: the README's table of default locations has
// one row per registered agent, by its key.
func TestREADMEDefaultLocations(t *testing.T) {
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	s := string(b)
	i := strings.Index(s, "### Default locations")
	require.GreaterOrEqual(t, i, 0)
	section, _, _ := strings.Cut(s[i+1:], "\n### ")
	keys := map[string]bool{}
	for line := range strings.SplitSeq(section, "\n") {
		if k, ok := strings.CutPrefix(line, "| `"); ok {
			key, _, _ := strings.Cut(k, "`")
			keys[key] = true
		}
	}
	for _, a := range registered() {
		assert.True(t, keys[a.key], "README.md: no row for %s in Default locations", a.key)
		delete(keys, a.key)
	}
	assert.Empty(t, keys, "README.md: rows of no registered agent")
}
