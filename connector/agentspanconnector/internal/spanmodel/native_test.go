// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package spanmodel

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// nativeTurn is a turn as the Claude Code native mapping gives it: a
// prompt, a model call stated by its api_request (duration, time to first
// token) and assistant_response, a tool that ran, and a second call. The
// events are built here: the connector imports no vendor package.
func nativeTurn(t0 time.Time) []agentevent.Event {
	origin := func(attrs map[string]any) map[string]any {
		a := map[string]any{agentevent.AttrOrigin: agentevent.OriginNative}
		maps.Copy(a, attrs)
		return a
	}
	ev := func(id string, typ agentevent.EventType, at time.Duration) agentevent.Event {
		return agentevent.Event{
			SchemaVersion: agentevent.SchemaVersion, Source: agentevent.Source("claude_code"), SessionID: "s1",
			EventID: id, ParentEventID: "p1", Type: typ, Timestamp: t0.Add(at), Attributes: origin(nil),
		}
	}
	prompt := ev("p1", agentevent.TypeUserMessage, 0)
	prompt.ParentEventID = ""
	call1 := ev("a1", agentevent.TypeAssistantMessage, 9*time.Second)
	call1.Model, call1.ResponseID = "claude-opus-5", "req_1"
	call1.TokensInput, call1.TokensOutput = agentevent.Int(100), agentevent.Int(10)
	call1.Attributes = origin(map[string]any{agentevent.AttrChatDurationMs: int64(4000), "agent.chat.ttft_ms": int64(1200)})
	resp1 := ev("a2", agentevent.TypeAssistantMessage, 9*time.Second)
	resp1.Model, resp1.ResponseID = "claude-opus-5", "req_1"
	resp1.Attributes = origin(map[string]any{"agent.chat.response_length": int64(25)})
	toolCall := ev("t1", agentevent.TypeToolCall, 9500*time.Millisecond)
	toolCall.ToolName, toolCall.ToolCallID = "Bash", "toolu_1"
	toolRes := ev("t2", agentevent.TypeToolResult, 10*time.Second)
	toolRes.ToolName, toolRes.ToolCallID, toolRes.ToolStatus = "Bash", "toolu_1", agentevent.ToolSuccess
	toolRes.ToolLatencyMs = agentevent.Int(500)
	call2 := ev("a3", agentevent.TypeAssistantMessage, 12*time.Second)
	call2.Model, call2.ResponseID = "claude-opus-5", "req_2"
	call2.TokensInput, call2.TokensOutput = agentevent.Int(120), agentevent.Int(5)
	call2.Attributes = origin(map[string]any{agentevent.AttrChatDurationMs: int64(1500)})
	evs := []agentevent.Event{prompt, call1, resp1, toolCall, toolRes, call2}
	for i := range evs {
		agentevent.Normalize(&evs[i])
		evs[i].Sequence = int64(i)
	}
	return evs
}

func mapTurn(evs []agentevent.Event) []ptrace.Span {
	key := UnitKey{Thread: ThreadKey{Source: agentevent.Source("claude_code"), Session: "s1"}, Prompt: "p1"}
	td := MapGroup(Group{TraceID: TurnTraceID(key.Thread, key.Prompt), Root: &Tree{Key: key, Events: evs}, Reason: ClosedByIdle}, MapOptions{})
	var spans []ptrace.Span
	for _, sp := range td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().All() {
		spans = append(spans, sp)
	}
	return spans
}

// TestNativeChatSpans: a chat span of a model call whose events state its
// duration starts that long before its end; it carries the call's stated
// facts; a native tool call gets only its tool span, no chat span.
func TestNativeChatSpans(t *testing.T) {
	t0 := time.Date(2026, 1, 8, 14, 30, 0, 0, time.UTC)
	spans := mapTurn(nativeTurn(t0))
	var chats, tools []ptrace.Span
	for _, sp := range spans {
		switch {
		case strings.HasPrefix(sp.Name(), OpChat):
			chats = append(chats, sp)
		case strings.HasPrefix(sp.Name(), opExecuteTool):
			tools = append(tools, sp)
		}
	}
	require.Len(t, chats, 2, "one chat span per model call, none for the tool call")
	require.Len(t, tools, 1)

	c1 := chats[0]
	assert.Equal(t, t0.Add(5*time.Second), c1.StartTimestamp().AsTime(), "end 9 s less the stated 4000 ms")
	assert.Equal(t, t0.Add(9*time.Second), c1.EndTimestamp().AsTime())
	d, _ := c1.Attributes().Get(agentevent.AttrChatDurationMs)
	assert.Equal(t, int64(4000), d.Int())
	ttft, _ := c1.Attributes().Get("agent.chat.ttft_ms")
	assert.Equal(t, int64(1200), ttft.Int())
	rl, _ := c1.Attributes().Get("agent.chat.response_length")
	assert.Equal(t, int64(25), rl.Int())
	in, _ := c1.Attributes().Get("gen_ai.usage.input_tokens")
	assert.Equal(t, int64(100), in.Int())

	c2 := chats[1]
	assert.Equal(t, t0.Add(10500*time.Millisecond), c2.StartTimestamp().AsTime(), "end 12 s less the stated 1500 ms, not the tool result's time")

	tool := tools[0]
	assert.Equal(t, t0.Add(9500*time.Millisecond), tool.StartTimestamp().AsTime())
	assert.Equal(t, t0.Add(10*time.Second), tool.EndTimestamp().AsTime())
}

