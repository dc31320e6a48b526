// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package readmetest holds a component's README to its code: the YAML
// examples a component's README shows must load. Only tests import it.
package readmetest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.yaml.in/yaml/v3"
)

var yamlBlock = regexp.MustCompile("(?s)```yaml\n(.*?)```")

// Block is one component block of a README example.
type Block struct {
	Name    string         // the component id, e.g. "agent_span/full"
	Section map[string]any // its settings
}

// Blocks returns, in the README's order, every block under kind
// ("connectors", "processors", "exporters") whose name starts with prefix
// in the YAML examples of the package's README.md. A name shown in two
// examples is there twice.
func Blocks(t *testing.T, kind, prefix string) []Block {
	t.Helper()
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	blocks := yamlBlock.FindAllStringSubmatch(string(b), -1)
	require.NotEmpty(t, blocks)
	var found []Block
	for _, blk := range blocks {
		var raw map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(blk[1]), &raw), blk[1])
		components, _ := raw[kind].(map[string]any)
		names := make([]string, 0, len(components))
		for name := range components {
			if strings.HasPrefix(name, prefix) {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		for _, name := range names {
			section, _ := components[name].(map[string]any)
			found = append(found, Block{Name: name, Section: section})
		}
	}
	return found
}

// LoadExamples loads every typ block under kind of the README's YAML
// examples into a default configuration: each must load and validate, and
// <typ>/full must equal that block of testdata/config.yaml. The README must
// show at least two (a name shown twice counts, and is loaded, twice).
func LoadExamples(t *testing.T, kind, typ string, createDefault func() component.Config) {
	t.Helper()
	testdata, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	examples := Blocks(t, kind, typ)
	for _, ex := range examples {
		name := ex.Name
		cfg := createDefault()
		require.NoError(t, confmap.NewFromStringMap(ex.Section).Unmarshal(cfg), name)
		require.NoError(t, confmap.Validate(cfg), name)
		if name != typ+"/full" {
			continue
		}
		want := createDefault()
		sub, err := testdata.Sub(name)
		require.NoError(t, err)
		require.NoError(t, sub.Unmarshal(want))
		assert.Equal(t, want, cfg, "README's %s differs from testdata/config.yaml", name)
	}
	assert.GreaterOrEqual(t, len(examples), 2)
}
