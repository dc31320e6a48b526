// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package genaicostprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/processor/genaicostprocessor/internal/metadatatest"
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

type harness struct {
	tel  *componenttest.Telemetry
	logs *observer.ObservedLogs
}

func newHarness(t *testing.T) (*harness, *costProcessor) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	core, logs := observer.New(zapcore.InfoLevel)
	set := metadatatest.NewSettings(tel)
	set.Logger = zap.New(core)
	p, err := newCostProcessor(set, createDefaultConfig().(*Config))
	require.NoError(t, err)
	return &harness{tel: tel, logs: logs}, p
}

func answer(id, model string, in, cacheRead, cacheCreate, out int64) agentevent.Event {
	return agentevent.Event{
		Source: agentevent.Source("claude_code"), SessionID: "s1", EventID: id, Timestamp: t0,
		Type: agentevent.TypeAssistantMessage, Role: agentevent.RoleAssistant, Model: model, ResponseID: "msg_" + id,
		TokensInput: agentevent.Int(in), TokensCached: agentevent.Int(cacheRead),
		TokensCacheCreation: agentevent.Int(cacheCreate), TokensOutput: agentevent.Int(out),
	}
}

func TestLogs(t *testing.T) {
	h, p := newHarness(t)
	priced := answer("a1", "claude-opus-4-6", 6000, 2000, 3000, 400)
	agentevent.SetAttr(&priced, agentevent.AttrTokensCacheCreation1h, int64(1000))
	stated := answer("a2", "claude-sonnet-4-5", 100, 0, 0, 10)
	stated.Source = agentevent.Source("pi")
	stated.CostUSD = agentevent.Float(0.5)
	unknown1 := answer("a3", "mistral", 100, 0, 0, 10)
	unknown2 := answer("a4", "mistral", 100, 0, 0, 10)
	noModel := answer("a5", "", 100, 0, 0, 10)
	empty := answer("a6", "<synthetic>", 0, 0, 0, 0) // an API error notice: nothing to price
	prompt := agentevent.Event{Source: agentevent.Source("claude_code"), SessionID: "s1", EventID: "u1", Type: agentevent.TypeUserMessage, Timestamp: t0}
	// A streamed response past sonnet 4.5's 200k threshold: input on its
	// first record, an output increment on a later one.
	longFirst := answer("l1", "claude-sonnet-4-5-20250929", 250000, 0, 0, 10)
	longLater := answer("l2", "claude-sonnet-4-5-20250929", 0, 0, 0, 90)
	longLater.ResponseID = longFirst.ResponseID
	longLater.TokensInput, longLater.TokensCached, longLater.TokensCacheCreation = nil, nil, nil

	ld := agentevent.EncodeLogs([]agentevent.Event{prompt, priced, stated, unknown1, unknown2, noModel, empty, longFirst, longLater}, "")
	out, err := p.processLogs(t.Context(), ld)
	require.NoError(t, err)
	evs, skipped := agentevent.DecodeLogs(out)
	require.Zero(t, skipped)
	byID := map[string]agentevent.Event{}
	for _, ev := range evs {
		byID[ev.EventID] = ev
	}
	cost := func(id string) *float64 { return byID[id].CostUSD }
	source := func(id string) any { return byID[id].Attributes[agentevent.AttrCostSource] }

	require.NotNil(t, cost("a1"))
	assert.InDelta(t, 1000*5e-6+2000*0.5e-6+2000*6.25e-6+1000*10e-6+400*25e-6, *cost("a1"), 1e-12)
	assert.Equal(t, SourceTable, source("a1"))
	assert.Equal(t, 0.5, *cost("a2"), "a stated cost wins")
	assert.Equal(t, SourceLog, source("a2"))
	for _, id := range []string{"u1", "a3", "a4", "a5", "a6"} {
		assert.Nil(t, cost(id), id)
		assert.Nil(t, source(id), id)
	}
	assert.InDelta(t, 250000*6e-6+10*22.5e-6, *cost("l1"), 1e-12)
	assert.InDelta(t, 90*22.5e-6, *cost("l2"), 1e-12, "the later record of a long response at the long rates")

	metadatatest.AssertEqualGenAiCostPriced(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("source", SourceLog))},
		{Value: 3, Attributes: attribute.NewSet(attribute.String("source", SourceTable))},
	}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualGenAiCostUnpriced(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 2, Attributes: attribute.NewSet(attribute.String("reason", reasonUnknownModel))},
		{Value: 1, Attributes: attribute.NewSet(attribute.String("reason", reasonNoModel))},
	}, metricdatatest.IgnoreTimestamp())
	warned := h.logs.FilterMessageSnippet("not in the price table").All()
	require.Len(t, warned, 1, "an unknown model is logged once")
	assert.Equal(t, "mistral", warned[0].ContextMap()["model"])

	// Records priced before (a second collector, a replay) are left alone.
	again, err := p.processLogs(t.Context(), out)
	require.NoError(t, err)
	evs, _ = agentevent.DecodeLogs(again)
	for _, ev := range evs {
		assert.Equal(t, byID[ev.EventID].CostUSD, ev.CostUSD)
	}
}

func TestConfiguredPriceIsRecordedAsConfig(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	cfg := &Config{Models: map[string]ModelPrice{"local-coder": {Input: new(1.0), Output: new(2.0)}}}
	require.NoError(t, cfg.Validate())
	p, err := newCostProcessor(metadatatest.NewSettings(tel), cfg)
	require.NoError(t, err)
	ld := agentevent.EncodeLogs([]agentevent.Event{answer("a1", "ollama/local-coder", 1000, 0, 0, 500)}, "")
	_, err = p.processLogs(t.Context(), ld)
	require.NoError(t, err)
	a := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes()
	v, ok := a.Get(agentevent.AttrCostUSD)
	require.True(t, ok)
	assert.InDelta(t, 1000*1e-6+500*2e-6, v.Double(), 1e-12)
	src, _ := a.Get(agentevent.AttrCostSource)
	assert.Equal(t, SourceConfig, src.Str())
}

