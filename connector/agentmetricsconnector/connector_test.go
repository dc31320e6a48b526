// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentmetricsconnector

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/agentotel/agentotel/connector/agentmetricsconnector/internal/metadatatest"
	"github.com/agentotel/agentotel/internal/agentevent"
)

var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func newTestConnector(t *testing.T, cfg *Config) (*metricsConnector, *consumertest.MetricsSink, *componenttest.Telemetry) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	sink := new(consumertest.MetricsSink)
	c, err := newConnector(metadatatest.NewSettings(tel), cfg, sink)
	require.NoError(t, err)
	return c, sink, tel
}

func defaultConfig() *Config { return createDefaultConfig().(*Config) }

func ev(session, id string, typ agentevent.EventType, sec int) agentevent.Event {
	return agentevent.Event{
		Source: agentevent.Source("claude_code"), SessionID: session, EventID: id, Type: typ,
		Timestamp: t0.Add(time.Duration(sec) * time.Second),
	}
}

func response(session, id, resp string, sec int, in, out int64, cost float64) agentevent.Event {
	e := ev(session, id, agentevent.TypeAssistantMessage, sec)
	e.Model, e.Provider, e.ResponseID = "claude-opus-4-6", "anthropic", resp
	e.TokensInput, e.TokensOutput = agentevent.Int(in), agentevent.Int(out)
	if cost > 0 {
		e.CostUSD = agentevent.Float(cost)
		agentevent.SetAttr(&e, agentevent.AttrCostSource, "table")
	}
	return e
}

// point finds the data point of a metric with the given attributes.
func point(t *testing.T, md pmetric.Metrics, name string, attrs map[string]any) (pmetric.HistogramDataPoint, pmetric.NumberDataPoint, bool) {
	t.Helper()
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		ms := md.ResourceMetrics().At(i).ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			if m.Name() != name {
				continue
			}
			match := func(a map[string]any) bool {
				for k, v := range attrs {
					if a[k] != v {
						return false
					}
				}
				return true
			}
			switch m.Type() {
			case pmetric.MetricTypeHistogram:
				for k := 0; k < m.Histogram().DataPoints().Len(); k++ {
					if dp := m.Histogram().DataPoints().At(k); match(dp.Attributes().AsRaw()) {
						return dp, pmetric.NewNumberDataPoint(), true
					}
				}
			case pmetric.MetricTypeSum:
				for k := 0; k < m.Sum().DataPoints().Len(); k++ {
					if dp := m.Sum().DataPoints().At(k); match(dp.Attributes().AsRaw()) {
						return pmetric.NewHistogramDataPoint(), dp, true
					}
				}
			}
		}
	}
	return pmetric.NewHistogramDataPoint(), pmetric.NewNumberDataPoint(), false
}

