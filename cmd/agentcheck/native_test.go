// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/tests/testenv"
)

// nativeEvent is an event as agent_native emits it.
func nativeEvent(src agentevent.Source, id string, in, out int64) agentevent.Event {
	ev := agentevent.Event{
		Source: src, SessionID: "s1", EventID: id, Type: agentevent.TypeAssistantMessage,
		Attributes: map[string]any{agentevent.AttrOrigin: agentevent.OriginNative},
	}
	if in > 0 || out > 0 {
		ev.TokensInput, ev.TokensOutput = agentevent.Int(in), agentevent.Int(out)
	}
	return ev
}

func TestAnalyzeNative(t *testing.T) {
	capture := &nativeCapture{Files: []string{"a", "b"}, Records: 10, Tokens: nativeTokens{In: 1500, Out: 70}}
	events := []agentevent.Event{
		nativeEvent(agentevent.Source("codex"), "e1", 1000, 50),
		nativeEvent(agentevent.Source("codex"), "e2", 500, 20),
		nativeEvent(agentevent.Source("codex"), "e3", 0, 0),
		nativeEvent(agentevent.Source("claude_code"), "other agent", 99, 99),
	}
	for _, tc := range []struct {
		name     string
		outcomes map[string]int64
		events   []agentevent.Event
		problems []string
	}{
		{
			name:     "agrees",
			outcomes: map[string]int64{"mapped": 7, "ignored": 1, "unmapped": 2},
			events:   events,
		},
		{
			// A Codex model call before any prompt of its conversation is
			// still an event with its tokens: the comparison is over events.
			name:     "tokens over events, whatever their turn",
			outcomes: map[string]int64{"mapped": 10},
			events:   append(events[:2:2], func() agentevent.Event { e := events[2]; e.ParentEventID = ""; return e }()),
		},
		{
			name:     "a record not counted",
			outcomes: map[string]int64{"mapped": 7, "ignored": 1, "unmapped": 1},
			events:   events,
			problems: []string{"10 records sent, agent_native counted 9 (mapped 7, ignored 1, unmapped 1, passed 0)"},
		},
		{
			name:     "tokens lost",
			outcomes: map[string]int64{"mapped": 10},
			events:   events[1:],
			problems: []string{"tokens in/out: events 500/20, captures 1500/70"},
		},
		{
			name:     "mapped, nothing written",
			outcomes: map[string]int64{"mapped": 10},
			problems: []string{"10 records mapped, no event written", "tokens in/out: events 0/0, captures 1500/70"},
		},
		{
			name:     "an event without its origin",
			outcomes: map[string]int64{"mapped": 10},
			events: append(events[:1:1], func() agentevent.Event {
				e := nativeEvent(agentevent.Source("codex"), "e2", 500, 20)
				e.Attributes = nil
				return e
			}()),
			problems: []string{"event e2 of session s1 has no agent.origin=otlp"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := analyzeNative(agentevent.Source("codex"), capture, tc.outcomes, tc.events)
			assert.Equal(t, "codex", r.Agent)
			assert.Equal(t, 2, r.Files)
			assert.Equal(t, tc.problems, r.Problems)
			assert.Len(t, r.failures(), len(tc.problems))
			for _, f := range r.failures() {
				assert.True(t, strings.HasPrefix(f, "codex (native OTLP): "), f)
			}
		})
	}
}

