// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentnativeprocessor

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// outcomes counts the records of one capture file by outcome.
type outcomes struct{ mapped, ignored, unmapped, passed int64 }

// captureOutcomes are the record outcomes of each native log capture
// (../shared/fixtures/native_otel, read in place: the captures carry no
// license). Every record of every file is accounted for.
//
// Unmapped: the one Codex record per session file that has no event.name
// (scope codex_otel::metrics::client, event name a source location), which
// the Codex mapping refuses. Ignored: the session bookkeeping each mapping
// documents (Claude Code auth, hook_registered, mcp_server_connection,
// retention_sweep, …; Codex api/websocket requests, startup phases, …).
var captureOutcomes = map[string]outcomes{
	"logs-claude-code-2.1.269-api.otlp.jsonl":                     {mapped: 12},
	"logs-claude-code-2.1.269-generic.otlp.jsonl":                 {mapped: 1, ignored: 2},
	"logs-claude-code-2.1.269-session.otlp.jsonl":                 {mapped: 6, ignored: 4},
	"logs-claude-code-2.1.269-tools.otlp.jsonl":                   {mapped: 4, ignored: 1},
	"logs-claude-code-2.1.272-api.otlp.jsonl":                     {mapped: 10},
	"logs-claude-code-2.1.272-session.otlp.jsonl":                 {mapped: 6, ignored: 3},
	"logs-claude-code-2.1.272-tools.otlp.jsonl":                   {mapped: 5, ignored: 2},
	"logs-claude-code-2.1.273-api.otlp.jsonl":                     {mapped: 8},
	"logs-claude-code-2.1.273-tools.otlp.jsonl":                   {mapped: 4, ignored: 1},
	"logs-codex-app-server-0.155.0-alpha.9.2-requests.otlp.jsonl": {ignored: 6},
	"logs-codex-app-server-0.155.0-alpha.9.2-session.otlp.jsonl":  {mapped: 4, ignored: 9, unmapped: 1},
	"logs-codex-app-server-0.155.0-alpha.9.2-sse.otlp.jsonl":      {mapped: 7},
	"logs-codex-app-server-0.155.0-alpha.9.2-tools.otlp.jsonl":    {mapped: 6, ignored: 3},
	"logs-codex-desktop-0.154.0-alpha.6.2-session.otlp.jsonl":     {mapped: 2, ignored: 4, unmapped: 1},
	"logs-codex-desktop-0.154.0-alpha.6.2-tools.otlp.jsonl":       {mapped: 2, ignored: 1},
}

// readOTLPLines reads a capture: one OTLP/JSON export per line.
func readOTLPLines(t *testing.T, path string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var out [][]byte
	for l := range bytes.SplitSeq(data, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out
}

func recordCounts(t *testing.T, h *harness) outcomes {
	t.Helper()
	var o outcomes
	m, err := h.tt.GetMetric("otelcol_agent_native_records")
	if err != nil {
		return o
	}
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		v, _ := dp.Attributes.Value("outcome")
		switch v.AsString() {
		case outcomeMapped:
			o.mapped += dp.Value
		case outcomeIgnored:
			o.ignored += dp.Value
		case outcomeUnmapped:
			o.unmapped += dp.Value
		case outcomePassed:
			o.passed += dp.Value
		}
	}
	return o
}

// TestNativeLogCaptures runs every native log capture through the
// processor with the real mappings, one instance per file: the records of
// each file come out mapped, ignored or unmapped as counted, every event
// that comes out decodes, carries agent.origin and has no content.
func TestNativeLogCaptures(t *testing.T) {
	roots := vendortest.FixtureRoots(t)
	vendortest.SkipIfAbsent(t, filepath.Join(roots[0], "native_otel"))
	var files []string
	for _, root := range roots {
		for _, agent := range []string{"claude_code", "codex"} {
			fs, err := filepath.Glob(filepath.Join(root, "native_otel", agent, "logs-*.otlp.jsonl"))
			require.NoError(t, err)
			files = append(files, fs...)
		}
	}
	require.NotEmpty(t, files)
	sort.Strings(files)
	got := map[string]outcomes{}
	for _, f := range files {
		h := newHarness(t, defaultAgents, nil, nil)
		var records int64
		for _, line := range readOTLPLines(t, f) {
			ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(line)
			require.NoError(t, err, f)
			records += int64(ld.LogRecordCount())
			for _, ev := range h.consumeEvents(ld) {
				assert.Equal(t, agentevent.OriginNative, ev.Attributes[agentevent.AttrOrigin], "%s: %s", f, ev.EventID)
				assert.Empty(t, ev.Text, "%s: content stripped", f)
				assert.NotEmpty(t, ev.SessionID, f)
			}
		}
		for _, e := range h.logged.FilterMessageSnippet("cannot be mapped").All() {
			m := e.ContextMap()
			assert.Equal(t, "codex_otel::metrics::client", m["scope"], f)
			assert.Contains(t, m["error"], "without event.name", f)
		}
		o := recordCounts(t, h)
		assert.Equal(t, records, o.mapped+o.ignored+o.unmapped+o.passed, "%s: every record accounted for", f)
		got[filepath.Base(f)] = o
		h.shutdown()
	}
	for name, o := range got {
		want, ok := captureOutcomes[name]
		if assert.True(t, ok, "%s: no expected outcomes (got %+v)", name, o) {
			assert.Equal(t, want, o, name)
		}
	}
}

