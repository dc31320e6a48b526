// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"strconv"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// Codex's spans are its Rust code's tracing spans exported through
// tracing-opentelemetry: internal names, no GenAI conventions, status always
// UNSET. NormalizeNativeSpan picks out the few that are a turn, a model
// response or a tool call and maps them to the span model; the many other
// code spans (session_loop, run_turn, receiving, ...) are left alone.

// Span names of Codex's tracing (the span's otel.name when it set one).
const (
	nspanTurn          = "session_task.turn"
	nspanReview        = "session_task.review"
	nspanUserShell     = "session_task.user_shell"
	nspanTurnBare      = "turn"
	nspanCompact       = "session_task.compact"
	nspanSampling      = "try_run_sampling_request"
	nspanDispatch      = "dispatch_tool_call_with_terminal_outcome"
	nspanHandle        = "handle_tool_call"
	nspanHandleSource  = "handle_tool_call_with_source"
	nspanCodeModeTool  = "code_mode.broker.invoke_tool"
	nspanMCPCall       = "mcp.tools.call"
	nspanHookMCP       = "codex.hooks.mcp_tool"
	nspanEventResult   = "codex.tool_result"
	nspanAttrOtelName  = "otel.name"
	nspanAgentName     = "codex"
	nspanKindClient    = 3
	nspanOpInvokeAgent = "invoke_agent"
	nspanOpChat        = "chat"
	nspanOpExecuteTool = "execute_tool"
)

// Codex's own keys of its token counts, which the normalization reads.
const (
	nattrTurnTokens = "codex.turn.token_usage."
	nattrReasoning  = "codex.usage.reasoning_output_tokens"
	nattrTotal      = "codex.usage.total_tokens"
)

// nspanTurnUsage maps the turn span's per-turn totals to the root's rollup
// (agent.turn.usage.<suffix of gen_ai.usage.*>). input_tokens is already
// inclusive of cached input, as ours is.
var nspanTurnUsage = []struct{ from, to string }{
	{"input_tokens", "input_tokens"},
	{"cached_input_tokens", "cache_read.input_tokens"},
	{"cache_write_input_tokens", "cache_creation.input_tokens"},
	{"output_tokens", "output_tokens"},
	{"reasoning_output_tokens", "reasoning.output_tokens"},
}

// nspanPhaseNames are the other spans of a tool call's path through Codex.
// Only the span holding the call's codex.tool_result event becomes its
// execute_tool span; these keep an internal name so that span_metrics
// counts every call once.
var nspanPhaseNames = map[string]string{
	nspanDispatch:     agentevent.SpanToolDispatch,
	nspanHandle:       agentevent.SpanToolHandle,
	nspanHandleSource: agentevent.SpanToolHandle,
	nspanCodeModeTool: agentevent.SpanToolCodeMode,
	nspanMCPCall:      agentevent.SpanToolMCPCall,
	nspanHookMCP:      agentevent.SpanHook,
}

