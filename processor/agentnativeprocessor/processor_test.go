// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentnativeprocessor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/redact"
	"github.com/agentotel/agentotel/processor/agentnativeprocessor/internal/metadatatest"
)

func otherLogs() plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "checkout")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("checkout.logger")
	lr := sl.LogRecords().AppendEmpty()
	lr.Body().SetStr("paid " + secretCommand)
	lr.Attributes().PutStr("event.name", "mapped")
	lr.Attributes().PutStr("session.id", "S")
	lr.SetTimestamp(1234)
	return ld
}

// TestOtherServicesPassByteIdentical: the records and spans of any other
// service, agent_span's own spans among them (service.name claude-code,
// agentotel's scope), come out byte for byte as they went in.
func TestOtherServicesPassByteIdentical(t *testing.T) {
	h := newHarness(t, fakeAgents, nil, nil)
	defer h.shutdown()
	var lm plog.ProtoMarshaler
	var tm ptrace.ProtoMarshaler

	ld := otherLogs()
	want, err := lm.MarshalLogs(ld)
	require.NoError(t, err)
	require.Len(t, h.consume(ld), 1)
	got, err := lm.MarshalLogs(h.ls.AllLogs()[0])
	require.NoError(t, err)
	assert.Equal(t, want, got)

	for _, td := range []ptrace.Traces{
		nativeTraces("checkout", "checkout.tracer", nspan{name: "fake.turn", session: "S", trace: 1, span: 1}),
		nativeTraces(fakeService, "github.com/agentotel/agentotel/connector/agentspanconnector", nspan{name: "fake.turn", session: "S", trace: 1, span: 1}),
		nativeTraces("claude-code", "github.com/agentotel/agentotel/connector/agentspanconnector", nspan{name: "fake.turn", session: "S", trace: 1, span: 1}),
	} {
		wantSpans, wantErr := tm.MarshalTraces(td)
		require.NoError(t, wantErr)
		require.Len(t, h.consumeSpans(td), 1)
		all := h.ts.AllTraces()
		gotSpans, gotErr := tm.MarshalTraces(all[len(all)-1])
		require.NoError(t, gotErr)
		assert.Equal(t, wantSpans, gotSpans)
	}

	// In a batch with native records, the other service's resource stays
	// as it was.
	mixed := otherLogs()
	nativeLogs(nrec{name: "mapped", session: "S1"}).ResourceLogs().MoveAndAppendTo(mixed.ResourceLogs())
	out := h.consume(mixed)
	require.Len(t, out, 2)
	first := plog.NewLogs()
	h.ls.AllLogs()[1].ResourceLogs().At(0).CopyTo(first.ResourceLogs().AppendEmpty())
	got, err = lm.MarshalLogs(first)
	require.NoError(t, err)
	assert.Equal(t, want, got, "the other service's resource is untouched and first")
}

// TestFileEventsPass: agent_log's events go through unchanged when no
// other source speaks for their session.
func TestFileEventsPass(t *testing.T) {
	h := newHarness(t, fakeAgents, nil, nil)
	defer h.shutdown()
	in := fileLogs("F", 0, time.Second, 2*time.Second)
	var lm plog.ProtoMarshaler
	want, err := lm.MarshalLogs(in)
	require.NoError(t, err)
	require.Len(t, h.consume(in), 3)
	got, err := lm.MarshalLogs(h.ls.AllLogs()[0])
	require.NoError(t, err)
	assert.Equal(t, want, got)
	_, err = h.tt.GetMetric("otelcol_agent_native_dropped")
	assert.Error(t, err, "nothing dropped")
}

func recordsPoint(agent, outcome string, n int64) metricdata.DataPoint[int64] {
	return metricdata.DataPoint[int64]{Value: n, Attributes: attribute.NewSet(attribute.String("agent", agent), attribute.String("outcome", outcome))}
}

