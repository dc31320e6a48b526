// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
)

func TestCcusageKey(t *testing.T) {
	tests := []struct {
		src              agentevent.Source
		logFile, session string
		want             string
	}{
		{agentevent.Source("claude_code"), "/h/.claude/projects/p/s1.jsonl", "s1", "s1"},
		{agentevent.Source("claude_code"), "/h/.claude/projects/p/s1/subagents/agent-a1.jsonl", "s1", "s1"},
		{agentevent.Source("claude_code"), "/h/.claude/projects/p/agent-0c4c3cf8.jsonl", "s1", "agent-0c4c3cf8"},
		{agentevent.Source("codex"), "/h/.codex/sessions/2025/01/01/rollout-2025-01-01T00-00-00-abc.jsonl", "abc", "rollout-2025-01-01T00-00-00-abc"},
		{agentevent.Source("pi"), "/h/.pi/agent/sessions/--w--/2026-04-20T03-21-29-045Z_019da8e7.jsonl", "019da8e7", "019da8e7"},
		{agentevent.Source("gemini"), "/h/.gemini/tmp/p/chats/session-x.json", "g1", "g1"},
		{agentevent.Source("opencode"), "/h/.local/share/opencode/storage", "ses_1", "ses_1"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, ccusageKey(tt.src, tt.logFile, tt.session), tt.logFile)
	}
}

