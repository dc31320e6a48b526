// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package native

import (
	"fmt"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// The sessions of these tests are built in Go, record by record, in the
// shape the agents send: every builder copies the attribute keys, their
// order and their wire types (stringValue, intValue, doubleValue,
// boolValue) from a real record of the named capture in
// ../shared/fixtures/native_otel (read in place there; the captures have no
// license and are never copied here). The values are this test's own.

// attr is one attribute as it goes on the wire: a Go string is a
// stringValue, int64 an intValue, float64 a doubleValue, bool a boolValue.
// A number the agent sends as text is a string here too.
type attr struct {
	k string
	v any
}

func putAttrs(m pcommon.Map, attrs []attr) {
	for _, a := range attrs {
		switch v := a.v.(type) {
		case string:
			m.PutStr(a.k, v)
		case int64:
			m.PutInt(a.k, v)
		case float64:
			m.PutDouble(a.k, v)
		case bool:
			m.PutBool(a.k, v)
		default:
			panic("attr " + a.k + ": no wire type for this value")
		}
	}
}

// record is one native log record.
type record struct {
	// time is timeUnixNano (Claude Code sends it, equal to the observed
	// time); Codex sends only observedTimeUnixNano.
	time, observed  time.Time
	traceID, spanID string
	// body is Claude Code's "claude_code.<name>"; Codex sends an empty
	// map (emptyMapBody).
	body         string
	emptyMapBody bool
	severity     plog.SeverityNumber
	severityText string
	// eventName is Codex's top-level eventName: a callsite, not a name.
	eventName string
	attrs     []attr
}

// export is what one agent sends under one resource and scope.
type export struct {
	resource     []attr
	scope        string
	scopeVersion string
	records      []record
}

// logs builds the OTLP logs of the exports, one ResourceLogs each.
func logs(exps ...export) plog.Logs {
	ld := plog.NewLogs()
	for _, e := range exps {
		rl := ld.ResourceLogs().AppendEmpty()
		putAttrs(rl.Resource().Attributes(), e.resource)
		sl := rl.ScopeLogs().AppendEmpty()
		sl.Scope().SetName(e.scope)
		sl.Scope().SetVersion(e.scopeVersion)
		for i := range e.records {
			r := &e.records[i]
			lr := sl.LogRecords().AppendEmpty()
			if !r.time.IsZero() {
				lr.SetTimestamp(pcommon.NewTimestampFromTime(r.time))
			}
			lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(r.observed))
			if r.traceID != "" {
				lr.SetTraceID(traceID(r.traceID))
				lr.SetSpanID(spanID(r.spanID))
				lr.SetFlags(plog.DefaultLogRecordFlags.WithIsSampled(true))
			}
			switch {
			case r.emptyMapBody:
				lr.Body().SetEmptyMap()
			case r.body != "":
				lr.Body().SetStr(r.body)
			}
			lr.SetSeverityNumber(r.severity)
			lr.SetSeverityText(r.severityText)
			lr.SetEventName(r.eventName)
			putAttrs(lr.Attributes(), r.attrs)
		}
	}
	return ld
}

func traceID(s string) pcommon.TraceID {
	var id pcommon.TraceID
	copy(id[:], hexBytes(s, len(id)))
	return id
}

func spanID(s string) pcommon.SpanID {
	var id pcommon.SpanID
	copy(id[:], hexBytes(s, len(id)))
	return id
}

func hexBytes(s string, n int) []byte {
	b := make([]byte, n)
	for i := 0; i < n && 2*i+1 < len(s); i++ {
		v, _ := strconv.ParseUint(s[2*i:2*i+2], 16, 8)
		b[i] = byte(v)
	}
	return b
}

