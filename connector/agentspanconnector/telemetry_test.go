// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
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
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/metadatatest"
	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
	"github.com/agentotel/agentotel/internal/agentevent"
)

func TestTelemetry(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	cfg := createDefaultConfig().(*Config)
	c, err := newConnector(metadatatest.NewSettings(tel), cfg, new(consumertest.TracesSink))
	require.NoError(t, err)
	now := t0.Add(time.Minute)
	c.now = func() time.Time { return now }

	s := newSession("s1")
	logs := agentevent.EncodeLogs([]agentevent.Event{
		s.prompt("p1", 0), s.answer("a1", "m1", 1), s.prompt("p2", 2), s.call("c2", "m2", "t2", "Bash", 3),
	}, "")
	logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().AppendEmpty().Body().SetStr("not an event")
	// An agent event whose agent.raw is a string: skipped as malformed, never a panic.
	bad := logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().AppendEmpty()
	agentevent.Encode(s.answer("x1", "m9", 4), bad)
	bad.Attributes().PutStr(agentevent.AttrRaw, "{}")
	require.NoError(t, c.ConsumeLogs(t.Context(), logs))
	// Turn 1 again (a re-read): its two events are at or below the thread's
	// emitted mark, so they are skipped as replayed (before they make spans).
	again := newSession("s1")
	require.NoError(t, c.ConsumeLogs(t.Context(), agentevent.EncodeLogs([]agentevent.Event{again.prompt("p1", 0), again.answer("a1", "m1", 1)}, "")))

	metadatatest.AssertEqualAgentSpanTurnsEmitted(t, tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("turn_status", spanmodel.StatusCompleted))},
	}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualAgentSpanSpansEmitted(t, tel, []metricdata.DataPoint[int64]{{Value: 2}}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualAgentSpanInputDropped(t, tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("reason", dropNotAgentEvent))},
		{Value: 1, Attributes: attribute.NewSet(attribute.String("reason", dropMalformed))},
		{Value: 2, Attributes: attribute.NewSet(attribute.String("reason", dropReplayed))},
	}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualAgentSpanOpenTurns(t, tel, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp())
	require.NoError(t, c.Shutdown(t.Context()))
}

// TestMalformedEventsAreLoggedOnce: agent events of the wrong shape in two
// batches are each counted and skipped, and logged once, naming the file
// and line of the first.
func TestMalformedEventsAreLoggedOnce(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	core, logs := observer.New(zap.WarnLevel)
	set := metadatatest.NewSettings(tel)
	set.Logger = zap.New(core)
	c, err := newConnector(set, createDefaultConfig().(*Config), new(consumertest.TracesSink))
	require.NoError(t, err)
	c.now = func() time.Time { return t0.Add(time.Minute) }

	s := newSession("s1")
	for i, line := range []int{7, 9} {
		ld := agentevent.EncodeLogs([]agentevent.Event{s.prompt(fmt.Sprintf("p%d", i), float64(i))}, "")
		bad := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().AppendEmpty()
		ev := s.answer(fmt.Sprintf("x%d", i), "m9", float64(i)+0.5)
		ev.LogFile, ev.LogLine = "s1.jsonl", int64(line)
		agentevent.Encode(ev, bad)
		bad.Attributes().PutStr(agentevent.AttrRaw, "{}") // bytes written, a string found
		require.NotPanics(t, func() { require.NoError(t, c.ConsumeLogs(t.Context(), ld)) })
	}

	metadatatest.AssertEqualAgentSpanInputDropped(t, tel, []metricdata.DataPoint[int64]{
		{Value: 2, Attributes: attribute.NewSet(attribute.String("reason", dropMalformed))},
	}, metricdatatest.IgnoreTimestamp())
	warned := logs.FilterField(zap.String("reason", dropMalformed)).All()
	require.Len(t, warned, 1, "logged once")
	assert.Equal(t, "s1.jsonl:7", warned[0].ContextMap()["first_record"])
	assert.NotEmpty(t, warned[0].ContextMap()["first"])
	require.NoError(t, c.Shutdown(t.Context()))
}