// Gemini's ccusage outputTokens leave thoughts out; totalTokens has them.
func TestParseCcusageGeminiThoughts(t *testing.T) {
	out := []byte(`{"sessions":[{"sessionId":"g1","inputTokens":100,"outputTokens":10,"cacheReadTokens":50,"cacheCreationTokens":0,"totalTokens":175}]}`)
	cc, err := parseCcusage(agents.Lookup(agentevent.Source("gemini")), out)
	require.NoError(t, err)
	require.Len(t, cc, 1)
	assert.Equal(t, ccSession{Key: "g1", Tokens: tokens{Input: 100, Output: 10, CacheRead: 50}, Reasoning: 15}, cc[0])

	// Codex: a session is named by its file.
	cc, err = parseCcusage(agents.Lookup(agentevent.Source("codex")), []byte(`{"sessions":[{"sessionId":"2025/01/01/rollout-x","sessionFile":"rollout-x","inputTokens":1,"outputTokens":2,"cacheReadTokens":3,"totalTokens":6}]}`))
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

// rootSpan is the root of a completed turn.
func rootSpan(trace, id, session string, end time.Time) span {
	return span{traceID: trace, spanID: id, end: pcommon.NewTimestampFromTime(end), attrs: map[string]any{
		"gen_ai.operation.name": "invoke_agent", agentevent.AttrSessionID: session, "agent.turn.status": "completed",
	}}
}

// The definitions explain a difference; anything else is a problem.
func TestAnalyzeDefinitions(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	events := []agentevent.Event{
		usageEvent(agentevent.Source("gemini"), "g1", "e1", "/h/.gemini/tmp/a/chats/s.json", 100, 25, 50),
		usageEvent(agentevent.Source("gemini"), "g2", "e2", "/h/.gemini/tmp/a/chats/t.json", 10, 1, 0),
	}
	spans := []span{
		rootSpan("t1", "r1", "g1", t0.Add(time.Second)),
		chatSpan("t1", "c1", "r1", "g1", 100, 25, 50, t0),
		rootSpan("t2", "r2", "g2", t0.Add(time.Second)),
		chatSpan("t2", "c2", "r2", "g2", 10, 1, 0, t0),
	}
	cc := []ccSession{
		// Thoughts (15) left out of ccusage's output.
		{Key: "g1", Tokens: tokens{Input: 100, Output: 10, CacheRead: 50}, Reasoning: 15},
		// g2 present under two directories: ccusage lists it twice.
		{Key: "g2", Tokens: tokens{Input: 10, Output: 1}},
		{Key: "g2", Tokens: tokens{Input: 10, Output: 1}},
	}
	r := analyze(agentevent.Source("gemini"), events, spans, nil, cc)
	assert.Empty(t, r.failures())
	require.Len(t, r.Rows, 2)
	assert.Equal(t, []string{defReasoning}, r.Rows[0].Definitions)
	assert.Equal(t, []string{defCopyOnce}, r.Rows[1].Definitions)
	assert.Equal(t, map[string]int{"completed": 2}, r.TurnsByStatus)

	// The same figures off by one output token: unexplained.
	cc[0].Tokens.Output = 9
	r = analyze(agentevent.Source("gemini"), events, spans, nil, cc)
	require.Len(t, r.failures(), 1)
	assert.Contains(t, r.failures()[0], "events (in 100 out 25 cr 50 cw 0) and ccusage (in 100 out 24 cr 50 cw 0) differ")

	// Two copies that differ are two sessions to ccusage, not one copy.
	cc[0].Tokens.Output = 10
	cc[2].Tokens.Output = 2
	r = analyze(agentevent.Source("gemini"), events, spans, nil, cc)
	require.Len(t, r.failures(), 1)
	assert.Contains(t, r.failures()[0], "session g2")
}

// Codex rollouts and Claude Code flat agent files are matched to our
// sessions through the files the events came from.
func TestAnalyzeSessionsByFile(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	events := []agentevent.Event{
		usageEvent(agentevent.Source("claude_code"), "s1", "e1", "/h/p/s1.jsonl", 10, 5, 0),
		usageEvent(agentevent.Source("claude_code"), "s1", "e2", "/h/p/agent-w1.jsonl", 3, 1, 0),
	}
	spans := []span{
		rootSpan("t1", "r1", "s1", t0),
		chatSpan("t1", "c1", "r1", "s1", 10, 5, 0, t0),
		chatSpan("t1", "c2", "r1", "s1", 3, 1, 0, t0),
	}
	cc := []ccSession{{Key: "s1", Tokens: tokens{Input: 10, Output: 5}}, {Key: "agent-w1", Tokens: tokens{Input: 3, Output: 1}}}
	r := analyze(agentevent.Source("claude_code"), events, spans, nil, cc)
	assert.Empty(t, r.failures())
	require.Len(t, r.Rows, 1)
	assert.Equal(t, tokens{Input: 13, Output: 6}, r.Rows[0].Ccusage)
	assert.Equal(t, []string{defFileNames}, r.Rows[0].Definitions)

	// A ccusage session with usage and no events of ours.
	r = analyze(agentevent.Source("claude_code"), events, spans, nil, append(cc, ccSession{Key: "lost", Tokens: tokens{Output: 1}}))
	assert.Equal(t, []string{"claude-code: ccusage session lost has no events"}, r.failures())
}

// Structure: duplicates, open calls, orphans, roots.
func TestAnalyzeStructure(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	call := func(id, callID string) agentevent.Event {
		return agentevent.Event{Source: agentevent.Source("pi"), SessionID: "s", EventID: id, Type: agentevent.TypeToolCall, ToolCallID: callID}
	}
	events := []agentevent.Event{
		call("e1", "c1"), call("e1", "c2"), // a duplicate event id
		call("e3", "c3"),
		{Source: agentevent.Source("pi"), SessionID: "s", EventID: "e4", Type: agentevent.TypeToolResult, ToolCallID: "c1"},
		{Source: agentevent.Source("pi"), SessionID: "s", EventID: "e5", Type: agentevent.TypeLog, Unparsed: "malformed_json"},
	}
	tool := func(trace, id, parent, callID, status string, end time.Time) span {
		return span{traceID: trace, spanID: id, parentID: parent, end: pcommon.NewTimestampFromTime(end), attrs: map[string]any{
			"gen_ai.operation.name": "execute_tool", agentevent.AttrSessionID: "s",
			agentevent.AttrToolCallID: callID, agentevent.AttrToolStatus: status,
		}}
	}
	spans := []span{
		rootSpan("t1", "r1", "s", t0),
		tool("t1", "x1", "r1", "c1", "success", t0),
		tool("t1", "x2", "r1", "c2", "in_progress", t0.Add(time.Second)), // open and marked, but after its root's end
		tool("t1", "x3", "r1", "c3", "success", t0),                      // unanswered, not marked
		tool("t2", "x4", "gone", "c4", "success", t0),                    // orphan, and a trace with no root
	}
	r := analyze(agentevent.Source("pi"), events, spans, nil, nil)
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
	ev := agentevent.Event{Source: agentevent.Source("copilot_cli"), SessionID: "c1", EventID: "e1", TokensOutput: agentevent.Int(7)}
	spans := []span{rootSpan("t1", "r1", "c1", t0), chatSpan("t1", "x", "r1", "c1", 0, 7, 0, t0)}
	spans[1].attrs[agentevent.AttrTokensInput] = int64(0)
	r := analyze(agentevent.Source("copilot_cli"), []agentevent.Event{ev}, spans, nil, []ccSession{})
	assert.Empty(t, r.failures())
	assert.Equal(t, []string{defCopilotNoShutdown}, r.Rows[0].Definitions)

	// Input tokens without a shutdown record are not explained.
	ev.TokensInput = agentevent.Int(3)
	spans[1].attrs[agentevent.AttrTokensInput] = int64(3)
	r = analyze(agentevent.Source("copilot_cli"), []agentevent.Event{ev}, spans, nil, []ccSession{})
	assert.Len(t, r.failures(), 1)
}

// priced gives an event a cost, as gen_ai_cost does, and a model.
func priced(ev agentevent.Event, model string, cost float64, source string) agentevent.Event {
	ev.Model = model
	ev.CostUSD = agentevent.Float(cost)
	agentevent.SetAttr(&ev, agentevent.AttrCostSource, source)
	return ev
}

// withCost gives a chat span a cost.
func withCost(s span, cost float64) span {
	s.attrs[agentevent.AttrCostUSD] = cost
	return s
}

// Dollars: the events' cost, their chat spans' in the logs pipeline, the
// chat spans priced in the traces pipeline and ccusage's must agree.
func TestAnalyzeDollars(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	ev := priced(usageEvent(agentevent.Source("claude_code"), "s1", "e1", "/h/p/s1.jsonl", 100, 10, 0), "claude-opus-4-6", 0.25, "table")
	agentevent.SetAttr(&ev, agentevent.AttrTokensCacheCreation1h, int64(40))
	spans := []span{rootSpan("t1", "r1", "s1", t0), withCost(chatSpan("t1", "c1", "r1", "s1", 100, 10, 0, t0), 0.25)}
	pricedSpans := []span{rootSpan("t1", "r1", "s1", t0), withCost(chatSpan("t1", "c1", "r1", "s1", 100, 10, 0, t0), 0.25)}
	pricedSpans[1].attrs[agentevent.AttrTokensCacheCreation1h] = int64(40)
	cc := []ccSession{{Key: "s1", Tokens: tokens{Input: 100, Output: 10}, Cost: 0.25}}
	r := analyze(agentevent.Source("claude_code"), []agentevent.Event{ev}, spans, pricedSpans, cc)
	assert.Empty(t, r.failures())
	assert.Equal(t, dollars{Events: 0.25, LogsChat: 0.25, TracesChat: 0.25, Ccusage: 0.25, HasCcusage: true, CcusageReported: 0.25}, r.Rows[0].Cost)

	// The traces pipeline's chat span lacks the 1-hour writes: a problem,
	// and the check says what the chat spans lack.
	delete(pricedSpans[1].attrs, agentevent.AttrTokensCacheCreation1h)
	pricedSpans[1].attrs[agentevent.AttrCostUSD] = 0.2
	r = analyze(agentevent.Source("claude_code"), []agentevent.Event{ev}, spans, pricedSpans, cc)
	assert.Equal(t, []string{"claude-code: session s1: gen_ai_cost in the logs pipeline ($0.250000) and in the traces pipeline ($0.200000) differ " +
		"(the chat spans carry 0 of the events' 40 1-hour cache write tokens)"}, r.failures())

	// The events' cost not on their chat spans; ccusage off by a cent.
	pricedSpans[1].attrs[agentevent.AttrCostUSD] = 0.24
	spans[1].attrs[agentevent.AttrCostUSD] = 0.24
	cc[0].Cost = 0.26
	r = analyze(agentevent.Source("claude_code"), []agentevent.Event{ev}, spans, pricedSpans, cc)
	assert.Equal(t, []string{
		"claude-code: session s1: the events' cost ($0.250000) and their chat spans' ($0.240000) differ",
		"claude-code: session s1: cost ($0.250000) and ccusage's ($0.260000) differ",
	}, r.failures())
}

// A cost the log states as $0 (OpenCode's free models) wins; ccusage prices
// the model anyway. Its cost of that model is left out, only when every
// priced response of that model states $0.
func TestAnalyzeStatedZeroCost(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	free := priced(usageEvent(agentevent.Source("opencode"), "o1", "e1", "/h/opencode.db", 100, 10, 0), "glm-4.7-free", 0, "log")
	paid := priced(usageEvent(agentevent.Source("opencode"), "o1", "e2", "/h/opencode.db", 10, 1, 0), "claude-sonnet-4-5", 0.5, "log")
	spans := []span{
		rootSpan("t1", "r1", "o1", t0),
		withCost(chatSpan("t1", "c1", "r1", "o1", 100, 10, 0, t0), 0),
		withCost(chatSpan("t1", "c2", "r1", "o1", 10, 1, 0, t0), 0.5),
	}
	cc := []ccSession{{
		Key: "o1", Tokens: tokens{Input: 110, Output: 11}, Cost: 0.507,
		ModelCosts: map[string]float64{"glm-4.7-free": 0.007, "claude-sonnet-4-5": 0.5},
	}}
	r := analyze(agentevent.Source("opencode"), []agentevent.Event{free, paid}, spans, spans, cc)
	assert.Empty(t, r.failures())
	assert.Equal(t, []string{defStatedZero}, r.Rows[0].CostDefinitions)
	assert.InDelta(t, 0.5, r.Rows[0].Cost.Ccusage, 1e-12)
	assert.InDelta(t, 0.507, r.Rows[0].Cost.CcusageReported, 1e-12)

	// A model with a priced response besides its $0 ones: not explained.
	other := priced(usageEvent(agentevent.Source("opencode"), "o1", "e3", "/h/opencode.db", 0, 0, 0), "glm-4.7-free", 0.001, "table")
	spans[1].attrs[agentevent.AttrCostUSD] = 0.001
	r = analyze(agentevent.Source("opencode"), []agentevent.Event{free, paid, other}, spans, spans, cc)
	assert.Equal(t, []string{"opencode: session o1: cost ($0.501000) and ccusage's ($0.507000) differ"}, r.failures())
}

// Kilo CLI adds a subagent session's cost to the message that ran it; the
// events keep it out (agent.cost.subagents_usd), ccusage counts it in the
// parent session: taken out of ccusage's figure, and only that much.
func TestAnalyzeSubagentCost(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	parent := priced(usageEvent(agentevent.Source("kilo"), "k1", "e1", "/h/kilo.db", 100, 10, 0), "anthropic/claude-sonnet-4.5", 0.25, "log")
	parent.Attributes[agentevent.AttrSubagentsCostUSD] = 0.125
	spans := []span{
		rootSpan("t1", "r1", "k1", t0),
		withCost(chatSpan("t1", "c1", "r1", "k1", 100, 10, 0, t0), 0.25),
	}
	cc := []ccSession{{Key: "k1", Tokens: tokens{Input: 100, Output: 10}, Cost: 0.375}}
	r := analyze(agentevent.Source("kilo"), []agentevent.Event{parent}, spans, spans, cc)
	assert.Empty(t, r.failures())
	assert.Equal(t, []string{defSubagentCost}, r.Rows[0].CostDefinitions)
	assert.InDelta(t, 0.25, r.Rows[0].Cost.Ccusage, 1e-12)
	assert.InDelta(t, 0.375, r.Rows[0].Cost.CcusageReported, 1e-12)

	cc[0].Cost = 0.5
	r = analyze(agentevent.Source("kilo"), []agentevent.Event{parent}, spans, spans, cc)
	assert.Equal(t, []string{"kilo: session k1: cost ($0.250000) and ccusage's ($0.375000) differ"}, r.failures())
}

// A response that names no model is priced as the agent's fallback model,
// as ccusage does (isFallback): listed, and both sides must say so.
func TestAnalyzeFallbackModel(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	ev := priced(usageEvent(agentevent.Source("codex"), "x1", "e1", "/h/.codex/sessions/2025/01/01/rollout-a.jsonl", 100, 10, 0), "", 0.001, "fallback")
	spans := []span{rootSpan("t1", "r1", "x1", t0), withCost(chatSpan("t1", "c1", "r1", "x1", 100, 10, 0, t0), 0.001)}
	cc := []ccSession{{Key: "rollout-a", Tokens: tokens{Input: 100, Output: 10}, Cost: 0.001, Fallback: true}}
	r := analyze(agentevent.Source("codex"), []agentevent.Event{ev}, spans, spans, cc)
	assert.Empty(t, r.failures())
	assert.Equal(t, []string{defFileNames, defFallback}, r.Rows[0].CostDefinitions)

	cc[0].Fallback = false
	r = analyze(agentevent.Source("codex"), []agentevent.Event{ev}, spans, spans, cc)
	assert.Equal(t, []string{"codex: session x1: priced as a fallback model: here true, by ccusage false"}, r.failures())
}

// ccusage's dollars: totalCost (costUSD for Codex), the cost by model, and
// Codex's fallback mark; Gemini copies of one chat count once, dollars too.
func TestParseCcusageCosts(t *testing.T) {
	cc, err := parseCcusage(agents.Lookup(agentevent.Source("opencode")), []byte(`{"sessions":[{"sessionId":"o1","inputTokens":1,"outputTokens":2,"totalTokens":3,"totalCost":0.5,`+
		`"modelBreakdowns":[{"modelName":"GLM-4.7-free","cost":0.2},{"modelName":"[pi] claude-sonnet-4-5","cost":0.3}]}]}`))
	require.NoError(t, err)
	assert.Equal(t, []ccSession{{
		Key: "o1", Tokens: tokens{Input: 1, Output: 2}, Cost: 0.5,
		ModelCosts: map[string]float64{"glm-4.7-free": 0.2, "claude-sonnet-4-5": 0.3},
	}}, cc)

	cc, err = parseCcusage(agents.Lookup(agentevent.Source("codex")), []byte(`{"sessions":[{"sessionId":"2025/01/01/rollout-x","sessionFile":"rollout-x","costUSD":0.0175,`+
		`"models":{"gpt-5":{"isFallback":true}}}]}`))
	require.NoError(t, err)
	assert.Equal(t, []ccSession{{Key: "rollout-x", Cost: 0.0175, Fallback: true}}, cc)

	t0 := time.Unix(1_700_000_000, 0)
	ev := priced(usageEvent(agentevent.Source("gemini"), "g1", "e1", "/h/.gemini/tmp/a/chats/s.json", 10, 1, 0), "gemini-2.5-pro", 0.1, "table")
	spans := []span{rootSpan("t1", "r1", "g1", t0), withCost(chatSpan("t1", "c1", "r1", "g1", 10, 1, 0, t0), 0.1)}
	copies := []ccSession{{Key: "g1", Tokens: tokens{Input: 10, Output: 1}, Cost: 0.1}, {Key: "g1", Tokens: tokens{Input: 10, Output: 1}, Cost: 0.1}}
	r := analyze(agentevent.Source("gemini"), []agentevent.Event{ev}, spans, spans, copies)
	assert.Empty(t, r.failures())
	assert.Equal(t, []string{defCopyOnce}, r.Rows[0].CostDefinitions)
}

// -fixtures is repeatable; the newer and the newest real files are staged
// with them: -fixtures-new (-fixtures-next), else $AGENTOTEL_FIXTURES_NEW
// ($AGENTOTEL_FIXTURES_NEXT), else fixtures-new (fixtures-next) beside the
// first root when it exists; "none" leaves them out.
func TestFixtureRoots(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"fixtures", "fixtures-new", "other"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	fx, newer, other := filepath.Join(dir, "fixtures"), filepath.Join(dir, "fixtures-new"), filepath.Join(dir, "other")
	t.Setenv("AGENTOTEL_FIXTURES_NEW", "")
	assert.Equal(t, []string{fx, newer}, fixtureRoots(rootList{fx}, nil, "none"))
	assert.Equal(t, []string{fx, other, newer}, fixtureRoots(rootList{fx, other}, nil, "none"))
	assert.Equal(t, []string{fx}, fixtureRoots(rootList{fx}, []string{"none"}, "none"))
	assert.Equal(t, []string{fx, other}, fixtureRoots(rootList{fx}, []string{other}, "none"))
	lone := filepath.Join(t.TempDir(), "corpus")
	assert.Equal(t, []string{lone}, fixtureRoots(rootList{lone}, nil, "none"), "no fixtures-new beside it")
	t.Setenv("AGENTOTEL_FIXTURES_NEW", other)
	assert.Equal(t, []string{fx, other}, fixtureRoots(rootList{fx}, nil, "none"))
	assert.Equal(t, []string{"../shared/fixtures", other}, fixtureRoots(nil, nil, "none"))
	require.NoError(t, os.MkdirAll(lone, 0o755))
	assert.Equal(t, []string{fx, other, lone}, fixtureRoots(rootList{fx}, nil, lone), "the constructed corpus, last")
	assert.Equal(t, []string{fx, other}, fixtureRoots(rootList{fx}, nil, filepath.Join(dir, "absent")), "no constructed corpus there")
	next := filepath.Join(dir, "fixtures-next")
	require.NoError(t, os.MkdirAll(next, 0o755))
	t.Setenv("AGENTOTEL_FIXTURES_NEW", "")
	t.Setenv("AGENTOTEL_FIXTURES_NEXT", "")
	assert.Equal(t, []string{fx, newer, next, lone}, fixtureRoots(rootList{fx}, nil, lone), "the newer, then the newest files")
	assert.Equal(t, []string{fx, newer, lone}, fixtureRoots(rootList{fx}, []string{"", "none"}, lone))
}

// Two roots staged into one home: each agent's files where it looks for
// them, an OpenCode database in a data directory of its own, a Gemini case
// folder (JSONL chats) as a project; two roots with different files at one
// path are an error, not a silent overwrite.
func TestStageTwoRoots(t *testing.T) {
	put := func(path, data string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(data), 0o600))
	}
	a, b := filepath.Join(t.TempDir(), "fixtures"), filepath.Join(t.TempDir(), "fixtures-new")
	put(filepath.Join(a, "codex", "v1.jsonl"), "a")
	put(filepath.Join(a, "opencode", "tree", "storage", "session", "s.json"), "{}")
	put(filepath.Join(b, "codex", "v2.jsonl"), "b")
	put(filepath.Join(b, "gemini", "jsonl_case", "session-x.jsonl"), "{}")
	put(filepath.Join(b, "opencode", "sqlite_case", "opencode.db"), "db")
	put(filepath.Join(b, "opencode", "sqlite_case", "opencode.db-wal"), "wal")
	put(filepath.Join(b, "copilot_cli", "case", "session-state", "s1", "events.jsonl"), "{}")
	put(filepath.Join(b, "copilot_cli", "case", "SOURCES.md"), "not a session")

	home := t.TempDir()
	st, err := stageFixtures([]string{a, b}, home)
	require.NoError(t, err)
	for _, f := range []string{
		".codex/sessions/2025/01/01/rollout-v1.jsonl",
		".codex/sessions/2025/01/01/rollout-v2.jsonl",
		".local/share/opencode/storage/session/s.json",
		".gemini/tmp/jsonl_case/chats/session-x.jsonl",
		".local/share/opencode-fixtures/1-sqlite_case/opencode.db",
		".local/share/opencode-fixtures/1-sqlite_case/opencode.db-wal",
		".copilot/session-state/s1/events.jsonl",
	} {
		assert.FileExists(t, filepath.Join(home, f))
	}
	assert.NoFileExists(t, filepath.Join(home, ".copilot", "SOURCES.md"))
	assert.Equal(t, []string{filepath.Join(home, ".local/share/opencode-fixtures/1-sqlite_case")}, st.dataDirs[agentevent.Source("opencode")])

	put(filepath.Join(b, "codex", "v1.jsonl"), "another v1")
	_, err = stageFixtures([]string{a, b}, t.TempDir())
	assert.ErrorContains(t, err, "another fixture is already staged at")
}
