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

func TestTurnClosesOnNextPrompt(t *testing.T) {
	h := newHarness(t)
	h.setNow(time.Minute) // live: nothing is idle yet
	s := newSession("s1")
	h.feed(s.prompt("p1", 0), s.answer("a1", "msg_1", 2))
	assert.Empty(t, h.spans(), "an open turn waits")

	h.feed(s.prompt("p2", 10))
	spans := h.spans()
	require.Len(t, spans, 2)
	root := one(t, spans, "invoke_agent claude-code")
	assert.True(t, root.ParentSpanID().IsEmpty())
	assert.Equal(t, spanmodel.TurnTraceID(threadKey{Source: agentevent.Source("claude_code"), Session: "s1"}, "p1"), root.TraceID())
	assert.Equal(t, spanmodel.StatusCompleted, attr(root, agentevent.AttrTurnStatus))
	assert.Equal(t, ts(0), root.StartTimestamp())
	assert.Equal(t, ts(2), root.EndTimestamp())
	assert.Equal(t, ptrace.SpanKindInternal, root.Kind())
	chat := one(t, spans, "chat claude-opus-4-7")
	assert.Equal(t, root.SpanID(), chat.ParentSpanID())
}

func TestTurnClosesWhenIdle(t *testing.T) {
	h := newHarness(t)
	s := newSession("s1")
	h.setNow(3 * time.Second)
	h.feed(s.prompt("p1", 0), s.answer("a1", "msg_1", 2))

	h.setNow(2*time.Second + 5*time.Minute - time.Millisecond)
	h.tick()
	assert.Empty(t, h.spans(), "the last event is not yet turn_idle_timeout old")

	h.setNow(2*time.Second + 5*time.Minute)
	h.tick()
	root := one(t, h.spans(), "invoke_agent claude-code")
	assert.Equal(t, spanmodel.StatusCompleted, attr(root, agentevent.AttrTurnStatus), "idle, but the prompt was answered")

	h.setNow(time.Hour)
	h.tick()
	assert.Len(t, h.spans(), 2, "a turn is emitted once")
}

func TestHistoryClosesAtOnce(t *testing.T) {
	h := newHarness(t)
	h.history()
	s := newSession("s1")
	h.feed(s.prompt("p1", 0), s.answer("a1", "msg_1", 2))
	require.Len(t, h.spans(), 2, "a turn older than turn_idle_timeout closes without waiting for the ticker")
}

func TestTurnStatus(t *testing.T) {
	s := newSession("s1")
	for name, tc := range map[string]struct {
		events   []agentevent.Event
		shutdown bool
		want     string
		errType  string
	}{
		"completed": {
			events: []agentevent.Event{s.prompt("p", 0), s.call("c", "m1", "t1", "Bash", 1), s.result("r", "t1", "Bash", 2), s.answer("a", "m2", 3)},
			want:   spanmodel.StatusCompleted,
		},
		"abandoned after a tool result": {
			events: []agentevent.Event{s.prompt("p", 0), s.call("c", "m1", "t1", "Bash", 1), s.result("r", "t1", "Bash", 2)},
			want:   spanmodel.StatusAbandoned,
		},
		"abandoned without an answer": {
			events: []agentevent.Event{s.prompt("p", 0)},
			want:   spanmodel.StatusAbandoned,
		},
		"interrupted": {
			events: []agentevent.Event{s.prompt("p", 0), s.call("c", "m1", "t1", "Bash", 1), s.result("r", "t1", "Bash", 2, status(spanmodel.StatusInterrupted))},
			want:   spanmodel.StatusInterrupted,
		},
		"error status": {
			events:  []agentevent.Event{s.prompt("p", 0), s.ev(agentevent.TypeLog, "e", 1, status(spanmodel.StatusError), func(e *agentevent.Event) { e.ErrorType = "overloaded" })},
			want:    spanmodel.StatusError,
			errType: "overloaded",
		},
		"api error without a final answer": {
			events:  []agentevent.Event{s.prompt("p", 0), s.ev(agentevent.TypeAssistantMessage, "e", 1, func(e *agentevent.Event) { e.ErrorType = "prompt_too_long" })},
			want:    spanmodel.StatusError,
			errType: "prompt_too_long",
		},
		"api error then an answer": {
			events: []agentevent.Event{s.prompt("p", 0), s.ev(agentevent.TypeLog, "e", 1, func(e *agentevent.Event) { e.ErrorType = "overloaded" }), s.answer("a", "m2", 3)},
			want:   spanmodel.StatusCompleted,
		},
		"in progress at shutdown": {
			events:   []agentevent.Event{s.prompt("p", 0), s.answer("a", "m2", 3)},
			shutdown: true,
			want:     spanmodel.StatusInProgress,
		},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			if tc.shutdown {
				h.setNow(10 * time.Second)
			} else {
				h.history()
			}
			h.feed(tc.events...)
			if tc.shutdown {
				out := h.c.asm.close(h.clock(), true)
				require.NoError(t, h.c.emit(t.Context(), out))
			}
			root := one(t, h.spans(), "invoke_agent claude-code")
			assert.Equal(t, tc.want, attr(root, agentevent.AttrTurnStatus))
			if tc.errType != "" {
				assert.Equal(t, ptrace.StatusCodeError, root.Status().Code())
				assert.Equal(t, tc.errType, attr(root, agentevent.AttrErrorType))
			} else {
				assert.Equal(t, ptrace.StatusCodeUnset, root.Status().Code())
			}
		})
	}
}

