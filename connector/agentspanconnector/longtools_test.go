// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/metadata"
	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/metadatatest"
	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
	"github.com/agentotel/agentotel/internal/agentevent"
)

// live feeds events as a live reader would: each at its own time (arrival =
// event time + 1 s), the wall clock ticking every minute in between.
type live struct {
	h    *harness
	last time.Duration
}

func (l *live) at(sec float64, evs ...agentevent.Event) {
	d := time.Duration(sec*float64(time.Second)) + time.Second
	for t := l.last + time.Minute; t < d; t += time.Minute {
		l.h.setNow(t)
		l.h.tick()
	}
	l.h.setNow(d)
	l.h.feed(evs...)
	l.last = d
}

// TestLongBashCallStaysInItsTurn: a Bash call that runs 6 minutes (longer
// than turn_idle_timeout) keeps its turn open; the turn goes out once, whole.
func TestLongBashCallStaysInItsTurn(t *testing.T) {
	h := newHarness(t)
	l := &live{h: h}
	s := newSession("s1")
	l.at(0, s.prompt("p1", 0))
	l.at(1, s.call("c1", "m1", "toolu_1", "Bash", 1))
	l.at(361, s.result("r1", "toolu_1", "Bash", 361))
	require.Empty(t, h.spans(), "the call ran 6 minutes: the turn was not closed meanwhile")
	l.at(362, s.answer("a1", "m2", 362))
	l.at(362 + 6*60) // quiet for turn_idle_timeout after the answer
	spans := h.spans()
	require.Len(t, roots(spans), 1, "one turn, one root")
	root := roots(spans)[0]
	assert.Equal(t, spanmodel.StatusCompleted, attr(root, agentevent.AttrTurnStatus))
	tool := one(t, spans, "execute_tool Bash")
	assert.Equal(t, "success", attr(tool, agentevent.AttrToolStatus))
	assert.Equal(t, ts(361), tool.EndTimestamp())
	assert.Equal(t, ts(362), root.EndTimestamp())
	assert.Len(t, spans, 4, "root, two chats, the tool")
	for _, sp := range spans {
		assert.Equal(t, root.TraceID(), sp.TraceID())
	}
}

// TestFortyMinuteSubagentStaysInItsTurn: a subagent that works 40 minutes,
// quiet for most of it (a long tool call of its own), nests under the call
// that spawned it in one complete turn, although the link to it is known
// only from the Agent call's result at the end (Claude Code).
func TestFortyMinuteSubagentStaysInItsTurn(t *testing.T) {
	h := newHarness(t)
	l := &live{h: h}
	s := newSession("s1")
	x := s.subagent("ag1", "general-purpose")
	l.at(0, s.prompt("p1", 0))
	l.at(1, s.call("c1", "m1", "toolu_agent", "Agent", 1))
	l.at(2, x.prompt("xp", 2))
	l.at(60, x.call("xc", "xm1", "toolu_x1", "Bash", 60))
	l.at(2400, x.result("xr", "toolu_x1", "Bash", 2400))
	l.at(2401, x.answer("xa", "xm2", 2401))
	require.Empty(t, h.spans(), "nothing goes out while the subagent works")
	l.at(2402, s.result("r1", "toolu_agent", "Agent", 2402, func(e *agentevent.Event) { e.SpawnedAgentID = "ag1" }))
	l.at(2403, s.answer("a1", "m2", 2403))
	l.at(2403 + 6*60)
	spans := h.spans()
	require.Len(t, roots(spans), 1, "one turn, one root: the subagent did not go out as its own trace")
	root := roots(spans)[0]
	assert.Equal(t, spanmodel.StatusCompleted, attr(root, agentevent.AttrTurnStatus))
	agent := one(t, spans, "execute_tool Agent")
	sub := one(t, spans, "invoke_agent general-purpose")
	assert.Equal(t, agent.SpanID(), sub.ParentSpanID())
	bash := one(t, spans, "execute_tool Bash")
	assert.Equal(t, sub.SpanID(), bash.ParentSpanID())
	assert.Equal(t, ts(2400), bash.EndTimestamp())
	assert.Equal(t, ts(2403), root.EndTimestamp())
	for _, sp := range spans {
		assert.Equal(t, root.TraceID(), sp.TraceID())
		assert.LessOrEqual(t, sp.EndTimestamp(), root.EndTimestamp(), "the root covers %s", sp.Name())
	}
}

// TestResultAfterMaxOpenToolDurationIsCountedNotEmitted: a call still open
// after max_open_tool_duration closes its turn (abandoned, the tool span
// in_progress); its result, arriving later, is counted and not emitted.
func TestResultAfterMaxOpenToolDurationIsCountedNotEmitted(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	h := newHarness(t, func(c *Config) { c.MaxOpenToolDuration = time.Hour })
	tb, err := metadata.NewTelemetryBuilder(metadatatest.NewSettings(tel).TelemetrySettings)
	require.NoError(t, err)
	h.c.telemetry = tb
	l := &live{h: h}
	s := newSession("s1")
	l.at(0, s.prompt("p1", 0))
	l.at(1, s.call("c1", "m1", "toolu_1", "Bash", 1))
	l.at(3500)
	require.Empty(t, h.spans(), "within max_open_tool_duration")
	l.at(3700)
	spans := h.spans()
	require.Len(t, roots(spans), 1)
	assert.Equal(t, spanmodel.StatusAbandoned, attr(roots(spans)[0], agentevent.AttrTurnStatus))
	assert.Equal(t, spanmodel.StatusInProgress, attr(one(t, spans, "execute_tool Bash"), agentevent.AttrToolStatus))

	l.at(3800, s.result("r1", "toolu_1", "Bash", 3800))
	assert.Len(t, h.spans(), len(spans), "the late result makes no span")
	metadatatest.AssertEqualAgentSpanLateToolResults(t, tel, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatest.IgnoreTimestamp())
}