// TestDebugLogSaysWhyEachTurnClosed: at debug level every emitted turn is
// logged with what closed it (the live benchmark reports it per turn).
func TestDebugLogSaysWhyEachTurnClosed(t *testing.T) {
	core, logs := observer.New(zap.DebugLevel)
	set := metadatatest.NewSettings(componenttest.NewTelemetry())
	set.Logger = zap.New(core)
	c, err := newConnector(set, createDefaultConfig().(*Config), new(consumertest.TracesSink))
	require.NoError(t, err)
	now := t0.Add(time.Minute)
	c.now = func() time.Time { return now }
	consume := func(caughtUp bool, evs ...agentevent.Event) {
		ld := agentevent.EncodeLogs(evs, "")
		if caughtUp {
			ld = markCaughtUp(ld)
		}
		require.NoError(t, c.ConsumeLogs(t.Context(), ld))
	}

	s := newSession("s1")
	consume(false, s.prompt("p1", 0), s.answer("a1", "m1", 1), s.prompt("p2", 2))
	consume(true, s.answer("a2", "m2", 3, endMarker(agentevent.TurnEndCompleted)))
	consume(true, s.prompt("p3", 4), s.answer("a3", "m3", 5))
	now = now.Add(5 * time.Minute)
	c.tick(t.Context())

	var got []string
	for _, e := range logs.FilterMessage("Turn emitted").All() {
		m := e.ContextMap()
		assert.Equal(t, "s1", m["session"])
		got = append(got, fmt.Sprintf("%s %s", m["prompt"], m["reason"]))
	}
	assert.Equal(t, []string{"p1 next_prompt", "p2 end_marker", "p3 idle"}, got)
}

// interruptedTurn is a Claude Code turn p1 with a Bash call, ended by the
// user's interrupt (its end marker).
func interruptedTurn(s *session) []agentevent.Event {
	return []agentevent.Event{
		s.prompt("p1", 0), s.call("c1", "m1", "toolu_1", "Bash", 1), s.result("r1", "toolu_1", "Bash", 2),
		s.ev(agentevent.TypeSystemMessage, "int1", 3, text("[Request interrupted by user]"), endMarker(agentevent.TurnEndInterrupted)),
	}
}

// TestRowsAfterTheTurnWentOut: a Claude Code turn interrupted by the user
// (the interrupt row is its end marker) goes out as soon as the reader has
// caught up; the rows Claude Code writes after it — the next prompt's
// file-history-snapshot, a local-command caveat (a system message) — come
// in a later poll, belong to the emitted turn and make no span of their
// own: they are counted as input_dropped{reason="after_turn"} and logged,
// and nothing else is emitted. They carry no usage.
func TestRowsAfterTheTurnWentOut(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	core, logs := observer.New(zap.DebugLevel)
	set := metadatatest.NewSettings(tel)
	set.Logger = zap.New(core)
	sink := new(consumertest.TracesSink)
	c, err := newConnector(set, createDefaultConfig().(*Config), sink)
	require.NoError(t, err)
	now := t0.Add(time.Minute)
	c.now = func() time.Time { return now }

	s := newSession("s1")
	require.NoError(t, c.ConsumeLogs(t.Context(), markCaughtUp(agentevent.EncodeLogs(interruptedTurn(s), "h"))))
	emitted := sink.SpanCount()
	require.Positive(t, emitted, "the interrupted turn went out on its end marker")

	late := []agentevent.Event{
		s.ev(agentevent.TypeFileSnapshot, "fhs1", 4, func(e *agentevent.Event) { e.Text = "snapshot of 0 files" }),
		s.ev(agentevent.TypeSystemMessage, "caveat1", 4.5, func(e *agentevent.Event) {
			e.Text = "Caveat: the messages below were generated by the user while running local commands."
		}),
	}
	for _, ev := range late {
		require.Nil(t, ev.TokensInput, "rows after the turn carry no usage")
		require.Equal(t, "p1", ev.ParentEventID, "the row belongs to the emitted turn")
	}
	require.NoError(t, c.ConsumeLogs(t.Context(), markCaughtUp(agentevent.EncodeLogs(late, "h"))))
	now = now.Add(time.Hour)
	c.tick(t.Context())
	require.NoError(t, c.Shutdown(t.Context()))
	assert.Equal(t, emitted, sink.SpanCount(), "nothing more is emitted")

	metadatatest.AssertEqualAgentSpanInputDropped(t, tel, []metricdata.DataPoint[int64]{
		{Value: 2, Attributes: attribute.NewSet(attribute.String("reason", dropAfterTurn))},
	}, metricdatatest.IgnoreTimestamp())
	debug := logs.FilterMessage("Rows of a turn that went out already made no span and were dropped").All()
	require.Len(t, debug, 1)
	assert.Equal(t, "s1", debug[0].ContextMap()["session"])
	assert.Equal(t, "p1", debug[0].ContextMap()["prompt"])
	assert.Equal(t, "fhs1", debug[0].ContextMap()["first_event"])
	assert.Equal(t, int64(2), debug[0].ContextMap()["count"])
	assert.Equal(t, 1, logs.FilterField(zap.String("reason", dropAfterTurn)).Len(), "one warning")
}

