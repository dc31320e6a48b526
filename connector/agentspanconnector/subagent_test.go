// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
	"github.com/agentotel/agentotel/internal/agentevent"
)

// spawnTurn is a main turn whose Agent tool call ran subagent "ag1", and the
// subagent's own events (a prompt, a tool call, an answer).
func spawnTurn() (parent, sub []agentevent.Event) {
	s := newSession("s1")
	x := s.subagent("ag1", "Explore")
	parent = []agentevent.Event{
		s.prompt("p1", 0),
		s.call("c1", "m1", "toolu_agent", "Agent", 1),
		s.result("r1", "toolu_agent", "Agent", 30, func(e *agentevent.Event) { e.SpawnedAgentID = "ag1" }),
		s.answer("a1", "m2", 31),
	}
	sub = []agentevent.Event{
		x.prompt("xp", 2),
		x.call("xc", "xm1", "toolu_x1", "Grep", 3),
		x.result("xr", "toolu_x1", "Grep", 4),
		x.answer("xa", "xm2", 29),
	}
	return parent, sub
}

// checkNested asserts the subagent's span hangs under the Agent tool span of
// the parent's trace, with its own children.
func checkNested(t *testing.T, spans []ptrace.Span) { checkNestedUntil(t, spans, 29, true) }

func checkNestedUntil(t *testing.T, spans []ptrace.Span, subEnd float64, spawned bool) {
	t.Helper()
	root := one(t, spans, "invoke_agent claude-code")
	tool := one(t, spans, "execute_tool Agent")
	sub := one(t, spans, "invoke_agent Explore")
	assert.Len(t, roots(spans), 1, "one trace, one root")
	assert.Equal(t, root.TraceID(), sub.TraceID())
	assert.Equal(t, tool.SpanID(), sub.ParentSpanID())
	assert.Equal(t, "ag1", attr(sub, "gen_ai.agent.id"))
	assert.Equal(t, "Explore", attr(sub, "gen_ai.agent.name"))
	assert.Equal(t, ts(2), sub.StartTimestamp())
	assert.Equal(t, ts(subEnd), sub.EndTimestamp())
	if spawned {
		assert.Equal(t, "ag1", attr(tool, agentevent.AttrSpawnedAgentID))
	}
	grep := one(t, spans, "execute_tool Grep")
	assert.Equal(t, sub.SpanID(), grep.ParentSpanID())
	assert.Equal(t, root.TraceID(), grep.TraceID())
	var subChats int
	for _, sp := range named(spans, "chat claude-opus-4-7") {
		assert.Equal(t, root.TraceID(), sp.TraceID())
		if sp.ParentSpanID() == sub.SpanID() {
			subChats++
		}
	}
	assert.Equal(t, 2, subChats)
}

func TestSubagentNesting(t *testing.T) {
	t.Run("subagent first", func(t *testing.T) {
		h := newHarness(t)
		h.history()
		parent, sub := spawnTurn()
		h.feed(sub...)
		assert.Empty(t, h.spans(), "an unlinked subagent waits for its spawning call")
		h.feed(parent...)
		spans := h.spans()
		checkNested(t, spans)
		root := one(t, spans, "invoke_agent claude-code")
		assert.Equal(t, int64(1), attr(root, agentevent.AttrTurnSubagents))
		assert.Equal(t, int64(4), attr(root, agentevent.AttrTurnModelCalls), "the rollup covers the subagent")
		assert.Len(t, h.sink.AllTraces(), 1, "emitted together")
	})
	t.Run("parent first", func(t *testing.T) {
		h := newHarness(t)
		h.history()
		parent, sub := spawnTurn()
		h.feed(parent...)
		assert.Empty(t, h.spans(), "history, but the turn waits for the subagent it spawned (another file)")
		h.feed(sub...)
		spans := h.spans()
		checkNested(t, spans)
		assert.Len(t, h.sink.AllTraces(), 1, "emitted together")
		assert.Equal(t, int64(4), attr(one(t, spans, "invoke_agent claude-code"), agentevent.AttrTurnModelCalls), "the rollup covers the subagent")
	})
	t.Run("subagent never read", func(t *testing.T) {
		h := newHarness(t)
		h.history()
		parent, _ := spawnTurn()
		h.feed(parent...)
		h.setNow(365*24*time.Hour + 5*time.Minute - time.Second)
		h.tick()
		assert.Empty(t, h.spans(), "waits turn_idle_timeout of wall-clock time since the turn's last event arrived")
		h.setNow(365*24*time.Hour + 5*time.Minute)
		h.tick()
		root := one(t, h.spans(), "invoke_agent claude-code")
		assert.Equal(t, int64(0), attr(root, agentevent.AttrTurnSubagents))
		assert.Equal(t, spanmodel.StatusCompleted, attr(root, agentevent.AttrTurnStatus))
	})
	t.Run("same batch", func(t *testing.T) {
		h := newHarness(t)
		h.history()
		parent, sub := spawnTurn()
		h.feed(append(parent[:2:2], append(sub, parent[2:]...)...)...)
		checkNested(t, h.spans())
		assert.Len(t, h.sink.AllTraces(), 1)
	})
	t.Run("live: the subagent keeps its turn open", func(t *testing.T) {
		h := newHarness(t)
		parent, sub := spawnTurn()
		h.setNow(10 * time.Second)
		h.feed(parent[:2]...)
		h.feed(sub[:2]...)
		// The Agent call itself is 6 minutes old, but the subagent it spawned
		// worked until 6m−1s: the turn is not idle.
		h.setNow(6 * time.Minute)
		h.feed(newSession("s1").subagent("ag1", "Explore").ev(agentevent.TypeLog, "xlog", 6*60-1, func(e *agentevent.Event) {
			e.ParentToolCallID = "toolu_agent"
		}))
		h.tick()
		assert.Empty(t, h.spans())
		h.setNow(time.Hour)
		h.feed(parent[2:]...)
		h.feed(sub[2:]...)
		h.tick()
		checkNestedUntil(t, h.spans(), 6*60-1, true)
	})
}

