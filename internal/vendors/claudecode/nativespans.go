// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"strings"
	"unicode/utf8"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// Claude Code's beta tracing (scope com.anthropic.claude_code.tracing) sends
// a tree per user prompt: claude_code.interaction over llm_request, tool
// (with its tool.blocked_on_user and tool.execution children) and hook
// spans. NormalizeNativeSpan renames and re-keys each of them in place so
// that span_metrics, the alerts, gen_ai_cost and the dashboard read them as
// they read the spans agent_span builds from the session files.

// Span names of Claude Code's own tracing.
const (
	nspanInteraction = "claude_code.interaction"
	nspanLLMRequest  = "claude_code.llm_request"
	nspanTool        = "claude_code.tool"
	nspanToolExec    = "claude_code.tool.execution"
	nspanToolBlocked = "claude_code.tool.blocked_on_user"
	nspanHook        = "claude_code.hook"
)

// The agent and provider the normalized spans name, and the bound of their
// command line. The internal spans are named agentevent.SpanToolExecution,
// SpanToolBlockedOnUser and SpanHook.
const (
	nspanAgentName      = "claude-code"
	nspanProvider       = "anthropic"
	nspanCommandMaxSize = 4 << 10
)

// The prompt attribute of Claude Code's spans (content), the operation names
// and span kind the normalization gives, and Claude Code's error class of a
// call the user stopped.
const (
	nattrSpanUserPrompt  = "user_prompt"
	nopInvokeAgent       = "invoke_agent"
	nopChat              = "chat"
	nopExecuteTool       = "execute_tool"
	nspanKindClient      = 3
	nspanErrorClassAbort = "aborted"
)

// nspanIdentityAttrs are on every Claude Code span; like the events mapped
// from the logs, the normalized spans do not carry who the user is.
var nspanIdentityAttrs = []string{"user.id", "user.email", "user.account_uuid", "user.account_id", "organization.id"}

// NormalizeNativeSpan maps one span of Claude Code's own tracing to the span
// model (docs/design/span-model.md). ok is false for a span that is not one
// of the documented claude_code.* spans.
//
//   - claude_code.interaction → "invoke_agent claude-code", the turn root.
//   - claude_code.llm_request → "chat <model>" (CLIENT) with gen_ai.usage.*
//     in the GenAI convention: input includes cache reads and writes
//     (Anthropic's input_tokens excludes them).
//   - claude_code.tool → "execute_tool <tool>": the one span per tool call
//     span_metrics counts, since it is the only one that names the tool.
//   - claude_code.tool.execution → agent.tool.execution, internal, with the
//     call's outcome (Error + error.type when success is false): Claude Code
//     states the outcome here and not on the tool span.
//   - claude_code.tool.blocked_on_user → agent.tool.blocked_on_user,
//     claude_code.hook → agent.hook.
func NormalizeNativeSpan(sp *agentevent.NativeSpan) (patch agentevent.SpanPatch, ok bool) {
	name := sp.Name
	if !strings.HasPrefix(name, "claude_code.") {
		// span.type holds the short form; a renamed span still says what it is.
		if t := agentevent.NativeStr(sp.Attrs["span.type"]); t != "" {
			name = "claude_code." + t
		}
	}
	n := nspan{sp: sp, p: agentevent.SpanPatch{
		Source:    Source,
		SessionID: agentevent.NativeStr(sp.Attrs["session.id"]),
		Set:       map[string]any{},
	}}
	switch name {
	case nspanInteraction:
		n.interaction()
	case nspanLLMRequest:
		n.llmRequest()
	case nspanTool:
		n.tool()
	case nspanToolExec:
		n.toolExecution()
	case nspanToolBlocked:
		n.blocked()
	case nspanHook:
		n.hook()
	default:
		return agentevent.SpanPatch{}, false
	}
	n.common()
	return n.p, true
}

type nspan struct {
	sp *agentevent.NativeSpan
	p  agentevent.SpanPatch
}

func (n *nspan) str(k string) string { return agentevent.NativeStr(n.sp.Attrs[k]) }

func (n *nspan) has(k string) bool { _, ok := n.sp.Attrs[k]; return ok }

// setInt copies the integer attribute from to key, whatever its wire type.
func (n *nspan) setInt(key, from string) {
	if v, ok := agentevent.NativeInt(n.sp.Attrs[from]); ok {
		n.p.Set[key] = v
	}
}

func (n *nspan) setStr(key, from string) {
	if v := n.str(from); v != "" {
		n.p.Set[key] = v
	}
}