// turn builds a trace shaped like agent_span's: a turn root, a chat span,
// a tool span with a subagent run under it whose chat has a stated cost,
// and a chat of an unknown model.
func turn() (ptrace.Traces, map[string]ptrace.Span) {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	spans := map[string]ptrace.Span{}
	add := func(name, op string, id, parent byte) ptrace.Span {
		s := ss.AppendEmpty()
		s.SetName(name)
		s.SetTraceID(pcommon.TraceID{1})
		s.SetSpanID(pcommon.SpanID{id})
		if parent != 0 {
			s.SetParentSpanID(pcommon.SpanID{parent})
		}
		s.Attributes().PutStr(agentevent.AttrOperationName, op)
		spans[name] = s
		return s
	}
	add("root", opInvokeAgent, 1, 0)
	chat := add("chat", opChat, 2, 1)
	chat.Attributes().PutStr(agentevent.AttrRequestModel, "gpt-5")
	chat.Attributes().PutStr(agentevent.AttrModel, "gpt-5")
	chat.Attributes().PutInt(agentevent.AttrTokensInput, 10000)
	chat.Attributes().PutInt(agentevent.AttrTokensCached, 8000)
	chat.Attributes().PutInt(agentevent.AttrTokensOutput, 500)
	add("tool", "execute_tool", 3, 1)
	sub := add("subagent", opInvokeAgent, 4, 3)
	sub.Attributes().PutDouble(agentevent.AttrTurnCostUSD, 0.25)
	subChat := add("subchat", opChat, 5, 4)
	subChat.Attributes().PutStr(agentevent.AttrModel, "claude-opus-4-6")
	subChat.Attributes().PutInt(agentevent.AttrTokensInput, 10)
	subChat.Attributes().PutDouble(agentevent.AttrCostUSD, 0.25)
	odd := add("odd", opChat, 6, 1)
	odd.Attributes().PutStr(agentevent.AttrModel, "my-local-model")
	odd.Attributes().PutInt(agentevent.AttrTokensInput, 10)
	return td, spans
}

func TestTraces(t *testing.T) {
	h, p := newHarness(t)
	td, spans := turn()
	_, err := p.processTraces(t.Context(), td)
	require.NoError(t, err)
	get := func(name, key string) (pcommon.Value, bool) { return spans[name].Attributes().Get(key) }

	want := 2000*1.25e-6 + 8000*0.125e-6 + 500*10e-6
	v, ok := get("chat", agentevent.AttrCostUSD)
	require.True(t, ok)
	assert.InDelta(t, want, v.Double(), 1e-12)
	src, _ := get("chat", agentevent.AttrCostSource)
	assert.Equal(t, SourceTable, src.Str())
	src, _ = get("subchat", agentevent.AttrCostSource)
	assert.Equal(t, SourceLog, src.Str())
	_, ok = get("odd", agentevent.AttrCostUSD)
	assert.False(t, ok)

	v, ok = get("root", agentevent.AttrTurnCostUSD)
	require.True(t, ok, "the turn root carries the run's cost")
	assert.InDelta(t, want+0.25, v.Double(), 1e-12)
	v, _ = get("subagent", agentevent.AttrTurnCostUSD)
	assert.Equal(t, 0.25, v.Double(), "a run with nothing priced here keeps its roll-up")
	_, ok = get("tool", agentevent.AttrTurnCostUSD)
	assert.False(t, ok)

	metadatatest.AssertEqualGenAiCostPriced(t, h.tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("source", SourceLog))},
		{Value: 1, Attributes: attribute.NewSet(attribute.String("source", SourceTable))},
	}, metricdatatest.IgnoreTimestamp())
}

// TestThroughFactory runs both signals through the factory's processors
// (processorhelper in front), as a collector does.
func TestThroughFactory(t *testing.T) {
	ctx := t.Context()
	logsSink, tracesSink := new(consumertest.LogsSink), new(consumertest.TracesSink)
	set := metadatatest.NewSettings(componenttest.NewTelemetry())
	lp, err := NewFactory().CreateLogs(ctx, set, createDefaultConfig(), logsSink)
	require.NoError(t, err)
	tp, err := NewFactory().CreateTraces(ctx, set, createDefaultConfig(), tracesSink)
	require.NoError(t, err)
	require.True(t, lp.Capabilities().MutatesData)
	host := componenttest.NewNopHost()
	require.NoError(t, lp.Start(ctx, host))
	require.NoError(t, tp.Start(ctx, host))

	require.NoError(t, lp.ConsumeLogs(ctx, agentevent.EncodeLogs([]agentevent.Event{answer("a1", "gpt-5", 1000, 0, 0, 100)}, "")))
	td, _ := turn()
	require.NoError(t, tp.ConsumeTraces(ctx, td))
	require.Len(t, logsSink.AllLogs(), 1)
	evs, _ := agentevent.DecodeLogs(logsSink.AllLogs()[0])
	require.NotNil(t, evs[0].CostUSD)
	assert.InDelta(t, 1000*1.25e-6+100*10e-6, *evs[0].CostUSD, 1e-12)
	require.Len(t, tracesSink.AllTraces(), 1)
	require.NoError(t, lp.Shutdown(ctx))
	require.NoError(t, tp.Shutdown(ctx))
}