func TestSubagentLinkedByParentToolCallID(t *testing.T) {
	h := newHarness(t)
	h.history()
	parent, sub := spawnTurn()
	parent[2].SpawnedAgentID = ""
	for i := range sub {
		sub[i].ParentToolCallID = "toolu_agent"
	}
	h.feed(sub...)
	h.feed(parent...)
	checkNestedUntil(t, h.spans(), 29, false)
}

func TestUnlinkedSubagentBecomesItsOwnTrace(t *testing.T) {
	h := newHarness(t)
	h.history()
	x := newSession("s1").subagent("warm", "")
	h.feed(x.prompt("w1", 0, text("Warmup")), x.answer("w2", "wm", 1))
	assert.Empty(t, h.spans(), "waits for a spawning call")

	h.setNow(365*24*time.Hour + 5*time.Minute - time.Second)
	h.tick()
	assert.Empty(t, h.spans(), "turn_idle_timeout of wall-clock time since the last event arrived")

	h.setNow(365*24*time.Hour + 5*time.Minute)
	h.tick()
	spans := h.spans()
	require.Len(t, spans, 2)
	root := one(t, spans, "invoke_agent subagent")
	assert.True(t, root.ParentSpanID().IsEmpty())
	assert.Equal(t, spanmodel.OrphanTraceID(threadKey{Source: agentevent.Source("claude_code"), Session: "s1", Agent: "warm"}), root.TraceID())
	assert.Equal(t, "warm", attr(root, "gen_ai.agent.id"))
	assert.Equal(t, spanmodel.StatusCompleted, attr(root, agentevent.AttrTurnStatus))
}

// unspawned marks events the way the Claude Code parser marks a warmup's.
func unspawned(e *agentevent.Event) {
	if e.Attributes == nil {
		e.Attributes = map[string]any{}
	}
	e.Attributes[agentevent.AttrSubagentLink] = agentevent.SubagentLinkNone
}

