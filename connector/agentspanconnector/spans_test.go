// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"encoding/json"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
	"github.com/agentotel/agentotel/internal/agentevent"
)

// toolTurn is a turn with a streamed model response (reasoning, then a tool
// call, sharing one response id), a tool result, and a final answer.
func toolTurn(s *session, mods ...mod) []agentevent.Event {
	return []agentevent.Event{
		s.prompt("p1", 0),
		s.ev(agentevent.TypeReasoning, "th1", 2, response("msg_1"), tokens(1000, 8), func(e *agentevent.Event) {
			e.TokensCached, e.TokensCacheCreation, e.TokensThinking = agentevent.Int(900), agentevent.Int(50), agentevent.Int(5)
		}),
		s.call("c1", "msg_1", "toolu_1", "Bash", 3, append([]mod{tokens(0, 30), finish("tool_use")}, mods...)...),
		s.result("r1", "toolu_1", "Bash", 7.5, func(e *agentevent.Event) { e.ToolExitCode = agentevent.Int(0) }),
		s.answer("a1", "msg_2", 9, tokens(1100, 20)),
	}
}

func TestChatSpansGroupAResponseAndSumItsTokens(t *testing.T) {
	h := newHarness(t)
	h.history()
	h.feed(toolTurn(newSession("s1"))...)
	spans := h.spans()
	chats := named(spans, "chat claude-opus-4-7")
	require.Len(t, chats, 2, "one chat span per response id, however many events it was written as")
	first, second := chats[0], chats[1]
	if attr(first, agentevent.AttrResponseID) != "msg_1" {
		first, second = second, first
	}

	assert.Equal(t, ptrace.SpanKindClient, first.Kind())
	assert.Equal(t, ts(0), first.StartTimestamp(), "the model was called when the prompt was sent")
	assert.Equal(t, ts(3), first.EndTimestamp(), "until its last event")
	assert.Equal(t, int64(1000), attr(first, "gen_ai.usage.input_tokens"))
	assert.Equal(t, int64(38), attr(first, "gen_ai.usage.output_tokens"), "token fields are increments: summed")
	assert.Equal(t, int64(900), attr(first, "gen_ai.usage.cache_read.input_tokens"))
	assert.Equal(t, int64(50), attr(first, "gen_ai.usage.cache_creation.input_tokens"))
	assert.Equal(t, int64(5), attr(first, "gen_ai.usage.reasoning.output_tokens"))
	assert.Equal(t, "chat", attr(first, "gen_ai.operation.name"))
	assert.Equal(t, "anthropic", attr(first, "gen_ai.provider.name"))
	assert.Equal(t, "claude-opus-4-7", attr(first, "gen_ai.request.model"))
	assert.Equal(t, "claude-opus-4-7", attr(first, "gen_ai.response.model"))
	assert.Equal(t, []any{"tool_use"}, attr(first, "gen_ai.response.finish_reasons"))
	assert.Equal(t, "s1", attr(first, "gen_ai.conversation.id"))
	_, hasSystem := first.Attributes().Get("gen_ai.system")
	assert.False(t, hasSystem, "never the deprecated gen_ai.system")
	require.Equal(t, 1, first.Events().Len(), "reasoning is a span event of its response")
	assert.Equal(t, agentevent.SpanEventReasoning, first.Events().At(0).Name())
	assert.Equal(t, ts(2), first.Events().At(0).Timestamp())

	assert.Equal(t, ts(7.5), second.StartTimestamp(), "called when the tool result came back")
	assert.Equal(t, ts(9), second.EndTimestamp())

	root := one(t, spans, "invoke_agent claude-code")
	assert.Equal(t, int64(2), attr(root, agentevent.AttrTurnModelCalls))
	assert.Equal(t, int64(1), attr(root, agentevent.AttrTurnToolCalls))
	assert.Equal(t, int64(2100), attr(root, "agent.turn.usage.input_tokens"))
	assert.Equal(t, int64(58), attr(root, "agent.turn.usage.output_tokens"))
	assert.Equal(t, "No changes", attr(root, agentevent.AttrTurnSummary))
	_, rootUsage := root.Attributes().Get("gen_ai.usage.input_tokens")
	assert.False(t, rootUsage, "the root sums under agent.turn.usage.*, so nothing counts tokens twice")
}