// TestCaptureTokens: the token attributes of the model-call records in
// either wire type, records counted by the agent's service.name. The
// records copy the shapes of logs-claude-code-2.1.272-api.otlp.jsonl
// (api_request: intValue counts) and
// logs-codex-app-server-0.155.0-alpha.9.2-sse.otlp.jsonl (sse_event
// response.completed: input and output counts as decimal strings).
func TestCaptureTokens(t *testing.T) {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "claude-code")
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	a := lrs.AppendEmpty().Attributes()
	a.PutStr("event.name", "api_request")
	a.PutInt("input_tokens", 2)
	a.PutInt("output_tokens", 183)
	a.PutInt("cache_read_tokens", 30632)
	a.PutInt("cache_creation_tokens", 18830)
	a = lrs.AppendEmpty().Attributes()
	a.PutStr("event.name", "assistant_response")
	a.PutInt("output_tokens", 1000) // not a model call's usage record

	rl = ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "codex-app-server")
	lrs = rl.ScopeLogs().AppendEmpty().LogRecords()
	a = lrs.AppendEmpty().Attributes()
	a.PutStr("event.name", "codex.sse_event")
	a.PutStr("event.kind", "response.completed")
	a.PutStr("input_token_count", "21836")
	a.PutStr("output_token_count", "412")
	a.PutInt("cached_token_count", 17408)
	a.PutStr("tool_token_count", "22248")
	a = lrs.AppendEmpty().Attributes()
	a.PutStr("event.name", "codex.sse_event")
	a.PutStr("event.kind", "response.output_item.done")
	a.PutStr("input_token_count", "5")

	n, tok := captureTokens(agentevent.Source("claude_code"), ld)
	assert.Equal(t, 2, n)
	assert.Equal(t, nativeTokens{In: 2 + 30632 + 18830, Out: 183}, tok)
	n, tok = captureTokens(agentevent.Source("codex"), ld)
	assert.Equal(t, 2, n)
	assert.Equal(t, nativeTokens{In: 21836, Out: 412}, tok)
}

func TestParseOutcomes(t *testing.T) {
	text := `# HELP otelcol_agent_native_records Number of log records of a known agent, by what became of them.
# TYPE otelcol_agent_native_records counter
otelcol_agent_native_records{agent="claude_code",otel_scope_name="github.com/agentotel/agentotel/processor/agentnativeprocessor",outcome="mapped",processor="agent_native"} 41
otelcol_agent_native_records{agent="claude_code",outcome="ignored",processor="agent_native"} 12
otelcol_agent_native_records_total{agent="codex",outcome="unmapped",processor="agent_native",quoted="a \"b\", c"} 2
otelcol_agent_native_recordsx{agent="codex",outcome="mapped"} 99
otelcol_processor_incoming_items_total{processor="agent_native"} 60
`
	got, err := parseOutcomes(strings.NewReader(text))
	require.NoError(t, err)
	assert.Equal(t, map[string]map[string]int64{
		"claude_code": {"mapped": 41, "ignored": 12},
		"codex":       {"unmapped": 2},
	}, got)
}

// TestNativeCaptures runs the native part over the captures in
// ../shared/fixtures/native_otel (read in place) with the built collector
// ($AGENTOTEL_COLLECTOR): every record counted, the events' tokens those of
// the captures.
func TestNativeCaptures(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the built collector")
	}
	collector := os.Getenv("AGENTOTEL_COLLECTOR")
	if collector == "" {
		t.Skip("AGENTOTEL_COLLECTOR not set (make test sets it to the built collector)")
	}
	roots := testenv.FixtureRoots(t)
	vendortest.SkipIfAbsent(t, filepath.Join(roots[0], "native_otel"))
	reports, note, err := checkNative(t.Context(), collector, roots, t.TempDir(), 2*time.Minute)
	require.NoError(t, err)
	require.Empty(t, note)
	var out bytes.Buffer
	printNative(&out, reports)
	t.Log(out.String())
	require.Len(t, reports, 2)
	for _, r := range reports {
		assert.Empty(t, r.Problems, r.Agent)
		assert.Positive(t, r.Mapped, r.Agent)
		assert.Positive(t, r.CaptureTokens.In, r.Agent)
	}
}

func TestNativeSkippedWithoutCaptures(t *testing.T) {
	reports, note, err := checkNative(t.Context(), "/nonexistent/collector", []string{t.TempDir()}, t.TempDir(), time.Second)
	require.NoError(t, err)
	assert.Nil(t, reports)
	assert.Contains(t, note, "skipped")
}