// A subagent whose events say no tool call spawned it (a Claude Code
// warmup) waits for no claim: once read to the end of its file it closes
// like a turn, by the age of its events, and is the same trace the
// unclaimed wait would have made later.
func TestUnspawnedSubagentClosesLikeATurn(t *testing.T) {
	warmup := func() []agentevent.Event {
		x := newSession("s1").subagent("warm", "")
		evs := []agentevent.Event{x.prompt("w1", 0, text("Warmup")), x.answer("w2", "wm", 1)}
		for i := range evs {
			unspawned(&evs[i])
		}
		return evs
	}
	t.Run("history", func(t *testing.T) {
		h := newHarness(t)
		h.history()
		evs := warmup()
		h.feedPartial(evs[0])
		assert.Empty(t, h.spans(), "more of the file is to come")
		h.feed(evs[1])
		spans := h.spans()
		require.Len(t, spans, 2, "no wall-clock wait once the file is read")
		root := one(t, spans, "invoke_agent subagent")
		assert.True(t, root.ParentSpanID().IsEmpty())
		assert.Equal(t, spanmodel.OrphanTraceID(threadKey{Source: agentevent.Source("claude_code"), Session: "s1", Agent: "warm"}), root.TraceID())
		assert.Equal(t, spanmodel.StatusCompleted, attr(root, agentevent.AttrTurnStatus))
		assert.Len(t, h.sink.AllTraces(), 1)
	})
	t.Run("live closes by the age of its events", func(t *testing.T) {
		h := newHarness(t)
		h.setNow(2 * time.Second)
		h.feed(warmup()...)
		h.setNow(5*time.Minute + time.Second - time.Millisecond)
		h.tick()
		assert.Empty(t, h.spans(), "turn_idle_timeout since its last event has not passed")
		h.setNow(5*time.Minute + time.Second)
		h.tick()
		assert.Len(t, named(h.spans(), "invoke_agent subagent"), 1)
	})
	t.Run("a spawning call that does come still wins", func(t *testing.T) {
		h := newHarness(t)
		parent, sub := spawnTurn()
		for i := range sub {
			unspawned(&sub[i])
		}
		h.setNow(40 * time.Second)
		h.feed(sub...)
		h.tick()
		assert.Empty(t, h.spans(), "live, and its last event is recent")
		h.feed(parent...)
		h.setNow(time.Hour)
		h.tick()
		checkNested(t, h.spans())
	})
}

func TestNestedSubagents(t *testing.T) {
	h := newHarness(t)
	h.history()
	s := newSession("s1")
	x := s.subagent("ag1", "general-purpose")
	y := s.subagent("ag2", "Explore")
	h.feed(
		y.prompt("yp", 3), y.answer("ya", "ym", 4),
		x.prompt("xp", 2), x.call("xc", "xm", "toolu_x", "Task", 2.5),
		x.result("xr", "toolu_x", "Task", 5, func(e *agentevent.Event) { e.SpawnedAgentID = "ag2" }), x.answer("xa", "xm2", 6),
		s.prompt("p1", 0), s.call("c1", "m1", "toolu_a", "Task", 1),
		s.result("r1", "toolu_a", "Task", 7, func(e *agentevent.Event) { e.SpawnedAgentID = "ag1" }), s.answer("a1", "m2", 8),
	)
	spans := h.spans()
	require.Len(t, roots(spans), 1)
	inner := one(t, spans, "invoke_agent Explore")
	outer := one(t, spans, "invoke_agent general-purpose")
	assert.Equal(t, spanmodel.ToolSpanID(threadKey{Source: agentevent.Source("claude_code"), Session: "s1", Agent: "ag1"}, "toolu_x"), inner.ParentSpanID())
	assert.Equal(t, outer.TraceID(), inner.TraceID())
	assert.Equal(t, int64(2), attr(roots(spans)[0], agentevent.AttrTurnSubagents))
}

// turnLinked marks a subagent's events as nested under the turn open when it
// started (no spawning tool call is known).
func turnLinked(evs []agentevent.Event) []agentevent.Event {
	for i := range evs {
		if evs[i].Attributes == nil {
			evs[i].Attributes = map[string]any{}
		}
		evs[i].Attributes[agentevent.AttrSubagentLink] = agentevent.SubagentLinkTurn
	}
	return evs
}

// twoTurnsAndATurnLinkedSubagent: turns p1 (t=0..10) and p2 (t=20..30); the
// subagent runs at t=22..25, with no tool call naming it.
func twoTurnsAndATurnLinkedSubagent() (main, sub []agentevent.Event) {
	s := newSession("s1")
	x := s.subagent("rev", "review")
	main = []agentevent.Event{
		s.prompt("p1", 0), s.answer("a1", "m1", 10),
		s.prompt("p2", 20), s.answer("a2", "m2", 30),
	}
	sub = turnLinked([]agentevent.Event{x.prompt("xp", 22), x.answer("xa", "xm", 25)})
	return main, sub
}

func checkTurnLinked(t *testing.T, spans []ptrace.Span) {
	t.Helper()
	sub := one(t, spans, "invoke_agent review")
	var turn2 ptrace.Span
	for _, sp := range named(spans, "invoke_agent claude-code") {
		if attr(sp, "agent.event.id") == "p2" {
			turn2 = sp
		}
	}
	require.NotEqual(t, ptrace.Span{}, turn2, "turn p2's root")
	assert.Equal(t, turn2.TraceID(), sub.TraceID(), "the subagent joins the turn open when it started")
	assert.Equal(t, turn2.SpanID(), sub.ParentSpanID(), "under the turn's root")
	assert.Len(t, roots(spans), 2, "one root per turn, none for the subagent")
}

