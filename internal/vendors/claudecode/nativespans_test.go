// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

func nspanInt(t *testing.T, v any) int64 {
	t.Helper()
	n, ok := agentevent.NativeInt(v)
	require.True(t, ok, "%v (%T) is not an integer", v, v)
	return n
}

// TestNativeSpansCapture normalizes every span of the Claude Code trace
// captures and checks what the span model needs of them beyond the golden:
// every documented span is mapped, one execute_tool per tool call, tokens in
// our convention and equal to the sum of the span's own counts, no
// deprecated gen_ai.system and no identity attributes left.
func TestNativeSpansCapture(t *testing.T) {
	got := vendortest.GoldenSpanPatches(t, *update, vendortest.NativeSpanCaptures(t, "claude_code"), NormalizeNativeSpan)
	known := map[string]bool{
		nspanInteraction: true, nspanLLMRequest: true, nspanTool: true,
		nspanToolExec: true, nspanToolBlocked: true, nspanHook: true,
	}
	executeTools := map[string]int{}
	toolSpans := map[string]bool{}
	names := map[string]int{}
	for _, g := range got {
		where := g.File + ":" + g.Span.SpanID
		require.Equal(t, known[g.Span.Name], g.OK, "%s %s: every documented span is mapped, nothing else", where, g.Span.Name)
		if !g.OK {
			continue
		}
		names[g.Span.Name]++
		p := g.Patch
		require.Equal(t, Source, p.Source, where)
		require.NotEmpty(t, p.SessionID, where)
		require.Equal(t, p.SessionID, g.Attrs["session.id"], where)
		require.Equal(t, p.SessionID, g.Attrs[agentevent.AttrSessionID], where)
		require.NotContains(t, g.Attrs, "gen_ai.system", where)
		for _, k := range nspanIdentityAttrs {
			require.NotContains(t, g.Attrs, k, where)
		}
		src := g.Span.Attrs
		switch g.Span.Name {
		case nspanInteraction:
			require.Equal(t, "invoke_agent claude-code", p.Name, where)
			require.Equal(t, "invoke_agent", g.Attrs["gen_ai.operation.name"], where)
			require.Equal(t, nspanInt(t, src["interaction.sequence"]), g.Attrs[agentevent.AttrTurnSequence], where)
			require.Equal(t, nspanInt(t, src["interaction.duration_ms"]), g.Attrs[agentevent.AttrTurnDurationMs], where)
			for k := range g.Attrs {
				require.False(t, strings.HasPrefix(k, "gen_ai.usage."), "%s: a turn root carries no gen_ai.usage", where)
			}
		case nspanLLMRequest:
			require.Equal(t, "chat "+src["gen_ai.request.model"].(string), p.Name, where)
			require.Equal(t, 3, p.Kind, where)
			require.Equal(t, "chat", g.Attrs["gen_ai.operation.name"], where)
			require.Equal(t, "anthropic", g.Attrs[agentevent.AttrProvider], where)
			require.Equal(t, src["gen_ai.request.model"], g.Attrs[agentevent.AttrModel], where)
			if _, has := src["input_tokens"]; has {
				in := nspanInt(t, src["input_tokens"]) + nspanInt(t, src["cache_read_tokens"]) + nspanInt(t, src["cache_creation_tokens"])
				require.Equal(t, in, g.Attrs[agentevent.AttrTokensInput], "%s: input includes cache reads and writes", where)
				require.Equal(t, nspanInt(t, src["output_tokens"]), g.Attrs[agentevent.AttrTokensOutput], where)
				require.Equal(t, nspanInt(t, src["cache_read_tokens"]), g.Attrs[agentevent.AttrTokensCached], where)
				require.Equal(t, nspanInt(t, src["cache_creation_tokens"]), g.Attrs[agentevent.AttrTokensCacheCreation], where)
				require.Equal(t, src["request_id"], g.Attrs[agentevent.AttrResponseID], where)
			} else {
				require.NotContains(t, g.Attrs, agentevent.AttrTokensInput, "%s: no usage is made up", where)
			}
			success, _ := agentevent.NativeBool(src["success"])
			require.Equal(t, !success, p.Error, where)
			require.Equal(t, nspanInt(t, src["duration_ms"]), g.Attrs["agent.chat.duration_ms"], where)
			require.Equal(t, src["query_source_safe"], g.Attrs["agent.chat.query_source"], where)
		case nspanTool:
			require.Equal(t, "execute_tool "+src["tool_name"].(string), p.Name, where)
			require.Equal(t, src["tool_name"], g.Attrs[agentevent.AttrToolName], where)
			require.Equal(t, "function", g.Attrs[agentevent.AttrToolType], where)
			toolSpans[g.Attrs[agentevent.AttrToolCallID].(string)] = true
		case nspanToolExec:
			require.Equal(t, agentevent.SpanToolExecution, p.Name, where)
			success, known := agentevent.NativeBool(src["success"])
			require.True(t, known, where)
			require.Equal(t, !success, p.Error, "%s: success=false is an Error", where)
			if !success {
				require.Contains(t, []string{agentevent.ErrorTypeTool, agentevent.ErrorTypeInterrupted}, g.Attrs[agentevent.AttrErrorType], where)
			}
		}
		if strings.HasPrefix(p.Name, "execute_tool") {
			id, _ := g.Attrs[agentevent.AttrToolCallID].(string)
			require.NotEmpty(t, id, where)
			executeTools[id]++
		}
	}
	for id, n := range executeTools {
		require.Equal(t, 1, n, "tool call %s: exactly one execute_tool span", id)
	}
	for id := range toolSpans {
		require.Equal(t, 1, executeTools[id], "tool call %s", id)
	}
	// The captures hold every kind but hook (absent upstream).
	for _, name := range []string{nspanInteraction, nspanLLMRequest, nspanTool, nspanToolExec, nspanToolBlocked} {
		require.Positive(t, names[name], "the captures hold %s", name)
	}
}

