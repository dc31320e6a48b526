// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentmetricsconnector

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/agentotel/agentotel/connector/agentmetricsconnector/internal/metadata"
	"github.com/agentotel/agentotel/internal/readmetest"
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
			want: &Config{
				MetricsFlushInterval: time.Minute, MaxSeries: 500, MaxSessions: 1000,
				Exemplars: ExemplarsConfig{Enabled: true},
			},
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
	readmetest.LoadExamples(t, "connectors", "agent_metrics", NewFactory().CreateDefaultConfig)
}
