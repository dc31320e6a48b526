// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// The native captures (../shared/fixtures/native_otel/claude_code) have no
// license: they are read in place, never copied. The records the tables
// below need are built in Go from the documented wire shape, each naming
// the capture file whose record it copies the shape of.

// capturedRecord is one log record of a capture, as the agent_native
// processor lifts it, and the line of the capture it is on.
type capturedRecord struct {
	rec  agentevent.NativeRecord
	line int
}

// readCapture lifts every log record of an OTLP/JSON capture (one export
// per line) into a NativeRecord.
func readCapture(tb testing.TB, path string) []capturedRecord {
	tb.Helper()
	data, err := os.ReadFile(path)
	require.NoError(tb, err)
	var out []capturedRecord
	u := &plog.JSONUnmarshaler{}
	for i, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		logs, err := u.UnmarshalLogs(line)
		require.NoError(tb, err, "%s:%d", path, i+1)
		for _, rl := range logs.ResourceLogs().All() {
			res := rl.Resource().Attributes()
			service, _ := res.Get("service.name")
			version, _ := res.Get("service.version")
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					rec := agentevent.NativeRecord{
						Service:        service.AsString(),
						ServiceVersion: version.AsString(),
						Scope:          sl.Scope().Name(),
						Attrs:          lr.Attributes().AsRaw(),
						Resource:       res.AsRaw(),
					}
					if v, ok := lr.Attributes().Get("event.name"); ok {
						rec.Name = v.AsString()
					} else {
						rec.Name = lr.Body().AsString()
					}
					switch {
					case lr.Timestamp() != 0:
						rec.Time = lr.Timestamp().AsTime()
					case lr.ObservedTimestamp() != 0:
						rec.Time = lr.ObservedTimestamp().AsTime()
					}
					if id := lr.TraceID(); !id.IsEmpty() {
						rec.TraceID = id.String()
					}
					if id := lr.SpanID(); !id.IsEmpty() {
						rec.SpanID = id.String()
					}
					out = append(out, capturedRecord{rec: rec, line: i + 1})
				}
			}
		}
	}
	return out
}

// documentedNative are the Claude Code log events NATIVE_OTEL.md §1.4 lists
// (plus managed_settings_resolved, seen in the captures).
var documentedNative = []string{
	"user_prompt", "assistant_response", "api_request", "api_error", "api_retries_exhausted", "api_refusal",
	"api_request_body", "api_response_body", "tool_result", "tool_decision", "permission_mode_changed", "auth",
	"mcp_server_connection", "internal_error", "plugin_installed", "plugin_loaded", "skill_activated", "at_mention",
	"hook_registered", "hook_execution_start", "hook_execution_complete", "hook_plugin_metrics", "compaction",
	"subagent_completed", "feedback_survey", "retention_sweep", "managed_settings_resolved",
}

// identityKeys are the account attributes no event may carry.
var identityKeys = []string{"user.email", "user.account_uuid", "user.account_id", "organization.id", "user.id"}

