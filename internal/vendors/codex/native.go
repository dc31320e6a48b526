// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"container/list"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// Codex's own log events (its OpenTelemetry logs signal) mapped to the
// AgentEvents its rollout files give. README.md ("Native log events") holds
// the mapping table.

// Native mapping bounds: conversations remembered (the oldest used is
// forgotten beyond it) and tool calls remembered per conversation.
const (
	maxNativeConversations = 4096
	maxNativeCalls         = 1024
	// maxCallMs bounds the duration_ms a call's start is derived from
	// (beyond it time.Duration would overflow; the call then starts at its
	// result).
	maxCallMs = int64(1<<63-1) / int64(time.Millisecond)
)

// nativeIgnored are the Codex log events the model deliberately leaves out:
// startup, auth and sandbox bookkeeping, the time to first token (the
// turn's spans carry it), messages between agents (content blanked, no
// conversation.id), skill and plugin bookkeeping, guardian reviews.
var nativeIgnored = map[string]bool{
	"turn_ttft":           true,
	"startup_phase":       true,
	"auth_recovery":       true,
	"sandbox_outcome":     true,
	"agent_communication": true,
	"skill_invocation":    true,
	"guardian_assessment": true,
}

// NativeMapper maps Codex's native log records. It keeps, per conversation,
// the latest prompt (the turn of the events that follow), the latest model
// call and the tool calls already emitted; at most maxNativeConversations
// conversations, the least recently used forgotten first. Safe for
// concurrent use.
type NativeMapper struct {
	mu    sync.Mutex
	convs map[string]*list.Element // of *nativeConv
	lru   *list.List               // front = most recently used
}

// nativeConv is what the mapper remembers of one conversation.
type nativeConv struct {
	id       string
	prompt   string // event id of the latest user_message
	response string // response id of the latest model call
	provider string
	calls    map[string]*nativeCall
	callN    int64
}

// nativeCall is a tool call whose tool_call event went out.
type nativeCall struct {
	order int64
	// answered: a tool_result went out; seq is its tool_result_seq (-1 none).
	answered bool
	seq      int64
	// decision, source: the rejection a tool_decision stated.
	decision, source string
}

func (c *nativeCall) Order() int64 { return c.order }

// NewNativeMapper returns a mapper with no conversation remembered.
func NewNativeMapper() *NativeMapper {
	return &NativeMapper{convs: map[string]*list.Element{}, lru: list.New()}
}

func unmapped(format string, args ...any) error {
	return fmt.Errorf("codex: %s: %w", fmt.Sprintf(format, args...), agentevent.ErrNativeUnmapped)
}

// conv returns the state of a conversation, remembering it.
func (m *NativeMapper) conv(id string) *nativeConv {
	if e, ok := m.convs[id]; ok {
		m.lru.MoveToFront(e)
		return e.Value.(*nativeConv)
	}
	c := &nativeConv{id: strings.Clone(id), calls: map[string]*nativeCall{}}
	m.convs[c.id] = m.lru.PushFront(c)
	for m.lru.Len() > maxNativeConversations {
		old := m.lru.Back()
		m.lru.Remove(old)
		delete(m.convs, old.Value.(*nativeConv).id)
	}
	return c
}

// nativeName is the record's event name without the "codex." prefix; ok is
// false when the record carries none (a callsite string such as
// "event otel/src/metrics/client.rs:301" is no name).
func nativeName(rec *agentevent.NativeRecord) (string, bool) {
	name := rec.Str("event.name")
	if name == "" {
		name = rec.Name
	}
	name = strings.TrimSpace(name)
	if name == "" || strings.HasPrefix(name, "event ") || strings.ContainsAny(name, " /:") {
		return "", false
	}
	return strings.TrimPrefix(name, "codex."), true
}

// realText tells content the agent sent from a blank or redacted field.
func realText(s string) bool {
	switch strings.TrimSpace(s) {
	case "", "<REDACTED>", "[REDACTED]":
		return false
	}
	return true
}