// TestRecordOutcomes: a mapped record is replaced by its agent events
// (redacted, content stripped, with the native resource's host and
// version); an ignored one is dropped; an unmapped one is dropped and
// logged once per event name.
func TestRecordOutcomes(t *testing.T) {
	h := newHarness(t, fakeAgents, nil, nil)
	defer h.shutdown()
	out := h.consume(nativeLogs(
		nrec{name: "mapped", session: "S", seq: "1"},
		nrec{name: "ignored", session: "S"},
		nrec{name: "mystery", session: "S"},
		nrec{name: "mystery", session: "S", at: time.Second},
	))
	require.Len(t, out, 1)
	ev, err := agentevent.Decode(out[0])
	require.NoError(t, err)
	assert.Equal(t, agentevent.Source("claude_code"), ev.Source)
	assert.Equal(t, "S", ev.SessionID)
	assert.Empty(t, ev.Text, "content stripped by default")
	assert.NotContains(t, ev.Attributes, agentevent.AttrFileDiff)
	assert.Equal(t, redact.String(secretCommand), ev.Attributes["agent.tool.command"])
	assert.NotEqual(t, secretCommand, ev.Attributes["agent.tool.command"], "the credential is replaced")
	assert.Equal(t, agentevent.OriginNative, ev.Attributes[agentevent.AttrOrigin])
	assert.Equal(t, "team-a", ev.Attributes["agent.fake.resource_owner"], "the mapper sees the resource")

	res := h.ls.AllLogs()[0].ResourceLogs().At(0).Resource().Attributes()
	assert.Equal(t, map[string]any{"service.name": "claude-code", "service.version": "9.9.9", "host.name": "devbox"}, res.AsRaw())

	metadatatest.AssertEqualAgentNativeRecords(t, h.tt, []metricdata.DataPoint[int64]{
		recordsPoint("claude_code", "mapped", 1),
		recordsPoint("claude_code", "ignored", 1),
		recordsPoint("claude_code", "unmapped", 2),
	}, metricdatatest.IgnoreTimestamp())
	assert.Equal(t, 1, h.logged.FilterMessageSnippet("cannot be mapped").Len(), "logged once per service and event name")
	entry := h.logged.FilterMessageSnippet("cannot be mapped").All()[0].ContextMap()
	assert.Equal(t, "mystery", entry["event_name"])
	assert.Contains(t, entry["error"], "unknown event")

	// A batch of ignored records only is not handed on at all.
	assert.Empty(t, h.consume(nativeLogs(nrec{name: "ignored", session: "S"})))
}

// TestIncludeContent keeps Text and agent.content.* (the tool call's Text
// redacted, as agent_log does).
func TestIncludeContent(t *testing.T) {
	h := newHarness(t, fakeAgents, nil, func(c *Config) { c.IncludeContent = true })
	defer h.shutdown()
	evs := h.consumeEvents(nativeLogs(nrec{name: "mapped", session: "S", seq: "1"}))
	require.Len(t, evs, 1)
	assert.Equal(t, "tool arguments "+redact.String(secretCommand), evs[0].Text)
	assert.Equal(t, "--- a\n+++ b", evs[0].Attributes[agentevent.AttrFileDiff])
}

// TestRedactOff: with redact: false the credentials go on as the agent sent
// them, on events and on spans, as agent_log's redact: false does.
func TestRedactOff(t *testing.T) {
	h := newHarness(t, fakeAgents, nil, func(c *Config) { c.IncludeContent, c.Redact = true, false })
	defer h.shutdown()
	evs := h.consumeEvents(nativeLogs(nrec{name: "mapped", session: "S", seq: "1"}))
	require.Len(t, evs, 1)
	assert.Equal(t, "tool arguments "+secretCommand, evs[0].Text)
	spans := h.consumeSpans(nativeTraces(fakeService, fakeScope, nspan{name: "fake.turn", session: "S2", trace: 3, span: 1, end: time.Second}))
	require.NotEmpty(t, spans)
	cmd, _ := spans[0].Attributes().Get("agent.tool.command")
	assert.Equal(t, secretCommand, cmd.Str())
}

