// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/metadata"
	"github.com/agentotel/agentotel/internal/agentevent"
)

// t0 is when the hand-built sessions start.
var t0 = time.Date(2025, 11, 26, 12, 0, 0, 0, time.UTC)

// session builds the events of one thread of a Claude-like session, with
// parent ids and sequence numbers filled in as the receiver would.
type session struct {
	id, agent, subType string
	seq                int64
	curPrompt          string
}

func newSession(id string) *session { return &session{id: id} }

// subagent returns a builder for a subagent thread of the same session.
func (s *session) subagent(agentID, subType string) *session {
	return &session{id: s.id, agent: agentID, subType: subType}
}

type mod func(*agentevent.Event)

func (s *session) ev(typ agentevent.EventType, id string, sec float64, mods ...mod) agentevent.Event {
	s.seq++
	ev := agentevent.Event{
		Source:       agentevent.Source("claude_code"),
		SessionID:    s.id,
		EventID:      id,
		Timestamp:    t0.Add(time.Duration(sec * float64(time.Second))),
		Type:         typ,
		AgentID:      s.agent,
		SubagentType: s.subType,
		IsSidechain:  s.agent != "",
		Sequence:     s.seq,
		AgentVersion: "2.1.152",
		Provider:     "",
	}
	if typ == agentevent.TypeUserMessage {
		s.curPrompt = id
	} else {
		ev.ParentEventID = s.curPrompt
	}
	agentevent.Normalize(&ev)
	for _, m := range mods {
		m(&ev)
	}
	return ev
}

func (s *session) prompt(id string, sec float64, mods ...mod) agentevent.Event {
	return s.ev(agentevent.TypeUserMessage, id, sec, append([]mod{text("prompt " + id)}, mods...)...)
}

// answer is a whole model response in one event.
func (s *session) answer(id, resp string, sec float64, mods ...mod) agentevent.Event {
	return s.ev(agentevent.TypeAssistantMessage, id, sec, append([]mod{response(resp), tokens(100, 10), finish("end_turn"), text("answer " + id)}, mods...)...)
}

func (s *session) call(id, resp, callID, tool string, sec float64, mods ...mod) agentevent.Event {
	return s.ev(agentevent.TypeToolCall, id, sec, append([]mod{response(resp), func(e *agentevent.Event) {
		e.ToolCallID, e.ToolName, e.Text = callID, tool, `{"command":"ls"}`
	}}, mods...)...)
}

func (s *session) result(id, callID, tool string, sec float64, mods ...mod) agentevent.Event {
	return s.ev(agentevent.TypeToolResult, id, sec, append([]mod{func(e *agentevent.Event) {
		e.ToolCallID, e.ToolName, e.ToolStatus, e.Text = callID, tool, agentevent.ToolSuccess, "ok"
	}}, mods...)...)
}

func response(id string) mod {
	return func(e *agentevent.Event) {
		e.ResponseID, e.Model, e.Provider = id, "claude-opus-4-7", "anthropic"
	}
}

func tokens(in, out int64) mod {
	return func(e *agentevent.Event) {
		e.TokensInput, e.TokensOutput = agentevent.Int(in), agentevent.Int(out)
	}
}

func finish(r string) mod { return func(e *agentevent.Event) { e.FinishReason = r } }

func text(s string) mod { return func(e *agentevent.Event) { e.Text = s } }

func failed(exit int64, errType string) mod {
	return func(e *agentevent.Event) {
		e.ToolStatus, e.ToolExitCode, e.ErrorType = agentevent.ToolError, agentevent.Int(exit), errType
	}
}

func status(s string) mod { return func(e *agentevent.Event) { e.Status = s } }

// harness drives a connector with an injected wall clock and a sink.
type harness struct {
	t    testing.TB
	c    *agentSpanConnector
	sink *consumertest.TracesSink

	mu  sync.Mutex
	now time.Time
	// afterBatch, when set, is called after every feed.
	afterBatch func()
}