// NormalizeNativeSpan maps one span of Codex's tracing to the span model
// (docs/design/span-model.md). ok is false for the code spans the model
// has no place for.
//
//   - The turn span (session_task.turn; review and user_shell tasks too) →
//     "invoke_agent codex" with the turn's token totals as
//     agent.turn.usage.*, never gen_ai.usage.*: the model responses below
//     carry those, and a token is counted once.
//   - The span that carries a response's gen_ai.usage.* (handle_responses
//     of the completed event) → "chat <model>" (CLIENT), usage in our keys.
//   - The span holding a call's codex.tool_result span event (in practice
//     dispatch_tool_call_with_terminal_outcome) → "execute_tool <tool>",
//     Error when the event says success=false: exactly one per call id.
//   - session_task.compact → agent.compaction; try_run_sampling_request
//     and the other tool-call spans → agent.* internal names.
func NormalizeNativeSpan(sp *agentevent.NativeSpan) (patch agentevent.SpanPatch, ok bool) {
	name := sp.Name
	if on := agentevent.NativeStr(sp.Attrs[nspanAttrOtelName]); on != "" {
		name = on
	}
	n := nspan{sp: sp, p: agentevent.SpanPatch{
		Source:    Source,
		SessionID: nspanConversation(sp),
		Set:       map[string]any{},
	}}
	result := nspanToolResult(sp)
	switch {
	case nspanHasUsage(sp):
		n.chat()
	case name == nspanTurn || name == nspanReview || name == nspanUserShell || name == nspanTurnBare:
		n.turn(name)
	case name == nspanCompact:
		n.p.Name = agentevent.SpanCompaction
	case result != nil:
		n.tool(result)
	case name == nspanSampling:
		n.p.Name = agentevent.SpanSamplingRequest
	case nspanPhaseNames[name] != "":
		n.p.Name = nspanPhaseNames[name]
	default:
		return agentevent.SpanPatch{}, false
	}
	if n.p.SessionID != "" {
		n.p.Set[agentevent.AttrSessionID] = n.p.SessionID
	}
	return n.p, true
}

type nspan struct {
	sp *agentevent.NativeSpan
	p  agentevent.SpanPatch
}

func (n *nspan) str(k string) string { return agentevent.NativeStr(n.sp.Attrs[k]) }

