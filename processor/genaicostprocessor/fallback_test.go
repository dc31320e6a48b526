// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package genaicostprocessor

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/codex"
	"github.com/agentotel/agentotel/processor/genaicostprocessor/internal/metadatatest"
	"github.com/agentotel/agentotel/processor/genaicostprocessor/internal/pricing"
)

// codex034Turn is a prompt and its model call for the 0.34 rollout below:
// the 0.34 fixture (MIT, copied in testdata/codex) ends before its first
// prompt. These are the real rows 4, 5 and 10 of
// fixtures/codex/v0.63.0_ghost_snapshot.jsonl (Apache-2.0) — the user's
// prompt as a response item and as an event, and the token_count of the
// response — with the 0.34 session's times, less the rate limits and the
// turn_context row, which a 0.34 rollout does not have. Like every record
// of a 0.34 rollout, nothing in them names the model.
var codex034Turn = []string{
	`{"timestamp":"2025-11-01T00:36:18.343Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"/"}]}}`,
	`{"timestamp":"2025-11-01T00:36:18.343Z","type":"event_msg","payload":{"type":"user_message","message":"/","images":[]}}`,
	`{"timestamp":"2025-11-01T00:36:23.523Z","type":"event_msg","payload":{"type":"token_count","info":{` +
		`"total_token_usage":{"input_tokens":3650,"cached_input_tokens":3072,"output_tokens":167,"reasoning_output_tokens":128,"total_tokens":3817},` +
		`"last_token_usage":{"input_tokens":3650,"cached_input_tokens":3072,"output_tokens":167,"reasoning_output_tokens":128,"total_tokens":3817},` +
		`"model_context_window":258400}}}`,
}

// codex034Events are the events the receiver makes of the 0.34 rollout
// (its two real records) followed by extra records.
func codex034Events(t *testing.T, extra ...string) []agentevent.Event {
	dir := filepath.Join(repoRoot(t), "testdata", "codex", "v0.34.0_short_no_turn_context")
	data, err := os.ReadFile(filepath.Join(dir, "v0.34.0_short_no_turn_context.jsonl"))
	require.NoError(t, err)
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	for _, l := range extra {
		lines = append(lines, []byte(l))
	}
	p := codex.NewParser("rollout-2025-10-31T18-36-16-fa1ac8bf-348e-4b9a-a06d-767050fa1e10.jsonl")
	var events []agentevent.Event
	var offset int64
	for i, l := range lines {
		events = append(events, p.Parse(l, int64(i+1), offset)...)
		offset += int64(len(l)) + 1
	}
	var usage int
	for i := range events {
		if events[i].TokensInput != nil {
			usage++
		}
	}
	require.Equal(t, 1, usage, "the token_count is one response's usage")
	return events
}

// gpt5Cost is what gpt-5 costs for the token_count above.
func gpt5Cost(t *testing.T) float64 {
	p, ok := pricing.Embedded("gpt-5")
	require.True(t, ok)
	return p.Cost(pricing.Usage{Input: 3650, CacheRead: 3072, Output: 167})
}

// TestCodexWithoutModelIsPricedAsFallback: a Codex response that names no
// model is priced as gpt-5 (the CLI's default model of that time, what
// ccusage prices it as), marked as a fallback, in both placements.
func TestCodexWithoutModelIsPricedAsFallback(t *testing.T) {
	h, p := newHarness(t)
	events := codex034Events(t, codex034Turn...)
	for _, ev := range events {
		require.Empty(t, ev.Model, "a 0.34 rollout names no model")
	}
	out, err := p.processLogs(t.Context(), agentevent.EncodeLogs(events, ""))
	require.NoError(t, err)
	evs, _ := agentevent.DecodeLogs(out)
	priced := 0
	for _, ev := range evs {
		if ev.TokensInput == nil {
			assert.Nil(t, ev.CostUSD, ev.Type)
			continue
		}
		priced++
		require.NotNil(t, ev.CostUSD)
		assert.InDelta(t, 578*1.25e-6+3072*0.125e-6+167*10e-6, *ev.CostUSD, 1e-12)
		assert.Equal(t, SourceFallback, ev.Attributes[agentevent.AttrCostSource])
		assert.Empty(t, ev.Model, "the event is not given a model it did not name")
	}
	assert.Equal(t, 1, priced)
	metadatatest.AssertEqualGenAiCostPriced(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("source", SourceFallback))},
	}, metricdatatest.IgnoreTimestamp())

	// The same events through agent_span, priced in the logs pipeline or
	// as chat spans in the traces pipeline: the same dollars, the same source.
	for placement, cost := range placementCosts(t, createDefaultConfig().(*Config), events) {
		assert.InDelta(t, gpt5Cost(t), cost.sessions["fa1ac8bf-348e-4b9a-a06d-767050fa1e10"], 1e-12, placement)
		assert.Equal(t, map[string]int{SourceFallback: 1}, cost.sources, placement)
	}
}

