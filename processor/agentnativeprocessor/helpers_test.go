// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentnativeprocessor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/processor/agentnativeprocessor/internal/metadata"
	"github.com/agentotel/agentotel/processor/agentnativeprocessor/internal/metadatatest"
)

// The fake agent: service fake-agent, events of Source claude_code (so
// that agent_log's Claude Code file events share its sessions).
const (
	fakeService = "fake-agent"
	fakeScope   = "fake.scope"
	// A credential in a command line, which redaction must replace.
	secretCommand = "curl -H 'Authorization: Bearer sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789' https://example.test" //nolint:gosec // G101: a fake credential that redaction must replace
)

// fakeMapper maps by event name: "mapped" gives a tool call (with Text and
// a command holding a credential), "ignored" nothing, anything else is
// unmapped.
type fakeMapper struct{}

func (fakeMapper) Map(rec *agentevent.NativeRecord) ([]agentevent.Event, error) {
	switch rec.Name {
	case "mapped":
		session := rec.Str("session.id")
		ev := agentevent.Event{
			Source: agentevent.Source("claude_code"), SessionID: session,
			EventID:   agentevent.NativeID("fake", session, rec.Str("seq")),
			Timestamp: rec.Time, Type: agentevent.TypeToolCall, Role: agentevent.RoleAssistant,
			ToolName: "Bash", Text: "tool arguments " + secretCommand, AgentVersion: rec.ServiceVersion,
			Attributes: map[string]any{
				agentevent.AttrOrigin:       agentevent.OriginNative,
				"agent.tool.command":        secretCommand,
				agentevent.AttrFileDiff:     "--- a\n+++ b",
				"agent.fake.dup_thread_id":  rec.Attrs["thread.id"],
				"agent.fake.resource_owner": rec.Resource["owner"],
			},
		}
		if rec.TraceID != "" {
			ev.Attributes[agentevent.AttrNativeTraceID] = rec.TraceID
		}
		agentevent.Normalize(&ev)
		return []agentevent.Event{ev}, nil
	case "ignored":
		return nil, nil
	}
	return nil, fmt.Errorf("%w: unknown event %q", agentevent.ErrNativeUnmapped, rec.Name)
}

// fakeNormalize: "fake.turn" becomes an invoke_agent span of the session in
// session.id; "fake.fail" an Error span; anything else is not the model's.
func fakeNormalize(sp *agentevent.NativeSpan) (agentevent.SpanPatch, bool) {
	switch sp.Name {
	case "fake.turn":
		return agentevent.SpanPatch{
			Name: "invoke_agent fake", Kind: 1, Source: agentevent.Source("claude_code"),
			SessionID: agentevent.NativeStr(sp.Attrs["session.id"]),
			Set:       map[string]any{"gen_ai.operation.name": "invoke_agent", "agent.fake.count": int64(2), "agent.fake.list": []string{"a", "b"}},
			Remove:    []string{"fake.raw"},
		}, true
	case "fake.fail":
		return agentevent.SpanPatch{Error: true, ErrorMessage: "it failed", Set: map[string]any{}}, true
	}
	return agentevent.SpanPatch{}, false
}

func fakeAgents() []agentDef {
	return []agentDef{{
		source:    agentevent.Source("claude_code"),
		newMapper: func() logMapper { return fakeMapper{} },
		normalize: fakeNormalize,
		services:  []string{fakeService},
	}}
}

// harness is one agent_native instance, its logs and traces processors
// sharing it, with sinks, telemetry and an observed logger.
type harness struct {
	t      *testing.T
	tt     *componenttest.Telemetry
	logs   processor.Logs
	traces processor.Traces
	ls     *consumertest.LogsSink
	ts     *consumertest.TracesSink
	proc   *nativeProcessor
	logged *observer.ObservedLogs
}

func newHarness(t *testing.T, agents func() []agentDef, host component.Host, edit func(*Config)) *harness {
	t.Helper()
	f := newSharedFactory(agents)
	pf := f.processorFactory()
	cfg := pf.CreateDefaultConfig().(*Config)
	if edit != nil {
		edit(cfg)
	}
	require.NoError(t, cfg.Validate())
	h := &harness{t: t, tt: componenttest.NewTelemetry(), ls: new(consumertest.LogsSink), ts: new(consumertest.TracesSink)}
	t.Cleanup(func() { require.NoError(t, h.tt.Shutdown(context.Background())) })
	set := metadatatest.NewSettings(h.tt)
	set.ID = component.NewID(metadata.Type)
	core, logged := observer.New(zap.DebugLevel)
	set.Logger = zap.New(core)
	h.logged = logged
	var err error
	h.logs, err = pf.CreateLogs(t.Context(), set, cfg, h.ls)
	require.NoError(t, err)
	h.traces, err = pf.CreateTraces(t.Context(), set, cfg, h.ts)
	require.NoError(t, err)
	require.Len(t, f.shared, 1, "the logs and traces processors of one id share one instance")
	h.proc = f.shared[set.ID]
	if host == nil {
		host = componenttest.NewNopHost()
	}
	require.NoError(t, h.logs.Start(t.Context(), host))
	require.NoError(t, h.traces.Start(t.Context(), host))
	return h
}

