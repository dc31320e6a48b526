// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agentotel/agentotel/internal/agentevent"
)

func TestCcusageKey(t *testing.T) {
	tests := []struct {
		src              agentevent.Source
		logFile, session string
		want             string
	}{
		{agentevent.SourceClaudeCode, "/h/.claude/projects/p/s1.jsonl", "s1", "s1"},
		{agentevent.SourceClaudeCode, "/h/.claude/projects/p/s1/subagents/agent-a1.jsonl", "s1", "s1"},
		{agentevent.SourceClaudeCode, "/h/.claude/projects/p/agent-0c4c3cf8.jsonl", "s1", "agent-0c4c3cf8"},
		{agentevent.SourceCodex, "/h/.codex/sessions/2025/01/01/rollout-2025-01-01T00-00-00-abc.jsonl", "abc", "rollout-2025-01-01T00-00-00-abc"},
		{agentevent.SourcePi, "/h/.pi/agent/sessions/--w--/2026-04-20T03-21-29-045Z_019da8e7.jsonl", "019da8e7", "019da8e7"},
		{agentevent.SourceGemini, "/h/.gemini/tmp/p/chats/session-x.json", "g1", "g1"},
		{agentevent.SourceOpenCode, "/h/.local/share/opencode/storage", "ses_1", "ses_1"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, ccusageKey(tt.src, tt.logFile, tt.session), tt.logFile)
	}
}

// Gemini's ccusage outputTokens leave thoughts out; totalTokens has them.
func TestParseCcusageGeminiThoughts(t *testing.T) {
	out := []byte(`{"sessions":[{"sessionId":"g1","inputTokens":100,"outputTokens":10,"cacheReadTokens":50,"cacheCreationTokens":0,"totalTokens":175}]}`)
	cc, err := parseCcusage(agentevent.SourceGemini, out)
	require.NoError(t, err)
	require.Len(t, cc, 1)
	assert.Equal(t, ccSession{Key: "g1", Tokens: tokens{Input: 100, Output: 10, CacheRead: 50}, Reasoning: 15}, cc[0])

	// Codex: a session is named by its file.
	cc, err = parseCcusage(agentevent.SourceCodex, []byte(`{"sessions":[{"sessionId":"2025/01/01/rollout-x","sessionFile":"rollout-x","inputTokens":1,"outputTokens":2,"cacheReadTokens":3,"totalTokens":6}]}`))
	require.NoError(t, err)
	assert.Equal(t, []ccSession{{Key: "rollout-x", Tokens: tokens{Input: 1, Output: 2, CacheRead: 3}}}, cc)
}

func usageEvent(src agentevent.Source, session, id, logFile string, in, out, read int64) agentevent.Event {
	return agentevent.Event{
		Source: src, SessionID: session, EventID: id, LogFile: logFile, Type: agentevent.TypeAssistantMessage,
		TokensInput: agentevent.Int(in + read), TokensOutput: agentevent.Int(out), TokensCached: agentevent.Int(read),
	}
}

func chatSpan(trace, id, parent, session string, in, out, read int64, end time.Time) span {
	return span{traceID: trace, spanID: id, parentID: parent, end: pcommon.NewTimestampFromTime(end), attrs: map[string]any{
		"gen_ai.operation.name":            "chat",
		agentevent.AttrSessionID:           session,
		agentevent.AttrTokensInput:         in + read,
		agentevent.AttrTokensOutput:        out,
		agentevent.AttrTokensCached:        read,
		agentevent.AttrTokensCacheCreation: int64(0),
	}}
}

func rootSpan(trace, id, session, status string, end time.Time) span {
	return span{traceID: trace, spanID: id, end: pcommon.NewTimestampFromTime(end), attrs: map[string]any{
		"gen_ai.operation.name": "invoke_agent", agentevent.AttrSessionID: session, "agent.turn.status": status,
	}}
}

// The definitions explain a difference; anything else is a problem.
func TestAnalyzeDefinitions(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	events := []agentevent.Event{
		usageEvent(agentevent.SourceGemini, "g1", "e1", "/h/.gemini/tmp/a/chats/s.json", 100, 25, 50),
		usageEvent(agentevent.SourceGemini, "g2", "e2", "/h/.gemini/tmp/a/chats/t.json", 10, 1, 0),
	}
	spans := []span{
		rootSpan("t1", "r1", "g1", "completed", t0.Add(time.Second)),
		chatSpan("t1", "c1", "r1", "g1", 100, 25, 50, t0),
		rootSpan("t2", "r2", "g2", "completed", t0.Add(time.Second)),
		chatSpan("t2", "c2", "r2", "g2", 10, 1, 0, t0),
	}
	cc := []ccSession{
		// Thoughts (15) left out of ccusage's output.
		{Key: "g1", Tokens: tokens{Input: 100, Output: 10, CacheRead: 50}, Reasoning: 15},
		// g2 present under two directories: ccusage lists it twice.
		{Key: "g2", Tokens: tokens{Input: 10, Output: 1}},
		{Key: "g2", Tokens: tokens{Input: 10, Output: 1}},
	}
	r := analyze(agentevent.SourceGemini, events, spans, cc)
	assert.Empty(t, r.failures())
	require.Len(t, r.Rows, 2)
	assert.Equal(t, []string{defReasoning}, r.Rows[0].Definitions)
	assert.Equal(t, []string{defCopyOnce}, r.Rows[1].Definitions)
	assert.Equal(t, map[string]int{"completed": 2}, r.TurnsByStatus)

	// The same figures off by one output token: unexplained.
	cc[0].Tokens.Output = 9
	r = analyze(agentevent.SourceGemini, events, spans, cc)
	require.Len(t, r.failures(), 1)
	assert.Contains(t, r.failures()[0], "events (in 100 out 25 cr 50 cw 0) and ccusage (in 100 out 24 cr 50 cw 0) differ")

	// Two copies that differ are two sessions to ccusage, not one copy.
	cc[0].Tokens.Output = 10
	cc[2].Tokens.Output = 2
	r = analyze(agentevent.SourceGemini, events, spans, cc)
	require.Len(t, r.failures(), 1)
	assert.Contains(t, r.failures()[0], "session g2")
}

