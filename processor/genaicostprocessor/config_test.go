// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package genaicostprocessor

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/agentotel/agentotel/internal/readmetest"
	"github.com/agentotel/agentotel/processor/genaicostprocessor/internal/metadata"
	"github.com/agentotel/agentotel/processor/genaicostprocessor/internal/pricing"
)

func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	for _, tc := range []struct {
		id      component.ID
		want    *Config
		wantErr []string
	}{
		{id: component.NewID(metadata.Type), want: &Config{FallbackModels: map[string]string{"codex": "gpt-5"}}},
		{
			id: component.NewIDWithName(metadata.Type, "full"),
			want: &Config{
				Models: map[string]ModelPrice{
					"claude-sonnet-4-5": {Input: new(2.4), Output: new(12.0)},
					"my-company/coder-large": {
						Input: new(0.5), Output: new(1.5), CacheRead: new(0.05),
						Tier: &TierPrice{AboveInputTokens: 128000, Input: new(1.0), Output: new(3.0)},
					},
				},
				Aliases: map[string]string{"sonnet-latest": "claude-sonnet-4-5"},
				// The default's codex entry stays: a map setting adds to it.
				FallbackModels: map[string]string{"codex": "gpt-5", "my-agent": "claude-sonnet-4-5"},
			},
		},
		{
			id:   component.NewIDWithName(metadata.Type, "no_fallback"),
			want: &Config{FallbackModels: map[string]string{"codex": ""}},
		},
		{
			id: component.NewIDWithName(metadata.Type, "invalid"),
			wantErr: []string{
				"`models::unheard-of-model`: \"unheard-of-model\" is not in the embedded price table, so `input` and `output` are required",
				"`models::unheard-of-model::output` must not be negative",
				"`models::unheard-of-model::tier::above_input_tokens` must be a positive number of tokens",
				"`models::unheard-of-model::tier::input` must not be negative",
				"`aliases::fast`: \"no-such-model\" is neither in the embedded price table nor in `models`",
				"`fallback_models::codex`: \"gpt-9-ultra\" is neither in the embedded price table nor in `models` or `aliases`",
				"`fallback_models`: a key must be a service.name, got an empty one",
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
	sub := confmap.NewFromStringMap(map[string]any{"modles": map[string]any{}})
	assert.ErrorContains(t, sub.Unmarshal(cfg), "modles")
}

// TestConfigTable: an override changes only the rates it sets, a new model
// gets what it does not set from its input rate, aliases resolve.
func TestConfigTable(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	sub, err := cm.Sub("gen_ai_cost/full")
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(cfg))
	tbl := cfg.table()

	embedded, ok := pricing.Embedded("claude-sonnet-4-5")
	require.True(t, ok)
	p, name, ok := tbl.Lookup("claude-sonnet-4-5-20250929")
	require.True(t, ok)
	assert.Equal(t, "claude-sonnet-4-5", name)
	assert.True(t, tbl.Overridden(name))
	assert.InDelta(t, 2.4e-6, p.Input, 1e-15)
	assert.InDelta(t, 12e-6, p.Output, 1e-15)
	assert.Equal(t, embedded.CacheRead, p.CacheRead, "rates not set keep the table's")
	assert.Equal(t, embedded.Threshold, p.Threshold)

	p, _, ok = tbl.Lookup("sonnet-latest")
	require.True(t, ok)
	assert.InDelta(t, 2.4e-6, p.Input, 1e-15)

	p, name, ok = tbl.Lookup("my-company/coder-large")
	require.True(t, ok)
	assert.True(t, tbl.Overridden(name))
	assert.InDelta(t, 0.5e-6, p.CacheCreation, 1e-15, "a new model's cache write costs its input")
	assert.InDelta(t, 0.05e-6, p.CacheRead, 1e-15)
	assert.Equal(t, int64(128000), p.Threshold)
	assert.InDelta(t, 3e-6, p.Above.Output, 1e-15)
	assert.InDelta(t, 0.05e-6, p.Above.CacheRead, 1e-15, "a tier rate not set is the base rate")

	_, _, ok = tbl.Lookup("gpt-5")
	assert.True(t, ok)
	assert.False(t, tbl.Overridden("gpt-5"))
}

// TestREADMEExamples loads every gen_ai_cost block of the README's YAML
// examples: each must load and validate, and the full example must be
// gen_ai_cost/full of testdata/config.yaml.
func TestREADMEExamples(t *testing.T) {
	readmetest.LoadExamples(t, "processors", "gen_ai_cost", NewFactory().CreateDefaultConfig)
}

// TestFallbackModelsResolveLikeLoggedNames: a fallback model may be a model
// of `models` or an alias, and is looked up like a logged name.
func TestFallbackModelsResolveLikeLoggedNames(t *testing.T) {
	cfg := &Config{
		Models:  map[string]ModelPrice{"house-coder": {Input: new(1.0), Output: new(2.0)}},
		Aliases: map[string]string{"fast": "gpt-5-mini"},
		FallbackModels: map[string]string{
			"a": "house-coder", "b": "fast", "c": "openai/gpt-5-2025-08-07", "d": "",
		},
	}
	require.NoError(t, cfg.Validate())
	cfg.FallbackModels["e"] = "house-coder-2"
	assert.EqualError(t, cfg.Validate(), "`fallback_models::e`: \"house-coder-2\" is neither in the embedded price table nor in `models` or `aliases`")
}
