// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/metadata"
	"github.com/agentotel/agentotel/internal/readmetest"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	storage := component.MustNewID("file_storage")
	for _, tc := range []struct {
		id      component.ID
		want    *Config
		wantErr []string
	}{
		{
			id:   component.NewID(metadata.Type),
			want: &Config{TurnIdleTimeout: 5 * time.Minute, MaxOpenToolDuration: 4 * time.Hour, MaxCachedSessions: 256, MaxContentLength: 4096},
		},
		{
			id:   component.NewIDWithName(metadata.Type, "full"),
			want: &Config{TurnIdleTimeout: 2 * time.Minute, MaxOpenToolDuration: 8 * time.Hour, MaxCachedSessions: 64, Storage: &storage, IncludeContent: true, MaxContentLength: 1024},
		},
		{
			id:      component.NewIDWithName(metadata.Type, "invalid"),
			wantErr: []string{"`turn_idle_timeout` must be positive", "`max_open_tool_duration` must be at least `turn_idle_timeout`", "`max_cached_sessions` must be a positive number", "`max_content_length` must be a positive number"},
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
	conf, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	sub, err := conf.Sub("agent_span/full")
	require.NoError(t, err)
	require.NoError(t, sub.Merge(confmap.NewFromStringMap(map[string]any{"turn_idle_timeot": "1m"})))
	assert.ErrorContains(t, sub.Unmarshal(cfg), "turn_idle_timeot")
}

// TestREADMEExamples loads every agent_span block of the README's YAML
// examples: each must load and validate, and the full example must be
// agent_span/full of testdata/config.yaml.
func TestREADMEExamples(t *testing.T) {
	readmetest.LoadExamples(t, "connectors", "agent_span", NewFactory().CreateDefaultConfig)
}