// TestDropsOfARefusedBatchCountOnce: a batch whose spans the next consumer
// refuses comes again from the receiver. With storage, what it drops (an
// event delivered again, the rows after a turn that went out) is counted
// when the batch is kept, once, not at each delivery. Without storage the
// refused pass is kept (nothing to go back to): its drops count then, and
// the retry's events are all replays.
func TestDropsOfARefusedBatchCountOnce(t *testing.T) {
	for _, tc := range []struct {
		name                string
		storage             bool
		replayed, afterTurn int64
	}{
		{"storage", true, 1, 2},
		{"no storage", false, 1 + 6, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tel := componenttest.NewTelemetry()
			t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
			next := &refusing{}
			cfg := createDefaultConfig().(*Config)
			host := componenttest.NewNopHost()
			if tc.storage {
				id := storagetest.NewStorageID("state")
				cfg.Storage = &id
				host = storagetest.NewStorageHost().WithFileBackedStorageExtension("state", t.TempDir())
			}
			c, err := newConnector(metadatatest.NewSettings(tel), cfg, next)
			require.NoError(t, err)
			require.NoError(t, c.Start(t.Context(), host))
			now := t0.Add(time.Minute)
			c.now = func() time.Time { return now }

			s := newSession("s1")
			first := interruptedTurn(s)
			require.NoError(t, c.ConsumeLogs(t.Context(), markCaughtUp(agentevent.EncodeLogs(first, "h"))))
			require.Positive(t, next.SpanCount(), "the interrupted turn went out")

			// An event of the emitted turn again, two rows of it, then a
			// second turn that ends at once: the batch has spans, which the
			// next consumer refuses the first time.
			batch := markCaughtUp(agentevent.EncodeLogs([]agentevent.Event{
				first[2],
				s.ev(agentevent.TypeFileSnapshot, "fhs1", 4, func(e *agentevent.Event) { e.Text = "snapshot of 0 files" }),
				s.ev(agentevent.TypeSystemMessage, "caveat1", 4.5, func(e *agentevent.Event) { e.Text = "Caveat: local commands." }),
				s.prompt("p2", 5), s.answer("a2", "m2", 6),
				s.ev(agentevent.TypeSystemMessage, "int2", 7, text("[Request interrupted by user]"), endMarker(agentevent.TurnEndInterrupted)),
			}, "h"))
			next.refuse = true
			require.Error(t, c.ConsumeLogs(t.Context(), batch))
			next.refuse = false
			require.NoError(t, c.ConsumeLogs(t.Context(), batch)) // the receiver's retry
			require.NoError(t, c.Shutdown(t.Context()))

			metadatatest.AssertEqualAgentSpanInputDropped(t, tel, []metricdata.DataPoint[int64]{
				{Value: tc.afterTurn, Attributes: attribute.NewSet(attribute.String("reason", dropAfterTurn))},
				{Value: tc.replayed, Attributes: attribute.NewSet(attribute.String("reason", dropReplayed))},
			}, metricdatatest.IgnoreTimestamp())
		})
	}
}

// TestNativeCoveredEventsMakeNoTrace: events agent_native marks as covered
// by the agent's own spans are counted and build no turn; the same session's
// unmarked events still do.
func TestNativeCoveredEventsMakeNoTrace(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := metadatatest.NewSettings(tel)
	sink := new(consumertest.TracesSink)
	c, err := newConnector(set, createDefaultConfig().(*Config), sink)
	require.NoError(t, err)
	now := t0.Add(time.Hour)
	c.now = func() time.Time { return now }

	covered := func(e *agentevent.Event) { agentevent.SetAttr(e, agentevent.AttrNativeCovered, true) }
	s := newSession("s1")
	turn1 := []agentevent.Event{
		s.prompt("p1", 0, covered),
		s.answer("a1", "r1", 1, tokens(10, 5), covered),
	}
	turn2 := []agentevent.Event{
		s.prompt("p2", 2),
		s.answer("a2", "r2", 3, tokens(20, 7)),
	}
	require.NoError(t, c.ConsumeLogs(t.Context(), markCaughtUp(agentevent.EncodeLogs(append(turn1, turn2...), "h"))))
	require.NoError(t, c.Shutdown(t.Context()))

	var spans []ptrace.Span
	for _, td := range sink.AllTraces() {
		spans = append(spans, allSpans(td)...)
	}
	require.Len(t, roots(spans), 1, "only the uncovered turn becomes a trace")
	var inputs []any
	for _, sp := range spans {
		if v, ok := sp.Attributes().Get(agentevent.AttrTokensInput); ok && sp.ParentSpanID() != (pcommon.SpanID{}) {
			inputs = append(inputs, v.Int())
		}
	}
	assert.Equal(t, []any{int64(20)}, inputs, "the one chat span is the uncovered turn's")
	metadatatest.AssertEqualAgentSpanInputDropped(t, tel, []metricdata.DataPoint[int64]{
		{Value: 2, Attributes: attribute.NewSet(attribute.String("reason", dropNativeCovered))},
	}, metricdatatest.IgnoreTimestamp())
}