// TestClaudeToolOutcomeOnExecuteTool: the real Claude Code normalizer puts
// a failed call's outcome on the tool.execution child; the processor
// carries it onto the execute_tool span of the same call in the batch, the
// span span_metrics counts per tool. The spans have the shape of
// traces-claude-code-2.1.272-spans.otlp.jsonl (claude_code.tool with
// tool_name and tool_use_id, its claude_code.tool.execution child with
// success false).
func TestClaudeToolOutcomeOnExecuteTool(t *testing.T) {
	h := newHarness(t, defaultAgents, nil, nil)
	defer h.shutdown()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "claude-code")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("com.anthropic.claude_code.tracing")
	tool := ss.Spans().AppendEmpty()
	tool.SetName("claude_code.tool")
	tool.SetTraceID(traceID(3))
	tool.SetSpanID([8]byte{1})
	tool.Attributes().PutStr("span.type", "tool")
	tool.Attributes().PutStr("session.id", "sess-1")
	tool.Attributes().PutStr("tool_name", "Bash")
	tool.Attributes().PutStr("tool_use_id", "toolu_01")
	exec := ss.Spans().AppendEmpty()
	exec.SetName("claude_code.tool.execution")
	exec.SetTraceID(traceID(3))
	exec.SetSpanID([8]byte{2})
	exec.SetParentSpanID([8]byte{1})
	exec.Attributes().PutStr("span.type", "tool.execution")
	exec.Attributes().PutStr("session.id", "sess-1")
	exec.Attributes().PutBool("success", false)
	exec.Attributes().PutStr("error", "Exit code 1")

	spans := h.consumeSpans(td)
	require.Len(t, spans, 2)
	assert.Equal(t, "execute_tool Bash", spans[0].Name())
	assert.Equal(t, ptrace.StatusCodeError, spans[0].Status().Code(), "the call's failure is on execute_tool")
	et, ok := spans[0].Attributes().Get(agentevent.AttrErrorType)
	require.True(t, ok)
	assert.Equal(t, "tool_error", et.Str())
	st, _ := spans[0].Attributes().Get(agentevent.AttrToolStatus)
	assert.Equal(t, "error", st.Str())
	assert.Equal(t, ptrace.StatusCodeError, spans[1].Status().Code())
}

// TestNativeSpanCaptures: every span of the trace captures goes through,
// each one of a known agent marked agent.origin, and the normalized ones
// counted.
func TestNativeSpanCaptures(t *testing.T) {
	roots := vendortest.FixtureRoots(t)
	vendortest.SkipIfAbsent(t, filepath.Join(roots[0], "native_otel"))
	for _, agent := range []string{"claude_code", "codex"} {
		h := newHarness(t, defaultAgents, nil, nil)
		var in, out, normalized int
		for _, root := range roots {
			fs, err := filepath.Glob(filepath.Join(root, "native_otel", agent, "traces-*.otlp.jsonl"))
			require.NoError(t, err)
			for _, f := range fs {
				for _, line := range readOTLPLines(t, f) {
					td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(line)
					require.NoError(t, err, f)
					in += td.SpanCount()
					for _, s := range h.consumeSpans(td) {
						out++
						v, ok := s.Attributes().Get(agentevent.AttrOrigin)
						assert.True(t, ok && v.Str() == agentevent.OriginNative, "%s: %s", f, s.Name())
						if _, ok := s.Attributes().Get("gen_ai.operation.name"); ok {
							normalized++
						}
					}
				}
			}
		}
		require.Positive(t, in, agent)
		assert.Equal(t, in, out, "%s: no span dropped (one source, no files)", agent)
		assert.Positive(t, normalized, agent)
		h.shutdown()
	}
}