// TestFallbackOff: an empty fallback model leaves such a response unpriced,
// counted as no_model; other agents have no fallback.
func TestFallbackOff(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	cfg := createDefaultConfig().(*Config)
	cfg.FallbackModels["codex"] = ""
	require.NoError(t, cfg.Validate())
	p, err := newCostProcessor(metadatatest.NewSettings(tel), cfg)
	require.NoError(t, err)
	events := codex034Events(t, codex034Turn...)
	claude := answer("c1", "", 100, 0, 0, 10) // Claude Code: no fallback by default
	out, err := p.processLogs(t.Context(), agentevent.EncodeLogs(append(events, claude), ""))
	require.NoError(t, err)
	evs, _ := agentevent.DecodeLogs(out)
	for _, ev := range evs {
		assert.Nil(t, ev.CostUSD, ev.Type)
	}
	metadatatest.AssertEqualGenAiCostUnpriced(t, tel, []metricdata.DataPoint[int64]{
		{Value: 2, Attributes: attribute.NewSet(attribute.String("reason", reasonNoModel))},
	}, metricdatatest.IgnoreTimestamp())
}

// TestFallbackForAnotherService: a fallback set for another service.name
// applies to its chat spans (traces pipeline, any instrumentation).
func TestFallbackForAnotherService(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	cfg := createDefaultConfig().(*Config)
	cfg.FallbackModels["my-agent"] = "claude-sonnet-4-5-20250929"
	require.NoError(t, cfg.Validate())
	p, err := newCostProcessor(metadatatest.NewSettings(tel), cfg)
	require.NoError(t, err)
	td := ptrace.NewTraces()
	for _, svc := range []string{"my-agent", "other-agent"} {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr(agentevent.ResourceServiceName, svc)
		s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		s.Attributes().PutStr(agentevent.AttrOperationName, opChat)
		s.Attributes().PutInt(agentevent.AttrTokensInput, 1000)
		s.Attributes().PutInt(agentevent.AttrTokensOutput, 100)
	}
	_, err = p.processTraces(t.Context(), td)
	require.NoError(t, err)
	mine := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
	v, ok := mine.Get(agentevent.AttrCostUSD)
	require.True(t, ok)
	assert.InDelta(t, 1000*3e-6+100*15e-6, v.Double(), 1e-12)
	src, _ := mine.Get(agentevent.AttrCostSource)
	assert.Equal(t, SourceFallback, src.Str())
	_, ok = td.ResourceSpans().At(1).ScopeSpans().At(0).Spans().At(0).Attributes().Get(agentevent.AttrCostUSD)
	assert.False(t, ok, "no fallback for other-agent")
}

// TestOllamaCloudModelIsPricedAsItsBase: Codex through Ollama's cloud logs
// kimi-k2.5:cloud, which the table knows as kimi-k2.5. The turn_context is
// the real row 6 of fixtures/codex/v0.63.0_ghost_snapshot.jsonl (Apache-2.0)
// with the model an Ollama cloud model is logged as by Codex, in the 0.34
// rollout above with its turn.
func TestOllamaCloudModelIsPricedAsItsBase(t *testing.T) {
	turnContext := `{"timestamp":"2025-11-01T00:36:18.343Z","type":"turn_context","payload":{"cwd":"/home/randy/projects/python-3/OpenPrintKit",` +
		`"approval_policy":"on-request","sandbox_policy":{"type":"workspace-write","network_access":false,"exclude_tmpdir_env_var":false,"exclude_slash_tmp":false},` +
		`"model":"kimi-k2.5:cloud","summary":"auto"}}`
	events := codex034Events(t, append([]string{turnContext}, codex034Turn...)...)
	kimi, ok := pricing.Embedded("kimi-k2.5")
	require.True(t, ok)
	want := kimi.Cost(pricing.Usage{Input: 3650, CacheRead: 3072, Output: 167})
	require.Positive(t, want)

	h, p := newHarness(t)
	out, err := p.processLogs(t.Context(), agentevent.EncodeLogs(events, ""))
	require.NoError(t, err)
	evs, _ := agentevent.DecodeLogs(out)
	for _, ev := range evs {
		if ev.TokensInput == nil {
			continue
		}
		assert.Equal(t, "kimi-k2.5:cloud", ev.Model)
		require.NotNil(t, ev.CostUSD)
		assert.InDelta(t, want, *ev.CostUSD, 1e-12)
		assert.Equal(t, SourceTable, ev.Attributes[agentevent.AttrCostSource])
	}
	assert.Empty(t, h.logs.FilterMessageSnippet("not in the price table").All())
	for placement, cost := range placementCosts(t, createDefaultConfig().(*Config), events) {
		assert.InDelta(t, want, cost.sessions["fa1ac8bf-348e-4b9a-a06d-767050fa1e10"], 1e-12, placement)
		assert.Equal(t, map[string]int{SourceTable: 1}, cost.sources, placement)
	}
}