func TestChatWithoutResponseIDIsARunOfAssistantEvents(t *testing.T) {
	h := newHarness(t)
	h.history()
	s := newSession("s1")
	noID := func(e *agentevent.Event) { e.ResponseID = "" }
	h.feed(
		s.prompt("p1", 0),
		s.ev(agentevent.TypeReasoning, "th", 1, response(""), noID),
		s.call("c1", "", "t1", "Read", 2, noID, tokens(10, 1)),
		s.result("r1", "t1", "Read", 3),
		s.answer("a1", "", 4, noID),
	)
	assert.Len(t, named(h.spans(), "chat claude-opus-4-7"), 2)
}

func TestToolSpan(t *testing.T) {
	h := newHarness(t)
	h.history()
	h.feed(toolTurn(newSession("s1"), func(e *agentevent.Event) {
		e.FilePath, e.FileOp = "/home/u/proj/main.go", agentevent.FileModify
	})...)
	spans := h.spans()
	tool := one(t, spans, "execute_tool Bash")
	root := one(t, spans, "invoke_agent claude-code")
	assert.Equal(t, root.SpanID(), tool.ParentSpanID())
	assert.Equal(t, ptrace.SpanKindInternal, tool.Kind())
	assert.Equal(t, ts(3), tool.StartTimestamp())
	assert.Equal(t, ts(7.5), tool.EndTimestamp(), "latency = result − call")
	assert.Equal(t, "execute_tool", attr(tool, "gen_ai.operation.name"))
	assert.Equal(t, "Bash", attr(tool, "gen_ai.tool.name"))
	assert.Equal(t, "toolu_1", attr(tool, "gen_ai.tool.call.id"))
	assert.Equal(t, "function", attr(tool, "gen_ai.tool.type"))
	assert.Equal(t, "success", attr(tool, "agent.tool.status"))
	assert.Equal(t, int64(0), attr(tool, "process.exit.code"))
	assert.Equal(t, "/home/u/proj/main.go", attr(tool, "file.path"))
	assert.Equal(t, ptrace.StatusCodeUnset, tool.Status().Code())
	assert.Equal(t, int64(1), attr(root, agentevent.AttrTurnFilesChanged))
}

func TestToolFailure(t *testing.T) {
	for name, tc := range map[string]struct {
		result  mod
		errType string
		exit    any
	}{
		"classified":   {result: failed(2, "exit_code"), errType: "exit_code", exit: int64(2)},
		"unclassified": {result: func(e *agentevent.Event) { e.ToolStatus = agentevent.ToolError }, errType: agentevent.ErrorTypeTool},
		"exit code only": {
			result:  func(e *agentevent.Event) { e.ToolStatus, e.ToolExitCode = "", agentevent.Int(1) },
			errType: agentevent.ErrorTypeTool, exit: int64(1),
		},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.history()
			s := newSession("s1")
			h.feed(s.prompt("p", 0), s.call("c", "m1", "t1", "Bash", 1), s.result("r", "t1", "Bash", 2, tc.result), s.answer("a", "m2", 3))
			spans := h.spans()
			tool := one(t, spans, "execute_tool Bash")
			assert.Equal(t, ptrace.StatusCodeError, tool.Status().Code())
			assert.Equal(t, tc.errType, attr(tool, "error.type"))
			assert.Equal(t, "error", attr(tool, "agent.tool.status"))
			assert.Equal(t, tc.exit, attr(tool, "process.exit.code"))
			root := one(t, spans, "invoke_agent claude-code")
			assert.Equal(t, int64(1), attr(root, agentevent.AttrTurnToolErrors))
			assert.Equal(t, ptrace.StatusCodeUnset, root.Status().Code(), "a failed tool does not fail the turn")
		})
	}
}

func TestToolCallWithoutResult(t *testing.T) {
	h := newHarness(t)
	h.history()
	s := newSession("s1")
	h.feed(s.prompt("p", 0), s.call("c", "m1", "t1", "Bash", 1))
	spans := h.spans()
	tool := one(t, spans, "execute_tool Bash")
	assert.Equal(t, "in_progress", attr(tool, "agent.tool.status"))
	assert.Equal(t, ptrace.StatusCodeUnset, tool.Status().Code())
	assert.Equal(t, ts(1), tool.StartTimestamp())
	assert.Equal(t, spanmodel.StatusAbandoned, attr(one(t, spans, "invoke_agent claude-code"), agentevent.AttrTurnStatus))
}

