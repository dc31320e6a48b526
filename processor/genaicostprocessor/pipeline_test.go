// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package genaicostprocessor

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/agentotel/agentotel/connector/agentspanconnector"
	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/processor/genaicostprocessor/internal/metadata"
)

// TestLogsPipelineRollUp: gen_ai_cost between agent_log's records and agent_span, as the
// recipes place it. Over the Claude Code golden cases, every chat span carries the cost of its
// response and where it came from, and the turn roots' agent.turn.usage.cost_usd add up to the
// cost of all the events.
func TestLogsPipelineRollUp(t *testing.T) {
	ctx := t.Context()
	traces := new(consumertest.TracesSink)
	cf := agentspanconnector.NewFactory()
	conn, err := cf.CreateLogsToTraces(ctx, connectortest.NewNopSettings(cf.Type()), cf.CreateDefaultConfig(), traces)
	require.NoError(t, err)
	events := new(consumertest.LogsSink)
	proc, err := NewFactory().CreateLogs(ctx, processortest.NewNopSettings(metadata.Type), createDefaultConfig(), tee{events, conn})
	require.NoError(t, err)
	host := componenttest.NewNopHost()
	require.NoError(t, conn.Start(ctx, host))
	require.NoError(t, proc.Start(ctx, host))

	files, err := filepath.Glob(filepath.Join(repoRoot(t), "testdata", "claude_code", "*", "events.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		logs, err := golden.ReadLogs(f)
		require.NoError(t, err)
		require.NoError(t, proc.ConsumeLogs(ctx, logs))
	}
	require.NoError(t, proc.Shutdown(ctx))
	require.NoError(t, conn.Shutdown(ctx)) // closes the turns still open

	var eventCost float64
	for _, l := range events.AllLogs() {
		evs, _ := agentevent.DecodeLogs(l)
		for _, ev := range evs {
			if ev.CostUSD != nil {
				eventCost += *ev.CostUSD
			}
		}
	}
	require.Positive(t, eventCost)
	var chatCost, rootCost float64
	chats := 0
	for _, td := range traces.AllTraces() {
		forEachSpan(td, func(s ptrace.Span) {
			a := s.Attributes()
			op, _ := a.Get("gen_ai.operation.name")
			switch {
			case op.Str() == "chat":
				if v, ok := a.Get(agentevent.AttrCostUSD); ok {
					chats++
					chatCost += v.Double()
					src, _ := a.Get(agentevent.AttrCostSource)
					assert.Equal(t, SourceTable, src.Str(), "chat span %s", s.Name())
				}
			case op.Str() == "invoke_agent" && s.ParentSpanID().IsEmpty():
				if v, ok := a.Get(agentevent.AttrTurnCostUSD); ok {
					rootCost += v.Double()
				}
			}
		})
	}
	assert.Positive(t, chats)
	assert.InDelta(t, eventCost, chatCost, 1e-9, "every priced response is on a chat span")
	assert.InDelta(t, eventCost, rootCost, 1e-9, "the turn roots sum their runs' cost")
}

// tee hands a copy of the logs to a sink and the logs to the next consumer.
type tee struct {
	sink *consumertest.LogsSink
	next consumer.Logs
}

func (tee) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (t tee) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	c := plog.NewLogs()
	ld.CopyTo(c)
	if err := t.sink.ConsumeLogs(ctx, c); err != nil {
		return err
	}
	return t.next.ConsumeLogs(ctx, ld)
}

func forEachSpan(td ptrace.Traces, f func(ptrace.Span)) {
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		sss := td.ResourceSpans().At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			for k := 0; k < sss.At(j).Spans().Len(); k++ {
				f(sss.At(j).Spans().At(k))
			}
		}
	}
}