func newHarness(tb testing.TB, mutate ...func(*Config)) *harness {
	tb.Helper()
	cfg := createDefaultConfig().(*Config)
	for _, m := range mutate {
		m(cfg)
	}
	require.NoError(tb, cfg.Validate())
	h := &harness{t: tb, sink: new(consumertest.TracesSink), now: t0}
	set := connectortest.NewNopSettings(metadata.Type)
	set.ID = component.NewID(metadata.Type) // a fixed id: the storage client is keyed by it
	c, err := newConnector(set, cfg, h.sink)
	require.NoError(tb, err)
	c.now = h.clock
	h.c = c
	return h
}

func (h *harness) clock() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.now
}

// setNow sets the wall clock to t0 + d.
func (h *harness) setNow(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.now = t0.Add(d)
}

// history puts the wall clock a year after the events: every turn is old.
func (h *harness) history() { h.setNow(365 * 24 * time.Hour) }

// feed hands events over as one read that reached the end of every
// session's file (the receiver's caught-up flag on each session's last).
func (h *harness) feed(evs ...agentevent.Event) {
	h.t.Helper()
	require.NoError(h.t, h.c.ConsumeLogs(context.Background(), markCaughtUp(agentevent.EncodeLogs(evs, "host1"))))
	if h.afterBatch != nil {
		h.afterBatch()
	}
}

// feedPartial hands events over as a read with more of each file to come.
func (h *harness) feedPartial(evs ...agentevent.Event) {
	h.t.Helper()
	require.NoError(h.t, h.c.ConsumeLogs(context.Background(), agentevent.EncodeLogs(evs, "host1")))
	if h.afterBatch != nil {
		h.afterBatch()
	}
}

// eachRecord calls fn with every log record of ld and the resource and
// scope logs it is in.
func eachRecord(ld plog.Logs, fn func(rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord)) {
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				fn(rls.At(i), sls.At(j), lrs.At(k))
			}
		}
	}
}

// strAttr is a string attribute of a log record ("" when absent).
func strAttr(lr plog.LogRecord, key string) string {
	if v, ok := lr.Attributes().Get(key); ok {
		return v.AsString()
	}
	return ""
}

// markCaughtUp sets agentevent.AttrReadCaughtUp on the last record of each
// session in each log file, as the receiver does when it has read a file to
// its end (one delivery per file).
func markCaughtUp(ld plog.Logs) plog.Logs {
	last := map[[2]string]plog.LogRecord{}
	eachRecord(ld, func(_ plog.ResourceLogs, _ plog.ScopeLogs, lr plog.LogRecord) {
		last[[2]string{strAttr(lr, agentevent.AttrSessionID), strAttr(lr, agentevent.AttrLogFile)}] = lr
	})
	for _, lr := range last {
		lr.Attributes().PutBool(agentevent.AttrReadCaughtUp, true)
	}
	return ld
}

func (h *harness) tick() { h.c.tick(context.Background()) }

// spans returns every span emitted so far.
func (h *harness) spans() []ptrace.Span {
	var out []ptrace.Span
	for _, td := range h.sink.AllTraces() {
		out = append(out, allSpans(td)...)
	}
	return out
}

func allSpans(td ptrace.Traces) []ptrace.Span {
	var out []ptrace.Span
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		sss := td.ResourceSpans().At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			for k := 0; k < sss.At(j).Spans().Len(); k++ {
				out = append(out, sss.At(j).Spans().At(k))
			}
		}
	}
	return out
}

func named(spans []ptrace.Span, name string) []ptrace.Span {
	var out []ptrace.Span
	for _, sp := range spans {
		if sp.Name() == name {
			out = append(out, sp)
		}
	}
	return out
}

func roots(spans []ptrace.Span) []ptrace.Span {
	var out []ptrace.Span
	for _, sp := range spans {
		if sp.ParentSpanID().IsEmpty() {
			out = append(out, sp)
		}
	}
	return out
}

func one(t *testing.T, spans []ptrace.Span, name string) ptrace.Span {
	t.Helper()
	got := named(spans, name)
	require.Len(t, got, 1, "spans named %q", name)
	return got[0]
}

func attr(sp ptrace.Span, k string) any {
	v, ok := sp.Attributes().Get(k)
	if !ok {
		return nil
	}
	return v.AsRaw()
}

func ts(sec float64) pcommon.Timestamp {
	return pcommon.NewTimestampFromTime(t0.Add(time.Duration(sec * float64(time.Second))))
}
