// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package copilotcli

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// No capture of Copilot's native spans exists (NATIVE_OTEL.md §5): these
// spans are built from the shapes the Copilot CLI command reference
// documents (NATIVE_OTEL.md §3.1: names, keys, kinds) and from VS Code
// Copilot Chat's (§3.2) where it differs; ids and values are made up.
const nspanConv = "3f2b1c9e-5d41-4f7a-9a0e-2c6b8d1e4f70"

func nspanCopilot(name string, kind int, attrs map[string]any) *agentevent.NativeSpan {
	return &agentevent.NativeSpan{
		Service: "github-copilot", Scope: "github.copilot", Name: name, Kind: kind,
		Start: time.Unix(100, 0), End: time.Unix(101, 0), Attrs: attrs,
	}
}

func TestNativeSpans(t *testing.T) {
	for _, tc := range []struct {
		name    string
		span    *agentevent.NativeSpan
		ok      bool
		session string
		check   func(t *testing.T, p agentevent.SpanPatch, attrs map[string]any)
	}{{
		name: "invoke_agent: usage totals move to agent.turn.usage, cost multiplier and AIU renamed",
		span: nspanCopilot("invoke_agent copilot", 1, map[string]any{
			"gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "github", "gen_ai.agent.name": "copilot",
			"gen_ai.agent.id": "agent-def-1", "gen_ai.conversation.id": nspanConv, "gen_ai.request.model": "claude-sonnet-4.5",
			"gen_ai.usage.input_tokens": int64(52000), "gen_ai.usage.output_tokens": int64(1800),
			"gen_ai.usage.cache_read.input_tokens": int64(40000), "gen_ai.usage.cache_creation.input_tokens": int64(3000),
			"github.copilot.turn_count": int64(3), "github.copilot.cost": 1.0, "github.copilot.nano_aiu": int64(2500000000),
		}),
		ok:      true,
		session: nspanConv,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, "invoke_agent copilot-cli", p.Name, "the run of a user message is named as our turn roots")
			require.Equal(t, "copilot", a["gen_ai.agent.name"])
			require.Zero(t, p.Kind)
			require.Equal(t, int64(52000), a["agent.turn.usage.input_tokens"])
			require.Equal(t, int64(1800), a["agent.turn.usage.output_tokens"])
			require.Equal(t, int64(40000), a["agent.turn.usage.cache_read.input_tokens"])
			require.Equal(t, int64(3000), a["agent.turn.usage.cache_creation.input_tokens"])
			for k := range a {
				require.False(t, strings.HasPrefix(k, "gen_ai.usage."), "no gen_ai.usage on the root: %s", k)
			}
			require.Equal(t, 1.0, a["agent.copilot.cost_multiplier"])
			require.Equal(t, int64(2500000000), a["agent.copilot.nano_aiu"])
			require.NotContains(t, a, "github.copilot.cost")
			require.NotContains(t, a, "github.copilot.nano_aiu")
			require.NotContains(t, a, agentevent.AttrCostUSD, "the multiplier is not USD")
			require.False(t, p.Error)
		},
	}, {
		name: "chat: usage as sent, kind CLIENT, multiplier renamed",
		span: nspanCopilot("chat claude-sonnet-4.5", 3, map[string]any{
			"gen_ai.operation.name": "chat", "gen_ai.provider.name": "github", "gen_ai.conversation.id": nspanConv,
			"gen_ai.request.model": "claude-sonnet-4.5", "gen_ai.response.model": "claude-sonnet-4.5", "gen_ai.response.id": "r1",
			"gen_ai.usage.input_tokens": int64(18000), "gen_ai.usage.output_tokens": int64(600),
			"gen_ai.usage.cache_read.input_tokens": int64(15000), "github.copilot.cost": "1", "github.copilot.turn_id": "t1",
		}),
		ok:      true,
		session: nspanConv,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Zero(t, p.Kind)
			require.Equal(t, int64(18000), a[agentevent.AttrTokensInput], "semconv input is inclusive: as sent")
			require.Equal(t, int64(15000), a[agentevent.AttrTokensCached])
			require.Equal(t, 1.0, a["agent.copilot.cost_multiplier"])
			require.NotContains(t, a, agentevent.AttrCostUSD)
			require.NotContains(t, p.Set, agentevent.AttrTokensInput, "an int sent as int is left as is")
		},
	}, {
		name: "chat sent INTERNAL with string counts and the legacy reasoning key (VS Code)",
		span: nspanCopilot("chat gpt-5", 1, map[string]any{
			"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": "1200", "gen_ai.usage.output_tokens": 300.0,
			"gen_ai.usage.reasoning_tokens": int64(120), "gen_ai.system": "openai",
		}),
		ok: true,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Equal(t, 3, p.Kind)
			require.Equal(t, int64(1200), a[agentevent.AttrTokensInput])
			require.Equal(t, int64(300), a[agentevent.AttrTokensOutput])
			require.Equal(t, int64(120), a[agentevent.AttrTokensThinking])
			require.NotContains(t, a, "gen_ai.usage.reasoning_tokens")
			require.NotContains(t, a, "gen_ai.system")
			require.Equal(t, "openai", a[agentevent.AttrProvider])
		},
	}, {
		name: "chat with error.type and status unset: Error",
		span: nspanCopilot("chat gpt-5", 3, map[string]any{"gen_ai.operation.name": "chat", "gen_ai.conversation.id": nspanConv, "error.type": "rate_limited"}),
		ok:   true, session: nspanConv,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.True(t, p.Error)
			require.Equal(t, "rate_limited", p.ErrorMessage)
			require.Equal(t, "rate_limited", a[agentevent.AttrErrorType])
		},
	}, {
		name: "execute_tool with error.type: Error, tool status error",
		span: nspanCopilot("execute_tool bash", 1, map[string]any{
			"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "bash", "gen_ai.tool.type": "function",
			"gen_ai.tool.call.id": "call_1", "error.type": "Error",
		}),
		ok: true,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Empty(t, p.Name)
			require.True(t, p.Error)
			require.Equal(t, "error", a[agentevent.AttrToolStatus])
		},
	}, {
		name: "execute_tool with Error status and no error.type: tool_error",
		span: func() *agentevent.NativeSpan {
			s := nspanCopilot("execute_tool view", 1, map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "view"})
			s.StatusError, s.StatusMessage = true, "ENOENT"
			return s
		}(),
		ok: true,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.True(t, p.Error)
			require.Equal(t, "ENOENT", p.ErrorMessage)
			require.Equal(t, "tool_error", a[agentevent.AttrErrorType])
		},
	}, {
		name: "execute_tool without error: success",
		span: nspanCopilot("execute_tool task", 1, map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "task"}),
		ok:   true,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.False(t, p.Error)
			require.Equal(t, "success", a[agentevent.AttrToolStatus])
		},
	}, {
		name: "a subagent's invoke_agent (under its execute_tool span) keeps its name",
		span: func() *agentevent.NativeSpan {
			sp := nspanCopilot("invoke_agent explore", 1, map[string]any{
				"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "explore", "gen_ai.conversation.id": nspanConv,
			})
			sp.ParentSpanID = "00f067aa0ba902b7"
			return sp
		}(),
		ok:      true,
		session: nspanConv,
		check: func(t *testing.T, p agentevent.SpanPatch, a map[string]any) {
			require.Empty(t, p.Name)
			require.Equal(t, "explore", a["gen_ai.agent.name"])
		},
	}, {
		name: "session.provisioning has no operation: left alone",
		span: nspanCopilot("session.provisioning", 1, map[string]any{"gen_ai.conversation.id": nspanConv}),
	}, {
		name: "session.first_turn: left alone",
		span: nspanCopilot("session.first_turn", 1, nil),
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
			tc.check(t, p, vendortest.ApplySpanPatch(tc.span.Attrs, p))
		})
	}
}
