// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// The native mapping turns Claude Code's own OpenTelemetry log events (the
// records it sends with CLAUDE_CODE_ENABLE_TELEMETRY=1 and an otlp logs
// exporter) into the AgentEvents the session files give, so that everything
// downstream treats both alike. It imports only agentevent and the standard
// library; the agent_native processor lifts the pdata records into
// agentevent.NativeRecord. README.md, section "Native OTLP log events",
// holds the table.

// nativePrefix is what Claude Code puts before the event name in a record's
// body ("claude_code.api_request"); event.name carries the bare name.
const nativePrefix = "claude_code."

// Values of agent.meta.kind on native meta events. Compaction and a
// permission mode change use the file parser's kinds.
const (
	metaKindCompaction     = "compact_boundary"
	metaKindPermissionMode = "permission-mode"
)

// nativeIgnored are the event names the mapping deliberately drops, with
// why: they describe the session or the installation, not a turn, or repeat
// what another record says.
var nativeIgnored = map[string]string{
	"auth":                      "session bookkeeping",
	"hook_registered":           "session bookkeeping",
	"mcp_server_connection":     "session bookkeeping",
	"plugin_loaded":             "session bookkeeping",
	"plugin_installed":          "session bookkeeping",
	"managed_settings_resolved": "session bookkeeping",
	"retention_sweep":           "session bookkeeping",
	"feedback_survey":           "session bookkeeping",
	"hook_plugin_metrics":       "session bookkeeping",
	"hook_execution_start":      "hook_execution_complete carries the same hook with its outcome",
	"api_request_body":          "raw API bodies: api_request and assistant_response carry the call",
	"api_response_body":         "raw API bodies: api_request and assistant_response carry the call",
}

// nativeTurnOnly are meta events kept only inside a turn (with a prompt.id):
// without one they are session bookkeeping too.
var nativeTurnOnly = map[string]bool{
	"skill_activated":         true,
	"at_mention":              true,
	"hook_execution_complete": true,
	"permission_mode_changed": true,
}

// NativeMapper maps Claude Code's native log records. Every record names
// its session (session.id), its turn (prompt.id) and its tool call
// (tool_use_id), so the mapping needs no memory of earlier records: the
// mapper holds no state and is safe for concurrent use.
type NativeMapper struct{}

// NewNativeMapper returns a mapper for Claude Code's native log records.
func NewNativeMapper() *NativeMapper { return &NativeMapper{} }

// Map turns one native log record into AgentEvents. It returns (nil, nil)
// for a record the mapping deliberately ignores (nativeIgnored, a
// tool_decision accept, a turn-only meta record without prompt.id) and an
// error wrapping agentevent.ErrNativeUnmapped for one it cannot map (no
// session.id, no event.sequence, an unknown event name, a tool_decision
// without a decision).
func (*NativeMapper) Map(rec *agentevent.NativeRecord) ([]agentevent.Event, error) {
	if rec == nil {
		return nil, fmt.Errorf("%w: no record", agentevent.ErrNativeUnmapped)
	}
	name := strings.TrimPrefix(rec.Name, nativePrefix)
	if _, ok := nativeIgnored[name]; ok {
		return nil, nil
	}
	if !knownNative(name) {
		return nil, fmt.Errorf("%w: unknown event %q", agentevent.ErrNativeUnmapped, rec.Name)
	}
	n := &nativeRec{rec: rec, name: name, session: rec.Str("session.id"), prompt: rec.Str("prompt.id")}
	if n.session == "" {
		return nil, fmt.Errorf("%w: %s without session.id", agentevent.ErrNativeUnmapped, name)
	}
	if nativeTurnOnly[name] && n.prompt == "" {
		return nil, nil
	}
	seq, ok := rec.Int("event.sequence")
	if !ok || seq < 0 || seq > math.MaxInt64/4-4 {
		return nil, fmt.Errorf("%w: %s without a valid event.sequence", agentevent.ErrNativeUnmapped, name)
	}
	n.seq = seq
	n.ts = rec.Time
	if n.ts.IsZero() {
		if t, err := time.Parse(time.RFC3339Nano, rec.Str("event.timestamp")); err == nil {
			n.ts = t
		}
	}
	if err := n.mapRecord(); err != nil {
		return nil, err
	}
	for i := range n.out {
		agentevent.Normalize(&n.out[i])
	}
	return n.out, nil
}

