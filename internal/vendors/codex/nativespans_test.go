// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"maps"
	"strconv"
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

// TestNativeSpansCapture normalizes every span of the Codex trace captures
// and checks what the span model needs of them beyond the golden: every
// span of a known name is mapped, one execute_tool per tool call, turn
// totals as agent.turn.usage.* equal to Codex's own counts, the
// conversation (not the OS thread) as the session.
func TestNativeSpansCapture(t *testing.T) {
	got := vendortest.GoldenSpanPatches(t, *update, vendortest.NativeSpanCaptures(t, "codex"), NormalizeNativeSpan)
	known := map[string]bool{nspanTurn: true, nspanCompact: true, nspanSampling: true}
	for name := range nspanPhaseNames {
		known[name] = true
	}
	executeTools := map[string]int{}
	results := map[string]bool{}
	names := map[string]int{}
	for _, g := range got {
		where := g.File + ":" + g.Span.SpanID + " " + g.Span.Name
		if known[g.Span.Name] || nspanHasUsage(g.Span) {
			require.True(t, g.OK, "%s: a span of a known name is mapped", where)
		}
		if !g.OK {
			continue
		}
		names[g.Span.Name]++
		p := g.Patch
		require.Equal(t, Source, p.Source, where)
		if p.SessionID != "" {
			_, err := strconv.ParseInt(p.SessionID, 10, 64)
			require.Error(t, err, "%s: the session is the conversation, never the OS thread id", where)
			require.Equal(t, p.SessionID, g.Attrs[agentevent.AttrSessionID], where)
		}
		src := g.Span.Attrs
		switch g.Span.Name {
		case nspanTurn:
			require.Equal(t, "invoke_agent codex", p.Name, where)
			require.Equal(t, "invoke_agent", g.Attrs[agentevent.AttrOperationName], where)
			require.NotEmpty(t, p.SessionID, "%s: the turn's string thread.id is its conversation", where)
			require.Equal(t, src["model"], g.Attrs[agentevent.AttrRequestModel], where)
			for _, u := range nspanTurnUsage {
				require.Equal(t, nspanInt(t, src[nattrTurnTokens+u.from]), g.Attrs[agentevent.AttrTurnUsagePrefix+u.to], "%s %s", where, u.to)
			}
			// Codex's own identity: input = cached + non-cached, total = input + output.
			in := g.Attrs[agentevent.AttrTurnUsagePrefix+"input_tokens"].(int64)
			require.Equal(t, nspanInt(t, src[nattrTurnTokens+"cached_input_tokens"])+nspanInt(t, src[nattrTurnTokens+"non_cached_input_tokens"]), in, where)
			require.Equal(t, nspanInt(t, src[nattrTurnTokens+"total_tokens"]), in+g.Attrs[agentevent.AttrTurnUsagePrefix+"output_tokens"].(int64), where)
			for k := range g.Attrs {
				require.False(t, strings.HasPrefix(k, "gen_ai.usage."), "%s: a turn root carries no gen_ai.usage", where)
			}
		case nspanCompact:
			require.Equal(t, agentevent.SpanCompaction, p.Name, where)
		case nspanSampling:
			require.Equal(t, agentevent.SpanSamplingRequest, p.Name, where)
		}
		if strings.HasPrefix(p.Name, "execute_tool") {
			ev := nspanToolResult(g.Span)
			require.NotNil(t, ev, where)
			id := g.Attrs[agentevent.AttrToolCallID].(string)
			require.Equal(t, ev["call_id"], id, where)
			require.Equal(t, "execute_tool "+ev["tool_name"].(string), p.Name, where)
			success, known := agentevent.NativeBool(ev["success"])
			require.True(t, known, where)
			require.Equal(t, !success, p.Error, where)
			executeTools[id]++
		}
		if ev := nspanToolResult(g.Span); ev != nil {
			results[agentevent.NativeStr(ev["call_id"])] = true
		}
		require.Equal(t, strings.HasPrefix(p.Name, "chat"), nspanHasUsage(g.Span), "%s: only a span with usage is a chat span", where)
	}
	require.NotEmpty(t, results, "the captures hold tool calls")
	for id := range results {
		require.Equal(t, 1, executeTools[id], "tool call %s: exactly one execute_tool span", id)
	}
	for id, n := range executeTools {
		require.Equal(t, 1, n, "tool call %s: exactly one execute_tool span", id)
	}
	for _, name := range []string{nspanTurn, nspanCompact, nspanSampling, nspanDispatch, nspanMCPCall, nspanCodeModeTool} {
		require.Positive(t, names[name], "the captures hold %s", name)
	}
}

