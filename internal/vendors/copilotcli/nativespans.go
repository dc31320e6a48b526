// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package copilotcli

import (
	"sort"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// GitHub Copilot (the CLI, and VS Code Copilot Chat, which the processor
// routes here too) already sends GenAI semantic-convention spans:
// invoke_agent, chat and execute_tool keep their names. NormalizeNativeSpan
// fixes what differs from our span model: usage totals on invoke_agent, the
// billing multiplier that is not a cost, Error status from error.type.

const (
	nopInvokeAgent  = "invoke_agent"
	nopChat         = "chat"
	nopExecuteTool  = "execute_tool"
	nspanKindClient = 3
)

// nspanRenames are Copilot's billing attributes. github.copilot.cost is a
// per-request model multiplier, not money: it must never reach
// agent.usage.cost_usd (gen_ai_cost keeps a stated cost), so it goes under
// a name that says what it is. AIU are premium-request units; the root
// invoke_agent states the session's, chat spans repeat them.
var nspanRenames = []struct {
	from, to string
	integer  bool
}{
	{"github.copilot.cost", agentevent.AttrCopilotCostMultiplier, false},
	{"github.copilot.nano_aiu", agentevent.AttrCopilotNanoAIU, true},
	{"github.copilot.aiu", agentevent.AttrCopilotAIU, false},
}

// NormalizeNativeSpan maps one Copilot span to the span model. ok is false
// for a span without gen_ai.operation.name (session.provisioning,
// session.first_turn and the like: bookkeeping the model has no place for).
//
//   - invoke_agent: its gen_ai.usage.* are totals over the session's turns;
//     they move to agent.turn.usage.* as on our turn roots, so that a token
//     is counted once (on the chat spans).
//   - chat: CLIENT; input tokens as sent (the convention says inclusive);
//     the legacy reasoning key moves to gen_ai.usage.reasoning.output_tokens.
//   - every span: github.copilot.cost → agent.copilot.cost_multiplier,
//     nano_aiu → agent.copilot.nano_aiu; Error status when error.type is set
//     and the status is not; never gen_ai.system.
func NormalizeNativeSpan(sp *agentevent.NativeSpan) (patch agentevent.SpanPatch, ok bool) {
	op := agentevent.NativeStr(sp.Attrs[agentevent.AttrOperationName])
	if op == "" {
		return agentevent.SpanPatch{}, false
	}
	p := agentevent.SpanPatch{
		Source:    Source,
		SessionID: agentevent.NativeStr(sp.Attrs[agentevent.AttrSessionID]),
		Set:       map[string]any{},
	}
	remove := func(k string) {
		if _, has := sp.Attrs[k]; has {
			p.Remove = append(p.Remove, k)
		}
	}
	for _, r := range nspanRenames {
		if v, has := sp.Attrs[r.from]; has {
			if n, isInt := agentevent.NativeInt(v); isInt && r.integer {
				p.Set[r.to] = n
			} else if f, isNum := agentevent.NativeFloat(v); isNum && !r.integer {
				p.Set[r.to] = f
			}
			remove(r.from)
		}
	}
	if sys := agentevent.NativeStr(sp.Attrs[agentevent.AttrGenAISystem]); sys != "" && agentevent.NativeStr(sp.Attrs[agentevent.AttrProvider]) == "" {
		p.Set[agentevent.AttrProvider] = sys
	}
	remove(agentevent.AttrGenAISystem)
	switch op {
	case nopInvokeAgent:
		if sp.ParentSpanID == "" {
			// The run of a user message: named as our turn roots
			// (invoke_agent copilot-cli), which the turn alerts and the
			// dashboard select; the agent's own name stays in
			// gen_ai.agent.name. A subagent (under its execute_tool span)
			// keeps "invoke_agent <name>".
			p.Name = nopInvokeAgent + " " + Source.ServiceName()
			if agentevent.NativeStr(sp.Attrs[agentevent.AttrAgentName]) == "" {
				if name := strings.TrimSpace(strings.TrimPrefix(sp.Name, nopInvokeAgent)); name != "" {
					p.Set[agentevent.AttrAgentName] = name
				}
			}
		}
		var keys []string
		for k := range sp.Attrs {
			if strings.HasPrefix(k, agentevent.AttrGenAIUsagePrefix) {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := sp.Attrs[k]
			suffix := strings.TrimPrefix(k, agentevent.AttrGenAIUsagePrefix)
			if k == agentevent.AttrCopilotReasoningTokens {
				suffix = "reasoning.output_tokens"
			}
			if n, isInt := agentevent.NativeInt(v); isInt {
				p.Set[agentevent.AttrTurnUsagePrefix+suffix] = n
			}
			p.Remove = append(p.Remove, k)
		}
	case nopChat:
		if sp.Kind != nspanKindClient {
			p.Kind = nspanKindClient
		}
		for _, k := range []string{agentevent.AttrTokensInput, agentevent.AttrTokensOutput, agentevent.AttrTokensCached, agentevent.AttrTokensCacheCreation, agentevent.AttrTokensThinking} {
			// Numbers as sent, as integers whatever their wire type.
			if n, isInt := agentevent.NativeInt(sp.Attrs[k]); isInt {
				if _, already := sp.Attrs[k].(int64); !already {
					p.Set[k] = n
				}
			}
		}
		if _, has := sp.Attrs[agentevent.AttrTokensThinking]; !has {
			if n, isInt := agentevent.NativeInt(sp.Attrs[agentevent.AttrCopilotReasoningTokens]); isInt {
				p.Set[agentevent.AttrTokensThinking] = n
				remove(agentevent.AttrCopilotReasoningTokens)
			}
		}
	}
	errType := agentevent.NativeStr(sp.Attrs[agentevent.AttrErrorType])
	failed := sp.StatusError || errType != ""
	if failed {
		p.Error = true
		p.ErrorMessage = sp.StatusMessage
		if p.ErrorMessage == "" {
			p.ErrorMessage = errType
		}
		if errType == "" {
			errType = agentevent.ErrorTypeAPI
			if op == nopExecuteTool {
				errType = agentevent.ErrorTypeTool
			}
			p.Set[agentevent.AttrErrorType] = errType
		}
	}
	if op == nopExecuteTool {
		if failed {
			p.Set[agentevent.AttrToolStatus] = string(agentevent.ToolError)
		} else {
			p.Set[agentevent.AttrToolStatus] = string(agentevent.ToolSuccess)
		}
	}
	return p, true
}