func TestMetrics(t *testing.T) {
	c, _, tel := newTestConnector(t, defaultConfig())
	require.NoError(t, c.Start(t.Context(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, c.Shutdown(context.Background())) })

	// Two sessions of one model: one series per token type, not per session.
	// s1: prompt at 0, a response streamed over two records (usage on the
	// second, at 3 s), a tool result at 5, the next response at 9 (4 s).
	first := response("s1", "a1", "r1", 2, 0, 0, 0)
	first.TokensInput, first.TokensOutput = nil, nil
	toolRes := ev("s1", "t1", agentevent.TypeToolResult, 5)
	failed := response("s2", "b2", "r3", 21, 100, 0, 0)
	failed.ErrorType = "api_error"
	correction := response("s1", "a4", "r2", 12, 0, 5, 0.0001)
	correction.TokensInput = nil
	agentevent.SetAttr(&correction, agentevent.AttrUsageCarrier, agentevent.UsageCarrierCorrection)
	logs := agentevent.EncodeLogs([]agentevent.Event{
		ev("s1", "u1", agentevent.TypeUserMessage, 0), first, response("s1", "a2", "r1", 3, 1000, 50, 0.01),
		toolRes, response("s1", "a3", "r2", 9, 3000, 150, 0.03),
		ev("s2", "u2", agentevent.TypeUserMessage, 20), failed, correction,
	}, "")
	logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().AppendEmpty().Body().SetStr("not an event")
	require.NoError(t, c.ConsumeLogs(t.Context(), logs))

	md := c.metrics()
	for _, m := range []string{agentevent.MetricTokenUsage, agentevent.MetricOperationDuration, agentevent.MetricCostUSD} {
		found := false
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			rm := md.ResourceMetrics().At(i)
			assert.Equal(t, map[string]any{"service.name": "claude-code"}, rm.Resource().Attributes().AsRaw())
			ms := rm.ScopeMetrics().At(0).Metrics()
			for j := 0; j < ms.Len(); j++ {
				if ms.At(j).Name() == m {
					found = true
				}
			}
		}
		assert.True(t, found, m)
	}
	series := map[string]any{
		"service.name": "claude-code", "gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
		"gen_ai.request.model": "claude-opus-4-6", "gen_ai.response.model": "claude-opus-4-6",
	}
	with := func(k string, v any) map[string]any {
		m := map[string]any{k: v}
		maps.Copy(m, series)
		return m
	}
	in, _, ok := point(t, md, agentevent.MetricTokenUsage, with("gen_ai.token.type", "input"))
	require.True(t, ok)
	assert.Equal(t, uint64(3), in.Count())
	assert.Equal(t, float64(4100), in.Sum())
	assert.Equal(t, pmetric.AggregationTemporalityCumulative, md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0).Histogram().AggregationTemporality())
	assert.Equal(t, 0, in.Exemplars().Len(), "exemplars are off by default")
	out, _, ok := point(t, md, agentevent.MetricTokenUsage, with("gen_ai.token.type", "output"))
	require.True(t, ok)
	assert.Equal(t, float64(205), out.Sum(), "a correction's output counts")
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		ms := md.ResourceMetrics().At(i).ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			var attrs []map[string]any
			switch ms.At(j).Type() {
			case pmetric.MetricTypeHistogram:
				for k := 0; k < ms.At(j).Histogram().DataPoints().Len(); k++ {
					attrs = append(attrs, ms.At(j).Histogram().DataPoints().At(k).Attributes().AsRaw())
				}
			case pmetric.MetricTypeSum:
				for k := 0; k < ms.At(j).Sum().DataPoints().Len(); k++ {
					attrs = append(attrs, ms.At(j).Sum().DataPoints().At(k).Attributes().AsRaw())
				}
			}
			for _, a := range attrs {
				assert.NotContains(t, a, agentevent.AttrSessionID, "no session dimension")
				assert.NotContains(t, a, agentevent.AttrResponseID)
			}
		}
	}

	dur, _, ok := point(t, md, agentevent.MetricOperationDuration, series)
	require.True(t, ok)
	assert.Equal(t, uint64(2), dur.Count(), "one duration per response; the correction is none")
	assert.Equal(t, 7.0, dur.Sum(), "3 s from the prompt, 4 s from the tool result")
	failedDur, _, ok := point(t, md, agentevent.MetricOperationDuration, with("error.type", "api_error"))
	require.True(t, ok)
	assert.Equal(t, 1.0, failedDur.Sum())

	_, cost, ok := point(t, md, agentevent.MetricCostUSD, with("agent.usage.cost_source", "table"))
	require.True(t, ok)
	assert.InDelta(t, 0.0401, cost.DoubleValue(), 1e-12)

	metadatatest.AssertEqualAgentMetricsInputDropped(t, tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("reason", dropNotAgentEvent))},
	}, metricdatatest.IgnoreTimestamp())
}

func TestExemplars(t *testing.T) {
	cfg := defaultConfig()
	cfg.Exemplars.Enabled = true
	c, _, _ := newTestConnector(t, cfg)
	require.NoError(t, c.ConsumeLogs(t.Context(), agentevent.EncodeLogs([]agentevent.Event{
		ev("s1", "u1", agentevent.TypeUserMessage, 0), response("s1", "a1", "r1", 2, 10, 5, 0),
	}, "")))
	in, _, ok := point(t, c.metrics(), agentevent.MetricTokenUsage, map[string]any{"gen_ai.token.type": "input"})
	require.True(t, ok)
	require.Equal(t, 1, in.Exemplars().Len())
	assert.Equal(t, 10.0, in.Exemplars().At(0).DoubleValue())
	assert.Equal(t, map[string]any{agentevent.AttrSessionID: "s1"}, in.Exemplars().At(0).FilteredAttributes().AsRaw())
}