func (h *harness) shutdown() {
	require.NoError(h.t, h.logs.Shutdown(context.Background()))
	require.NoError(h.t, h.traces.Shutdown(context.Background()))
}

// consume hands ld to the logs processor and returns the records that came
// out of this call.
func (h *harness) consume(ld plog.Logs) []plog.LogRecord {
	h.t.Helper()
	before := len(h.ls.AllLogs())
	require.NoError(h.t, h.logs.ConsumeLogs(h.t.Context(), ld))
	var out []plog.LogRecord
	for _, l := range h.ls.AllLogs()[before:] {
		for _, rl := range l.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					out = append(out, lr)
				}
			}
		}
	}
	return out
}

// consumeEvents is consume, decoded.
func (h *harness) consumeEvents(ld plog.Logs) []agentevent.Event {
	h.t.Helper()
	var out []agentevent.Event
	for _, lr := range h.consume(ld) {
		ev, err := agentevent.Decode(lr)
		require.NoError(h.t, err)
		out = append(out, ev)
	}
	return out
}

func (h *harness) consumeSpans(td ptrace.Traces) []ptrace.Span {
	h.t.Helper()
	before := len(h.ts.AllTraces())
	require.NoError(h.t, h.traces.ConsumeTraces(h.t.Context(), td))
	var out []ptrace.Span
	for _, tr := range h.ts.AllTraces()[before:] {
		for _, rs := range tr.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, s := range ss.Spans().All() {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

var t0 = time.Date(2026, 9, 12, 10, 0, 0, 0, time.UTC)

// nrec is a native log record of the fake agent.
type nrec struct {
	name    string
	session string
	at      time.Duration // after t0
	trace   byte          // trace id filled with this byte; 0: none
	seq     string
}

func nativeLogs(recs ...nrec) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", fakeService)
	rl.Resource().Attributes().PutStr("service.version", "9.9.9")
	rl.Resource().Attributes().PutStr("host.name", "devbox")
	rl.Resource().Attributes().PutStr("owner", "team-a")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(fakeScope)
	for _, r := range recs {
		lr := sl.LogRecords().AppendEmpty()
		lr.Body().SetStr("fake." + r.name)
		lr.Attributes().PutStr("event.name", r.name)
		lr.Attributes().PutStr("session.id", r.session)
		lr.Attributes().PutStr("seq", r.seq)
		lr.SetTimestamp(pcommon.NewTimestampFromTime(t0.Add(r.at)))
		if r.trace != 0 {
			lr.SetTraceID(traceID(r.trace))
		}
	}
	return ld
}

func traceID(b byte) pcommon.TraceID {
	var id pcommon.TraceID
	for i := range id {
		id[i] = b
	}
	return id
}

// fileLogs are agent_log's encoding of Claude Code file events of session
// at the given offsets from t0.
func fileLogs(session string, at ...time.Duration) plog.Logs {
	var evs []agentevent.Event
	for i, d := range at {
		ev := agentevent.Event{
			Source: agentevent.Source("claude_code"), SessionID: session,
			EventID:   fmt.Sprintf("file-%s-%d", session, i),
			Sequence:  int64(i + 1),
			Timestamp: t0.Add(d), Type: agentevent.TypeUserMessage, Role: agentevent.RoleUser,
		}
		agentevent.Normalize(&ev)
		evs = append(evs, ev)
	}
	return agentevent.EncodeLogs(evs, "")
}

// nspan is a native span of the fake agent.
type nspan struct {
	name    string
	session string
	trace   byte
	span    byte
	end     time.Duration
}

func nativeTraces(service, scope string, spans ...nspan) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", service)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(scope)
	for _, n := range spans {
		s := ss.Spans().AppendEmpty()
		s.SetName(n.name)
		s.SetTraceID(traceID(n.trace))
		s.SetSpanID(pcommon.SpanID{n.span, 1, 1, 1, 1, 1, 1, 1})
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(t0.Add(n.end - time.Second)))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(t0.Add(n.end)))
		if n.session != "" {
			s.Attributes().PutStr("session.id", n.session)
		}
		s.Attributes().PutStr("fake.raw", "x")
		s.Attributes().PutStr("gen_ai.input.messages", "[{\"role\":\"user\"}]")
		s.Attributes().PutStr("agent.tool.command", secretCommand)
	}
	return td
}