// knownNative tells whether name is an event the mapping turns into events.
func knownNative(name string) bool {
	switch name {
	case "user_prompt", "api_request", "assistant_response", "api_error", "api_retries_exhausted",
		"api_refusal", "tool_result", "tool_decision", "compaction", "subagent_completed",
		"internal_error":
		return true
	}
	return nativeTurnOnly[name]
}

// nativeRec is one record being mapped and the events it yields.
type nativeRec struct {
	rec             *agentevent.NativeRecord
	name            string
	session, prompt string
	seq             int64
	ts              time.Time
	out             []agentevent.Event
}

func (n *nativeRec) mapRecord() error {
	switch n.name {
	case "user_prompt":
		n.userPrompt()
	case "api_request":
		n.apiRequest()
	case "assistant_response":
		n.assistantResponse()
	case "api_error", "api_retries_exhausted":
		n.apiError()
	case "api_refusal":
		n.apiRefusal()
	case "internal_error":
		ev := n.event(agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
		ev.ErrorType = agentevent.ErrorTypeInternal
		n.text(ev, "error")
	case "tool_result":
		n.toolResult()
	case "tool_decision":
		return n.toolDecision()
	case "compaction":
		n.compaction()
	case "subagent_completed":
		n.subagentCompleted()
	case "skill_activated":
		ev := n.meta("skill_activated")
		n.putStr(ev, agentevent.AttrSkillName, "skill.name")
		n.putStr(ev, agentevent.AttrSkillSource, "skill.source")
		n.putStr(ev, agentevent.AttrSkillTrigger, "invocation_trigger")
	case "at_mention":
		ev := n.meta("at_mention")
		n.putStr(ev, agentevent.AttrMentionType, "mention_type")
		n.putBool(ev, agentevent.AttrMentionSuccess, "success")
	case "hook_execution_complete":
		n.hookComplete()
	case "permission_mode_changed":
		ev := n.meta(metaKindPermissionMode)
		n.putStr(ev, agentevent.AttrPermissionMode, "to_mode")
		n.putStr(ev, agentevent.AttrPermissionModePrevious, "from_mode")
		n.putStr(ev, agentevent.AttrPermissionModeTrigger, "trigger")
	}
	return nil
}

// event appends the next event of the record, with what every event
// carries: ids, turn, order, time, version and origin.
func (n *nativeRec) event(typ agentevent.EventType, role agentevent.Role, ch agentevent.Channel) *agentevent.Event {
	idx := len(n.out)
	ev := agentevent.Event{
		Source:       Source,
		SessionID:    n.session,
		EventID:      agentevent.NativeID(string(Source), n.session, n.prompt, strconv.FormatInt(n.ts.UnixMilli(), 10), strconv.FormatInt(n.seq, 10), strconv.Itoa(idx)),
		Sequence:     nativeSequence(n.ts, n.seq, idx),
		Timestamp:    n.ts,
		Type:         typ,
		Role:         role,
		Channel:      ch,
		AgentVersion: n.rec.ServiceVersion,
		Entrypoint:   n.rec.Str("app.entrypoint"),
		Attributes:   map[string]any{agentevent.AttrOrigin: agentevent.OriginNative},
	}
	if n.prompt != "" {
		ev.ParentEventID = promptEventID(n.session, n.prompt)
	}
	if n.rec.TraceID != "" {
		ev.Attributes[agentevent.AttrNativeTraceID] = n.rec.TraceID
	}
	n.putStr(&ev, agentevent.AttrWorkflowRunID, "workflow.run_id")
	n.putStr(&ev, agentevent.AttrWorkflowName, "workflow.name")
	n.out = append(n.out, ev)
	return &n.out[idx]
}

// nativeSequence orders a session's native events. event.sequence counts
// from 1 in each Claude Code process, so a session resumed by a new process
// starts it again: the record's millisecond time leads, and event.sequence
// (its low 18 bits) orders the records of one millisecond. The event id
// holds the time and the prompt for the same reason.
func nativeSequence(ts time.Time, seq int64, idx int) int64 {
	ms := max(ts.UnixMilli(), 0)
	return ms<<20 | (seq&(1<<18-1))<<2 | int64(idx)
}

// promptEventID is the event id of a turn's user_message: every event of
// the turn (same prompt.id) names it as its parent, whether or not the
// user_prompt record itself ever arrives.
func promptEventID(session, prompt string) string {
	return agentevent.NativeID(string(Source), session, "prompt", prompt)
}

func (n *nativeRec) meta(kind string) *agentevent.Event {
	ev := n.event(agentevent.TypeMeta, agentevent.RoleSystem, agentevent.ChannelSystem)
	ev.Attributes[agentevent.AttrMetaKind] = kind
	return ev
}

func (n *nativeRec) userPrompt() {
	ev := n.event(agentevent.TypeUserMessage, agentevent.RoleUser, agentevent.ChannelChat)
	if n.prompt != "" {
		// The turn's own event: its id is the one the turn's events name.
		ev.EventID = promptEventID(n.session, n.prompt)
		ev.ParentEventID = ""
	}
	n.text(ev, "prompt")
	n.putNum(ev, agentevent.AttrPromptLength, "prompt_length")
	if name := n.rec.Str("command_name"); name != "" {
		// The file parser names a command as typed, with its slash.
		if !strings.HasPrefix(name, "/") {
			name = "/" + name
		}
		ev.Attributes[agentevent.AttrCommandName] = name
	}
	n.putStr(ev, agentevent.AttrCommandSource, "command_source")
	n.putStr(ev, agentevent.AttrMessageUUID, "message.uuid")
}

// responseID is the model call a record belongs to: request_id, else
// client_request_id (first-party API only), else "".
func (n *nativeRec) responseID() string {
	if id := n.rec.Str("request_id"); id != "" {
		return id
	}
	return n.rec.Str("client_request_id")
}

// chatEvent is an assistant_message of a model call.
func (n *nativeRec) chatEvent() *agentevent.Event {
	ev := n.event(agentevent.TypeAssistantMessage, agentevent.RoleAssistant, agentevent.ChannelChat)
	if model := n.rec.Str("model"); realText(model) {
		ev.Model = model
	}
	ev.Provider = providerAnthropic
	ev.ResponseID = n.responseID()
	n.putStr(ev, agentevent.AttrChatPrefix+"query_source", "query_source")
	return ev
}

// apiRequestAttrs are the facts of an api_request copied as they are, under
// agent.chat.: the call's settings and what it is attributed to.
var apiRequestAttrs = [][2]string{
	{"speed", "speed"},
	{"effort", "effort"},
	{"client_request_id", "client_request_id"},
	{"agent.name", "agent_name"},
	{"skill.name", "skill_name"},
	{"plugin.name", "plugin_name"},
	{"marketplace.name", "marketplace_name"},
	{"mcp_server.name", "mcp_server_name"},
	{"mcp_tool.name", "mcp_tool_name"},
}

func (n *nativeRec) apiRequest() {
	ev := n.chatEvent()
	n.putNum(ev, agentevent.AttrChatDurationMs, "duration_ms")
	n.putNum(ev, agentevent.AttrChatPrefix+"ttft_ms", "ttft_ms")
	for _, kv := range apiRequestAttrs {
		n.putStr(ev, agentevent.AttrChatPrefix+kv[1], kv[0])
	}
	// Anthropic's input_tokens excludes cache reads and writes; TokensInput
	// includes both.
	in, okIn := n.count("input_tokens")
	read, okRead := n.count("cache_read_tokens")
	create, okCreate := n.count("cache_creation_tokens")
	out, okOut := n.count("output_tokens")
	if okIn || okRead || okCreate || okOut {
		setUsage(ev, in, read, create, out)
	}
	if c, ok := n.rec.Float("cost_usd"); ok && c >= 0 {
		ev.CostUSD = agentevent.Float(c)
	} else if micros, ok := n.count("cost_usd_micros"); ok {
		ev.CostUSD = agentevent.Float(float64(micros) / 1e6)
	}
}

func (n *nativeRec) assistantResponse() {
	ev := n.chatEvent()
	n.text(ev, "response")
	n.putNum(ev, agentevent.AttrChatPrefix+"response_length", "response_length")
	n.putStr(ev, agentevent.AttrMessageUUID, "message.uuid")
}

// mainThread tells whether a model call with this query_source is the
// conversation's own (a failure there ends the turn) rather than a
// background one (titles, summaries, suggestions, subagents).
func mainThread(querySource string) bool {
	return querySource == "" || querySource == "sdk" || strings.HasPrefix(querySource, "repl_main_thread")
}

// apiError maps a model call Claude Code gave up on as the file parser maps
// its <synthetic> error row: a log event, error.type api_error; when the
// call was the conversation's own, Status error and the turn's end.
func (n *nativeRec) apiError() {
	ev := n.apiErrorEvent(agentevent.ErrorTypeAPI)
	n.putNum(ev, agentevent.AttrAPIStatusCode, "status_code")
	n.putNum(ev, agentevent.AttrAPIAttempt, "attempt")
	n.putNum(ev, agentevent.AttrAPIDurationMs, "duration_ms")
	n.putNum(ev, agentevent.AttrAPITotalAttempts, "total_attempts")
	n.putNum(ev, agentevent.AttrAPITotalRetryDurationMs, "total_retry_duration_ms")
	if n.name == "api_retries_exhausted" {
		ev.Attributes[agentevent.AttrAPIRetriesExhausted] = true
	}
	if id := n.responseID(); id != "" {
		ev.Attributes[agentevent.AttrAPIRequestID] = id
	}
}

// apiRefusal maps a refused answer: an error of the model call (ResponseID
// = request_id, so that agent_span marks the call's chat span when its
// api_request is there, else records a span event), finish reason refusal.
func (n *nativeRec) apiRefusal() {
	ev := n.apiErrorEvent(agentevent.ErrorTypeRefusal)
	ev.ResponseID = n.rec.Str("request_id")
	ev.FinishReason = agentevent.ErrorTypeRefusal
	n.putNum(ev, agentevent.AttrAPIAttempt, "attempt")
	n.putStr(ev, agentevent.AttrAPIRefusalCategory, "category")
}

func (n *nativeRec) apiErrorEvent(errType string) *agentevent.Event {
	ev := n.event(agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
	ev.ErrorType = errType
	qs := n.rec.Str("query_source")
	if mainThread(qs) {
		ev.Status = statusError
		ev.Attributes[agentevent.AttrTurnEnd] = agentevent.TurnEndError
	}
	n.text(ev, "error")
	n.putStr(ev, agentevent.AttrAPIModel, "model")
	n.putStr(ev, agentevent.AttrAPIQuerySource, "query_source")
	return ev
}

// statusError is Event.Status of an event that ended its turn in failure.
const statusError = "error"

// toolIdentity is what a tool_result or tool_decision says about its call.
type toolIdentity struct {
	name, callID, path, command, subagentType, text string
}

func (n *nativeRec) toolIdentity() toolIdentity {
	t := toolIdentity{name: n.rec.Str("tool_name"), callID: n.rec.Str("tool_use_id")}
	input, params := n.rec.Str("tool_input"), n.rec.Str("tool_parameters")
	switch {
	case realText(input):
		t.text = input
	case realText(params):
		t.text = params
	}
	// Both are JSON objects, sent only with OTEL_LOG_TOOL_DETAILS=1.
	var in, p map[string]any
	if realText(input) {
		_ = json.Unmarshal([]byte(input), &in) // a cut or odd input names nothing
	}
	if realText(params) {
		_ = json.Unmarshal([]byte(params), &p)
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	for _, k := range []string{"file_path", "notebook_path", "path"} {
		if t.path = str(in, k); t.path != "" {
			break
		}
	}
	t.command = firstNonEmpty(str(in, "command"), str(p, "full_command"), str(p, "bash_command"))
	t.subagentType = firstNonEmpty(str(in, "subagent_type"), str(p, "subagent_type"))
	if t.name == "mcp_tool" {
		// A user-configured MCP tool; with tool details its names are known:
		// name it as the session files do.
		if srv, tool := str(p, "mcp_server_name"), str(p, "mcp_tool_name"); srv != "" && tool != "" {
			t.name = "mcp__" + srv + "__" + tool
		}
	}
	return t
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// toolCall appends the tool_call of a call, at ts.
func (n *nativeRec) toolCall(t toolIdentity, ts time.Time) {
	ev := n.event(agentevent.TypeToolCall, agentevent.RoleAssistant, channel(t.name))
	ev.Timestamp = ts
	ev.ToolName = t.name
	ev.ToolCallID = t.callID
	ev.Text = t.text
	n.toolFile(ev, t)
	if isSubagentTool(t.name) {
		ev.SubagentType = t.subagentType
	}
	if t.name == toolBash && strings.TrimSpace(t.command) != "" {
		ev.Attributes[agentevent.AttrToolCommand] = agentevent.CommandLine(t.command)
	}
}

func (*nativeRec) toolFile(ev *agentevent.Event, t toolIdentity) {
	ev.FilePath = t.path
	ev.FileOp = fileOp(t.name)
	if t.path != "" {
		ev.FileLanguage = agentevent.FileLanguage(t.path)
	}
}

// toolResultEvent appends the tool_result of a call.
func (n *nativeRec) toolResultEvent(t toolIdentity) *agentevent.Event {
	ev := n.event(agentevent.TypeToolResult, agentevent.RoleTool, channel(t.name))
	ev.ToolName = t.name
	ev.ToolCallID = t.callID
	n.toolFile(ev, t)
	return ev
}

// toolResult maps a tool that ran: its call, at the record's time less the
// tool's duration, and its result. Without a tool_use_id there is no call
// to name: the result comes alone, with its latency.
func (n *nativeRec) toolResult() {
	t := n.toolIdentity()
	dur, hasDur := n.count("duration_ms")
	if t.callID != "" {
		start := n.ts
		if hasDur && !start.IsZero() {
			start = start.Add(-time.Duration(dur) * time.Millisecond)
		}
		n.toolCall(t, start)
	}
	ev := n.toolResultEvent(t)
	if hasDur {
		ev.ToolLatencyMs = agentevent.Int(dur)
	}
	errType := n.rec.Str("error_type")
	ok, known := n.rec.Bool("success")
	switch {
	case known && ok:
		ev.ToolStatus = agentevent.ToolSuccess
	case known || errType != "":
		ev.ToolStatus = agentevent.ToolError
		ev.ErrorType = firstNonEmpty(errType, agentevent.ErrorTypeTool)
		n.text(ev, "error")
	default:
		ev.ToolStatus = agentevent.ToolUnknown
	}
	n.putStr(ev, agentevent.AttrToolDecisionSource, "decision_source")
	n.putNum(ev, agentevent.AttrToolInputSizeBytes, "tool_input_size_bytes")
	n.putNum(ev, agentevent.AttrToolResultSizeBytes, "tool_result_size_bytes")
	n.putStr(ev, agentevent.AttrToolMCPServerScope, "mcp_server_scope")
}

// toolDecision maps a rejected call as the file parser maps a declined one:
// a call and an error result that did not run. An accepted call is left to
// its tool_result, which follows.
func (n *nativeRec) toolDecision() error {
	decision := strings.ToLower(n.rec.Str("decision"))
	switch decision {
	case "accept":
		return nil
	case "reject":
	default:
		return fmt.Errorf("%w: tool_decision with decision %q", agentevent.ErrNativeUnmapped, decision)
	}
	t := n.toolIdentity()
	if t.callID != "" {
		n.toolCall(t, n.ts)
	}
	ev := n.toolResultEvent(t)
	ev.ToolStatus = agentevent.ToolError
	source := n.rec.Str("source")
	ev.ErrorType = rejectClass(source)
	ev.Attributes[agentevent.AttrToolDecision] = decision
	if source != "" {
		ev.Attributes[agentevent.AttrToolDecisionSource] = source
	}
	n.putStr(ev, agentevent.AttrToolSource, "tool_source")
	return nil
}

// rejectClass is the error class of a rejected call by who rejected it: the
// user (rejected), the user stopping the turn at the prompt (interrupted),
// a permission rule or a hook (permission_denied).
func rejectClass(source string) string {
	switch source {
	case "user_abort":
		return agentevent.ErrorTypeInterrupted
	case "config", "hook":
		return agentevent.ErrorTypePermissionDenied
	}
	return agentevent.ErrorTypeRejected
}

// compaction maps a compaction as the file parser maps compact_boundary.
func (n *nativeRec) compaction() {
	ev := n.meta(metaKindCompaction)
	ev.Attributes[agentevent.AttrSystemSubtype] = metaKindCompaction
	n.putStr(ev, agentevent.AttrCompactionTrigger, "trigger")
	n.putNum(ev, agentevent.AttrCompactionPreTokens, "pre_tokens")
	n.putNum(ev, agentevent.AttrCompactionPostTokens, "post_tokens")
	n.putNum(ev, agentevent.AttrCompactionDurationMs, "duration_ms")
	n.putBool(ev, agentevent.AttrCompactionSuccess, "success")
}

// subagentCompleted maps the end of a subagent run: a fact of the turn
// (span event). Its total_tokens is the subagent's final request only and
// is not usage: the subagent's api_request records carry its tokens.
func (n *nativeRec) subagentCompleted() {
	ev := n.meta("subagent_completed")
	n.putStr(ev, agentevent.AttrSubagentCompletedPrefix+"type", "agent_type")
	n.putStr(ev, agentevent.AttrSubagentCompletedPrefix+"source", "agent.source")
	n.putNum(ev, agentevent.AttrSubagentCompletedPrefix+"total_tokens", "total_tokens")
	n.putNum(ev, agentevent.AttrSubagentCompletedPrefix+"tool_uses", "total_tool_uses")
	n.putNum(ev, agentevent.AttrSubagentCompletedPrefix+"duration_ms", "duration_ms")
	n.putStr(ev, agentevent.AttrSubagentCompletedPrefix+"model", "model")
	n.putStr(ev, agentevent.AttrSubagentCompletedPrefix+"final_model", "final_model")
	n.putBool(ev, agentevent.AttrSubagentCompletedPrefix+"is_async", "is_async")
	n.putBool(ev, agentevent.AttrSubagentCompletedPrefix+"is_built_in", "is_built_in")
}

// hookComplete maps the hooks of one hook event having run, with the
// file parser's hook keys; a hook that failed is a hook_error.
func (n *nativeRec) hookComplete() {
	ev := n.meta("hook_execution_complete")
	n.putStr(ev, agentevent.AttrHookEvent, "hook_event")
	n.putStr(ev, agentevent.AttrHookName, "hook_name")
	n.putStr(ev, agentevent.AttrHookSource, "hook_source")
	n.putNum(ev, agentevent.AttrHookCount, "num_hooks")
	n.putNum(ev, agentevent.AttrHookSuccessCount, "num_success")
	n.putNum(ev, agentevent.AttrHookBlockingCount, "num_blocking")
	n.putNum(ev, agentevent.AttrHookCancelledCount, "num_cancelled")
	n.putNum(ev, agentevent.AttrHookErrorCount, "num_non_blocking_error")
	n.putNum(ev, agentevent.AttrHookDurationMs, "total_duration_ms")
	if errs, ok := n.count("num_non_blocking_error"); ok && errs > 0 {
		ev.ErrorType = agentevent.ErrorTypeHook
	}
}

// maxCount bounds what count accepts: no real token count, size or
// duration in ms comes near it, and sums of a few of them, or a duration
// of it, cannot overflow.
const maxCount = 1 << 40

// count reads a non-negative whole number sent as int, double or decimal
// string (a fractional double is rounded); a value out of [0, maxCount] is
// no count.
func (n *nativeRec) count(k string) (int64, bool) {
	if v, ok := n.rec.Int(k); ok {
		if v < 0 || v > maxCount {
			return 0, false
		}
		return v, true
	}
	f, ok := n.rec.Float(k)
	if !ok || f < 0 || f > maxCount {
		return 0, false
	}
	return int64(math.Round(f)), true
}

func (n *nativeRec) putNum(ev *agentevent.Event, key, attr string) {
	if v, ok := n.count(attr); ok {
		ev.Attributes[key] = v
	}
}

// putStr copies a string attribute; a redaction marker in its place is no
// value.
func (n *nativeRec) putStr(ev *agentevent.Event, key, attr string) {
	if v := n.rec.Str(attr); realText(v) {
		ev.Attributes[key] = v
	}
}

func (n *nativeRec) putBool(ev *agentevent.Event, key, attr string) {
	if v, ok := n.rec.Bool(attr); ok {
		ev.Attributes[key] = v
	}
}

// text sets the event's content from attr when Claude Code sent real text.
func (n *nativeRec) text(ev *agentevent.Event, attr string) {
	if s := n.rec.Str(attr); realText(s) {
		ev.Text = s
	}
}

// realText tells content from what Claude Code sends in its place: nothing,
// or a redaction marker ("<REDACTED>", "[REDACTED]", "<redacted len=N>").
func realText(s string) bool {
	t := strings.TrimSpace(s)
	if t == "" {
		return false
	}
	l := strings.ToLower(t)
	if l == "[redacted]" || (strings.HasPrefix(l, "<redacted") && strings.HasSuffix(l, ">")) {
		return false
	}
	return true
}