func TestSeriesLimit(t *testing.T) {
	cfg := defaultConfig()
	cfg.MaxSeries = 2
	c, _, tel := newTestConnector(t, cfg)
	a := response("s1", "a1", "r1", 2, 10, 5, 0)
	b := response("s1", "b1", "r2", 3, 10, 5, 0)
	b.Model = "gpt-5"
	require.NoError(t, c.ConsumeLogs(t.Context(), agentevent.EncodeLogs([]agentevent.Event{a, b}, "")))
	assert.Equal(t, 2, c.metrics().DataPointCount(), "input and output of the first model")
	metadatatest.AssertEqualAgentMetricsInputDropped(t, tel, []metricdata.DataPoint[int64]{
		{Value: 3, Attributes: attribute.NewSet(attribute.String("reason", dropSeriesLimit))},
	}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualAgentMetricsSeries(t, tel, []metricdata.DataPoint[int64]{{Value: 2}}, metricdatatest.IgnoreTimestamp())
}

// TestFlushes: the metrics go out on the interval, cumulative, and once
// more at shutdown.
func TestFlushes(t *testing.T) {
	cfg := defaultConfig()
	cfg.MetricsFlushInterval = 10 * time.Millisecond
	c, _, _ := newTestConnector(t, cfg)
	require.NoError(t, c.Shutdown(t.Context()), "shutdown before start")
	c, sink, _ := newTestConnector(t, cfg)
	require.NoError(t, c.Start(t.Context(), componenttest.NewNopHost()))
	require.NoError(t, c.ConsumeLogs(t.Context(), agentevent.EncodeLogs([]agentevent.Event{response("s1", "a1", "r1", 2, 10, 5, 0)}, "")))
	require.Eventually(t, func() bool { return len(sink.AllMetrics()) >= 2 }, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, c.ConsumeLogs(t.Context(), agentevent.EncodeLogs([]agentevent.Event{response("s2", "a1", "r1", 2, 20, 5, 0)}, "")))
	require.NoError(t, c.Shutdown(t.Context()))
	require.NoError(t, c.Shutdown(t.Context()))
	all := sink.AllMetrics()
	in, _, ok := point(t, all[len(all)-1], agentevent.MetricTokenUsage, map[string]any{"gen_ai.token.type": "input"})
	require.True(t, ok)
	assert.Equal(t, 30.0, in.Sum(), "cumulative")
}

// TestTokensEqualEvents: over every golden case of every agent, the token
// histograms' sums equal the tokens summed over the events, per agent.
func TestTokensEqualEvents(t *testing.T) {
	root := filepath.Join("..", "..", "testdata")
	agents, err := os.ReadDir(root)
	require.NoError(t, err)
	cases := 0
	for _, a := range agents {
		if !a.IsDir() {
			continue
		}
		dirs, err := filepath.Glob(filepath.Join(root, a.Name(), "*", "events.yaml"))
		require.NoError(t, err)
		for _, f := range dirs {
			t.Run(filepath.Base(filepath.Dir(f)), func(t *testing.T) {
				logs, err := golden.ReadLogs(f)
				require.NoError(t, err)
				evs, _ := agentevent.DecodeLogs(logs)
				var wantIn, wantOut int64
				service := ""
				for _, e := range evs {
					service = e.Source.ServiceName()
					wantIn += agentevent.Value(e.TokensInput)
					wantOut += agentevent.Value(e.TokensOutput)
				}
				c, _, _ := newTestConnector(t, defaultConfig())
				require.NoError(t, c.ConsumeLogs(t.Context(), logs))
				md := c.metrics()
				var gotIn, gotOut float64
				for i := 0; i < md.ResourceMetrics().Len(); i++ {
					rm := md.ResourceMetrics().At(i)
					svc, _ := rm.Resource().Attributes().Get("service.name")
					assert.Equal(t, service, svc.Str())
					ms := rm.ScopeMetrics().At(0).Metrics()
					for j := 0; j < ms.Len(); j++ {
						if ms.At(j).Name() != agentevent.MetricTokenUsage {
							continue
						}
						dps := ms.At(j).Histogram().DataPoints()
						for k := 0; k < dps.Len(); k++ {
							typ, _ := dps.At(k).Attributes().Get("gen_ai.token.type")
							if typ.Str() == tokenInput {
								gotIn += dps.At(k).Sum()
							} else {
								gotOut += dps.At(k).Sum()
							}
						}
					}
				}
				assert.Equal(t, float64(wantIn), gotIn, "input tokens")
				assert.Equal(t, float64(wantOut), gotOut, "output tokens")
			})
			cases++
		}
	}
	assert.Greater(t, cases, 20)
}