func (n *nspan) remove(keys ...string) {
	for _, k := range keys {
		if n.has(k) {
			n.p.Remove = append(n.p.Remove, k)
		}
	}
}

// common is what every normalized span gets: the session as
// gen_ai.conversation.id, the subagent it ran in, no identity attributes.
func (n *nspan) common() {
	if n.p.SessionID != "" {
		n.p.Set[agentevent.AttrSessionID] = n.p.SessionID
	}
	n.setStr(agentevent.AttrAgentID, "agent_id")
	n.setStr(agentevent.AttrSubagentParentAgentID, "parent_agent_id")
	n.remove(nspanIdentityAttrs...)
}

// fail sets Error status with errType, keeping the agent's own class of the
// failure apart (error_class is free-form; error.type stays a small set
// span_metrics can use as a label). An aborted request or tool is the user
// stopping it.
func (n *nspan) fail(errType string) {
	class := n.str("error_class")
	if class == nspanErrorClassAbort {
		errType = agentevent.ErrorTypeInterrupted
	}
	n.p.Error = true
	n.p.ErrorMessage = n.sp.StatusMessage
	if n.p.ErrorMessage == "" {
		n.p.ErrorMessage = nspanRealText(n.str("error"))
	}
	n.p.Set[agentevent.AttrErrorType] = errType
	if class != "" {
		n.p.Set[agentevent.AttrErrorClass] = class
	}
}

// outcome reads success (a bool on spans, a string on the log events; both
// accepted) and the span's own status: failed is true when either says so.
func (n *nspan) outcome() (failed, known bool) {
	ok, known := agentevent.NativeBool(n.sp.Attrs["success"])
	if known && !ok {
		return true, true
	}
	if n.sp.StatusError {
		return true, true
	}
	return false, known
}

func (n *nspan) interaction() {
	n.p.Name = nopInvokeAgent + " " + nspanAgentName
	n.p.Set[agentevent.AttrOperationName] = nopInvokeAgent
	n.p.Set[agentevent.AttrAgentName] = nspanAgentName
	n.setInt(agentevent.AttrTurnSequence, "interaction.sequence")
	n.setInt(agentevent.AttrTurnDurationMs, "interaction.duration_ms")
	// The prompt is "" or <REDACTED> unless OTEL_LOG_USER_PROMPTS is on: an
	// empty placeholder says nothing and goes.
	if n.has(nattrSpanUserPrompt) && nspanRealText(n.str(nattrSpanUserPrompt)) == "" {
		n.p.Remove = append(n.p.Remove, nattrSpanUserPrompt)
	}
	if n.sp.StatusError {
		n.fail(agentevent.ErrorTypeAPI)
	}
}

func (n *nspan) llmRequest() {
	model := n.str(agentevent.AttrRequestModel)
	if model == "" {
		model = n.str("model")
	}
	n.p.Name = nopChat
	if model != "" {
		n.p.Name = nopChat + " " + model
		n.p.Set[agentevent.AttrRequestModel] = model
		// The span records one model: the one asked is the one that answered.
		n.p.Set[agentevent.AttrModel] = model
	}
	n.p.Kind = nspanKindClient
	n.p.Set[agentevent.AttrOperationName] = nopChat
	n.p.Set[agentevent.AttrProvider] = nspanProvider
	n.remove(agentevent.AttrGenAISystem)
	if id := n.str(agentevent.AttrResponseID); id != "" {
		n.p.Set[agentevent.AttrResponseID] = id
	} else {
		n.setStr(agentevent.AttrResponseID, "request_id")
	}
	if !n.has(agentevent.AttrFinishReasons) {
		if r := n.str("stop_reason"); r != "" {
			n.p.Set[agentevent.AttrFinishReasons] = []string{r}
		}
	}
	n.usage()
	n.cost()
	// The call's facts under agent.chat., the keys the api_request log
	// event's mapping gives them.
	n.setInt(agentevent.AttrChatPrefix+"duration_ms", "duration_ms")
	n.setInt(agentevent.AttrChatPrefix+"ttft_ms", "ttft_ms")
	n.setStr(agentevent.AttrChatPrefix+"speed", "speed")
	n.setStr(agentevent.AttrChatPrefix+"client_request_id", "client_request_id")
	if qs := n.str("query_source"); qs != "" {
		n.p.Set[agentevent.AttrChatPrefix+"query_source"] = qs
	} else {
		n.setStr(agentevent.AttrChatPrefix+"query_source", "query_source_safe")
	}
	if failed, _ := n.outcome(); failed {
		n.fail(agentevent.ErrorTypeAPI)
	}
}