// iso is event.timestamp as both agents write it: RFC 3339, milliseconds, Z.
func iso(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// --- Claude Code ---

// claudeVersion is the CLI version of the capture the shapes come from.
const claudeVersion = "2.1.272"

// claudeSession builds the records of one Claude Code session. Resource,
// scope, body, flags and the standard attributes (user ids, session.id,
// terminal.type, event.name, event.timestamp, event.sequence as intValue,
// prompt.id) are those of every record of
// logs-claude-code-2.1.272-{api,session,tools}.otlp.jsonl.
type claudeSession struct {
	id  string
	seq int64
	// trace is the trace id of each prompt: every record of one prompt.id
	// carries the same one (NATIVE_OTEL.md §1.4).
	trace map[string]string
}

func newClaudeSession(id string) *claudeSession {
	return &claudeSession{id: id, trace: map[string]string{}}
}

// claudeResource is the resource of logs-claude-code-2.1.272-*.otlp.jsonl.
func claudeResource() []attr {
	return []attr{
		{"host.arch", "arm64"},
		{"os.type", "darwin"},
		{"os.version", "27.0.0"},
		{"service.name", "claude-code"},
		{"service.version", claudeVersion},
	}
}

// claudeExport wraps records as Claude Code exports them.
func claudeExport(recs ...record) export {
	return export{resource: claudeResource(), scope: "com.anthropic.claude_code.events", scopeVersion: claudeVersion, records: recs}
}

// rec is a record of the session: the standard attributes, then extra.
// The prompt's trace id goes on it when prompt is set.
func (s *claudeSession) rec(name, prompt string, at time.Time, extra ...attr) record {
	s.seq++
	attrs := []attr{
		{"user.id", "9f2c0d4e1a7b3c5d6e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9012a3b4c5d"},
		{"session.id", s.id},
		{"organization.id", "0b6a6f1e-3d2c-4b8a-9e7f-5c4d3b2a1f00"},
		{"user.email", "user1@example.test"},
		{"user.account_uuid", "3c1d2e4f-5a6b-4c7d-8e9f-a0b1c2d3e4f5"},
		{"user.account_id", "user_01TestAccount00000000"},
		{"terminal.type", "ghostty"},
		{"event.name", name},
		{"event.timestamp", iso(at)},
		{"event.sequence", s.seq},
	}
	r := record{time: at, observed: at, body: "claude_code." + name}
	if prompt != "" {
		attrs = append(attrs, attr{"prompt.id", prompt})
		tid, ok := s.trace[prompt]
		if !ok {
			tid = fmt.Sprintf("c1a0de%026x", len(s.trace)+1)
			s.trace[prompt] = tid
		}
		r.traceID, r.spanID = tid, fmt.Sprintf("5ba0de%010x", s.seq)
	}
	attrs = append(attrs, extra...)
	r.attrs = attrs
	return r
}

// userPrompt: logs-claude-code-2.1.272-session.otlp.jsonl (user_prompt,
// event.sequence 11): prompt_length a decimal string, prompt blanked.
func (s *claudeSession) userPrompt(prompt string, at time.Time, length int) record {
	return s.rec("user_prompt", prompt, at,
		attr{"prompt_length", strconv.Itoa(length)},
		attr{"prompt", ""},
		attr{"message.uuid", prompt + "-msg"},
	)
}

// apiCall is what one api_request states.
type apiCall struct {
	model                           string
	in, out, cacheRead, cacheCreate int64
	costUSD                         float64
	durationMs, ttftMs              int64
	requestID                       string
}

// apiRequest: logs-claude-code-2.1.272-api.otlp.jsonl (api_request,
// event.sequence 14, query_source repl_main_thread): token counts,
// cost_usd_micros, duration_ms and ttft_ms as intValue, cost_usd as
// doubleValue.
func (s *claudeSession) apiRequest(prompt string, at time.Time, c apiCall) record {
	return s.rec("api_request", prompt, at,
		attr{"model", c.model},
		attr{"input_tokens", c.in},
		attr{"output_tokens", c.out},
		attr{"cache_read_tokens", c.cacheRead},
		attr{"cache_creation_tokens", c.cacheCreate},
		attr{"cost_usd", c.costUSD},
		attr{"cost_usd_micros", int64(c.costUSD*1e6 + 0.5)},
		attr{"duration_ms", c.durationMs},
		attr{"ttft_ms", c.ttftMs},
		attr{"request_id", c.requestID},
		attr{"client_request_id", c.requestID + "-client"},
		attr{"speed", "normal"},
		attr{"query_source", "repl_main_thread"},
		attr{"effort", "high"},
	)
}

// assistantResponse: logs-claude-code-2.1.272-api.otlp.jsonl
// (assistant_response, event.sequence 13): response_length intValue,
// response blanked, the same request_id as its api_request, at the same
// time.
func (s *claudeSession) assistantResponse(prompt string, at time.Time, c apiCall) record {
	return s.rec("assistant_response", prompt, at,
		attr{"response_length", int64(120)},
		attr{"response", ""},
		attr{"request_id", c.requestID},
		attr{"message.uuid", c.requestID + "-msg"},
		attr{"model", c.model},
		attr{"query_source", "repl_main_thread"},
	)
}

// toolDecision: logs-claude-code-2.1.272-tools.otlp.jsonl (tool_decision
// accept, event.sequence 16; reject, event.sequence 137: tool_name
// mcp_tool, tool_source mcp): both decided by source config, a rule.
func (s *claudeSession) toolDecision(prompt string, at time.Time, tool, useID, decision, toolSource string) record {
	return s.rec("tool_decision", prompt, at,
		attr{"decision", decision},
		attr{"source", "config"},
		attr{"tool_name", tool},
		attr{"tool_use_id", useID},
		attr{"tool_source", toolSource},
		attr{"tool_parameters", ""},
	)
}

// toolResultOK: logs-claude-code-2.1.272-tools.otlp.jsonl (tool_result,
// event.sequence 17): success "true", duration_ms and the sizes as
// decimal strings.
func (s *claudeSession) toolResultOK(prompt string, at time.Time, tool, useID string, durationMs int) record {
	return s.rec("tool_result", prompt, at,
		attr{"tool_name", tool},
		attr{"tool_use_id", useID},
		attr{"success", "true"},
		attr{"duration_ms", strconv.Itoa(durationMs)},
		attr{"tool_parameters", ""},
		attr{"tool_input", ""},
		attr{"tool_input_size_bytes", "277"},
		attr{"tool_result_size_bytes", "1791"},
		attr{"decision_source", "config"},
		attr{"decision_type", "accept"},
	)
}

// toolResultShellError: logs-claude-code-2.1.269-tools.otlp.jsonl (the
// failed Bash tool_result, event.sequence 40): success "false",
// error_type ShellError, error redacted, no result size.
func (s *claudeSession) toolResultShellError(prompt string, at time.Time, useID string, durationMs int) record {
	return s.rec("tool_result", prompt, at,
		attr{"tool_name", "Bash"},
		attr{"tool_use_id", useID},
		attr{"success", "false"},
		attr{"duration_ms", strconv.Itoa(durationMs)},
		attr{"error_type", "ShellError"},
		attr{"error", "<redacted len=20>"},
		attr{"tool_parameters", ""},
		attr{"tool_input", ""},
		attr{"tool_input_size_bytes", "441"},
		attr{"decision_source", "config"},
		attr{"decision_type", "accept"},
	)
}

// --- Codex ---

// codexVersion is the version of the capture the shapes come from.
const codexVersion = "0.155.0-alpha.9.2"

// codexResource is the resource of
// logs-codex-app-server-0.155.0-alpha.9.2-*.otlp.jsonl.
func codexResource() []attr {
	return []attr{
		{"host.name", "host-redacted"},
		{"service.version", codexVersion},
		{"telemetry.sdk.language", "rust"},
		{"telemetry.sdk.version", "0.31.0"},
		{"env", "local"},
		{"service.name", "codex-app-server"},
		{"telemetry.sdk.name", "opentelemetry"},
	}
}

// codexExport wraps records as Codex exports them (scope codex_otel.log_only,
// no scope version).
func codexExport(recs ...record) export {
	return export{resource: codexResource(), scope: "codex_otel.log_only", records: recs}
}

// codexSession builds the records of one Codex conversation. Every record
// has only observedTimeUnixNano (microsecond precision in the captures),
// severity 9 INFO, an empty map body, a callsite eventName, and after its
// own attributes the session metadata (event.timestamp, conversation.id,
// app.version, auth_mode, originator, user.account_id, user.email,
// terminal.type, model, slug), as every record of
// logs-codex-app-server-0.155.0-alpha.9.2-*.otlp.jsonl.
type codexSession struct {
	id    string
	model string
}

func (s *codexSession) rec(name, callsite string, at time.Time, trace string, own ...attr) record {
	attrs := append([]attr{{"event.name", name}}, own...)
	attrs = append(attrs,
		attr{"event.timestamp", iso(at)},
		attr{"conversation.id", s.id},
		attr{"app.version", codexVersion},
		attr{"auth_mode", "Chatgpt"},
		attr{"originator", "Codex_Desktop"},
		attr{"user.account_id", "b0000000-0000-4000-8000-000000000001"},
		attr{"user.email", "user1@example.test"},
		attr{"terminal.type", "unknown"},
		attr{"model", s.model},
		attr{"slug", s.model},
	)
	r := record{observed: at, emptyMapBody: true, severity: plog.SeverityNumberInfo, severityText: "INFO", eventName: callsite, attrs: attrs}
	if trace != "" {
		r.traceID, r.spanID = trace, trace[:16]
	}
	return r
}

// conversationStarts: logs-codex-app-server-0.155.0-alpha.9.2-session.otlp.jsonl
// (codex.conversation_starts): the auth.env_* flags as boolValue.
func (s *codexSession) conversationStarts(at time.Time, trace string) record {
	return s.rec("codex.conversation_starts", "event otel/src/events/session_telemetry.rs:593", at, trace,
		attr{"provider_name", "OpenAI"},
		attr{"auth.env_openai_api_key_present", false},
		attr{"auth.env_codex_api_key_present", false},
		attr{"auth.env_codex_api_key_enabled", false},
		attr{"auth.env_refresh_token_url_override_present", false},
		attr{"reasoning_effort", "high"},
		attr{"reasoning_summary", "auto"},
		attr{"approval_policy", "on-request"},
		attr{"sandbox_policy", "read-only"},
		attr{"mcp_servers", ""},
	)
}

// userPrompt: logs-codex-app-server-0.155.0-alpha.9.2-session.otlp.jsonl
// (codex.user_prompt): prompt_length a decimal string, prompt blanked.
func (s *codexSession) userPrompt(at time.Time, trace string, length int) record {
	return s.rec("codex.user_prompt", "event otel/src/events/session_telemetry.rs:1082", at, trace,
		attr{"prompt_length", strconv.Itoa(length)},
		attr{"prompt", ""},
	)
}

// codexUsage is what one response.completed states.
type codexUsage struct {
	in, out, cached, reasoning int64
}

// completed: logs-codex-app-server-0.155.0-alpha.9.2-sse.otlp.jsonl
// (codex.sse_event, event.kind response.completed, no trace id):
// input_token_count, output_token_count and tool_token_count (the total)
// as decimal strings, cached, cache_write and reasoning counts as
// intValue; no duration_ms.
func (s *codexSession) completed(at time.Time, u codexUsage) record {
	return s.rec("codex.sse_event", "event otel/src/events/session_telemetry.rs:1035", at, "",
		attr{"event.kind", "response.completed"},
		attr{"input_token_count", strconv.FormatInt(u.in, 10)},
		attr{"output_token_count", strconv.FormatInt(u.out, 10)},
		attr{"cached_token_count", u.cached},
		attr{"cache_write_token_count", int64(0)},
		attr{"reasoning_token_count", u.reasoning},
		attr{"tool_token_count", strconv.FormatInt(u.in+u.out, 10)},
	)
}

// toolDecision: logs-codex-app-server-0.155.0-alpha.9.2-tools.otlp.jsonl
// (codex.tool_decision; the capture's decision is "approved", source
// "Config"; a denial has the same keys with decision "denied" and source
// "User", NATIVE_OTEL.md §2.3).
func (s *codexSession) toolDecision(at time.Time, trace, tool, callID, decision, source string) record {
	return s.rec("codex.tool_decision", "event otel/src/events/session_telemetry.rs:1107", at, trace,
		attr{"tool_name", tool},
		attr{"tool_namespace", "functions"},
		attr{"call_id", callID},
		attr{"decision", decision},
		attr{"source", source},
	)
}

// toolResult: logs-codex-app-server-0.155.0-alpha.9.2-tools.otlp.jsonl
// (codex.tool_result exec_command, tool_result_seq 1): tool_result_seq
// intValue, duration_ms and success decimal/"true"/"false" strings,
// output_truncated boolValue, arguments and output blanked.
func (s *codexSession) toolResult(at time.Time, trace, callID string, seq int64, durationMs int, success bool) record {
	return s.rec("codex.tool_result", "event otel/src/tool_result.rs:54", at, trace,
		attr{"tool_result_seq", seq},
		attr{"tool_name", "exec_command"},
		attr{"tool_namespace", "functions"},
		attr{"call_id", callID},
		attr{"duration_ms", strconv.Itoa(durationMs)},
		attr{"success", strconv.FormatBool(success)},
		attr{"output_truncated", false},
		attr{"agent_name", "/root"},
		attr{"arguments", ""},
		attr{"output", ""},
		attr{"mcp_server", ""},
		attr{"mcp_server_origin", ""},
	)
}