// nspanConversation is the conversation (session) a span belongs to:
// conversation.id where the span has it, else the thread.id that is the
// conversation's UUID. The turn span sends thread.id twice, the OS thread
// as an integer and the conversation as a string: an integer, or a string
// of digits, is never taken for the conversation. Failing those, the
// conversation.id of the span's events (tool spans carry it only there).
func nspanConversation(sp *agentevent.NativeSpan) string {
	for _, k := range []string{"conversation.id", agentevent.AttrSessionID} {
		if s, ok := sp.Attrs[k].(string); ok && s != "" {
			return s
		}
	}
	if s, ok := sp.Attrs["thread.id"].(string); ok && s != "" {
		if _, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err != nil {
			return s
		}
	}
	if s, ok := sp.Attrs["session.id"].(string); ok && s != "" {
		return s
	}
	for _, e := range sp.Events {
		if s, ok := e.Attrs["conversation.id"].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// nspanHasUsage reports whether the span carries a model response's token
// usage (Codex records it on the completed event's handle_responses span).
func nspanHasUsage(sp *agentevent.NativeSpan) bool {
	for _, k := range []string{agentevent.AttrTokensInput, agentevent.AttrTokensOutput} {
		if _, ok := agentevent.NativeInt(sp.Attrs[k]); ok {
			return true
		}
	}
	return false
}

// nspanToolResult is the attributes of the span's codex.tool_result event
// (a trace-safe event: its name is the callsite, event.name says what it
// is), nil when it has none with a call id. Codex emits one per call.
func nspanToolResult(sp *agentevent.NativeSpan) map[string]any {
	for _, e := range sp.Events {
		if e.Name != nspanEventResult && agentevent.NativeStr(e.Attrs["event.name"]) != nspanEventResult {
			continue
		}
		if agentevent.NativeStr(e.Attrs["call_id"]) != "" {
			return e.Attrs
		}
	}
	return nil
}

func (n *nspan) model() string {
	for _, k := range []string{agentevent.AttrRequestModel, agentevent.AttrModel, "model"} {
		if m := n.str(k); m != "" {
			return m
		}
	}
	return ""
}

func (n *nspan) turn(name string) {
	n.p.Name = nspanOpInvokeAgent + " " + nspanAgentName
	n.p.Set[agentevent.AttrOperationName] = nspanOpInvokeAgent
	n.p.Set[agentevent.AttrAgentName] = nspanAgentName
	task := strings.TrimPrefix(name, "session_task.")
	if task == nspanTurnBare {
		task = "turn"
	}
	n.p.Set[agentevent.AttrCodexTask] = task
	if m := n.model(); m != "" {
		n.p.Set[agentevent.AttrRequestModel] = m
	}
	for _, u := range nspanTurnUsage {
		if v, ok := agentevent.NativeInt(n.sp.Attrs[nattrTurnTokens+u.from]); ok {
			n.p.Set[agentevent.AttrTurnUsagePrefix+u.to] = v
		}
	}
	// Codex closes a turn span UNSET whatever the outcome; an Error status,
	// should one come, is kept with a class.
	if n.sp.StatusError {
		n.p.Error, n.p.ErrorMessage = true, n.sp.StatusMessage
		n.p.Set[agentevent.AttrErrorType] = agentevent.ErrorTypeAPI
	}
}

// chat re-keys a response's usage. Codex's input_tokens already includes
// cached input (our convention); the cache writes and reasoning go to our
// keys.
func (n *nspan) chat() {
	n.p.Name = nspanOpChat
	if m := n.model(); m != "" {
		n.p.Name = nspanOpChat + " " + m
		n.p.Set[agentevent.AttrRequestModel] = m
		n.p.Set[agentevent.AttrModel] = m
	}
	n.p.Kind = nspanKindClient
	n.p.Set[agentevent.AttrOperationName] = nspanOpChat
	for _, k := range []string{agentevent.AttrTokensInput, agentevent.AttrTokensOutput, agentevent.AttrTokensCached} {
		n.setInt(k, k)
	}
	if n.setInt(agentevent.AttrTokensCacheCreation, agentevent.AttrCodexCacheWriteTokens) {
		n.p.Remove = append(n.p.Remove, agentevent.AttrCodexCacheWriteTokens)
	}
	n.setInt(agentevent.AttrTokensThinking, nattrReasoning)
	n.setInt(agentevent.AttrTokensTotal, nattrTotal)
	if n.sp.StatusError {
		n.p.Error, n.p.ErrorMessage = true, n.sp.StatusMessage
		n.p.Set[agentevent.AttrErrorType] = agentevent.ErrorTypeAPI
	}
}

// setInt writes the integer attribute from as key (whatever its wire type)
// and says whether there was one.
func (n *nspan) setInt(key, from string) bool {
	v, ok := agentevent.NativeInt(n.sp.Attrs[from])
	if ok {
		n.p.Set[key] = v
	}
	return ok
}

func (n *nspan) tool(ev map[string]any) {
	tool := agentevent.NativeStr(ev["tool_name"])
	n.p.Name = nspanOpExecuteTool
	if tool != "" {
		n.p.Name = nspanOpExecuteTool + " " + tool
		n.p.Set[agentevent.AttrToolName] = tool
	}
	n.p.Set[agentevent.AttrOperationName] = nspanOpExecuteTool
	n.p.Set[agentevent.AttrToolType] = "function"
	n.p.Set[agentevent.AttrToolCallID] = agentevent.NativeStr(ev["call_id"])
	if ns := agentevent.NativeStr(ev["tool_namespace"]); ns != "" {
		n.p.Set[agentevent.AttrCodexToolNamespace] = ns
	}
	if d, ok := agentevent.NativeInt(ev["duration_ms"]); ok {
		n.p.Set[agentevent.AttrToolLatencyMs] = d
	}
	// success is a string ("true"/"false") on Codex's events; a bool is
	// taken too.
	success, known := agentevent.NativeBool(ev["success"])
	switch {
	case (known && !success) || n.sp.StatusError:
		n.p.Error, n.p.ErrorMessage = true, n.sp.StatusMessage
		n.p.Set[agentevent.AttrErrorType] = agentevent.ErrorTypeTool
		n.p.Set[agentevent.AttrToolStatus] = string(agentevent.ToolError)
	case known:
		n.p.Set[agentevent.AttrToolStatus] = string(agentevent.ToolSuccess)
	}
}