// TestDuplicateKeyKeepsString: Codex sends thread.id twice, as a number
// and as a string; the string wins, in either order.
func TestDuplicateKeyKeepsString(t *testing.T) {
	for _, attrs := range []string{
		`{"key":"thread.id","value":{"intValue":"7"}},{"key":"thread.id","value":{"stringValue":"th-1"}}`,
		`{"key":"thread.id","value":{"stringValue":"th-1"}},{"key":"thread.id","value":{"intValue":"7"}}`,
	} {
		doc := `{"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"fake-agent"}}]},` +
			`"scopeLogs":[{"scope":{"name":"fake.scope"},"logRecords":[{"timeUnixNano":"1","attributes":[` +
			`{"key":"event.name","value":{"stringValue":"mapped"}},{"key":"session.id","value":{"stringValue":"S"}},` + attrs + `]}]}]}]}`
		ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs([]byte(doc))
		require.NoError(t, err)
		h := newHarness(t, fakeAgents, nil, nil)
		evs := h.consumeEvents(ld)
		require.Len(t, evs, 1)
		assert.Equal(t, "th-1", evs[0].Attributes["agent.fake.dup_thread_id"])
		h.shutdown()
	}
}

// TestNameAndTimeFallbacks: the event name comes from event.name, else
// the record's event name, else a string body; the time from the record,
// else its observed time.
func TestNameAndTimeFallbacks(t *testing.T) {
	res := &resourceInfo{service: fakeService}
	lr := plog.NewLogRecord()
	lr.Body().SetStr("from-body")
	lr.SetObservedTimestamp(5_000_000_000)
	rec := liftRecord(res, fakeScope, lr)
	assert.Equal(t, "from-body", rec.Name)
	assert.Equal(t, int64(5_000_000_000), rec.Time.UnixNano())
	assert.Empty(t, rec.TraceID)
	lr.SetEventName("from-event-name")
	lr.SetTimestamp(7_000_000_000)
	rec = liftRecord(res, fakeScope, lr)
	assert.Equal(t, "from-event-name", rec.Name)
	assert.Equal(t, int64(7_000_000_000), rec.Time.UnixNano())
	lr.Attributes().PutStr("event.name", "from-attr")
	lr.SetTraceID(traceID(0xab))
	rec = liftRecord(res, fakeScope, lr)
	assert.Equal(t, "from-attr", rec.Name)
	assert.Equal(t, "abababababababababababababababab", rec.TraceID)
}

func droppedOtherSource(n int64) []metricdata.DataPoint[int64] {
	return []metricdata.DataPoint[int64]{{Value: n, Attributes: attribute.NewSet(attribute.String("reason", "other_source"))}}
}