// nspanCodex builds a span of Codex's tracing. The shapes are those of
// traces-codex-app-server-0.155.0-alpha.9.2-spans.otlp.jsonl (names, keys,
// wire types), with made-up ids and values; the usage keys of a completed
// handle_responses span are those codex-rs/core records (NATIVE_OTEL.md
// §2.4), which the capture holds no example of.
func nspanCodex(name string, attrs map[string]any, events ...agentevent.NativeSpanEvent) *agentevent.NativeSpan {
	a := map[string]any{"thread.id": int64(3594), "code.module.name": "codex_core::tasks", "busy_ns": int64(1)}
	maps.Copy(a, attrs)
	return &agentevent.NativeSpan{
		Service: "codex-app-server", Scope: "codex-app-server", Name: name, Kind: 1,
		Start: time.Unix(100, 0), End: time.Unix(101, 0), Attrs: a, Events: events,
	}
}

func nspanResultEvent(attrs map[string]any) agentevent.NativeSpanEvent {
	a := map[string]any{
		"event.name": "codex.tool_result", "target": "codex_otel.trace_safe",
		"conversation.id": "0ed88707-8b12-7b72-ba46-8f41c37bb4e7", "tool_name": "exec_command",
		"tool_namespace": "functions", "call_id": "call_1", "tool_result_seq": "12",
	}
	maps.Copy(a, attrs)
	return agentevent.NativeSpanEvent{Name: "event otel/src/tool_result.rs:54", Time: time.Unix(100, 0), Attrs: a}
}