func TestToolLatencyWithoutResultTimestamp(t *testing.T) {
	h := newHarness(t)
	h.history()
	s := newSession("s1")
	h.feed(s.prompt("p", 0), s.call("c", "m1", "t1", "Bash", 1),
		s.result("r", "t1", "Bash", 0, func(e *agentevent.Event) { e.Timestamp = time.Time{}; e.ToolLatencyMs = agentevent.Int(1500) }),
		s.answer("a", "m2", 3))
	tool := one(t, h.spans(), "execute_tool Bash")
	assert.Equal(t, ts(2.5), tool.EndTimestamp(), "call + latency")
	assert.Equal(t, int64(1500), attr(tool, "agent.tool.latency_ms"))
}

func TestContentOffByDefault(t *testing.T) {
	h := newHarness(t)
	h.history()
	h.feed(toolTurn(newSession("s1"))...)
	for _, sp := range h.spans() {
		for _, k := range []string{agentevent.AttrInputMessages, agentevent.AttrOutputMessages, agentevent.AttrToolCallArguments, agentevent.AttrToolCallResult} {
			_, ok := sp.Attributes().Get(k)
			assert.False(t, ok, "%s on %s", k, sp.Name())
		}
	}
	assert.Empty(t, h.c.asm.store.units, "nothing held")
}

func TestContentOnIsTruncated(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.IncludeContent, c.MaxContentLength = true, 10 })
	h.history()
	s := newSession("s1")
	h.feed(
		s.prompt("p1", 0, text("héllo wörld, a long prompt")),
		s.call("c1", "m1", "t1", "Bash", 1, text(`{"command":"ls"}`)),
		s.result("r1", "t1", "Bash", 2, text("ééééééé")), // 14 bytes
		s.answer("a1", "m2", 3, text("done")),
	)
	spans := h.spans()

	root := one(t, spans, "invoke_agent claude-code")
	var in []spanmodel.Message
	require.NoError(t, json.Unmarshal([]byte(attr(root, agentevent.AttrInputMessages).(string)), &in))
	require.Len(t, in, 1)
	assert.Equal(t, "user", in[0].Role)
	assert.Equal(t, "héllo wö", in[0].Parts[0].Content, "cut to 10 bytes at a character boundary")

	tool := one(t, spans, "execute_tool Bash")
	assert.Equal(t, `{"command"`, attr(tool, agentevent.AttrToolCallArguments))
	res := attr(tool, agentevent.AttrToolCallResult).(string)
	assert.Equal(t, "ééééé", res)
	assert.True(t, utf8.ValidString(res))

	var out []spanmodel.Message
	for _, c := range named(spans, "chat claude-opus-4-7") {
		if attr(c, agentevent.AttrResponseID) == "m2" {
			require.NoError(t, json.Unmarshal([]byte(attr(c, agentevent.AttrOutputMessages).(string)), &out))
		}
	}
	require.Len(t, out, 1)
	assert.Equal(t, "assistant", out[0].Role)
	assert.Equal(t, "end_turn", out[0].FinishReason)
	assert.Equal(t, []spanmodel.MessagePart{{Type: "text", Content: "done"}}, out[0].Parts)
}

func TestIDsAreDeterministic(t *testing.T) {
	run := func() ptrace.Traces {
		h := newHarness(t)
		h.history()
		s := newSession("s1")
		h.feed(toolTurn(s)...)
		h.feed(s.prompt("p2", 20), s.answer("a2", "m9", 21))
		merged := ptrace.NewTraces()
		for _, td := range h.sink.AllTraces() {
			td.ResourceSpans().MoveAndAppendTo(merged.ResourceSpans())
		}
		return merged
	}
	a, b := run(), run()
	require.NoError(t, ptracetest.CompareTraces(a, b, ptracetest.IgnoreResourceSpansOrder(), ptracetest.IgnoreSpansOrder()),
		"the same events always make the same traces, ids included")

	ids := map[string]bool{}
	for _, sp := range allSpans(a) {
		ids[sp.SpanID().String()] = true
	}
	assert.Len(t, ids, len(allSpans(a)), "span ids are unique")
}
