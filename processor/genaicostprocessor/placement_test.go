// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package genaicostprocessor

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/agentotel/agentotel/connector/agentspanconnector"
	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/processor/genaicostprocessor/internal/metadata"
)

const (
	placementLogs   = "logs pipeline (agent_log → gen_ai_cost → agent_span)"
	placementTraces = "traces pipeline (agent_span → gen_ai_cost)"
)

// placementCost is what the chat spans of one placement carry.
type placementCost struct {
	sessions map[string]float64 // session id → the cost of its chat spans
	sources  map[string]int     // agent.usage.cost_source → chat spans
	writes1h int64              // 1-hour cache writes on the chat spans
}

// placementCosts runs events through agent_span with gen_ai_cost in either
// placement and returns each placement's chat span costs.
func placementCosts(t *testing.T, cfg *Config, events ...[]agentevent.Event) map[string]placementCost {
	var batches []plog.Logs
	for _, evs := range events {
		batches = append(batches, agentevent.EncodeLogs(evs, ""))
	}
	return placementCostsOf(t, cfg, batches)
}

func placementCostsOf(t *testing.T, cfg *Config, batches []plog.Logs) map[string]placementCost {
	ctx := t.Context()
	host := componenttest.NewNopHost()
	cf, pf := agentspanconnector.NewFactory(), NewFactory()
	out := map[string]placementCost{}

	// Logs pipeline: the events priced, then made spans.
	spans := new(consumertest.TracesSink)
	conn, err := cf.CreateLogsToTraces(ctx, connectortest.NewNopSettings(cf.Type()), cf.CreateDefaultConfig(), spans)
	require.NoError(t, err)
	lp, err := pf.CreateLogs(ctx, processortest.NewNopSettings(metadata.Type), cfg, conn)
	require.NoError(t, err)
	require.NoError(t, conn.Start(ctx, host))
	require.NoError(t, lp.Start(ctx, host))
	for _, b := range batches {
		c := plog.NewLogs()
		b.CopyTo(c)
		require.NoError(t, lp.ConsumeLogs(ctx, c))
	}
	require.NoError(t, lp.Shutdown(ctx))
	require.NoError(t, conn.Shutdown(ctx)) // closes the turns still open
	out[placementLogs] = chatCosts(spans.AllTraces())

	// Traces pipeline: the events made spans, then the chat spans priced.
	priced := new(consumertest.TracesSink)
	tp, err := pf.CreateTraces(ctx, processortest.NewNopSettings(metadata.Type), cfg, priced)
	require.NoError(t, err)
	conn, err = cf.CreateLogsToTraces(ctx, connectortest.NewNopSettings(cf.Type()), cf.CreateDefaultConfig(), tp)
	require.NoError(t, err)
	require.NoError(t, tp.Start(ctx, host))
	require.NoError(t, conn.Start(ctx, host))
	for _, b := range batches {
		c := plog.NewLogs()
		b.CopyTo(c)
		require.NoError(t, conn.ConsumeLogs(ctx, c))
	}
	require.NoError(t, conn.Shutdown(ctx))
	require.NoError(t, tp.Shutdown(ctx))
	out[placementTraces] = chatCosts(priced.AllTraces())
	return out
}

func chatCosts(all []ptrace.Traces) placementCost {
	c := placementCost{sessions: map[string]float64{}, sources: map[string]int{}}
	for _, td := range all {
		forEachSpan(td, func(s ptrace.Span) {
			a := s.Attributes()
			if op, _ := a.Get(agentevent.AttrOperationName); op.Str() != opChat {
				return
			}
			if v, ok := a.Get(agentevent.AttrTokensCacheCreation1h); ok {
				c.writes1h += v.Int()
			}
			v, ok := a.Get(agentevent.AttrCostUSD)
			if !ok {
				return
			}
			sess, _ := a.Get(agentevent.AttrSessionID)
			c.sessions[sess.Str()] += v.Double()
			src, _ := a.Get(agentevent.AttrCostSource)
			c.sources[src.Str()]++
		})
	}
	return c
}

// TestPlacementsAgree: over every golden case of testdata (the events the
// receiver makes of real files, every agent), gen_ai_cost in the logs
// pipeline and in the traces pipeline give every session the same dollars.
func TestPlacementsAgree(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "testdata", "*", "*", "events.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	sessions := 0
	for _, f := range files {
		name, _ := filepath.Rel(filepath.Join(repoRoot(t), "testdata"), filepath.Dir(f))
		t.Run(name, func(t *testing.T) {
			logs, err := golden.ReadLogs(f)
			require.NoError(t, err)
			got := placementCostsOf(t, createDefaultConfig().(*Config), []plog.Logs{logs})
			byLogs, byTraces := got[placementLogs], got[placementTraces]
			evs, _ := agentevent.DecodeLogs(logs)
			var writes1h int64
			for _, ev := range evs {
				if v, ok := ev.Attributes[agentevent.AttrTokensCacheCreation1h].(int64); ok {
					writes1h += v
				}
			}
			// The traces placement can only price what the chat spans carry:
			// agent_span puts all of a response's usage on its chat span.
			assert.Equal(t, writes1h, byTraces.writes1h, "1-hour cache write tokens: events and traces-pipeline chat spans")
			assert.Equal(t, byLogs.sources, byTraces.sources, "chat spans by cost source")
			for sess, c := range byLogs.sessions {
				assert.LessOrEqualf(t, math.Abs(c-byTraces.sessions[sess]), 1e-9, "session %s: $%.6f in the logs pipeline, $%.6f in the traces pipeline", sess, c, byTraces.sessions[sess])
			}
			for sess, c := range byTraces.sessions {
				_, ok := byLogs.sessions[sess]
				assert.Truef(t, ok, "session %s: $%.6f in the traces pipeline only", sess, c)
			}
			sessions += len(byLogs.sessions)
		})
	}
	assert.Positive(t, sessions, "priced sessions")
}
