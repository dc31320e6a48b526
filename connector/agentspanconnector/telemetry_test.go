// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/metadatatest"
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
	require.NoError(t, c.ConsumeLogs(context.Background(), logs))
	// Turn 1 again (a re-read): its two events are at or below the thread's
	// emitted mark, so they are skipped as replayed (before they make spans).
	again := newSession("s1")
	require.NoError(t, c.ConsumeLogs(context.Background(), agentevent.EncodeLogs([]agentevent.Event{again.prompt("p1", 0), again.answer("a1", "m1", 1)}, "")))

	metadatatest.AssertEqualAgentSpanTurnsEmitted(t, tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("turn_status", statusCompleted))},
	}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualAgentSpanSpansEmitted(t, tel, []metricdata.DataPoint[int64]{{Value: 2}}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualAgentSpanInputDropped(t, tel, []metricdata.DataPoint[int64]{
		{Value: 1, Attributes: attribute.NewSet(attribute.String("reason", dropNotAgentEvent))},
		{Value: 1, Attributes: attribute.NewSet(attribute.String("reason", dropMalformed))},
		{Value: 2, Attributes: attribute.NewSet(attribute.String("reason", dropReplayed))},
	}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualAgentSpanOpenTurns(t, tel, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp())
	require.NoError(t, c.Shutdown(context.Background()))
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
		require.NotPanics(t, func() { require.NoError(t, c.ConsumeLogs(context.Background(), ld)) })
	}

	metadatatest.AssertEqualAgentSpanInputDropped(t, tel, []metricdata.DataPoint[int64]{
		{Value: 2, Attributes: attribute.NewSet(attribute.String("reason", dropMalformed))},
	}, metricdatatest.IgnoreTimestamp())
	warned := logs.FilterField(zap.String("reason", dropMalformed)).All()
	require.Len(t, warned, 1, "logged once")
	assert.Equal(t, "s1.jsonl:7", warned[0].ContextMap()["first_record"])
	assert.NotEmpty(t, warned[0].ContextMap()["first"])
	require.NoError(t, c.Shutdown(context.Background()))
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
		require.NoError(t, c.ConsumeLogs(context.Background(), ld))
	}

	s := newSession("s1")
	consume(false, s.prompt("p1", 0), s.answer("a1", "m1", 1), s.prompt("p2", 2))
	consume(true, s.answer("a2", "m2", 3, endMarker(agentevent.TurnEndCompleted)))
	consume(true, s.prompt("p3", 4), s.answer("a3", "m3", 5))
	now = now.Add(5 * time.Minute)
	c.tick(context.Background())

	var got []string
	for _, e := range logs.FilterMessage("Turn emitted").All() {
		m := e.ContextMap()
		assert.Equal(t, "s1", m["session"])
		got = append(got, fmt.Sprintf("%s %s", m["prompt"], m["reason"]))
	}
	assert.Equal(t, []string{"p1 next_prompt", "p2 end_marker", "p3 idle"}, got)
}