// TestOneSessionOneSource: both arrival orders under both settings.
func TestOneSessionOneSource(t *testing.T) {
	native := func(at ...time.Duration) plog.Logs {
		var recs []nrec
		for i, d := range at {
			recs = append(recs, nrec{name: "mapped", session: "S", at: d, seq: string(rune('a' + i))})
		}
		return nativeLogs(recs...)
	}
	s := time.Second

	t.Run("first/native_then_files", func(t *testing.T) {
		h := newHarness(t, fakeAgents, nil, nil)
		defer h.shutdown()
		assert.Len(t, h.consume(native(s, 2*s)), 2)
		assert.Empty(t, h.consume(fileLogs("S", 0, s, 3*s)), "files of a session native owns are dropped")
		assert.Len(t, h.consume(native(4*s)), 1)
		assert.Len(t, h.consume(fileLogs("T", 0)), 1, "another session is not affected")
		metadatatest.AssertEqualAgentNativeDropped(t, h.tt, droppedOtherSource(3), metricdatatest.IgnoreTimestamp())
		assert.Equal(t, 1, h.logged.FilterMessageSnippet("another source owns the session").Len(), "logged once per session")
	})
	t.Run("first/files_then_native", func(t *testing.T) {
		h := newHarness(t, fakeAgents, nil, nil)
		defer h.shutdown()
		assert.Len(t, h.consume(fileLogs("S", 0, s)), 2)
		assert.Empty(t, h.consume(native(2*s, 3*s)), "native events of a session the files own are dropped")
		assert.Empty(t, h.consumeSpans(nativeTraces(fakeService, fakeScope, nspan{name: "fake.turn", session: "S", trace: 9, span: 1, end: 3 * s})),
			"and so are its native spans")
		assert.Len(t, h.consume(fileLogs("S", 4*s)), 1)
		metadatatest.AssertEqualAgentNativeDropped(t, h.tt, droppedOtherSource(3), metricdatatest.IgnoreTimestamp())
	})
	t.Run("files/native_then_files", func(t *testing.T) {
		h := newHarness(t, fakeAgents, nil, func(c *Config) { c.SessionOwner = OwnerFiles })
		defer h.shutdown()
		assert.Len(t, h.consume(native(s, 2*s)), 2)
		// Files take over; what they say up to the last native event went
		// out natively.
		got := h.consumeEvents(fileLogs("S", 0, s, 2*s, 3*s, 4*s))
		require.Len(t, got, 2)
		assert.Equal(t, t0.Add(3*s), got[0].Timestamp)
		assert.Equal(t, t0.Add(4*s), got[1].Timestamp)
		assert.Empty(t, h.consume(native(5*s)), "native events after the switch are dropped")
		metadatatest.AssertEqualAgentNativeDropped(t, h.tt, droppedOtherSource(4), metricdatatest.IgnoreTimestamp())
	})
	t.Run("files/files_then_native", func(t *testing.T) {
		h := newHarness(t, fakeAgents, nil, func(c *Config) { c.SessionOwner = OwnerFiles })
		defer h.shutdown()
		assert.Len(t, h.consume(fileLogs("S", 0, s)), 2)
		assert.Empty(t, h.consume(native(2*s)))
		assert.Len(t, h.consume(fileLogs("S", 3*s)), 1)
		metadatatest.AssertEqualAgentNativeDropped(t, h.tt, droppedOtherSource(1), metricdatatest.IgnoreTimestamp())
	})
	t.Run("files/native_spans_then_files", func(t *testing.T) {
		h := newHarness(t, fakeAgents, nil, func(c *Config) { c.SessionOwner = OwnerFiles })
		defer h.shutdown()
		assert.Len(t, h.consumeSpans(nativeTraces(fakeService, fakeScope, nspan{name: "fake.turn", session: "S", trace: 9, span: 1, end: 2 * s})), 1)
		assert.Len(t, h.consume(fileLogs("S", s, 2*s, 3*s)), 1, "the turn the span covered is not sent twice")
		assert.Empty(t, h.consumeSpans(nativeTraces(fakeService, fakeScope, nspan{name: "fake.turn", session: "S", trace: 8, span: 2, end: 4 * s})))
	})
}

// TestCoveredTurns: a mapped event whose trace id a native span had, or
// whose session has native spans, is marked covered; the spans come
// through the traces pipeline of the same instance.
func TestCoveredTurns(t *testing.T) {
	h := newHarness(t, fakeAgents, nil, nil)
	defer h.shutdown()
	// A span of trace 7 that is no span of the model (no session).
	require.Len(t, h.consumeSpans(nativeTraces(fakeService, fakeScope, nspan{name: "fake.other", trace: 7, span: 1})), 1)
	// A session's turn span.
	require.Len(t, h.consumeSpans(nativeTraces(fakeService, fakeScope, nspan{name: "fake.turn", session: "A", trace: 8, span: 2})), 1)
	evs := h.consumeEvents(nativeLogs(
		nrec{name: "mapped", session: "B", trace: 7, seq: "1"},
		nrec{name: "mapped", session: "A", trace: 5, seq: "2"},
		nrec{name: "mapped", session: "C", trace: 6, seq: "3"},
		nrec{name: "mapped", session: "C", seq: "4"},
	))
	require.Len(t, evs, 4)
	covered := func(ev agentevent.Event) bool { c, _ := ev.Attributes[agentevent.AttrNativeCovered].(bool); return c }
	assert.True(t, covered(evs[0]), "trace seen in native spans")
	assert.True(t, covered(evs[1]), "session with native spans")
	assert.False(t, covered(evs[2]))
	assert.False(t, covered(evs[3]))
	assert.Equal(t, "06060606060606060606060606060606", evs[2].Attributes[agentevent.AttrNativeTraceID])
}