// nspanClaude builds a span of Claude Code's tracing. The shapes are those
// of traces-claude-code-2.1.269-spans.otlp.jsonl and
// traces-claude-code-2.1.272-spans.otlp.jsonl (names, keys, wire types),
// with made-up ids and values.
func nspanClaude(name string, attrs map[string]any) *agentevent.NativeSpan {
	a := map[string]any{"session.id": "s-1", "user.email": "u@example.test", "user.id": "h"}
	maps.Copy(a, attrs)
	return &agentevent.NativeSpan{
		Service: "claude-code", Scope: "com.anthropic.claude_code.tracing", Name: name, Kind: 1,
		Start: time.Unix(100, 0), End: time.Unix(101, 0), Attrs: a,
	}
}

// TestNativeSpansWireTraps: one row per trap of the wire (NATIVE_OTEL.md
// §1.6, §1.9): success as bool or string, numbers as int or string, a
// missing model, a span that kept only its span.type, a subagent's ids.
func TestNativeSpansWireTraps(t *testing.T) {
	usage := func(in, out, read, created any) map[string]any {
		return map[string]any{
			"gen_ai.request.model": "claude-opus-4-7", "input_tokens": in, "output_tokens": out,
			"cache_read_tokens": read, "cache_creation_tokens": created, "success": true,
		}
	}
	for _, tc := range []struct {
		name  string
		span  *agentevent.NativeSpan
		ok    bool
		check func(t *testing.T, p agentevent.SpanPatch, attrs map[string]any)
	}{{
		name: "llm_request int tokens: input adds cache reads and writes",
		span: nspanClaude(nspanLLMRequest, usage(int64(2), int64(86), int64(10126), int64(12344))),
		ok:   true,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, int64(2+10126+12344), a[agentevent.AttrTokensInput])
			require.Equal(t, int64(86), a[agentevent.AttrTokensOutput])
			require.Equal(t, int64(10126), a[agentevent.AttrTokensCached])
			require.Equal(t, int64(12344), a[agentevent.AttrTokensCacheCreation])
			require.False(t, p.Error)
		},
	}, {
		name: "llm_request string tokens",
		span: nspanClaude(nspanLLMRequest, usage("2", "86", "10126", "12344")),
		ok:   true,
		check: func(t *testing.T, _ agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, int64(22472), a[agentevent.AttrTokensInput])
			require.Equal(t, int64(86), a[agentevent.AttrTokensOutput])
		},
	}, {
		name: "llm_request without a model: chat, no model attributes",
		span: nspanClaude(nspanLLMRequest, map[string]any{"input_tokens": int64(5), "success": true}),
		ok:   true,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, "chat", p.Name)
			require.NotContains(t, a, agentevent.AttrModel)
			require.Equal(t, int64(5), a[agentevent.AttrTokensInput])
			require.NotContains(t, a, agentevent.AttrTokensCached, "an absent count is not a zero")
		},
	}, {
		name: "llm_request model only under model",
		span: nspanClaude(nspanLLMRequest, map[string]any{"model": "claude-haiku-4-5", "gen_ai.system": "anthropic"}),
		ok:   true,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, "chat claude-haiku-4-5", p.Name)
			require.Equal(t, "claude-haiku-4-5", a["gen_ai.request.model"])
			require.NotContains(t, a, "gen_ai.system")
			require.Contains(t, p.Remove, "gen_ai.system")
		},
	}, {
		name: "llm_request success=false bool",
		span: nspanClaude(nspanLLMRequest, map[string]any{"success": false, "error_class": "overloaded", "error": "529"}),
		ok:   true,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.True(t, p.Error)
			require.Equal(t, "529", p.ErrorMessage)
			require.Equal(t, agentevent.ErrorTypeAPI, a[agentevent.AttrErrorType])
			require.Equal(t, "overloaded", a[agentevent.AttrErrorClass])
		},
	}, {
		name: "llm_request success=\"false\" string, aborted by the user",
		span: nspanClaude(nspanLLMRequest, map[string]any{"success": "false", "error_class": "aborted"}),
		ok:   true,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.True(t, p.Error)
			require.Equal(t, agentevent.ErrorTypeInterrupted, a[agentevent.AttrErrorType])
		},
	}, {
		name: "llm_request stated cost in micros",
		span: nspanClaude(nspanLLMRequest, map[string]any{"cost_usd_micros": "12345"}),
		ok:   true,
		check: func(t *testing.T, _ agentevent.SpanPatch, a map[string]any) {
			require.InDelta(t, 0.012345, a[agentevent.AttrCostUSD], 1e-12)
		},
	}, {
		name: "llm_request without cost: none made up",
		span: nspanClaude(nspanLLMRequest, usage(int64(1), int64(1), int64(0), int64(0))),
		ok:   true,
		check: func(t *testing.T, _ agentevent.SpanPatch, a map[string]any) {
			require.NotContains(t, a, agentevent.AttrCostUSD)
		},
	}, {
		name: "tool.execution success=\"false\" string",
		span: nspanClaude(nspanToolExec, map[string]any{"tool_use_id": "toolu_1", "success": "false", "duration_ms": "73"}),
		ok:   true,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, agentevent.SpanToolExecution, p.Name)
			require.True(t, p.Error)
			require.Equal(t, agentevent.ErrorTypeTool, a[agentevent.AttrErrorType])
			require.Equal(t, "error", a[agentevent.AttrToolStatus])
			require.Equal(t, "toolu_1", a[agentevent.AttrToolCallID])
			require.Equal(t, int64(73), a[agentevent.AttrToolLatencyMs])
		},
	}, {
		name: "tool.execution success=true bool",
		span: nspanClaude(nspanToolExec, map[string]any{"gen_ai.tool.call.id": "toolu_1", "success": true}),
		ok:   true,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.False(t, p.Error)
			require.Equal(t, "success", a[agentevent.AttrToolStatus])
		},
	}, {
		name: "tool.execution with an Error status and no success",
		span: func() *agentevent.NativeSpan {
			s := nspanClaude(nspanToolExec, map[string]any{"tool_use_id": "toolu_1"})
			s.StatusError, s.StatusMessage = true, "boom"
			return s
		}(),
		ok: true,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.True(t, p.Error)
			require.Equal(t, "boom", p.ErrorMessage)
			require.Equal(t, agentevent.ErrorTypeTool, a[agentevent.AttrErrorType])
		},
	}, {
		name: "tool: execute_tool with the call id, command cut, no status of its own",
		span: nspanClaude(nspanTool, map[string]any{
			"tool_name": "Bash", "tool_use_id": "toolu_1", "duration_ms": "221",
			"full_command": strings.Repeat("é", 3000),
		}),
		ok: true,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, "execute_tool Bash", p.Name)
			require.Equal(t, "toolu_1", a[agentevent.AttrToolCallID])
			require.Equal(t, int64(221), a[agentevent.AttrToolLatencyMs])
			require.Len(t, a[agentevent.AttrToolCommand], 4096)
			require.False(t, p.Error)
			require.NotContains(t, a, agentevent.AttrToolStatus)
		},
	}, {
		name: "tool: the name only as tool_name_safe",
		span: nspanClaude(nspanTool, map[string]any{"tool_name_safe": "Read", "gen_ai.tool.call.id": "toolu_2", "full_command": ""}),
		ok:   true,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, "execute_tool Read", p.Name)
			require.NotContains(t, a, agentevent.AttrToolCommand, "an empty command is no command")
		},
	}, {
		name: "subagent: agent_id and parent_agent_id",
		span: nspanClaude(nspanTool, map[string]any{"tool_name": "Grep", "tool_use_id": "t", "agent_id": "a1", "parent_agent_id": "a0"}),
		ok:   true,
		check: func(t *testing.T, _ agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, "a1", a[agentevent.AttrAgentID])
			require.Equal(t, "a0", a[agentevent.AttrSubagentParentAgentID])
		},
	}, {
		name: "interaction: numbers as strings, redacted prompt removed",
		span: nspanClaude(nspanInteraction, map[string]any{"interaction.sequence": "2", "interaction.duration_ms": "867812", "user_prompt": "<REDACTED>"}),
		ok:   true,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, "invoke_agent claude-code", p.Name)
			require.Equal(t, int64(2), a[agentevent.AttrTurnSequence])
			require.Equal(t, int64(867812), a[agentevent.AttrTurnDurationMs])
			require.NotContains(t, a, "user_prompt")
			require.Equal(t, "s-1", a[agentevent.AttrSessionID])
			require.NotContains(t, a, "user.email")
		},
	}, {
		name: "interaction: a real prompt stays (agent_native strips content unless include_content)",
		span: nspanClaude(nspanInteraction, map[string]any{"user_prompt": "fix the build"}),
		ok:   true,
		check: func(t *testing.T, _ agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, "fix the build", a["user_prompt"])
		},
	}, {
		name: "blocked_on_user: decision and source",
		span: nspanClaude(nspanToolBlocked, map[string]any{"decision": "reject", "source": "user_reject", "duration_ms": int64(4)}),
		ok:   true,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, "agent.tool.blocked_on_user", p.Name)
			require.Equal(t, "reject", a[agentevent.AttrToolDecision])
			require.Equal(t, "user_reject", a[agentevent.AttrToolDecisionSource])
			require.False(t, p.Error, "a decision is not a failure of this span")
		},
	}, {
		name: "hook with an Error status",
		span: func() *agentevent.NativeSpan {
			s := nspanClaude(nspanHook, nil)
			s.StatusError = true
			return s
		}(),
		ok: true,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, "agent.hook", p.Name)
			require.True(t, p.Error)
			require.Equal(t, agentevent.ErrorTypeHook, a[agentevent.AttrErrorType])
		},
	}, {
		name: "a renamed span known by its span.type",
		span: nspanClaude("llm", map[string]any{"span.type": "llm_request", "model": "m"}),
		ok:   true,
		check: func(t *testing.T, p agentevent.SpanPatch, _ map[string]any) {
			require.Equal(t, "chat m", p.Name)
		},
	}, {
		name: "an unknown span is left alone",
		span: nspanClaude("claude_code.something_new", nil),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := NormalizeNativeSpan(tc.span)
			require.Equal(t, tc.ok, ok)
			if !ok {
				require.Equal(t, agentevent.SpanPatch{}, p)
				return
			}
			require.Equal(t, Source, p.Source)
			require.Equal(t, "s-1", p.SessionID)
			vendortest.RequirePatchTypes(t, p)
			tc.check(t, p, vendortest.ApplySpanPatch(tc.span.Attrs, p))
		})
	}
}
