// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// Claude Code log events built in Go, as Claude Code 2.1.272 exports them over OTLP with
// CLAUDE_CODE_ENABLE_TELEMETRY=1 and OTEL_LOGS_EXPORTER=otlp. Every shape — the resource, the
// scope, the body "claude_code.<name>", the standard attributes on each record and each event's
// own attributes with their wire types (numbers of api_request as ints and a double, those of
// tool_result as strings) — is copied from the captures, which carry no license and are read in
// place only:
//   - user_prompt: ../shared/fixtures/native_otel/claude_code/logs-claude-code-2.1.272-session.otlp.jsonl
//   - api_request: ../shared/fixtures/native_otel/claude_code/logs-claude-code-2.1.272-api.otlp.jsonl
//   - tool_result: ../shared/fixtures/native_otel/claude_code/logs-claude-code-2.1.272-tools.otlp.jsonl
// Ids and values are the test's own. Tracing is off, so the records carry no trace ids.

// claudeRecord is one Claude Code log event.
type claudeRecord struct {
	name    string
	session string
	prompt  string
	seq     int64
	at      time.Time
	attrs   []nativeAttr
}

// nativeAttr is one attribute with the wire type it travels as: string, int64, float64 or bool.
type nativeAttr struct {
	key   string
	value any
}

// claudeSessionOTLP hands out a session's records in order: event.sequence counts up per session
// and each record is a second after the previous.
type claudeSessionOTLP struct {
	id  string
	seq int64
	at  time.Time
}

func newClaudeSessionOTLP(id string, at time.Time) *claudeSessionOTLP {
	return &claudeSessionOTLP{id: id, at: at}
}

func (s *claudeSessionOTLP) record(name, prompt string, attrs ...nativeAttr) claudeRecord {
	s.seq++
	s.at = s.at.Add(time.Second)
	return claudeRecord{name: name, session: s.id, prompt: prompt, seq: s.seq, at: s.at, attrs: attrs}
}

// userPrompt is a user_prompt with its text left out, as OTEL_LOG_USER_PROMPTS unset sends it.
func (s *claudeSessionOTLP) userPrompt(prompt string, length int) claudeRecord {
	return s.record("user_prompt", prompt,
		nativeAttr{"prompt_length", fmt.Sprint(length)},
		nativeAttr{"prompt", ""},
		nativeAttr{"message.uuid", fmt.Sprintf("%s-msg-%d", prompt[:8], s.seq+1)},
	)
}

// claudeModel is the model of the Go-built sessions' calls.
const claudeModel = "claude-opus-5"

// apiRequest is one model call: input_tokens exclude the cache, as Anthropic counts them.
func (s *claudeSessionOTLP) apiRequest(prompt string, in, out, cacheRead, cacheCreation int64, cost float64) claudeRecord {
	return s.record("api_request", prompt,
		nativeAttr{"model", claudeModel},
		nativeAttr{"input_tokens", in},
		nativeAttr{"output_tokens", out},
		nativeAttr{"cache_read_tokens", cacheRead},
		nativeAttr{"cache_creation_tokens", cacheCreation},
		nativeAttr{"cost_usd", cost},
		nativeAttr{"cost_usd_micros", int64(cost*1e6 + 0.5)},
		nativeAttr{"duration_ms", int64(3172)},
		nativeAttr{"ttft_ms", int64(1086)},
		nativeAttr{"request_id", fmt.Sprintf("req_%s%04d", s.id[:8], s.seq+1)},
		nativeAttr{"client_request_id", fmt.Sprintf("%s-crq-%04d", s.id[:8], s.seq+1)},
		nativeAttr{"speed", "normal"},
		nativeAttr{"query_source", "repl_main_thread"},
		nativeAttr{"effort", "high"},
	)
}

// toolResult is a finished tool call; success and the sizes travel as strings.
func (s *claudeSessionOTLP) toolResult(prompt, tool, useID string, success bool, durationMS int) claudeRecord {
	attrs := []nativeAttr{
		{"tool_name", tool},
		{"tool_use_id", useID},
		{"success", fmt.Sprint(success)},
		{"duration_ms", fmt.Sprint(durationMS)},
		{"tool_parameters", ""},
		{"tool_input", ""},
		{"tool_input_size_bytes", "277"},
		{"tool_result_size_bytes", "1791"},
		{"decision_source", "config"},
		{"decision_type", "accept"},
	}
	if !success {
		attrs = append(attrs, nativeAttr{"error_type", "ShellError"})
	}
	return s.record("tool_result", prompt, attrs...)
}

// claudeExport is one export of Claude Code's log batch processor holding recs (of one session or
// of several, as a collector in front of many agents forwards them).
func claudeExport(t *testing.T, recs []claudeRecord) []byte {
	t.Helper()
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	res := rl.Resource().Attributes()
	res.PutStr("host.arch", "arm64")
	res.PutStr("os.type", "darwin")
	res.PutStr("os.version", "27.0.0")
	res.PutStr("service.name", "claude-code")
	res.PutStr("service.version", "2.1.272")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("com.anthropic.claude_code.events")
	sl.Scope().SetVersion("2.1.272")
	for _, r := range recs {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(r.at))
		lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(r.at))
		lr.Body().SetStr("claude_code." + r.name)
		a := lr.Attributes()
		a.PutStr("user.id", "1e8d6a5faa1b7d6efbaa26c37fb9859af95b2c3d98acaa6a17d460fe7d363b80")
		a.PutStr("session.id", r.session)
		a.PutStr("organization.id", "f68cb540-1937-4b57-ba94-563088383efc")
		a.PutStr("user.email", "user1@example.test")
		a.PutStr("user.account_uuid", "f9ef849d-c972-4141-87c6-56ae04b95ac0")
		a.PutStr("user.account_id", "user_96E5Oa5mktN0ekY5vtpQy80C")
		a.PutStr("terminal.type", "ghostty")
		a.PutStr("event.name", r.name)
		a.PutStr("event.timestamp", r.at.UTC().Format("2006-01-02T15:04:05.000Z"))
		a.PutInt("event.sequence", r.seq)
		if r.prompt != "" {
			a.PutStr("prompt.id", r.prompt)
		}
		for _, kv := range r.attrs {
			switch v := kv.value.(type) {
			case string:
				a.PutStr(kv.key, v)
			case int64:
				a.PutInt(kv.key, v)
			case float64:
				a.PutDouble(kv.key, v)
			case bool:
				a.PutBool(kv.key, v)
			default:
				t.Fatalf("attribute %s: unsupported %T", kv.key, v)
			}
		}
	}
	b, err := (&plog.JSONMarshaler{}).MarshalLogs(ld)
	require.NoError(t, err)
	return b
}

// testUUID is a UUID-shaped id, distinct per (kind, n).
func testUUID(kind, n int) string {
	return fmt.Sprintf("%08x-e2e0-4000-8000-%012x", kind, n)
}