// TestNativeGolden maps every record of every Claude Code log capture and
// compares the events with testdata/native/<capture>.golden.yaml (-update
// regenerates). Every record is mapped or deliberately ignored, the
// captures name only documented events, the events' tokens add up to the
// api_request records' own counts, and no account identity is copied.
func TestNativeGolden(t *testing.T) {
	dir := filepath.Join(vendortest.FixturesDir(t), "native_otel", "claude_code")
	vendortest.SkipIfAbsent(t, dir)
	files, err := filepath.Glob(filepath.Join(dir, "logs-*.otlp.jsonl"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	seen := map[string]int{}
	for _, path := range files {
		base := strings.TrimSuffix(filepath.Base(path), ".otlp.jsonl")
		t.Run(base, func(t *testing.T) {
			m := NewNativeMapper()
			var events []agentevent.Event
			var wantIn, wantOut, wantRead, wantCreate int64
			for _, c := range readCapture(t, path) {
				rec := &c.rec
				name := strings.TrimPrefix(rec.Name, nativePrefix)
				seen[name]++
				require.Contains(t, documentedNative, name, "line %d", c.line)
				evs, err := m.Map(rec)
				require.NoError(t, err, "line %d: %s", c.line, name)
				if len(evs) == 0 {
					_, ignored := nativeIgnored[name]
					accepted := name == "tool_decision" && rec.Str("decision") == "accept"
					require.True(t, ignored || accepted || (nativeTurnOnly[name] && rec.Str("prompt.id") == ""),
						"line %d: %s yields nothing and is not deliberately ignored", c.line, name)
				}
				if name == "api_request" {
					in, _ := rec.Int("input_tokens")
					read, _ := rec.Int("cache_read_tokens")
					create, _ := rec.Int("cache_creation_tokens")
					o, _ := rec.Int("output_tokens")
					wantIn += in + read + create
					wantRead += read
					wantCreate += create
					wantOut += o
				}
				for _, ev := range evs {
					require.Equal(t, agentevent.OriginNative, ev.Attributes[agentevent.AttrOrigin])
					require.Equal(t, rec.Str("session.id"), ev.SessionID)
					// The captures' content is blanked or a redaction marker:
					// none of it is text.
					require.Empty(t, ev.Text, "line %d", c.line)
					for _, k := range identityKeys {
						v := rec.Str(k)
						require.NotContains(t, ev.Attributes, k)
						if v != "" {
							for ak, av := range ev.Attributes {
								require.NotEqual(t, v, av, "%s carries %s", ak, k)
							}
						}
					}
				}
				events = append(events, evs...)
			}
			var gotIn, gotOut, gotRead, gotCreate int64
			for i := range events {
				gotIn += agentevent.Value(events[i].TokensInput)
				gotOut += agentevent.Value(events[i].TokensOutput)
				gotRead += agentevent.Value(events[i].TokensCached)
				gotCreate += agentevent.Value(events[i].TokensCacheCreation)
			}
			assert.Equal(t, wantIn, gotIn, "input tokens (cache reads and writes included)")
			assert.Equal(t, wantOut, gotOut, "output tokens")
			assert.Equal(t, wantRead, gotRead, "cache read tokens")
			assert.Equal(t, wantCreate, gotCreate, "cache creation tokens")

			require.NotEmpty(t, events)
			actual := agentevent.EncodeLogs(events, "")
			vendortest.SortAttributes(actual)
			gp := filepath.Join("testdata", "native", base+".golden.yaml")
			if *update {
				require.NoError(t, golden.WriteLogsToFile(gp, actual))
				t.Logf("wrote %s", gp)
			}
			expected, err := golden.ReadLogs(gp)
			require.NoError(t, err, "run TestNativeGolden with -update to create it")
			require.NoError(t, plogtest.CompareLogs(expected, storedLogs(t, actual)))
		})
	}
	// The captures hold these kinds of turn records (compaction and the API
	// errors are documented but not captured: the tables cover them).
	for _, name := range []string{
		"user_prompt", "api_request", "assistant_response", "tool_result", "tool_decision",
		"subagent_completed", "skill_activated", "at_mention", "hook_execution_complete", "permission_mode_changed",
	} {
		assert.Positive(t, seen[name], "no %s in the captures", name)
	}
}

// storedLogs is logs as a golden file keeps them: written and read back.
func storedLogs(t *testing.T, logs plog.Logs) plog.Logs {
	t.Helper()
	path := filepath.Join(t.TempDir(), "actual.yaml")
	require.NoError(t, golden.WriteLogsToFile(path, logs))
	back, err := golden.ReadLogs(path)
	require.NoError(t, err)
	return back
}

const (
	nativeSession  = "665c92e5-9fea-4682-b7ff-54fb20c36033"
	nativePromptID = "0e168937-7a27-48c5-ba7e-716c321775fd"
)

var nativeTime = time.Date(2026, 1, 8, 14, 30, 2, 695_000_000, time.UTC)

// nativeRecord builds a record of event name with the standard attributes
// every Claude Code event carries (session, prompt, sequence, timestamp,
// account identity) and attrs.
func nativeRecord(name string, seq int64, attrs map[string]any) *agentevent.NativeRecord {
	a := map[string]any{
		"session.id":        nativeSession,
		"prompt.id":         nativePromptID,
		"event.name":        name,
		"event.sequence":    seq,
		"event.timestamp":   nativeTime.Format("2006-01-02T15:04:05.000Z"),
		"user.email":        "user1@example.test",
		"user.id":           "1e8d6a5faa1b7d6efbaa26c37fb9859af95b2c3d98acaa6a17d460fe7d363b80",
		"user.account_uuid": "f9ef849d-c972-4141-87c6-56ae04b95ac0",
		"organization.id":   "f68cb540-1937-4b57-ba94-563088383efc",
		"terminal.type":     "ghostty",
	}
	for k, v := range attrs {
		if v == nil {
			delete(a, k)
		} else {
			a[k] = v
		}
	}
	return &agentevent.NativeRecord{
		Service: "claude-code", ServiceVersion: "2.1.273", Scope: "com.anthropic.claude_code.events",
		Name: name, Time: nativeTime, TraceID: "10e3d63210ded9c997d09c67b5b2cfe2", Attrs: a,
	}
}

func mapOne(t *testing.T, rec *agentevent.NativeRecord) []agentevent.Event {
	t.Helper()
	evs, err := NewNativeMapper().Map(rec)
	require.NoError(t, err)
	return evs
}

// TestNativeWireTypes: every number and boolean the events use is read the
// same whichever wire type carried it.
func TestNativeWireTypes(t *testing.T) {
	t.Run("api_request tokens", func(t *testing.T) {
		// Shape of an api_request of logs-claude-code-2.1.272-api.otlp.jsonl
		// (intValue there); doubleValue and decimal strings are what other
		// versions and SDKs send.
		for _, tc := range []struct {
			name                     string
			in, read, create, output any
		}{
			{"intValue", int64(2), int64(125732), int64(1348), int64(111)},
			{"doubleValue", float64(2), float64(125732), float64(1348), float64(111)},
			{"decimal string", "2", "125732", "1348", "111"},
			{"mixed", "2", float64(125732), int64(1348), " 111 "},
		} {
			t.Run(tc.name, func(t *testing.T) {
				evs := mapOne(t, nativeRecord("api_request", 10, map[string]any{
					"model": "claude-opus-5", "request_id": "req_014Ev6ZhlJqUjPqWTtQs0LBo",
					"client_request_id": "037de24e-e843-4f53-b474-ee4154188636",
					"input_tokens":      tc.in, "cache_read_tokens": tc.read, "cache_creation_tokens": tc.create,
					"output_tokens": tc.output, "cost_usd": 0.105316, "cost_usd_micros": int64(105316),
					"duration_ms": int64(4021), "ttft_ms": int64(1046), "query_source": "repl_main_thread", "speed": "normal",
				}))
				require.Len(t, evs, 1)
				ev := evs[0]
				assert.Equal(t, agentevent.TypeAssistantMessage, ev.Type)
				assert.Equal(t, int64(2+125732+1348), *ev.TokensInput)
				assert.Equal(t, int64(125732), *ev.TokensCached)
				assert.Equal(t, int64(1348), *ev.TokensCacheCreation)
				assert.Equal(t, int64(111), *ev.TokensOutput)
				assert.Equal(t, int64(2+125732+1348+111), *ev.TokensTotal)
				assert.InDelta(t, 0.105316, *ev.CostUSD, 1e-12)
				assert.Equal(t, "claude-opus-5", ev.Model)
				assert.Equal(t, "anthropic", ev.Provider)
				assert.Equal(t, "req_014Ev6ZhlJqUjPqWTtQs0LBo", ev.ResponseID)
				assert.Equal(t, int64(4021), ev.Attributes[agentevent.AttrChatDurationMs])
				assert.Equal(t, int64(1046), ev.Attributes["agent.chat.ttft_ms"])
				assert.Equal(t, "repl_main_thread", ev.Attributes["agent.chat.query_source"])
			})
		}
	})
	t.Run("cost", func(t *testing.T) {
		// logs-claude-code-2.1.269-api.otlp.jsonl has api_requests with both
		// costs, with cost_usd only, and with none.
		for _, tc := range []struct {
			name  string
			attrs map[string]any
			want  *float64
		}{
			{"cost_usd and micros", map[string]any{"cost_usd": 0.001047, "cost_usd_micros": int64(1047)}, agentevent.Float(0.001047)},
			{"cost_usd only", map[string]any{"cost_usd": 0.001047}, agentevent.Float(0.001047)},
			{"cost_usd as string", map[string]any{"cost_usd": "0.001047"}, agentevent.Float(0.001047)},
			{"micros only", map[string]any{"cost_usd_micros": int64(1047)}, agentevent.Float(0.001047)},
			{"micros as string", map[string]any{"cost_usd_micros": "1047"}, agentevent.Float(0.001047)},
			{"none", map[string]any{}, nil},
			{"cost not a number", map[string]any{"cost_usd": "n/a"}, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				attrs := map[string]any{"model": "claude-haiku-4-5-20251001", "input_tokens": int64(1066), "output_tokens": int64(13)}
				maps.Copy(attrs, tc.attrs)
				ev := mapOne(t, nativeRecord("api_request", 12, attrs))[0]
				if tc.want == nil {
					assert.Nil(t, ev.CostUSD)
					return
				}
				require.NotNil(t, ev.CostUSD)
				assert.InDelta(t, *tc.want, *ev.CostUSD, 1e-12)
			})
		}
	})
	t.Run("request id", func(t *testing.T) {
		// api_request of logs-claude-code-2.1.273-api.otlp.jsonl; request_id
		// is only there when the API returned one.
		for _, tc := range []struct {
			name  string
			attrs map[string]any
			want  string
		}{
			{"request_id", map[string]any{"request_id": "req_051Wi1TrL7Z9Dfdc1o4YClqR", "client_request_id": "11e629bb-e9e1-49b1-ac0d-32f2057d8370"}, "req_051Wi1TrL7Z9Dfdc1o4YClqR"},
			{"client_request_id only", map[string]any{"client_request_id": "11e629bb-e9e1-49b1-ac0d-32f2057d8370"}, "11e629bb-e9e1-49b1-ac0d-32f2057d8370"},
			{"neither", map[string]any{}, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				tc.attrs["model"] = "claude-opus-5"
				ev := mapOne(t, nativeRecord("api_request", 110, tc.attrs))[0]
				assert.Equal(t, tc.want, ev.ResponseID)
			})
		}
	})
	t.Run("tool_result success and duration", func(t *testing.T) {
		// tool_result of logs-claude-code-2.1.272-tools.otlp.jsonl: success
		// and duration_ms are strings there; spans and other versions send
		// bool and int.
		for _, tc := range []struct {
			name      string
			success   any
			duration  any
			errorType any
			status    agentevent.ToolStatus
			errType   string
		}{
			{"string true", "true", "14", nil, agentevent.ToolSuccess, ""},
			{"string false", "false", "14", "ShellError", agentevent.ToolError, "ShellError"},
			{"bool true", true, int64(14), nil, agentevent.ToolSuccess, ""},
			{"bool false", false, float64(14), nil, agentevent.ToolError, agentevent.ErrorTypeTool},
			{"capitalized", "False", "14", "Error:ENOENT", agentevent.ToolError, "Error:ENOENT"},
			{"absent", nil, "14", nil, agentevent.ToolUnknown, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				evs := mapOne(t, nativeRecord("tool_result", 17, map[string]any{
					"tool_name": "Bash", "tool_use_id": "toolu_05Bt1HKyzHoNgesNakLjrzG7", "success": tc.success,
					"duration_ms": tc.duration, "error_type": tc.errorType, "error": "<redacted len=20>",
					"decision_type": "accept", "decision_source": "config", "tool_input": "", "tool_parameters": "",
					"tool_input_size_bytes": "116", "tool_result_size_bytes": "1117",
				}))
				require.Len(t, evs, 2)
				call, res := evs[0], evs[1]
				assert.Equal(t, agentevent.TypeToolCall, call.Type)
				assert.Equal(t, agentevent.TypeToolResult, res.Type)
				assert.Equal(t, "toolu_05Bt1HKyzHoNgesNakLjrzG7", call.ToolCallID)
				assert.Equal(t, call.ToolCallID, res.ToolCallID)
				assert.Equal(t, nativeTime.Add(-14*time.Millisecond), call.Timestamp)
				assert.Equal(t, nativeTime, res.Timestamp)
				assert.Equal(t, int64(14), *res.ToolLatencyMs)
				assert.Equal(t, tc.status, res.ToolStatus)
				assert.Equal(t, tc.errType, res.ErrorType)
				assert.Nil(t, res.ToolExitCode, "Claude Code sends no exit code")
				assert.Empty(t, res.Text, "a redaction marker is no content")
				assert.Empty(t, call.Text)
				assert.Equal(t, int64(116), res.Attributes[agentevent.AttrToolInputSizeBytes])
				assert.Equal(t, "config", res.Attributes[agentevent.AttrToolDecisionSource])
				assert.Equal(t, agentevent.ChannelTerminal, call.Channel)
				assert.Less(t, call.Sequence, res.Sequence)
			})
		}
	})
	t.Run("prompt_length", func(t *testing.T) {
		// user_prompt of logs-claude-code-2.1.269-session.otlp.jsonl:
		// prompt_length is a string, prompt is blanked.
		for _, v := range []any{"162", int64(162), float64(162)} {
			ev := mapOne(t, nativeRecord("user_prompt", 11, map[string]any{
				"prompt_length": v, "prompt": "", "message.uuid": "d17387de-25c5-432f-b8f2-949b0327ef4a",
			}))[0]
			assert.Equal(t, int64(162), ev.Attributes[agentevent.AttrPromptLength], "%T", v)
		}
	})
	t.Run("prompt.id without its user_prompt", func(t *testing.T) {
		// tool_decision of logs-claude-code-2.1.273-tools.otlp.jsonl: its
		// user_prompt is not in any capture; the event still names its turn.
		evs := mapOne(t, nativeRecord("tool_decision", 24, map[string]any{
			"decision": "reject", "source": "user_temporary", "tool_name": "AskUserQuestion",
			"tool_use_id": "toolu_86FxBvxmQoi4cfbakltn7rhx", "tool_source": "builtin", "tool_parameters": "",
		}))
		require.Len(t, evs, 2)
		for _, ev := range evs {
			assert.Equal(t, agentevent.NativeID("claude_code", nativeSession, "prompt", nativePromptID), ev.ParentEventID)
		}
	})
}