// TestHistoryTurnWaitsForTheRestOfItsFile: a turn of history whose events
// come in two reads is not closed at the end of the first (its events are
// old, but the reader has more of the file), and comes out whole.
func TestHistoryTurnWaitsForTheRestOfItsFile(t *testing.T) {
	h := newHarness(t)
	h.history()
	s := newSession("s1")
	h.feedPartial(s.prompt("p1", 0), s.call("c1", "m1", "toolu_1", "Bash", 1))
	h.tick()
	assert.Empty(t, h.spans(), "more of the file is coming")
	h.feed(s.result("r1", "toolu_1", "Bash", 2), s.answer("a1", "m2", 3))
	spans := h.spans()
	require.Len(t, roots(spans), 1)
	root := roots(spans)[0]
	assert.Equal(t, spanmodel.StatusCompleted, attr(root, agentevent.AttrTurnStatus))
	assert.Equal(t, ts(3), root.EndTimestamp())
	assert.Len(t, spans, 4)
}

func endMarker(v string) mod {
	return func(e *agentevent.Event) { agentevent.SetAttr(e, agentevent.AttrTurnEnd, v) }
}

// TestVendorEndMarkerDecidesStatusAndClosing: the vendor's end marker
// closes a live turn as soon as the reader has nothing more of the session,
// and its value is the turn's status — even where the idle rule would have
// said abandoned (the last tool output unanswered).
func TestVendorEndMarkerDecidesStatusAndClosing(t *testing.T) {
	for _, tc := range []struct{ marker, want string }{
		{agentevent.TurnEndCompleted, spanmodel.StatusCompleted},
		{agentevent.TurnEndInterrupted, spanmodel.StatusInterrupted},
		{agentevent.TurnEndError, spanmodel.StatusError},
	} {
		t.Run(tc.marker, func(t *testing.T) {
			h := newHarness(t)
			h.setNow(10 * time.Second) // live: the events are seconds old
			s := newSession("s1")
			h.feedPartial(s.prompt("p1", 0), s.call("c1", "m1", "toolu_1", "Bash", 1), s.result("r1", "toolu_1", "Bash", 2))
			h.feedPartial(s.ev(agentevent.TypeMeta, "end", 3, endMarker(tc.marker)))
			assert.Empty(t, h.spans(), "the reader has more of the file: usage may follow the marker")
			h.feed(s.ev(agentevent.TypeMeta, "after", 4))
			spans := h.spans()
			require.Len(t, roots(spans), 1, "closed on the marker once caught up, not after turn_idle_timeout")
			assert.Equal(t, tc.want, attr(roots(spans)[0], agentevent.AttrTurnStatus))
			assert.Equal(t, ts(4), roots(spans)[0].EndTimestamp(), "what followed the marker is in the turn")
		})
	}
}

// TestNoMarkerIdleIsAbandoned: without a marker, a caught-up history turn
// whose last tool output went unanswered is abandoned; the same turn live
// stays open until turn_idle_timeout.
func TestNoMarkerIdleIsAbandoned(t *testing.T) {
	h := newHarness(t)
	h.setNow(10 * time.Second)
	s := newSession("s1")
	h.feed(s.prompt("p1", 0), s.call("c1", "m1", "toolu_1", "Bash", 1), s.result("r1", "toolu_1", "Bash", 2))
	assert.Empty(t, h.spans(), "live and quiet for less than turn_idle_timeout")
	h.setNow(5*time.Minute + 11*time.Second)
	h.tick()
	require.Len(t, roots(h.spans()), 1)
	assert.Equal(t, spanmodel.StatusAbandoned, attr(roots(h.spans())[0], agentevent.AttrTurnStatus))
}

// TestOneFileCaughtUpSaysNothingOfAnother: a Claude Code session has a
// main file and subagent files under one session id. The reader reaching
// the end of a subagent file does not close a turn of the main file it is
// still reading (the faults suite caught that: a turn's end moved with the
// read schedule).
func TestOneFileCaughtUpSaysNothingOfAnother(t *testing.T) {
	h := newHarness(t)
	h.history()
	s := newSession("s1")
	x := s.subagent("ag1", "Explore")
	inFile := func(f string) mod { return func(e *agentevent.Event) { e.LogFile = f } }
	mainFile, subFile := inFile("/p/s1.jsonl"), inFile("/p/s1/subagents/agent-ag1.jsonl")
	h.feedPartial(s.prompt("p1", 0, mainFile), s.answer("a1", "m1", 1, mainFile))
	h.feed(x.prompt("xp", 0.5, subFile), x.answer("xa", "xm1", 0.8, subFile))
	h.tick()
	for _, r := range roots(h.spans()) {
		assert.NotEqual(t, "p1", attr(r, agentevent.AttrEventID), "the main file is not read to its end yet")
	}
	h.feed(s.ev(agentevent.TypeMeta, "q", 5, mainFile), s.prompt("p2", 6, mainFile), s.answer("a2", "m2", 7, mainFile))
	var p1 ptrace.Span
	for _, r := range roots(h.spans()) {
		if attr(r, agentevent.AttrEventID) == "p1" {
			p1 = r
		}
	}
	require.NotEqual(t, ptrace.Span{}, p1, "turn p1 went out")
	assert.Equal(t, ts(5), p1.EndTimestamp(), "with everything of its file up to the next prompt")
}