// Map turns one Codex log record into AgentEvents: (nil, nil) for a record
// the model leaves out, an error wrapping agentevent.ErrNativeUnmapped for
// one it cannot map.
func (m *NativeMapper) Map(rec *agentevent.NativeRecord) ([]agentevent.Event, error) {
	if rec == nil {
		return nil, unmapped("nil record")
	}
	name, ok := nativeName(rec)
	if !ok {
		return nil, unmapped("record without event.name")
	}
	if nativeIgnored[name] || strings.HasPrefix(name, "plugin_install") {
		return nil, nil
	}
	session := rec.Str("conversation.id")
	if session == "" {
		if name == "api_request" {
			// The /models refresh: another emitter, no session metadata.
			return nil, nil
		}
		return nil, unmapped("%s without conversation.id", name)
	}
	ts := rec.Time
	if ts.IsZero() {
		if t, err := time.Parse(time.RFC3339Nano, rec.Str("event.timestamp")); err == nil {
			ts = t
		}
	}
	if ts.IsZero() {
		return nil, unmapped("%s without a time", name)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	x := &nativeCtx{m: m, rec: rec, name: name, session: session, ts: ts}
	var out []agentevent.Event
	var err error
	switch name {
	case "conversation_starts":
		out = x.conversationStarts()
	case "user_prompt":
		out = x.userPrompt()
	case "sse_event":
		out, err = x.sseEvent()
	case "tool_result":
		out, err = x.toolResult()
	case "tool_decision":
		out, err = x.toolDecision()
	case "api_request", "websocket_connect", "websocket_request":
		out = x.request()
	case "turn_cost":
		out = x.turnCost()
	case "agent_response":
		out = x.agentResponse()
	default:
		return nil, unmapped("unknown event name %q", name)
	}
	if err != nil {
		return nil, err
	}
	x.finish(out)
	return out, nil
}

// nativeCtx is one record being mapped.
type nativeCtx struct {
	m       *NativeMapper
	rec     *agentevent.NativeRecord
	name    string
	session string
	ts      time.Time
	c       *nativeConv
}

func (x *nativeCtx) conv() *nativeConv {
	if x.c == nil {
		x.c = x.m.conv(x.session)
	}
	return x.c
}

// base starts an event of the record.
func (x *nativeCtx) base(typ agentevent.EventType, role agentevent.Role, ch agentevent.Channel) agentevent.Event {
	ev := agentevent.Event{
		Source:       Source,
		SessionID:    x.session,
		Timestamp:    x.ts,
		Type:         typ,
		Role:         role,
		Channel:      ch,
		AgentVersion: x.rec.ServiceVersion,
		Entrypoint:   x.rec.Str("originator"),
	}
	if ev.AgentVersion == "" {
		ev.AgentVersion = x.rec.Str("app.version")
	}
	if ev.Entrypoint == "" {
		ev.Entrypoint = x.rec.Service
	}
	return ev
}

// model sets the model call fields.
func (x *nativeCtx) model(ev *agentevent.Event) {
	ev.Model = x.rec.Str("model")
	ev.Provider = x.conv().provider
	if ev.Provider == "" {
		ev.Provider = providerName("")
	}
}

// finish gives the events of the record their ids, turn, order and origin.
func (x *nativeCtx) finish(out []agentevent.Event) {
	if len(out) == 0 {
		return
	}
	c := x.conv()
	ns := x.rec.Time.UnixNano()
	if x.rec.Time.IsZero() {
		ns = x.ts.UnixNano()
	}
	key := strconv.FormatInt(ns, 10)
	for i := range out {
		ev := &out[i]
		ev.EventID = agentevent.NativeID(string(Source), x.session, key, "codex."+x.name, x.rec.Str("call_id"), strconv.Itoa(i))
		ev.Sequence = ns + int64(i)
		if ev.Type == agentevent.TypeUserMessage {
			c.prompt = ev.EventID
			c.response = ""
		} else {
			ev.ParentEventID = c.prompt
		}
		agentevent.SetAttr(ev, agentevent.AttrOrigin, agentevent.OriginNative)
		if x.rec.TraceID != "" {
			agentevent.SetAttr(ev, agentevent.AttrNativeTraceID, x.rec.TraceID)
		}
		agentevent.Normalize(ev)
	}
}

// setStr sets attribute k to the record's attribute from when not empty.
func (x *nativeCtx) setStr(ev *agentevent.Event, k, from string) {
	if v := x.rec.Str(from); v != "" {
		agentevent.SetAttr(ev, k, v)
	}
}

func (x *nativeCtx) setInt(ev *agentevent.Event, k, from string) {
	if v, ok := x.rec.Int(from); ok {
		agentevent.SetAttr(ev, k, v)
	}
}

func (x *nativeCtx) conversationStarts() []agentevent.Event {
	c := x.conv()
	if p := x.rec.Str("provider_name"); p != "" {
		c.provider = strings.Clone(providerName(p))
	}
	ev := x.base(agentevent.TypeMeta, agentevent.RoleSystem, agentevent.ChannelSystem)
	x.model(&ev)
	agentevent.SetAttr(&ev, agentevent.AttrSessionStart, true)
	x.setStr(&ev, agentevent.AttrCodexModelProvider, "provider_name")
	x.setStr(&ev, agentevent.AttrCodexReasoningEffort, "reasoning_effort")
	x.setStr(&ev, agentevent.AttrCodexReasoningSummary, "reasoning_summary")
	x.setStr(&ev, agentevent.AttrCodexApprovalPolicy, "approval_policy")
	x.setStr(&ev, agentevent.AttrCodexSandboxPolicy, "sandbox_policy")
	x.setInt(&ev, agentevent.AttrModelContextWindow, "context_window")
	x.setInt(&ev, agentevent.AttrCodexAutoCompactTokenLimit, "auto_compact_token_limit")
	return []agentevent.Event{ev}
}

func (x *nativeCtx) userPrompt() []agentevent.Event {
	ev := x.base(agentevent.TypeUserMessage, agentevent.RoleUser, agentevent.ChannelChat)
	if p := x.rec.Str("prompt"); realText(p) {
		ev.Text = p
	}
	x.setInt(&ev, agentevent.AttrPromptLength, "prompt_length")
	return []agentevent.Event{ev}
}

// errorEvent is an API error the way the rollout parser gives one: a log
// event with ErrorType api_error and the message as Text.
func (x *nativeCtx) errorEvent(msg string) agentevent.Event {
	ev := x.base(agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
	if realText(msg) {
		ev.Text = msg
	}
	ev.ErrorType = agentevent.ErrorTypeAPI
	agentevent.SetAttr(&ev, agentevent.AttrCodexEvent, "codex."+x.name)
	x.setInt(&ev, agentevent.AttrCodexDurationMs, "duration_ms")
	return ev
}

// tokenKeys are the usage attributes of a completed response.
var tokenKeys = []string{"input_token_count", "output_token_count", "cached_token_count", "reasoning_token_count", "cache_write_token_count", "tool_token_count"}

func (x *nativeCtx) sseEvent() ([]agentevent.Event, error) {
	kind := x.rec.Str("event.kind")
	if msg := x.rec.Str("error.message"); msg != "" {
		// The response failed: the model call ends in error.
		ev := x.errorEvent(msg)
		ev.Status = "error"
		x.model(&ev)
		if kind != "" {
			agentevent.SetAttr(&ev, agentevent.AttrCodexSSEKind, kind)
		}
		return []agentevent.Event{ev}, nil
	}
	if kind != "response.completed" {
		return nil, nil // a progress row of the stream
	}
	tokens := map[string]int64{}
	for _, k := range tokenKeys {
		v, present := x.rec.Attrs[k]
		if !present {
			continue
		}
		n, ok := agentevent.NativeInt(v)
		if !ok || n < 0 {
			return nil, unmapped("sse_event %s is not a count: %v", k, v)
		}
		tokens[k] = n
	}
	in, hasIn := tokens["input_token_count"]
	out, hasOut := tokens["output_token_count"]
	if !hasIn && !hasOut {
		return nil, nil // a completion without usage: nothing to count
	}
	ev := x.base(agentevent.TypeAssistantMessage, agentevent.RoleAssistant, agentevent.ChannelChat)
	x.model(&ev)
	// input_token_count includes the cached tokens, output_token_count the
	// reasoning ones; tool_token_count is the API's total_tokens (not tool
	// tokens), so it is not added.
	ev.TokensInput = agentevent.Int(in)
	ev.TokensOutput = agentevent.Int(out)
	ev.TokensTotal = agentevent.Int(in + out)
	if v, ok := tokens["cached_token_count"]; ok {
		ev.TokensCached = agentevent.Int(v)
	}
	if v, ok := tokens["reasoning_token_count"]; ok {
		ev.TokensThinking = agentevent.Int(v)
	}
	if v := tokens["cache_write_token_count"]; v > 0 {
		ev.TokensCacheCreation = agentevent.Int(v)
	}
	if d, ok := x.rec.Int("duration_ms"); ok && d >= 0 {
		agentevent.SetAttr(&ev, agentevent.AttrChatDurationMs, d)
	}
	x.setInt(&ev, agentevent.AttrChatTimeToFirstTokenMs, "ttft_ms")
	x.setStr(&ev, agentevent.AttrCodexServiceTier, "service_tier")
	x.setStr(&ev, agentevent.AttrCodexReasoningEffort, "model_reasoning_effort")
	c := x.conv()
	ev.ResponseID = x.session + "#" + strconv.FormatInt(x.ts.UnixNano(), 10)
	c.response = ev.ResponseID
	return []agentevent.Event{ev}, nil
}

// toolChannel is where a tool runs, as the rollout parser says.
func toolChannel(name string) agentevent.Channel {
	switch {
	case isShellTool(name):
		return agentevent.ChannelTerminal
	case name == "apply_patch":
		return agentevent.ChannelEditor
	}
	return agentevent.ChannelChat
}

// toolAttrs puts the tool's namespace, MCP server and agent on ev.
func (x *nativeCtx) toolAttrs(ev *agentevent.Event) {
	x.setStr(ev, agentevent.AttrCodexToolNamespace, "tool_namespace")
	x.setStr(ev, agentevent.AttrMCPServer, "mcp_server")
	x.setStr(ev, agentevent.AttrMCPServerOrigin, "mcp_server_origin")
	x.setStr(ev, agentevent.AttrCodexAgentName, "agent_name")
}

// toolCall is the tool_call event of call id at time at.
func (x *nativeCtx) toolCall(id, name string, at time.Time) agentevent.Event {
	ev := x.base(agentevent.TypeToolCall, agentevent.RoleAssistant, toolChannel(name))
	ev.Timestamp = at
	x.model(&ev)
	ev.ResponseID = x.conv().response
	ev.ToolName, ev.ToolCallID = name, id
	if args := x.rec.Str("arguments"); realText(args) {
		ev.Text = args
		if isShellTool(name) {
			if cmd := shellCommand(args); cmd != "" {
				agentevent.SetAttr(&ev, agentevent.AttrToolCommand, agentevent.CommandLine(cmd))
			}
		}
	}
	x.toolAttrs(&ev)
	return ev
}

// remember records that the tool_call of id went out.
func (c *nativeConv) remember(id string) *nativeCall {
	c.callN++
	call := &nativeCall{order: c.callN, seq: -1}
	agentevent.AddOpenCall(c.calls, strings.Clone(id), call, maxNativeCalls)
	return call
}

func (x *nativeCtx) toolResult() ([]agentevent.Event, error) {
	id := x.rec.Str("call_id")
	if id == "" {
		return nil, unmapped("tool_result without call_id")
	}
	name := x.rec.Str("tool_name")
	seq, hasSeq := x.rec.Int("tool_result_seq")
	if !hasSeq {
		seq = -1
	}
	c := x.conv()
	call := c.calls[id]
	if call != nil && call.answered && call.seq == seq {
		return nil, nil // the same result again (a repeated export)
	}
	res := x.base(agentevent.TypeToolResult, agentevent.RoleTool, toolChannel(name))
	res.ToolName, res.ToolCallID = name, id
	dur, hasDur := x.rec.Int("duration_ms")
	if hasDur && dur >= 0 {
		res.ToolLatencyMs = agentevent.Int(dur)
	}
	res.ToolStatus = agentevent.ToolUnknown
	if ok, known := x.rec.Bool("success"); known {
		res.ToolStatus = agentevent.ToolSuccess
		if !ok {
			res.ToolStatus, res.ErrorType = agentevent.ToolError, agentevent.ErrorTypeTool
		}
	}
	out := x.rec.Str("output")
	if realText(out) {
		res.Text = out
		if isSpawnTool(name) {
			res.SpawnedAgentID = spawnedAgent(out)
		}
	}
	x.toolAttrs(&res)
	if hasSeq {
		agentevent.SetAttr(&res, agentevent.AttrToolResultSeq, seq)
	}
	if t, ok := x.rec.Bool("output_truncated"); ok && t {
		agentevent.SetAttr(&res, agentevent.AttrToolOutputTruncated, true)
	}
	switch {
	case call == nil:
		at := x.ts
		if hasDur && dur > 0 && dur <= maxCallMs {
			at = x.ts.Add(-time.Duration(dur) * time.Millisecond)
		}
		ev := x.toolCall(id, name, at)
		call = c.remember(id)
		call.answered, call.seq = true, seq
		return []agentevent.Event{ev, res}, nil
	case !call.answered:
		// The call went out with a rejecting tool_decision: this is its result.
		call.answered, call.seq = true, seq
		if call.decision != "" {
			agentevent.SetAttr(&res, agentevent.AttrToolDecision, call.decision)
			if call.source != "" {
				agentevent.SetAttr(&res, agentevent.AttrCodexToolDecisionSource, call.source)
			}
			if res.ToolStatus != agentevent.ToolError {
				res.ToolStatus = agentevent.ToolError
			}
			res.ErrorType = rejectionError(call.decision)
		}
		return []agentevent.Event{res}, nil
	}
	// Another result of a call already answered (another tool_result_seq):
	// kept as a log event, so the call keeps one result.
	res.Type, res.Role, res.Channel = agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem
	agentevent.SetAttr(&res, agentevent.AttrToolRepeatedResult, true)
	return []agentevent.Event{res}, nil
}

// rejectionError is the ErrorType of a call a decision stopped: the
// rollout parser's tool_error for a declined call, interrupted for an abort.
func rejectionError(decision string) string {
	if decision == "abort" {
		return agentevent.ErrorTypeInterrupted
	}
	return agentevent.ErrorTypeTool
}

// nativeDecision classifies a tool_decision: reject is true for a decision
// that stops the call, ok false for one the mapping does not know.
func nativeDecision(d string) (decision string, reject, ok bool) {
	d = strings.ToLower(strings.TrimSpace(d))
	switch {
	case strings.HasPrefix(d, "approved"):
		return d, false, true
	case d == "denied", d == "abort":
		return d, true, true
	case d == "timed_out", d == "timedout", d == "timeout":
		return "timed_out", true, true
	}
	return d, false, false
}

func (x *nativeCtx) toolDecision() ([]agentevent.Event, error) {
	decision, reject, ok := nativeDecision(x.rec.Str("decision"))
	if !ok {
		return nil, unmapped("tool_decision with decision %q", x.rec.Str("decision"))
	}
	if !reject {
		return nil, nil // approved: the tool_result tells the rest
	}
	id := x.rec.Str("call_id")
	if id == "" {
		return nil, unmapped("tool_decision without call_id")
	}
	c := x.conv()
	if c.calls[id] != nil {
		return nil, nil // its call already went out
	}
	ev := x.toolCall(id, x.rec.Str("tool_name"), x.ts)
	agentevent.SetAttr(&ev, agentevent.AttrToolDecision, decision)
	x.setStr(&ev, agentevent.AttrCodexToolDecisionSource, "source")
	call := c.remember(id)
	call.decision, call.source = decision, strings.Clone(x.rec.Str("source"))
	return []agentevent.Event{ev}, nil
}

// request maps api_request and the websocket events: an error event when
// the request failed, nothing when it succeeded.
func (x *nativeCtx) request() []agentevent.Event {
	msg := x.rec.Str("error.message")
	status, hasStatus := x.rec.Int("http.response.status_code")
	success, hasSuccess := x.rec.Bool("success")
	failed := msg != "" || (hasStatus && status >= 400) || (hasSuccess && !success)
	if !failed {
		return nil
	}
	// Codex retries a failed request (attempt counts them): the record says
	// nothing of the turn's outcome, so the event sets no Status.
	ev := x.errorEvent(msg)
	x.setStr(&ev, agentevent.AttrCodexEndpoint, "endpoint")
	if hasStatus {
		agentevent.SetAttr(&ev, agentevent.AttrCodexHTTPStatusCode, status)
	}
	x.setInt(&ev, agentevent.AttrCodexAttempt, "attempt")
	return []agentevent.Event{ev}
}

func (x *nativeCtx) turnCost() []agentevent.Event {
	usd, ok := x.rec.Float("usage.estimated_usd")
	if !ok || usd < 0 {
		return nil
	}
	ev := x.base(agentevent.TypeMeta, agentevent.RoleSystem, agentevent.ChannelSystem)
	x.model(&ev)
	// Not CostUSD: the turn's model calls are priced from their tokens
	// (gen_ai_cost), and a cost summed over both would count the turn twice.
	agentevent.SetAttr(&ev, agentevent.AttrCodexTurnCostUSD, usd)
	x.setStr(&ev, agentevent.AttrTurnID, "turn.id")
	if v, ok := x.rec.Bool("turn.interrupted"); ok {
		agentevent.SetAttr(&ev, agentevent.AttrTurnInterrupted, v)
	}
	x.setStr(&ev, agentevent.AttrCodexReasoningEffort, "reasoning_effort")
	return []agentevent.Event{ev}
}

func (x *nativeCtx) agentResponse() []agentevent.Event {
	ev := x.base(agentevent.TypeAssistantMessage, agentevent.RoleAssistant, agentevent.ChannelChat)
	x.model(&ev)
	ev.ResponseID = x.conv().response
	if r := x.rec.Str("response"); realText(r) {
		ev.Text = r
	}
	x.setStr(&ev, agentevent.AttrTurnID, "turn.id")
	x.setStr(&ev, agentevent.AttrCodexAgentType, "agent.type")
	x.setStr(&ev, agentevent.AttrCodexParentConversationID, "parent.conversation.id")
	return []agentevent.Event{ev}
}