// TestNativeMapping: the rules of the mapping, one record each.
func TestNativeMapping(t *testing.T) {
	promptID := agentevent.NativeID("claude_code", nativeSession, "prompt", nativePromptID)
	t.Run("user_prompt", func(t *testing.T) {
		// logs-claude-code-2.1.269-session.otlp.jsonl: a /model command.
		evs := mapOne(t, nativeRecord("claude_code.user_prompt", 13, map[string]any{
			"prompt_length": "6", "prompt": "<REDACTED>", "command_name": "model", "command_source": "builtin",
		}))
		require.Len(t, evs, 1)
		ev := evs[0]
		assert.Equal(t, agentevent.TypeUserMessage, ev.Type)
		assert.Equal(t, agentevent.RoleUser, ev.Role)
		assert.Equal(t, promptID, ev.EventID)
		assert.Empty(t, ev.ParentEventID)
		assert.Empty(t, ev.Text)
		assert.Equal(t, "/model", ev.Attributes[agentevent.AttrCommandName])
		assert.Equal(t, "builtin", ev.Attributes[agentevent.AttrCommandSource])
		assert.Equal(t, nativeSequence(ev.Timestamp, 13, 0), ev.Sequence)
		assert.Equal(t, "2.1.273", ev.AgentVersion)
		assert.Equal(t, Source, ev.Source)
		assert.Equal(t, agentevent.SchemaVersion, ev.SchemaVersion)
		assert.Equal(t, "10e3d63210ded9c997d09c67b5b2cfe2", ev.Attributes[agentevent.AttrNativeTraceID])
		for _, k := range identityKeys {
			assert.NotContains(t, ev.Attributes, k)
		}

		// With OTEL_LOG_USER_PROMPTS=1 the text is real.
		ev = mapOne(t, nativeRecord("user_prompt", 13, map[string]any{"prompt": "fix the flaky test"}))[0]
		assert.Equal(t, "fix the flaky test", ev.Text)
	})
	t.Run("assistant_response groups with its api_request", func(t *testing.T) {
		// logs-claude-code-2.1.269-api.otlp.jsonl: both records of one call
		// share request_id and event.timestamp.
		rec := mapOne(t, nativeRecord("api_request", 15, map[string]any{
			"model": "claude-opus-5", "request_id": "req_151KkEWhaeKe6cFSlPQQc5Dh", "input_tokens": int64(32), "output_tokens": int64(10),
		}))[0]
		resp := mapOne(t, nativeRecord("assistant_response", 16, map[string]any{
			"model": "claude-opus-5", "request_id": "req_151KkEWhaeKe6cFSlPQQc5Dh", "response": "", "response_length": int64(25),
			"query_source": "repl_main_thread", "message.uuid": "432cf78e-04ef-413e-875e-ed6fb12cd009",
		}))[0]
		assert.Equal(t, rec.ResponseID, resp.ResponseID)
		assert.Equal(t, agentevent.TypeAssistantMessage, resp.Type)
		assert.Nil(t, resp.TokensInput)
		assert.Nil(t, resp.TokensOutput)
		assert.Empty(t, resp.Text)
		assert.Equal(t, int64(25), resp.Attributes["agent.chat.response_length"])
		assert.Equal(t, promptID, resp.ParentEventID)
		assert.NotEqual(t, rec.EventID, resp.EventID)
	})
	t.Run("api errors", func(t *testing.T) {
		// No capture has these (README: planned but absent); the attributes
		// are the documented ones (NATIVE_OTEL.md §1.4).
		ev := mapOne(t, nativeRecord("api_error", 30, map[string]any{
			"model": "claude-opus-5", "error": "Overloaded", "status_code": int64(529), "attempt": int64(11),
			"duration_ms": "61000", "request_id": "req_011", "query_source": "repl_main_thread",
		}))[0]
		assert.Equal(t, agentevent.TypeLog, ev.Type)
		assert.Equal(t, agentevent.RoleSystem, ev.Role)
		assert.Equal(t, agentevent.ErrorTypeAPI, ev.ErrorType)
		assert.Equal(t, "error", ev.Status)
		assert.Equal(t, agentevent.TurnEndError, ev.Attributes[agentevent.AttrTurnEnd])
		assert.Equal(t, int64(529), ev.Attributes[agentevent.AttrAPIStatusCode])
		assert.Equal(t, int64(11), ev.Attributes[agentevent.AttrAPIAttempt])
		assert.Equal(t, "Overloaded", ev.Text)
		assert.Empty(t, ev.Model, "an error, not a model call")
		assert.Empty(t, ev.ResponseID)
		assert.Nil(t, ev.TokensInput)

		ev = mapOne(t, nativeRecord("api_retries_exhausted", 31, map[string]any{
			"model": "claude-opus-5", "error": "<REDACTED>", "status_code": "529", "total_attempts": int64(11),
			"total_retry_duration_ms": int64(60000), "speed": "normal",
		}))[0]
		assert.Equal(t, agentevent.ErrorTypeAPI, ev.ErrorType)
		assert.Equal(t, true, ev.Attributes[agentevent.AttrAPIRetriesExhausted])
		assert.Equal(t, int64(11), ev.Attributes[agentevent.AttrAPITotalAttempts])

		// A background call (a session title) that failed does not end the turn.
		ev = mapOne(t, nativeRecord("api_error", 32, map[string]any{"query_source": "generate_session_title", "error": ""}))[0]
		assert.Equal(t, agentevent.ErrorTypeAPI, ev.ErrorType)
		assert.Empty(t, ev.Status)
		assert.NotContains(t, ev.Attributes, agentevent.AttrTurnEnd)

		ev = mapOne(t, nativeRecord("api_refusal", 33, map[string]any{
			"model": "claude-opus-5", "request_id": "req_012", "query_source": "repl_main_thread", "attempt": int64(1),
		}))[0]
		assert.Equal(t, agentevent.ErrorTypeRefusal, ev.ErrorType)
		assert.Equal(t, "req_012", ev.ResponseID)
		assert.Equal(t, "refusal", ev.FinishReason)
		assert.Equal(t, "error", ev.Status)
	})
	t.Run("tool_decision", func(t *testing.T) {
		// logs-claude-code-2.1.272-tools.otlp.jsonl: rejections by config
		// and by the user; an accept is followed by its tool_result.
		for _, tc := range []struct{ source, class string }{
			{"config", agentevent.ErrorTypePermissionDenied},
			{"hook", agentevent.ErrorTypePermissionDenied},
			{"user_reject", agentevent.ErrorTypeRejected},
			{"user_temporary", agentevent.ErrorTypeRejected},
			{"user_abort", agentevent.ErrorTypeInterrupted},
		} {
			evs := mapOne(t, nativeRecord("tool_decision", 137, map[string]any{
				"decision": "reject", "source": tc.source, "tool_name": "mcp_tool", "tool_source": "mcp",
				"tool_use_id": "toolu_09QMhB3MpcS5GJFEMscGoA0A", "tool_parameters": `{"mcp_server_name":"server4","mcp_tool_name":"mcp_tool2"}`,
			}))
			require.Len(t, evs, 2)
			call, res := evs[0], evs[1]
			assert.Equal(t, agentevent.TypeToolCall, call.Type)
			assert.Equal(t, "mcp__server4__mcp_tool2", call.ToolName)
			assert.JSONEq(t, `{"mcp_server_name":"server4","mcp_tool_name":"mcp_tool2"}`, call.Text)
			assert.Equal(t, agentevent.ToolError, res.ToolStatus)
			assert.Equal(t, tc.class, res.ErrorType, tc.source)
			assert.Equal(t, tc.source, res.Attributes[agentevent.AttrToolDecisionSource])
			assert.Equal(t, "reject", res.Attributes[agentevent.AttrToolDecision])
			assert.Nil(t, res.ToolLatencyMs)
		}
		evs, err := NewNativeMapper().Map(nativeRecord("tool_decision", 14, map[string]any{
			"decision": "accept", "source": "config", "tool_name": "Bash", "tool_use_id": "toolu_00HzYFlW7btrGuqFToVxR7R5",
		}))
		require.NoError(t, err)
		assert.Empty(t, evs)
		_, err = NewNativeMapper().Map(nativeRecord("tool_decision", 14, map[string]any{"tool_use_id": "toolu_00HzYFlW7btrGuqFToVxR7R5"}))
		require.ErrorIs(t, err, agentevent.ErrNativeUnmapped)
	})
	t.Run("tool details", func(t *testing.T) {
		// tool_result of logs-claude-code-2.1.269-tools.otlp.jsonl, with the
		// content OTEL_LOG_TOOL_DETAILS=1 adds (blanked in the capture).
		evs := mapOne(t, nativeRecord("tool_result", 209, map[string]any{
			"tool_name": "Read", "tool_use_id": "toolu_28RDuEuCnz5bSfvJAzzdPeR8", "success": "true", "duration_ms": "12",
			"tool_input": `{"file_path":"/redacted/path3/main.go"}`,
		}))
		call, res := evs[0], evs[1]
		assert.Equal(t, "/redacted/path3/main.go", call.FilePath)
		assert.Equal(t, "go", call.FileLanguage)
		assert.Equal(t, agentevent.FileRead, call.FileOp)
		assert.Equal(t, agentevent.ChannelEditor, res.Channel)
		assert.Equal(t, call.FilePath, res.FilePath)

		evs = mapOne(t, nativeRecord("tool_result", 215, map[string]any{
			"tool_name": "Bash", "tool_use_id": "toolu_48UG3XiIjAo4hozQYgxzYjsc", "success": "false", "duration_ms": "1",
			"error_type": "ShellError", "error": "Exit code 1", "tool_parameters": `{"bash_command":"go","full_command":"go test ./..."}`,
		}))
		assert.Equal(t, "go test ./...", evs[0].Attributes[agentevent.AttrToolCommand])
		assert.Equal(t, "Exit code 1", evs[1].Text)
		assert.Nil(t, evs[1].ToolExitCode, "an exit code is never read out of a message")

		// No tool_use_id: the result alone, its call cannot be named.
		evs = mapOne(t, nativeRecord("tool_result", 216, map[string]any{"tool_name": "Bash", "success": "true", "duration_ms": "5"}))
		require.Len(t, evs, 1)
		assert.Equal(t, agentevent.TypeToolResult, evs[0].Type)
	})
	t.Run("compaction and subagent", func(t *testing.T) {
		// logs-claude-code-2.1.272-session.otlp.jsonl.
		ev := mapOne(t, nativeRecord("compaction", 85, map[string]any{
			"pre_tokens": int64(167000), "post_tokens": "12000", "trigger": "auto", "success": "true", "duration_ms": int64(30000),
		}))[0]
		assert.Equal(t, agentevent.TypeMeta, ev.Type)
		assert.Equal(t, metaKindCompaction, ev.Attributes[agentevent.AttrMetaKind])
		assert.Equal(t, int64(167000), ev.Attributes[agentevent.AttrCompactionPreTokens])
		assert.Equal(t, int64(12000), ev.Attributes[agentevent.AttrCompactionPostTokens])
		assert.Equal(t, "auto", ev.Attributes[agentevent.AttrCompactionTrigger])
		assert.Equal(t, true, ev.Attributes[agentevent.AttrCompactionSuccess])

		ev = mapOne(t, nativeRecord("subagent_completed", 754, map[string]any{
			"agent_type": "Explore", "agent.source": "built-in", "total_tokens": int64(43205), "total_tool_uses": int64(16),
			"duration_ms": int64(84585), "model": "claude-fable-5-1", "is_async": true,
		}))[0]
		assert.Equal(t, agentevent.TypeMeta, ev.Type)
		assert.Equal(t, "Explore", ev.Attributes["agent.subagent.completed.type"])
		assert.Equal(t, int64(43205), ev.Attributes["agent.subagent.completed.total_tokens"])
		assert.Nil(t, ev.TokensInput, "a subagent's tokens come with its own api_requests")
		assert.Empty(t, ev.SubagentType)
	})
	t.Run("ignored and unmapped", func(t *testing.T) {
		m := NewNativeMapper()
		for name := range nativeIgnored {
			evs, err := m.Map(nativeRecord(name, 4, nil))
			require.NoError(t, err, name)
			assert.Empty(t, evs, name)
		}
		// Turn facts outside a turn are session bookkeeping too.
		evs, err := m.Map(nativeRecord("permission_mode_changed", 25, map[string]any{"prompt.id": nil, "to_mode": "default"}))
		require.NoError(t, err)
		assert.Empty(t, evs)

		for _, tc := range []struct {
			name string
			rec  *agentevent.NativeRecord
		}{
			{"unknown event", nativeRecord("brand_new_event", 5, nil)},
			{"no name", nativeRecord("", 5, nil)},
			{"no session.id", nativeRecord("api_request", 5, map[string]any{"session.id": nil})},
			{"no event.sequence", nativeRecord("api_request", 5, map[string]any{"event.sequence": nil})},
			{"negative event.sequence", nativeRecord("api_request", -1, nil)},
		} {
			_, mapErr := m.Map(tc.rec)
			require.ErrorIs(t, mapErr, agentevent.ErrNativeUnmapped, tc.name)
		}
		_, err = m.Map(nil)
		require.ErrorIs(t, err, agentevent.ErrNativeUnmapped)
	})
	t.Run("turn facts", func(t *testing.T) {
		// logs-claude-code-2.1.272-session.otlp.jsonl and -2.1.269-generic.
		ev := mapOne(t, nativeRecord("hook_execution_complete", 21, map[string]any{
			"hook_event": "Stop", "hook_name": "Stop", "hook_source": "merged", "num_hooks": "1", "num_success": "0",
			"num_non_blocking_error": "1", "total_duration_ms": "16",
		}))[0]
		assert.Equal(t, agentevent.ErrorTypeHook, ev.ErrorType)
		assert.Equal(t, int64(16), ev.Attributes[agentevent.AttrHookDurationMs])
		assert.Equal(t, "Stop", ev.Attributes[agentevent.AttrHookEvent])

		ev = mapOne(t, nativeRecord("permission_mode_changed", 25, map[string]any{"from_mode": "auto", "to_mode": "default", "trigger": "shift_tab"}))[0]
		assert.Equal(t, "default", ev.Attributes[agentevent.AttrPermissionMode])
		assert.Equal(t, metaKindPermissionMode, ev.Attributes[agentevent.AttrMetaKind])

		ev = mapOne(t, nativeRecord("at_mention", 916, map[string]any{"mention_type": "file", "success": "false"}))[0]
		assert.Equal(t, false, ev.Attributes[agentevent.AttrMentionSuccess])
		ev = mapOne(t, nativeRecord("skill_activated", 917, map[string]any{"skill.name": "skill1", "skill.source": "bundled"}))[0]
		assert.Equal(t, "skill1", ev.Attributes[agentevent.AttrSkillName])
		assert.Equal(t, promptID, ev.ParentEventID)
	})
	t.Run("time", func(t *testing.T) {
		// A record lifted without a time falls back to event.timestamp.
		rec := nativeRecord("api_request", 9, map[string]any{"model": "claude-opus-5"})
		rec.Time = time.Time{}
		assert.Equal(t, nativeTime, mapOne(t, rec)[0].Timestamp)
	})
}