// usage writes the request's tokens in the GenAI convention. Anthropic's
// input_tokens excludes the cache reads and writes; ours includes them.
func (n *nspan) usage() {
	in, hasIn := agentevent.NativeInt(n.sp.Attrs["input_tokens"])
	out, hasOut := agentevent.NativeInt(n.sp.Attrs["output_tokens"])
	read, hasRead := agentevent.NativeInt(n.sp.Attrs["cache_read_tokens"])
	created, hasCreated := agentevent.NativeInt(n.sp.Attrs["cache_creation_tokens"])
	if hasIn || hasRead || hasCreated {
		n.p.Set[agentevent.AttrTokensInput] = in + read + created
	}
	if hasOut {
		n.p.Set[agentevent.AttrTokensOutput] = out
	}
	if hasRead {
		n.p.Set[agentevent.AttrTokensCached] = read
	}
	if hasCreated {
		n.p.Set[agentevent.AttrTokensCacheCreation] = created
	}
}

// cost carries a cost the span states (cost_usd, else cost_usd_micros), so
// that gen_ai_cost keeps it; none is ever made up here.
func (n *nspan) cost() {
	if v, ok := agentevent.NativeFloat(n.sp.Attrs["cost_usd"]); ok {
		n.p.Set[agentevent.AttrCostUSD] = v
		return
	}
	if v, ok := agentevent.NativeInt(n.sp.Attrs["cost_usd_micros"]); ok {
		n.p.Set[agentevent.AttrCostUSD] = float64(v) / 1e6
	}
}

func (n *nspan) callID() string {
	if id := n.str(agentevent.AttrToolCallID); id != "" {
		return id
	}
	return n.str("tool_use_id")
}

func (n *nspan) tool() {
	tool := n.str("tool_name")
	if tool == "" {
		tool = n.str("tool_name_safe")
	}
	n.p.Name = nopExecuteTool
	if tool != "" {
		n.p.Name = nopExecuteTool + " " + tool
		n.p.Set[agentevent.AttrToolName] = tool
	}
	n.p.Set[agentevent.AttrOperationName] = nopExecuteTool
	n.p.Set[agentevent.AttrToolType] = "function"
	if id := n.callID(); id != "" {
		n.p.Set[agentevent.AttrToolCallID] = id
	}
	n.setInt(agentevent.AttrToolLatencyMs, "duration_ms")
	n.setStr(agentevent.AttrFilePath, "file_path")
	n.setStr(agentevent.AttrSubagentType, "subagent_type")
	if cmd := nspanRealText(n.str("full_command")); cmd != "" {
		n.p.Set[agentevent.AttrToolCommand] = nspanCut(cmd, nspanCommandMaxSize)
	}
	// Claude Code leaves this span UNSET and reports the outcome on its
	// tool.execution child; a success or an Error status here still counts.
	if failed, known := n.outcome(); failed {
		n.fail(agentevent.ErrorTypeTool)
		n.p.Set[agentevent.AttrToolStatus] = string(agentevent.ToolError)
	} else if known {
		n.p.Set[agentevent.AttrToolStatus] = string(agentevent.ToolSuccess)
	}
}

func (n *nspan) toolExecution() {
	n.p.Name = agentevent.SpanToolExecution
	if id := n.callID(); id != "" {
		n.p.Set[agentevent.AttrToolCallID] = id
	}
	n.setInt(agentevent.AttrToolLatencyMs, "duration_ms")
	if failed, known := n.outcome(); failed {
		n.fail(agentevent.ErrorTypeTool)
		n.p.Set[agentevent.AttrToolStatus] = string(agentevent.ToolError)
	} else if known {
		n.p.Set[agentevent.AttrToolStatus] = string(agentevent.ToolSuccess)
	}
}

func (n *nspan) blocked() {
	n.p.Name = agentevent.SpanToolBlockedOnUser
	n.setStr(agentevent.AttrToolDecision, "decision")
	n.setStr(agentevent.AttrToolDecisionSource, "source")
}

func (n *nspan) hook() {
	n.p.Name = agentevent.SpanHook
	if failed, _ := n.outcome(); failed {
		n.fail(agentevent.ErrorTypeHook)
	}
}

// nspanRealText is s unless it is a placeholder for content the agent did
// not send.
func nspanRealText(s string) string {
	switch strings.TrimSpace(s) {
	case "", "<REDACTED>", "[REDACTED]":
		return ""
	}
	return s
}

// nspanCut cuts s to at most limit bytes on a rune boundary.
func nspanCut(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	s = s[:limit]
	for s != "" && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