// TestFileToolCallWithoutResponseKeepsItsChat: a tool call read from a
// session file without a response id is still its response's chat span
// (the native rule keys on agent.origin only).
func TestFileToolCallWithoutResponseKeepsItsChat(t *testing.T) {
	t0 := time.Date(2026, 1, 8, 14, 30, 0, 0, time.UTC)
	evs := nativeTurn(t0)
	for i := range evs {
		delete(evs[i].Attributes, agentevent.AttrOrigin)
		delete(evs[i].Attributes, agentevent.AttrChatDurationMs)
	}
	var chats []ptrace.Span
	for _, sp := range mapTurn(evs) {
		if strings.HasPrefix(sp.Name(), OpChat) {
			chats = append(chats, sp)
		}
	}
	require.Len(t, chats, 3, "two model calls and the tool call's own response")
	last := chats[len(chats)-1]
	assert.Equal(t, t0.Add(12*time.Second), last.EndTimestamp().AsTime())
	assert.Equal(t, t0.Add(10*time.Second), last.StartTimestamp().AsTime(), "without a stated duration: from the tool result")
}

// TestNativeTurnWithoutItsPrompt: a native turn whose prompt record never
// came still has its root span (from the start of its first call, marked
// agent.turn.prompt_missing) over its chat and tool spans; more of a turn
// that went out (Late) and a file turn without its prompt add no root.
func TestNativeTurnWithoutItsPrompt(t *testing.T) {
	t0 := time.Date(2026, 1, 8, 14, 30, 0, 0, time.UTC)
	key := UnitKey{Thread: ThreadKey{Source: agentevent.Source("claude_code"), Session: "s1"}, Prompt: "p1"}
	spansOf := func(tree *Tree) []ptrace.Span {
		td := MapGroup(Group{TraceID: TurnTraceID(key.Thread, key.Prompt), Root: tree, Reason: ClosedByIdle}, MapOptions{})
		var out []ptrace.Span
		for _, sp := range td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().All() {
			out = append(out, sp)
		}
		return out
	}
	rootOf := func(spans []ptrace.Span) (ptrace.Span, int) {
		var root ptrace.Span
		n := 0
		for _, sp := range spans {
			if sp.ParentSpanID().IsEmpty() {
				root = sp
				n++
			}
		}
		return root, n
	}

	evs := nativeTurn(t0)[1:] // no prompt
	spans := spansOf(&Tree{Key: key, Events: evs})
	root, n := rootOf(spans)
	require.Equal(t, 1, n, "one root")
	assert.Equal(t, "invoke_agent claude-code", root.Name())
	assert.Equal(t, UnitSpanID(key), root.SpanID())
	assert.Equal(t, t0.Add(5*time.Second), root.StartTimestamp().AsTime(), "from its earliest span: the first call began its stated 4000 ms before its record at 9 s")
	for _, sp := range spans {
		assert.False(t, sp.StartTimestamp() < root.StartTimestamp() || sp.EndTimestamp() > root.EndTimestamp(), "the root covers %s", sp.Name())
	}
	missing, _ := root.Attributes().Get(agentevent.AttrTurnPromptMissing)
	assert.True(t, missing.Bool())
	for _, sp := range spans {
		if sp.SpanID() != root.SpanID() {
			assert.Equal(t, root.SpanID(), sp.ParentSpanID(), "%s under the root", sp.Name())
		}
	}

	_, n = rootOf(spansOf(&Tree{Key: key, Events: nativeTurn(t0)[1:], Late: true}))
	assert.Zero(t, n, "more of a turn that went out: its root went out with it")

	files := nativeTurn(t0)[1:]
	for i := range files {
		delete(files[i].Attributes, agentevent.AttrOrigin)
	}
	_, n = rootOf(spansOf(&Tree{Key: key, Events: files}))
	assert.Zero(t, n, "a file turn without its prompt is more of a turn that went out")
}