func TestTurnLinkedSubagentMainFirst(t *testing.T) {
	h := newHarness(t)
	h.history()
	main, sub := twoTurnsAndATurnLinkedSubagent()
	h.feed(main...)
	h.feed(sub...)
	h.setNow(365*24*time.Hour + time.Hour)
	h.tick()
	checkTurnLinked(t, h.spans())
}

func TestTurnLinkedSubagentFirst(t *testing.T) {
	h := newHarness(t)
	h.history()
	main, sub := twoTurnsAndATurnLinkedSubagent()
	h.feed(sub...)
	assert.Empty(t, h.spans(), "waits for its session's turns")
	h.feed(main...)
	h.setNow(365*24*time.Hour + time.Hour)
	h.tick()
	checkTurnLinked(t, h.spans())
}

func TestTurnLinkedSubagentLiveClosesWithItsTurn(t *testing.T) {
	h := newHarness(t)
	main, sub := twoTurnsAndATurnLinkedSubagent()
	h.setNow(21 * time.Second) // live: turn p2 is open
	h.feed(main[:3]...)
	h.setNow(26 * time.Second)
	h.feed(sub...)
	for _, sp := range h.spans() {
		assert.NotEqual(t, "invoke_agent review", sp.Name(), "held while its turn is open")
	}
	h.setNow(31 * time.Second)
	h.feed(main[3])
	h.setNow(31*time.Second + 5*time.Minute)
	h.tick()
	checkTurnLinked(t, h.spans())
}

func TestToolLinkWinsOverTurnLink(t *testing.T) {
	h := newHarness(t)
	h.history()
	parent, sub := spawnTurn()
	h.feed(turnLinked(sub)...)
	h.feed(parent...)
	checkNested(t, h.spans())
}

// anchored sets a project and anchor attributes on events.
func anchored(project string, attrs map[string]any) func(*agentevent.Event) {
	return func(e *agentevent.Event) {
		e.ProjectRoot = project
		for k, v := range attrs {
			agentevent.SetAttr(e, k, v)
		}
	}
}

// TestAnchorLinkedSubagentFromAnotherSession: a subagent that records no
// parent at all (a Codex /review rollout, its own session) nests under the
// turn of the session, in the same project, whose event opened the anchor
// just before it started — in either arrival order.
func TestAnchorLinkedSubagentFromAnotherSession(t *testing.T) {
	anchorAttrs := map[string]any{agentevent.AttrSubagentAnchor: "review"}
	childAttrs := map[string]any{agentevent.AttrSubagentLink: agentevent.SubagentLinkAnchor, agentevent.AttrSubagentAnchor: "review"}
	build := func() (parent, child []agentevent.Event) {
		s := newSession("parent")
		other := newSession("elsewhere") // another project with an anchor at the same time
		x := newSession("rev1").subagent("rev1", "review")
		parent = []agentevent.Event{
			s.prompt("p1", 0, anchored("/proj", nil)),
			s.ev(agentevent.TypeMeta, "m1", 5, anchored("/proj", anchorAttrs)),
			s.answer("a1", "r1", 40, anchored("/proj", nil)),
			other.prompt("o1", 0, anchored("/other", nil)),
			other.ev(agentevent.TypeMeta, "om", 5, anchored("/other", anchorAttrs)),
			other.answer("oa", "or", 9, anchored("/other", nil)),
		}
		child = []agentevent.Event{
			x.prompt("xp", 6, anchored("/proj", childAttrs)),
			x.answer("xa", "xr", 30, anchored("/proj", childAttrs)),
		}
		return parent, child
	}
	for _, order := range []string{"parent first", "child first"} {
		t.Run(order, func(t *testing.T) {
			h := newHarness(t)
			h.history()
			parent, child := build()
			if order == "parent first" {
				h.feed(parent...)
				h.feed(child...)
			} else {
				h.feed(child...)
				h.feed(parent...)
			}
			h.setNow(365*24*time.Hour + time.Hour)
			h.tick()
			spans := h.spans()
			sub := one(t, spans, "invoke_agent review")
			var p1 ptrace.Span
			for _, sp := range named(spans, "invoke_agent claude-code") {
				if attr(sp, "agent.event.id") == "p1" {
					p1 = sp
				}
			}
			require.NotEqual(t, ptrace.Span{}, p1)
			assert.Equal(t, p1.TraceID(), sub.TraceID(), "joins the turn of the same project's anchor")
			assert.Equal(t, p1.SpanID(), sub.ParentSpanID())
			assert.Len(t, roots(spans), 2, "the two sessions' turns; none for the subagent")
		})
	}
}