// Codex rollouts and Claude Code flat agent files are matched to our
// sessions through the files the events came from.
func TestAnalyzeSessionsByFile(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	events := []agentevent.Event{
		usageEvent(agentevent.SourceClaudeCode, "s1", "e1", "/h/p/s1.jsonl", 10, 5, 0),
		usageEvent(agentevent.SourceClaudeCode, "s1", "e2", "/h/p/agent-w1.jsonl", 3, 1, 0),
	}
	spans := []span{
		rootSpan("t1", "r1", "s1", "completed", t0),
		chatSpan("t1", "c1", "r1", "s1", 10, 5, 0, t0),
		chatSpan("t1", "c2", "r1", "s1", 3, 1, 0, t0),
	}
	cc := []ccSession{{Key: "s1", Tokens: tokens{Input: 10, Output: 5}}, {Key: "agent-w1", Tokens: tokens{Input: 3, Output: 1}}}
	r := analyze(agentevent.SourceClaudeCode, events, spans, cc)
	assert.Empty(t, r.failures())
	require.Len(t, r.Rows, 1)
	assert.Equal(t, tokens{Input: 13, Output: 6}, r.Rows[0].Ccusage)
	assert.Equal(t, []string{defFileNames}, r.Rows[0].Definitions)

	// A ccusage session with usage and no events of ours.
	r = analyze(agentevent.SourceClaudeCode, events, spans, append(cc, ccSession{Key: "lost", Tokens: tokens{Output: 1}}))
	assert.Equal(t, []string{"claude-code: ccusage session lost has no events"}, r.failures())
}

// Structure: duplicates, open calls, orphans, roots.
func TestAnalyzeStructure(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	call := func(id, callID string) agentevent.Event {
		return agentevent.Event{Source: agentevent.SourcePi, SessionID: "s", EventID: id, Type: agentevent.TypeToolCall, ToolCallID: callID}
	}
	events := []agentevent.Event{
		call("e1", "c1"), call("e1", "c2"), // a duplicate event id
		call("e3", "c3"),
		{Source: agentevent.SourcePi, SessionID: "s", EventID: "e4", Type: agentevent.TypeToolResult, ToolCallID: "c1"},
		{Source: agentevent.SourcePi, SessionID: "s", EventID: "e5", Type: agentevent.TypeLog, Unparsed: "malformed_json"},
	}
	tool := func(trace, id, parent, callID, status string, end time.Time) span {
		return span{traceID: trace, spanID: id, parentID: parent, end: pcommon.NewTimestampFromTime(end), attrs: map[string]any{
			"gen_ai.operation.name": "execute_tool", agentevent.AttrSessionID: "s",
			agentevent.AttrToolCallID: callID, agentevent.AttrToolStatus: status,
		}}
	}
	spans := []span{
		rootSpan("t1", "r1", "s", "completed", t0),
		tool("t1", "x1", "r1", "c1", "success", t0),
		tool("t1", "x2", "r1", "c2", "in_progress", t0.Add(time.Second)), // open and marked, but after its root's end
		tool("t1", "x3", "r1", "c3", "success", t0),                      // unanswered, not marked
		tool("t2", "x4", "gone", "c4", "success", t0),                    // orphan, and a trace with no root
	}
	r := analyze(agentevent.SourcePi, events, spans, nil)
	assert.Equal(t, 1, r.DuplicateIDs)
	assert.Equal(t, 1, r.Unparsed)
	assert.Equal(t, 1, r.UnmarkedOpen)
	assert.Equal(t, 1, r.OrphanSpans)
	assert.Equal(t, 1, r.BadRootTraces)
	assert.Equal(t, 1, r.RootEndsEarly)
	assert.Len(t, r.failures(), 6)
}

// A Copilot CLI session without a shutdown record: no ccusage session, only
// per-response output tokens in the log.
func TestAnalyzeCopilotWithoutShutdown(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	ev := agentevent.Event{Source: agentevent.SourceCopilotCLI, SessionID: "c1", EventID: "e1", TokensOutput: agentevent.Int(7)}
	spans := []span{rootSpan("t1", "r1", "c1", "completed", t0), chatSpan("t1", "x", "r1", "c1", 0, 7, 0, t0)}
	spans[1].attrs[agentevent.AttrTokensInput] = int64(0)
	r := analyze(agentevent.SourceCopilotCLI, []agentevent.Event{ev}, spans, []ccSession{})
	assert.Empty(t, r.failures())
	assert.Equal(t, []string{defCopilotNoShutdown}, r.Rows[0].Definitions)

	// Input tokens without a shutdown record are not explained.
	ev.TokensInput = agentevent.Int(3)
	spans[1].attrs[agentevent.AttrTokensInput] = int64(3)
	r = analyze(agentevent.SourceCopilotCLI, []agentevent.Event{ev}, spans, []ccSession{})
	assert.Len(t, r.failures(), 1)
}
