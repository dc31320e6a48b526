// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentmetricsconnector

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.yaml.in/yaml/v3"

	"github.com/agentotel/agentotel/connector/agentmetricsconnector/internal/metadata"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	for _, tc := range []struct {
		id      component.ID
		want    *Config
		wantErr []string
	}{
		{
			id:   component.NewID(metadata.Type),
			want: &Config{MetricsFlushInterval: 15 * time.Second, MaxSeries: 2000, MaxSessions: 10000},
		},
		{
			id: component.NewIDWithName(metadata.Type, "full"),
			want: &Config{MetricsFlushInterval: time.Minute, MaxSeries: 500, MaxSessions: 1000,
				Exemplars: ExemplarsConfig{Enabled: true}},
		},
		{
			id: component.NewIDWithName(metadata.Type, "invalid"),
			wantErr: []string{
				"`metrics_flush_interval` must be positive", "`max_series` must be a positive number",
				"`max_sessions` must be a positive number",
			},
		},
	} {
		t.Run(tc.id.String(), func(t *testing.T) {
			cfg := NewFactory().CreateDefaultConfig()
			sub, err := cm.Sub(tc.id.String())
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(cfg))
			err = confmap.Validate(cfg)
			if len(tc.wantErr) > 0 {
				require.Error(t, err)
				for _, w := range tc.wantErr {
					assert.ErrorContains(t, err, w)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, cfg)
		})
	}
}

func TestUnknownSettingIsRejected(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig()
	sub := confmap.NewFromStringMap(map[string]any{"max_seris": 3})
	assert.ErrorContains(t, sub.Unmarshal(cfg), "max_seris")
}

// TestREADMEExamples loads every agent_metrics block of the README's YAML
// examples; the full one must be agent_metrics/full of testdata/config.yaml.
func TestREADMEExamples(t *testing.T) {
	b, err := os.ReadFile("README.md")
	require.NoError(t, err)
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(b), -1)
	require.NotEmpty(t, blocks)
	testdata, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	loaded := 0
	for _, blk := range blocks {
		var raw map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(blk[1]), &raw), blk[1])
		connectors, ok := raw["connectors"].(map[string]any)
		if !ok {
			continue
		}
		for name, v := range connectors {
			if !strings.HasPrefix(name, "agent_metrics") {
				continue
			}
			section, _ := v.(map[string]any)
			cfg := NewFactory().CreateDefaultConfig()
			require.NoError(t, confmap.NewFromStringMap(section).Unmarshal(cfg), name)
			require.NoError(t, confmap.Validate(cfg), name)
			loaded++
			if name != "agent_metrics/full" {
				continue
			}
			want := NewFactory().CreateDefaultConfig()
			sub, err := testdata.Sub(name)
			require.NoError(t, err)
			require.NoError(t, sub.Unmarshal(want))
			assert.Equal(t, want, cfg, "README's %s differs from testdata/config.yaml", name)
		}
	}
	assert.GreaterOrEqual(t, loaded, 2)
}