// TestSpansNormalized: the patch is applied in place, agent.origin set,
// content stripped, credentials redacted; a span outside the model is
// marked and cleaned but keeps its name.
func TestSpansNormalized(t *testing.T) {
	h := newHarness(t, fakeAgents, nil, nil)
	defer h.shutdown()
	spans := h.consumeSpans(nativeTraces(fakeService, fakeScope,
		nspan{name: "fake.turn", session: "S", trace: 1, span: 1},
		nspan{name: "fake.fail", trace: 1, span: 2},
		nspan{name: "fake.other", trace: 1, span: 3},
	))
	require.Len(t, spans, 3)
	turn := spans[0]
	assert.Equal(t, "invoke_agent fake", turn.Name())
	assert.Equal(t, ptrace.SpanKindInternal, turn.Kind())
	a := turn.Attributes().AsRaw()
	assert.Equal(t, "invoke_agent", a["gen_ai.operation.name"])
	assert.Equal(t, int64(2), a["agent.fake.count"])
	assert.Equal(t, []any{"a", "b"}, a["agent.fake.list"])
	assert.NotContains(t, a, "fake.raw")
	assert.NotContains(t, a, "gen_ai.input.messages")
	assert.Equal(t, "otlp", a[agentevent.AttrOrigin])
	assert.Equal(t, redact.String(secretCommand), a["agent.tool.command"])

	assert.Equal(t, ptrace.StatusCodeError, spans[1].Status().Code())
	assert.Equal(t, "it failed", spans[1].Status().Message())

	other := spans[2].Attributes().AsRaw()
	assert.Equal(t, "fake.other", spans[2].Name())
	assert.Equal(t, "otlp", other[agentevent.AttrOrigin])
	assert.NotContains(t, other, "gen_ai.input.messages")
	assert.Contains(t, other, "fake.raw")

	metadatatest.AssertEqualAgentNativeSpansNormalized(t, h.tt, []metricdata.DataPoint[int64]{
		{Value: 2, Attributes: attribute.NewSet(attribute.String("agent", "claude_code"))},
	}, metricdatatest.IgnoreTimestamp())

	h2 := newHarness(t, fakeAgents, nil, func(c *Config) { c.IncludeContent = true })
	defer h2.shutdown()
	kept := h2.consumeSpans(nativeTraces(fakeService, fakeScope, nspan{name: "fake.turn", session: "S", trace: 1, span: 1}))
	require.Len(t, kept, 1)
	v, ok := kept[0].Attributes().Get("gen_ai.input.messages")
	require.True(t, ok, "content kept with include_content")
	assert.Equal(t, "[{\"role\":\"user\"}]", v.Str())
}

// TestCodexChatSpanTakesItsModelFromAbove: Codex's completed response span
// (the chat span) names no model; the sampling request above it does. The
// chat span takes it, so it is named and priced like ours. Shapes from
// traces-codex-app-server-0.155.0-alpha.9.2-spans.otlp.jsonl.
func TestCodexChatSpanTakesItsModelFromAbove(t *testing.T) {
	h := newHarness(t, defaultAgents, nil, nil)
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "codex-app-server")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("codex-app-server")
	sampling := ss.Spans().AppendEmpty()
	sampling.SetName("try_run_sampling_request")
	sampling.SetTraceID(traceID(7))
	sampling.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8})
	sampling.Attributes().PutStr("model", "gpt-5.5-codex")
	sampling.Attributes().PutStr("turn_id", "turn-1")
	resp := ss.Spans().AppendEmpty()
	resp.SetName("handle_responses")
	resp.SetTraceID(traceID(7))
	resp.SetSpanID(pcommon.SpanID{2, 2, 3, 4, 5, 6, 7, 8})
	resp.SetParentSpanID(sampling.SpanID())
	resp.Attributes().PutStr("otel.name", "completed")
	resp.Attributes().PutInt("gen_ai.usage.input_tokens", 1200)
	resp.Attributes().PutInt("gen_ai.usage.output_tokens", 80)

	var chat ptrace.Span
	for _, sp := range h.consumeSpans(td) {
		if op, ok := sp.Attributes().Get("gen_ai.operation.name"); ok && op.Str() == "chat" {
			chat = sp
		}
	}
	require.Equal(t, "chat gpt-5.5-codex", chat.Name())
	m, _ := chat.Attributes().Get("gen_ai.request.model")
	assert.Equal(t, "gpt-5.5-codex", m.Str())
}
