// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package pricing

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLookupNormalizesNames(t *testing.T) {
	tbl := NewTable(nil, map[string]string{"house-model": "gpt-5"})
	for _, tc := range []struct{ logged, want string }{
		{"claude-opus-4-6", "claude-opus-4-6"},
		{"claude-sonnet-4-20250514", "claude-sonnet-4-20250514"}, // a dated name the table has: as logged
		{"kimi-k2.5:cloud", "kimi-k2.5"},                         // Ollama's cloud tag (Codex through Ollama)
		{"qwen3-coder:480b-cloud", "qwen3-coder"},                // an Ollama size tag
		{"gpt-5:latest", "gpt-5"},                                // :latest
		{"glm-4.6:some-tag", "glm-4.6"},                          // any :tag
		{"openrouter/moonshotai/kimi-k2.5:cloud", "kimi-k2.5"},   // a prefix and a tag
		{"anthropic/claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
		{"claude-3-7-sonnet-20250219:thinking", "claude-3-7-sonnet-20250219"},
		{"claude-haiku-4-5-20251001", "claude-haiku-4-5"},        // release date
		{"claude-opus-4.6", "claude-opus-4-6"},                   // Copilot CLI spelling
		{"Claude-Sonnet-4.5", "claude-sonnet-4-5"},               // case
		{"anthropic/claude-sonnet-4-5", "claude-sonnet-4-5"},     // provider prefix
		{"openrouter/openai/gpt-5-codex", "gpt-5-codex"},         // gateway prefixes
		{"us.anthropic.claude-opus-4-1-v1:0", "claude-opus-4-1"}, // Bedrock
		{"claude-opus-4-5@20251101", "claude-opus-4-5"},          // Vertex
		{"claude-sonnet-4-5-20250929-thinking", "claude-sonnet-4-5"},
		{"claude-sonnet-4-5[1m]", "claude-sonnet-4-5"},
		{"gpt-5.1-codex-max-high", "gpt-5.1-codex-max"},
		{"gpt-5-2025-08-07", "gpt-5"},
		{"gemini-2.5-pro", "gemini-2.5-pro"},
		{"google/gemini-2.5-flash", "gemini-2.5-flash"},
		{"house-model", "gpt-5"},
	} {
		_, name, ok := tbl.Lookup(tc.logged)
		if assert.Truef(t, ok, "%s not found", tc.logged) {
			assert.Equal(t, tc.want, name, tc.logged)
		}
	}
	for _, unknown := range []string{"", "mistral", "<synthetic>", "qwen3.5:cloud", "accounts/fireworks/routers/glm-5p2-fast"} {
		_, _, ok := tbl.Lookup(unknown)
		assert.Falsef(t, ok, "%q priced", unknown)
	}
}

func TestCost(t *testing.T) {
	opus, ok := Embedded("claude-opus-4-6")
	require.True(t, ok)
	// 1000 uncached input, 2000 cache reads, 3000 cache writes of which
	// 1000 for an hour, 400 output.
	u := Usage{Input: 6000, CacheRead: 2000, CacheCreation: 3000, CacheCreation1h: 1000, Output: 400}
	want := 1000*5e-6 + 2000*0.5e-6 + 2000*6.25e-6 + 1000*10e-6 + 400*25e-6
	assert.InDelta(t, want, opus.Cost(u), 1e-12)

	// Above the threshold the whole request costs the higher rates.
	pro, ok := Embedded("gemini-2.5-pro")
	require.True(t, ok)
	require.Equal(t, int64(200000), pro.Threshold)
	small := Usage{Input: 200000, CacheRead: 100000, Output: 1000}
	assert.InDelta(t, 100000*1.25e-6+100000*0.125e-6+1000*10e-6, pro.Cost(small), 1e-12)
	large := Usage{Input: 200001, CacheRead: 100000, Output: 1000}
	assert.InDelta(t, 100001*2.5e-6+100000*0.25e-6+1000*15e-6, pro.Cost(large), 1e-12)
	assert.InDelta(t, 1000*15e-6, pro.CostAt(Usage{Output: 1000}, true), 1e-12, "a later record of a long response")

	// A model without cache prices pays input for cached tokens.
	k, ok := Embedded("kimi-k2.5")
	require.True(t, ok)
	assert.Equal(t, k.Input, k.CacheRead)
}

func TestTableIsDated(t *testing.T) {
	assert.Regexp(t, `^\d{4}-\d{2}-\d{2}$`, TableDate)
	assert.NotEmpty(t, TableSource)
	assert.Greater(t, len(table), 50)
}