func TestUnansweredTurnEndedByTheNextPromptIsCompleted(t *testing.T) {
	// The next prompt finalizes a turn (seed 003); abandoned is for a turn
	// that went idle unanswered.
	h := newHarness(t)
	h.history()
	s := newSession("s1")
	h.feed(s.prompt("p1", 0), s.call("c", "m1", "t1", "Bash", 1), s.result("r", "t1", "Bash", 2),
		s.prompt("p2", 3), s.call("c2", "m2", "t2", "Bash", 4), s.result("r2", "t2", "Bash", 5))
	status := map[any]any{}
	for _, r := range roots(h.spans()) {
		status[attr(r, agentevent.AttrEventID)] = attr(r, agentevent.AttrTurnStatus)
	}
	assert.Equal(t, map[any]any{"p1": spanmodel.StatusCompleted, "p2": spanmodel.StatusAbandoned}, status)
}

func TestLinkToPreviousTurn(t *testing.T) {
	h := newHarness(t)
	h.history()
	s := newSession("s1")
	h.feed(s.prompt("p1", 0), s.answer("a1", "m1", 1), s.prompt("p2", 10), s.answer("a2", "m2", 11))
	rs := roots(h.spans())
	require.Len(t, rs, 2)
	byPrompt := map[any]ptrace.Span{}
	for _, r := range rs {
		byPrompt[attr(r, agentevent.AttrEventID)] = r
	}
	first, second := byPrompt["p1"], byPrompt["p2"]
	assert.Zero(t, first.Links().Len(), "the first turn has no predecessor")
	require.Equal(t, 1, second.Links().Len())
	l := second.Links().At(0)
	assert.Equal(t, first.TraceID(), l.TraceID())
	assert.Equal(t, first.SpanID(), l.SpanID())
	assert.NotEqual(t, first.TraceID(), second.TraceID(), "one trace per turn")
}

func TestLateEventsJoinTheEmittedTurn(t *testing.T) {
	h := newHarness(t)
	h.history()
	s := newSession("s1")
	p1 := s.prompt("p1", 0)
	a1 := s.answer("a1", "m1", 1)
	h.feed(p1, a1)
	require.Len(t, h.spans(), 2)
	root := roots(h.spans())[0]

	// More of turn p1 arrives after it went out (e.g. a file read late).
	h.feed(s.call("c1", "m2", "t1", "Read", 2), s.result("r1", "t1", "Read", 3))
	spans := h.spans()
	require.Len(t, spans, 4)
	assert.Len(t, roots(spans), 1, "never a second root")
	tool := one(t, spans, "execute_tool Read")
	assert.Equal(t, root.TraceID(), tool.TraceID())
	assert.Equal(t, root.SpanID(), tool.ParentSpanID())
	for _, sp := range spans {
		assert.Equal(t, root.TraceID(), sp.TraceID())
	}

	// The whole turn delivered again (a re-read): nothing new.
	s2 := newSession("s1")
	h.feed(s2.prompt("p1", 0), s2.answer("a1", "m1", 1), s2.call("c1", "m2", "t1", "Read", 2), s2.result("r1", "t1", "Read", 3))
	assert.Len(t, h.spans(), 4, "re-reading a file never emits a span twice")
}

func TestPreambleBecomesSpanEventsOfTheNextTurn(t *testing.T) {
	h := newHarness(t)
	h.history()
	s := newSession("s1")
	summary := s.ev(agentevent.TypeSessionSummary, "sum", 0)
	snap := s.ev(agentevent.TypeFileSnapshot, "snap", 0.5)
	h.feed(summary, snap, s.prompt("p1", 1), s.answer("a1", "m1", 2))
	root := one(t, h.spans(), "invoke_agent claude-code")
	var names []string
	for i := 0; i < root.Events().Len(); i++ {
		names = append(names, root.Events().At(i).Name())
	}
	assert.Equal(t, []string{agentevent.SpanEventSessionSummary, agentevent.SpanEventFileSnapshot}, names)
}

func TestPreambleWithoutTurnIsDropped(t *testing.T) {
	h := newHarness(t)
	h.history()
	s := newSession("s1")
	h.feed(s.ev(agentevent.TypeSessionSummary, "sum", 0))
	h.setNow(366 * 24 * time.Hour)
	h.tick()
	assert.Empty(t, h.spans())
	for _, th := range h.c.asm.store.threads {
		assert.Empty(t, th.preamble, "dropped after turn_idle_timeout of wall-clock time without a prompt")
	}
}

// TestLinkFollowsTheBranch: a prompt naming its previous prompt on its
// branch (a tree log) links to that turn, not to the one before it in time.
func TestLinkFollowsTheBranch(t *testing.T) {
	h := newHarness(t)
	h.history()
	s := newSession("s1")
	onBranch := func(prev string) func(*agentevent.Event) {
		return func(e *agentevent.Event) { agentevent.SetAttr(e, agentevent.AttrPreviousPrompt, prev) }
	}
	h.feed(
		s.prompt("p1", 0, onBranch("")), s.answer("a1", "m1", 1),
		s.prompt("p2", 10, onBranch("p1")), s.answer("a2", "m2", 11), // later abandoned
		s.prompt("p3", 20, onBranch("p1")), s.answer("a3", "m3", 21),
	)
	h.setNow(365*24*time.Hour + time.Hour)
	h.tick()
	roots := map[string]ptrace.Span{}
	for _, sp := range named(h.spans(), "invoke_agent claude-code") {
		roots[attr(sp, "agent.event.id").(string)] = sp
	}
	require.Len(t, roots, 3)
	p3 := roots["p3"]
	require.Equal(t, 1, p3.Links().Len())
	assert.Equal(t, roots["p1"].SpanID(), p3.Links().At(0).SpanID(), "p3 follows p1 on its branch")
	assert.Equal(t, roots["p1"].TraceID(), p3.Links().At(0).TraceID())
	assert.Zero(t, roots["p1"].Links().Len(), "the first turn links nowhere")
}