// TestNativeSpansWireTraps: one row per trap of the wire (NATIVE_OTEL.md
// §2.4): thread.id sent twice, success and numbers as strings, a response
// without a model, the span name in otel.name.
func TestNativeSpansWireTraps(t *testing.T) {
	const conv = "0ed88707-8b12-7b72-ba46-8f41c37bb4e7"
	turnUsage := map[string]any{
		"codex.turn.token_usage.input_tokens": int64(945873), "codex.turn.token_usage.cached_input_tokens": int64(917888),
		"codex.turn.token_usage.cache_write_input_tokens": int64(0), "codex.turn.token_usage.output_tokens": int64(3177),
		"codex.turn.token_usage.reasoning_output_tokens": int64(1214), "model": "gpt-6-astra",
	}
	with := func(base, more map[string]any) map[string]any {
		out := map[string]any{}
		maps.Copy(out, base)
		maps.Copy(out, more)
		return out
	}
	for _, tc := range []struct {
		name    string
		span    *agentevent.NativeSpan
		ok      bool
		session string
		check   func(t *testing.T, p agentevent.SpanPatch, attrs map[string]any)
	}{{
		name:    "turn: thread.id lifted as the string (sent last)",
		span:    nspanCodex(nspanTurn, with(turnUsage, map[string]any{"thread.id": conv})),
		ok:      true,
		session: conv,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, "invoke_agent codex", p.Name)
			require.Equal(t, conv, a[agentevent.AttrSessionID])
			require.Equal(t, int64(945873), a["agent.turn.usage.input_tokens"])
			require.Equal(t, int64(917888), a["agent.turn.usage.cache_read.input_tokens"])
			require.Equal(t, int64(0), a["agent.turn.usage.cache_creation.input_tokens"])
			require.Equal(t, int64(3177), a["agent.turn.usage.output_tokens"])
			require.Equal(t, int64(1214), a["agent.turn.usage.reasoning.output_tokens"])
			require.Equal(t, "gpt-6-astra", a["gen_ai.request.model"])
			require.Equal(t, "turn", a[agentevent.AttrCodexTask])
			require.NotContains(t, a, agentevent.AttrTokensInput)
		},
	}, {
		name: "turn: thread.id lifted as the OS thread (int) is no session",
		span: nspanCodex(nspanTurn, turnUsage),
		ok:   true,
		check: func(t *testing.T, _ agentevent.SpanPatch, a map[string]any) {
			require.NotContains(t, a, agentevent.AttrSessionID)
		},
	}, {
		name: "turn: thread.id as a string of digits is no session either",
		span: nspanCodex(nspanTurn, map[string]any{"thread.id": "3652"}),
		ok:   true,
	}, {
		name:    "turn: conversation.id wins over thread.id",
		span:    nspanCodex(nspanTurn, map[string]any{"thread.id": "other-uuid", "conversation.id": conv}),
		ok:      true,
		session: conv,
	}, {
		name:    "turn: token counts as strings; the name in otel.name",
		span:    nspanCodex("turn", map[string]any{"otel.name": "session_task.review", "thread.id": conv, "codex.turn.token_usage.input_tokens": "1065300"}),
		ok:      true,
		session: conv,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, "invoke_agent codex", p.Name)
			require.Equal(t, "review", a[agentevent.AttrCodexTask])
			require.Equal(t, int64(1065300), a["agent.turn.usage.input_tokens"])
		},
	}, {
		name: "response with usage and no model: chat, usage in our keys",
		span: nspanCodex("completed", map[string]any{
			"gen_ai.usage.input_tokens": int64(1065300), "gen_ai.usage.cache_read.input_tokens": int64(1047808),
			"gen_ai.usage.cache_write.input_tokens": int64(5), "gen_ai.usage.output_tokens": "2468",
			"codex.usage.reasoning_output_tokens": int64(551), "codex.usage.total_tokens": int64(1067768),
		}),
		ok: true,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, "chat", p.Name)
			require.Equal(t, 3, p.Kind)
			require.Equal(t, "chat", a[agentevent.AttrOperationName])
			require.Equal(t, int64(1065300), a[agentevent.AttrTokensInput], "Codex input already includes cached input")
			require.Equal(t, int64(1047808), a[agentevent.AttrTokensCached])
			require.Equal(t, int64(5), a[agentevent.AttrTokensCacheCreation])
			require.NotContains(t, a, agentevent.AttrCodexCacheWriteTokens)
			require.Equal(t, int64(2468), a[agentevent.AttrTokensOutput])
			require.Equal(t, int64(551), a[agentevent.AttrTokensThinking])
			require.Equal(t, int64(1067768), a[agentevent.AttrTokensTotal])
			require.NotContains(t, a, agentevent.AttrModel)
		},
	}, {
		name: "response with usage and a model",
		span: nspanCodex("handle_responses", map[string]any{"gen_ai.usage.input_tokens": int64(10), "model": "gpt-6-astra"}),
		ok:   true,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, "chat gpt-6-astra", p.Name)
			require.Equal(t, "gpt-6-astra", a[agentevent.AttrModel])
		},
	}, {
		name: "handle_responses without usage is left alone",
		span: nspanCodex("handle_responses", map[string]any{"codex.request.reasoning_effort": "ultra"}),
	}, {
		name:    "tool result success=\"false\" string: Error on the one execute_tool span",
		span:    nspanCodex(nspanDispatch, nil, nspanResultEvent(map[string]any{"success": "false", "duration_ms": "10393", "tool_name": "mcp_tool3"})),
		ok:      true,
		session: conv,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, "execute_tool mcp_tool3", p.Name)
			require.True(t, p.Error)
			require.Equal(t, "tool_error", a[agentevent.AttrErrorType])
			require.Equal(t, "error", a[agentevent.AttrToolStatus])
			require.Equal(t, "call_1", a[agentevent.AttrToolCallID])
			require.Equal(t, int64(10393), a[agentevent.AttrToolLatencyMs])
			require.Equal(t, "functions", a[agentevent.AttrCodexToolNamespace])
			require.Equal(t, "function", a[agentevent.AttrToolType])
		},
	}, {
		name:    "tool result success=true bool, duration as int",
		span:    nspanCodex(nspanDispatch, nil, nspanResultEvent(map[string]any{"success": true, "duration_ms": int64(113)})),
		ok:      true,
		session: conv,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, "execute_tool exec_command", p.Name)
			require.False(t, p.Error)
			require.Equal(t, "success", a[agentevent.AttrToolStatus])
			require.Equal(t, int64(113), a[agentevent.AttrToolLatencyMs])
		},
	}, {
		name:    "tool result without success: no status made up",
		span:    nspanCodex(nspanHandleSource, nil, nspanResultEvent(nil)),
		ok:      true,
		session: conv,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, "execute_tool exec_command", p.Name, "whichever span holds the result is the call's")
			require.False(t, p.Error)
			require.NotContains(t, a, agentevent.AttrToolStatus)
		},
	}, {
		name: "dispatch without the result event: internal",
		span: nspanCodex(nspanDispatch, nil),
		ok:   true,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, agentevent.SpanToolDispatch, p.Name)
			require.NotContains(t, a, agentevent.AttrOperationName)
		},
	}, {
		name:    "mcp.tools.call: internal name, the call id not duplicated as gen_ai.tool.call.id",
		span:    nspanCodex(nspanMCPCall, map[string]any{"tool.call_id": "call_1", "tool.name": "mcp_tool3", "conversation.id": conv, "session.id": conv}),
		ok:      true,
		session: conv,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, agentevent.SpanToolMCPCall, p.Name)
			require.NotContains(t, a, agentevent.AttrToolCallID)
			require.Zero(t, p.Kind, "the kind (CLIENT) stays")
		},
	}, {
		name:    "code mode broker: session from its attributes",
		span:    nspanCodex(nspanCodeModeTool, map[string]any{"conversation.id": conv, "tool_name": "exec_command"}),
		ok:      true,
		session: conv,
		check: func(t *testing.T, p agentevent.SpanPatch, _ map[string]any) {
			require.Equal(t, agentevent.SpanToolCodeMode, p.Name)
		},
	}, {
		name: "compaction",
		span: nspanCodex(nspanCompact, with(turnUsage, map[string]any{"thread.id": conv})), ok: true, session: conv,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, "agent.compaction", p.Name)
			require.NotContains(t, a, "agent.turn.usage.input_tokens")
		},
	}, {
		name: "sampling request",
		span: nspanCodex(nspanSampling, map[string]any{"turn_id": "t", "model": "gpt-6-astra"}), ok: true,
		check: func(t *testing.T, p agentevent.SpanPatch, _ map[string]any) {
			require.Equal(t, agentevent.SpanSamplingRequest, p.Name)
			require.Zero(t, p.Kind)
		},
	}, {
		name: "a code span is left alone",
		span: nspanCodex("run_turn", nil),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p, ok := NormalizeNativeSpan(tc.span)
			require.Equal(t, tc.ok, ok)
			if !ok {
				require.Equal(t, agentevent.SpanPatch{}, p)
				return
			}
			require.Equal(t, Source, p.Source)
			require.Equal(t, tc.session, p.SessionID)
			vendortest.RequirePatchTypes(t, p)
			if tc.check != nil {
				tc.check(t, p, vendortest.ApplySpanPatch(tc.span.Attrs, p))
			}
		})
	}
}
