// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"fmt"
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// The records below are built in Go from the shapes of the Codex log
// captures (../shared/fixtures/native_otel/codex, no license: never copied);
// each row names the capture whose record shape it follows. Ids and values
// are made up.

const (
	capSSE      = "logs-codex-app-server-0.155.0-alpha.9.2-sse.otlp.jsonl"
	capTools    = "logs-codex-app-server-0.155.0-alpha.9.2-tools.otlp.jsonl"
	capSession  = "logs-codex-app-server-0.155.0-alpha.9.2-session.otlp.jsonl"
	capRequests = "logs-codex-app-server-0.155.0-alpha.9.2-requests.otlp.jsonl"
	capDesktop  = "logs-codex-desktop-0.154.0-alpha.6.2-tools.otlp.jsonl"
)

var nativeT0 = time.Date(2026, 1, 7, 6, 32, 19, 917186000, time.UTC)

const testConv = "0b7c1e2a-1111-7222-8333-944455556666"

// codexRecord is a Codex log record as the captures carry it: body empty,
// event.name with the codex. prefix, only the observed time (in Time), and
// the metadata every event has. attrs override or add (nil deletes).
func codexRecord(name string, at time.Time, attrs map[string]any) *agentevent.NativeRecord {
	a := map[string]any{
		"event.name":      name,
		"event.timestamp": at.Add(-time.Millisecond).Format("2006-01-02T15:04:05.000Z07:00"),
		"conversation.id": testConv,
		"app.version":     "0.155.0-alpha.9.2",
		"auth_mode":       "Chatgpt",
		"originator":      "Codex_Desktop",
		"user.account_id": "a0a0a0a0-b1b1-4c2c-8d3d-e4e4e4e4e4e4",
		"user.email":      "someone@example.invalid",
		"terminal.type":   "unknown",
		"model":           "gpt-test",
		"slug":            "gpt-test",
	}
	for k, v := range attrs {
		if v == nil {
			delete(a, k)
			continue
		}
		a[k] = v
	}
	return &agentevent.NativeRecord{
		Service: "codex-app-server", ServiceVersion: "0.155.0-alpha.9.2", Scope: "codex_otel.log_only",
		Name: name, Time: at, TraceID: "5f0c6e1d2a3b4c5d6e7f8091a2b3c4d5", SpanID: "0123456789abcdef", Attrs: a,
	}
}

// sseCompleted is a codex.sse_event response.completed with usage (sse
// capture): the *_token_count keys of Display fields are strings there.
func sseCompleted(at time.Time, attrs map[string]any) *agentevent.NativeRecord {
	base := map[string]any{
		"event.kind":              "response.completed",
		"input_token_count":       "1065300",
		"output_token_count":      "2000",
		"cached_token_count":      int64(1047808),
		"cache_write_token_count": int64(0),
		"reasoning_token_count":   int64(500),
		"tool_token_count":        "1067300",
	}
	maps.Copy(base, attrs)
	return codexRecord("codex.sse_event", at, base)
}

// toolResult is a codex.tool_result (tools capture).
func toolResult(at time.Time, callID string, seq int64, attrs map[string]any) *agentevent.NativeRecord {
	base := map[string]any{
		"tool_result_seq":   seq,
		"tool_name":         "exec_command",
		"tool_namespace":    "functions",
		"call_id":           callID,
		"duration_ms":       "80",
		"success":           "true",
		"output_truncated":  false,
		"agent_name":        "/root",
		"arguments":         "",
		"output":            "",
		"mcp_server":        "",
		"mcp_server_origin": "",
	}
	maps.Copy(base, attrs)
	return codexRecord("codex.tool_result", at, base)
}

func toolDecision(at time.Time, callID, decision, source string) *agentevent.NativeRecord {
	return codexRecord("codex.tool_decision", at, map[string]any{
		"tool_name": "exec_command", "tool_namespace": "functions", "call_id": callID, "decision": decision, "source": source,
	})
}

// mapAll maps recs through one mapper.
func mapAll(recs ...*agentevent.NativeRecord) (events [][]agentevent.Event, errs []error) {
	m := NewNativeMapper()
	for _, r := range recs {
		evs, err := m.Map(r)
		events = append(events, evs)
		errs = append(errs, err)
	}
	return events, errs
}

func at(ms int) time.Time { return nativeT0.Add(time.Duration(ms) * time.Millisecond) }

// TestNativeWireTypes: every numeric and boolean key is read whether it
// arrives as a string (Display fields) or typed, and the other traps of the
// wire shape.
func TestNativeWireTypes(t *testing.T) {
	type row struct {
		name    string
		capture string
		recs    []*agentevent.NativeRecord
		check   func(t *testing.T, evs [][]agentevent.Event, errs []error)
	}
	usage := func(t *testing.T, ev agentevent.Event) {
		t.Helper()
		require.Equal(t, agentevent.TypeAssistantMessage, ev.Type)
		require.Equal(t, int64(1065300), *ev.TokensInput)
		require.Equal(t, int64(1047808), *ev.TokensCached)
		require.Equal(t, int64(2000), *ev.TokensOutput)
		require.Equal(t, int64(500), *ev.TokensThinking)
		require.Equal(t, int64(1067300), *ev.TokensTotal)
		require.Nil(t, ev.TokensTool, "tool_token_count is the total, not tool tokens")
		require.Equal(t, "gpt-test", ev.Model)
		require.Equal(t, "openai", ev.Provider)
	}
	rows := []row{
		{
			"sse counts as strings", capSSE,
			[]*agentevent.NativeRecord{sseCompleted(at(0), map[string]any{"duration_ms": "3120", "ttft_ms": int64(800)})},
			func(t *testing.T, evs [][]agentevent.Event, errs []error) {
				require.NoError(t, errs[0])
				require.Len(t, evs[0], 1)
				usage(t, evs[0][0])
				require.Nil(t, evs[0][0].TokensCacheCreation, "a cache write of 0 is not reported")
				require.Equal(t, int64(3120), evs[0][0].Attributes[agentevent.AttrChatDurationMs])
				require.Equal(t, int64(800), evs[0][0].Attributes[agentevent.AttrChatTimeToFirstTokenMs])
			},
		},
		{"sse counts as ints, cached and reasoning as strings", capSSE, []*agentevent.NativeRecord{sseCompleted(at(0), map[string]any{
			"input_token_count": int64(1065300), "output_token_count": int64(2000), "tool_token_count": int64(1067300),
			"cached_token_count": "1047808", "reasoning_token_count": "500", "duration_ms": int64(3120),
		})}, func(t *testing.T, evs [][]agentevent.Event, errs []error) {
			require.NoError(t, errs[0])
			usage(t, evs[0][0])
			require.Equal(t, int64(3120), evs[0][0].Attributes[agentevent.AttrChatDurationMs])
		}},
		{"sse cache writes when > 0, as int or string", capSSE, []*agentevent.NativeRecord{
			sseCompleted(at(0), map[string]any{"cache_write_token_count": int64(1200)}),
			sseCompleted(at(1), map[string]any{"cache_write_token_count": "1200"}),
		}, func(t *testing.T, evs [][]agentevent.Event, errs []error) {
			for i := range evs {
				require.NoError(t, errs[i])
				require.Equal(t, int64(1200), *evs[i][0].TokensCacheCreation)
			}
		}},
		{
			"sse count that is no number", capSSE,
			[]*agentevent.NativeRecord{sseCompleted(at(0), map[string]any{"input_token_count": "12a"})},
			func(t *testing.T, _ [][]agentevent.Event, errs []error) { errUnmapped(t, errs[0]) },
		},
		{"sse progress row and completion without usage", capSSE, []*agentevent.NativeRecord{
			codexRecord("codex.sse_event", at(0), map[string]any{"event.kind": "response.output_item.done", "duration_ms": "12"}),
			codexRecord("codex.sse_event", at(1), map[string]any{"event.kind": "response.completed"}),
		}, func(t *testing.T, evs [][]agentevent.Event, errs []error) {
			for i := range evs {
				require.NoError(t, errs[i])
				require.Empty(t, evs[i])
			}
		}},
		{"sse completion with error.message", capSSE, []*agentevent.NativeRecord{
			codexRecord("codex.sse_event", at(0), map[string]any{"event.kind": "response.completed", "error.message": "stream disconnected"}),
		}, func(t *testing.T, evs [][]agentevent.Event, errs []error) {
			require.NoError(t, errs[0])
			ev := evs[0][0]
			require.Equal(t, agentevent.TypeLog, ev.Type)
			require.Equal(t, "api_error", ev.ErrorType)
			require.Equal(t, "error", ev.Status)
			require.Equal(t, "stream disconnected", ev.Text)
		}},
		{"tool success as string, bool, upper case, absent", capTools, []*agentevent.NativeRecord{
			toolResult(at(0), "call_a", 1, map[string]any{"success": "true"}),
			toolResult(at(1), "call_b", 2, map[string]any{"success": "false"}),
			toolResult(at(2), "call_c", 3, map[string]any{"success": true}),
			toolResult(at(3), "call_d", 4, map[string]any{"success": false}),
			toolResult(at(4), "call_e", 5, map[string]any{"success": "TRUE"}),
			toolResult(at(5), "call_f", 6, map[string]any{"success": nil}),
		}, func(t *testing.T, evs [][]agentevent.Event, errs []error) {
			want := []agentevent.ToolStatus{agentevent.ToolSuccess, agentevent.ToolError, agentevent.ToolSuccess, agentevent.ToolError, agentevent.ToolSuccess, agentevent.ToolUnknown}
			for i, w := range want {
				require.NoError(t, errs[i])
				require.Len(t, evs[i], 2)
				require.Equal(t, agentevent.TypeToolCall, evs[i][0].Type)
				require.Equal(t, w, evs[i][1].ToolStatus, "row %d", i)
				if w == agentevent.ToolError {
					require.Equal(t, agentevent.ErrorTypeTool, evs[i][1].ErrorType)
				}
			}
		}},
		{"tool duration as string and as int", capTools, []*agentevent.NativeRecord{
			toolResult(at(1000), "call_a", 1, map[string]any{"duration_ms": "677"}),
			toolResult(at(2000), "call_b", 2, map[string]any{"duration_ms": int64(677)}),
		}, func(t *testing.T, evs [][]agentevent.Event, errs []error) {
			for i, end := range []time.Time{at(1000), at(2000)} {
				require.NoError(t, errs[i])
				call, res := evs[i][0], evs[i][1]
				require.Equal(t, end.Add(-677*time.Millisecond), call.Timestamp)
				require.Equal(t, end, res.Timestamp)
				require.Equal(t, int64(677), *res.ToolLatencyMs)
				require.Less(t, call.Sequence, res.Sequence)
				require.Equal(t, agentevent.ChannelTerminal, call.Channel)
			}
		}},
		{"no timeUnixNano: observed time, else event.timestamp, else unmapped", capDesktop, func() []*agentevent.NativeRecord {
			noTime := toolResult(time.Time{}, "call_a", 1, map[string]any{"event.timestamp": "2026-01-01T09:35:11.005Z"})
			neither := toolResult(time.Time{}, "call_b", 2, map[string]any{"event.timestamp": nil})
			return []*agentevent.NativeRecord{noTime, neither}
		}(), func(t *testing.T, evs [][]agentevent.Event, errs []error) {
			require.NoError(t, errs[0])
			ts := time.Date(2026, 1, 1, 9, 35, 11, 5000000, time.UTC)
			require.Equal(t, ts, evs[0][1].Timestamp)
			require.Equal(t, ts.UnixNano()+1, evs[0][1].Sequence)
			errUnmapped(t, errs[1])
		}},
		{"tool_result_seq repeats", capTools, []*agentevent.NativeRecord{
			toolResult(at(0), "call_same", 7, nil),
			toolResult(at(0), "call_same", 7, nil), // the same record exported again
			toolResult(at(500), "call_same", 8, map[string]any{"success": "false"}),
		}, func(t *testing.T, evs [][]agentevent.Event, errs []error) {
			for i := range errs {
				require.NoError(t, errs[i])
			}
			require.Len(t, evs[0], 2)
			require.Empty(t, evs[1])
			require.Len(t, evs[2], 1)
			rep := evs[2][0]
			require.Equal(t, agentevent.TypeLog, rep.Type)
			require.Equal(t, true, rep.Attributes[agentevent.AttrToolRepeatedResult])
			require.Equal(t, int64(8), rep.Attributes[agentevent.AttrToolResultSeq])
			require.Equal(t, agentevent.ToolError, rep.ToolStatus)
			all := append(append([]agentevent.Event{}, evs[0]...), evs[2]...)
			require.Empty(t, agentevent.Validate(all).Violations)
		}},
		{"decision casing, then the failed result", capTools, []*agentevent.NativeRecord{
			toolDecision(at(0), "exec-1", "denied", "User"),
			toolResult(at(10), "exec-1", 1, map[string]any{"success": "false", "duration_ms": "0"}),
			toolDecision(at(20), "exec-2", "Denied", "Config"),
			toolDecision(at(30), "exec-3", "ABORT", "User"),
			toolResult(at(40), "exec-3", 2, map[string]any{"success": "false"}),
			toolDecision(at(50), "exec-4", "timed_out", "AutomatedReviewer"),
			toolDecision(at(60), "exec-5", "approved", "Config"),
			toolDecision(at(70), "exec-6", "Approved_For_Session", "User"),
			toolDecision(at(80), "exec-7", "maybe", "User"),
		}, func(t *testing.T, evs [][]agentevent.Event, errs []error) {
			for i := range 8 {
				require.NoError(t, errs[i], "record %d", i)
			}
			errUnmapped(t, errs[8])
			call := evs[0][0]
			require.Equal(t, agentevent.TypeToolCall, call.Type)
			require.Equal(t, "denied", call.Attributes[agentevent.AttrToolDecision])
			require.Equal(t, "User", call.Attributes[agentevent.AttrCodexToolDecisionSource])
			require.Len(t, evs[1], 1, "the result of a rejected call, no second call")
			res := evs[1][0]
			require.Equal(t, agentevent.TypeToolResult, res.Type)
			require.Equal(t, agentevent.ToolError, res.ToolStatus)
			require.Equal(t, agentevent.ErrorTypeTool, res.ErrorType)
			require.Equal(t, "denied", res.Attributes[agentevent.AttrToolDecision])
			require.Equal(t, "denied", evs[2][0].Attributes[agentevent.AttrToolDecision])
			require.Equal(t, "Config", evs[2][0].Attributes[agentevent.AttrCodexToolDecisionSource])
			require.Equal(t, agentevent.ErrorTypeInterrupted, evs[4][0].ErrorType)
			require.Equal(t, "timed_out", evs[5][0].Attributes[agentevent.AttrToolDecision])
			require.Empty(t, evs[6])
			require.Empty(t, evs[7])
		}},
		{"prompt_length as string and int, prompt redacted or real", capSession, []*agentevent.NativeRecord{
			codexRecord("codex.user_prompt", at(0), map[string]any{"prompt_length": "57", "prompt": "[REDACTED]"}),
			codexRecord("codex.user_prompt", at(1), map[string]any{"prompt_length": int64(5), "prompt": "hello"}),
		}, func(t *testing.T, evs [][]agentevent.Event, errs []error) {
			require.NoError(t, errs[0])
			require.Equal(t, int64(57), evs[0][0].Attributes[agentevent.AttrPromptLength])
			require.Empty(t, evs[0][0].Text)
			require.Equal(t, int64(5), evs[1][0].Attributes[agentevent.AttrPromptLength])
			require.Equal(t, "hello", evs[1][0].Text)
		}},
		{"event.name with and without the codex. prefix", capTools, []*agentevent.NativeRecord{
			toolResult(at(0), "call_a", 1, nil),
			func() *agentevent.NativeRecord {
				r := toolResult(at(1), "call_b", 2, map[string]any{"event.name": "tool_result"})
				r.Name = "tool_result"
				return r
			}(),
		}, func(t *testing.T, evs [][]agentevent.Event, errs []error) {
			require.NoError(t, errs[0])
			require.NoError(t, errs[1])
			require.Len(t, evs[1], 2)
		}},
		{"records that are not mapped", capSession, []*agentevent.NativeRecord{
			{Service: "codex-app-server", Scope: "codex_otel::metrics::client", Name: "event otel/src/metrics/client.rs:301", Time: at(0), Attrs: map[string]any{}},
			{Service: "codex-app-server", Scope: "codex_otel::metrics::client", Time: at(0), Attrs: map[string]any{}},
			codexRecord("codex.user_prompt", at(1), map[string]any{"conversation.id": nil}),
			codexRecord("codex.brand_new_event", at(2), nil),
			toolResult(at(3), "", 1, nil),
			nil,
		}, func(t *testing.T, evs [][]agentevent.Event, errs []error) {
			for i := range errs {
				errUnmapped(t, errs[i])
				require.Empty(t, evs[i])
			}
		}},
		{"api_request: /models without session ignored, failed ones are errors", capRequests, []*agentevent.NativeRecord{
			codexRecord("codex.api_request", at(0), map[string]any{"conversation.id": nil, "success": false, "error.message": "x", "endpoint": "/models"}),
			codexRecord("codex.api_request", at(1), map[string]any{"http.response.status_code": int64(200), "duration_ms": "1071", "endpoint": "/responses"}),
			codexRecord("codex.api_request", at(2), map[string]any{"http.response.status_code": "503", "attempt": int64(1), "endpoint": "/responses"}),
			codexRecord("codex.websocket_connect", at(3), map[string]any{"success": "true", "duration_ms": "852"}),
			codexRecord("codex.websocket_request", at(4), map[string]any{"success": "false", "error.message": "closed"}),
		}, func(t *testing.T, evs [][]agentevent.Event, errs []error) {
			for i := range errs {
				require.NoError(t, errs[i])
			}
			require.Empty(t, evs[0])
			require.Empty(t, evs[1])
			require.Empty(t, evs[3])
			e := evs[2][0]
			require.Equal(t, "api_error", e.ErrorType)
			require.Empty(t, e.Status, "a retried request says nothing of the turn")
			require.Equal(t, int64(503), e.Attributes[agentevent.AttrCodexHTTPStatusCode])
			require.Equal(t, int64(1), e.Attributes[agentevent.AttrCodexAttempt])
			require.Equal(t, "closed", evs[4][0].Text)
		}},
		{"ignored bookkeeping", capSession, []*agentevent.NativeRecord{
			codexRecord("codex.turn_ttft", at(0), map[string]any{"duration_ms": "4822"}),
			codexRecord("codex.startup_phase", at(1), map[string]any{"startup.phase": "thread_start_total", "duration_ms": "284"}),
			codexRecord("codex.agent_communication", at(2), map[string]any{"conversation.id": nil, "state": "receive"}),
			codexRecord("codex.sandbox_outcome", at(3), map[string]any{"outcome": "denied", "initial_duration_ms": int64(105)}),
			codexRecord("codex.plugin_install_suggestion", at(4), nil),
		}, func(t *testing.T, evs [][]agentevent.Event, errs []error) {
			for i := range errs {
				require.NoError(t, errs[i])
				require.Empty(t, evs[i])
			}
		}},
		{"turn_cost as double and as string", capSession, []*agentevent.NativeRecord{
			codexRecord("codex.turn_cost", at(0), map[string]any{"turn.id": "t1", "usage.estimated_usd": 0.0425, "turn.interrupted": "false"}),
			codexRecord("codex.turn_cost", at(1), map[string]any{"turn.id": "t2", "usage.estimated_usd": "0.5"}),
			codexRecord("codex.turn_cost", at(2), map[string]any{"turn.id": "t3"}),
		}, func(t *testing.T, evs [][]agentevent.Event, errs []error) {
			for i := range errs {
				require.NoError(t, errs[i])
			}
			require.Nil(t, evs[0][0].CostUSD, "the calls' tokens are priced: the estimate is a fact, not the turn's cost")
			require.InDelta(t, 0.0425, evs[0][0].Attributes[agentevent.AttrCodexTurnCostUSD], 1e-12)
			require.Equal(t, false, evs[0][0].Attributes[agentevent.AttrTurnInterrupted])
			require.InDelta(t, 0.5, evs[1][0].Attributes[agentevent.AttrCodexTurnCostUSD], 1e-12)
			require.Empty(t, evs[2])
		}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Logf("record shape from %s", r.capture)
			evs, errs := mapAll(r.recs...)
			for i := range evs {
				for _, ev := range evs[i] {
					require.NotEmpty(t, ev.EventID)
					require.Equal(t, agentevent.SchemaVersion, ev.SchemaVersion)
					require.Contains(t, agentevent.AllowedRoles(ev.Type), ev.Role)
				}
			}
			r.check(t, evs, errs)
		})
	}
}

// TestNativeTurns: a conversation's events belong to its latest prompt (none
// before the first), conversations do not mix, and the model call's
// response id goes to the tool calls and the final answer that follow.
func TestNativeTurns(t *testing.T) {
	other := "9c9c9c9c-2222-7333-8444-955566667777"
	evs, errs := mapAll(
		toolResult(at(0), "call_pre", 1, nil), // after a restart: before any prompt
		codexRecord("codex.user_prompt", at(10), map[string]any{"prompt_length": "3"}),
		codexRecord("codex.user_prompt", at(11), map[string]any{"conversation.id": other, "prompt_length": "3"}),
		sseCompleted(at(20), nil),
		toolResult(at(30), "call_1", 2, nil),
		codexRecord("codex.agent_response", at(40), map[string]any{"response": "done", "agent.type": "main", "turn.id": "t1"}),
		codexRecord("codex.user_prompt", at(50), map[string]any{"prompt_length": "3"}),
		toolResult(at(60), "call_2", 3, nil),
	)
	for i := range errs {
		require.NoError(t, errs[i])
	}
	require.Empty(t, evs[0][0].ParentEventID)
	p1, p2, p3 := evs[1][0].EventID, evs[2][0].EventID, evs[6][0].EventID
	require.NotEqual(t, p1, p2)
	require.Equal(t, p1, evs[3][0].ParentEventID)
	require.Equal(t, p1, evs[4][0].ParentEventID)
	require.Equal(t, p1, evs[4][1].ParentEventID)
	require.Equal(t, evs[3][0].ResponseID, evs[4][0].ResponseID)
	require.Equal(t, evs[3][0].ResponseID, evs[5][0].ResponseID)
	require.Equal(t, "done", evs[5][0].Text)
	require.Empty(t, evs[4][1].ResponseID, "a tool result is no part of the model call")
	require.Equal(t, p3, evs[7][0].ParentEventID)
	var all []agentevent.Event
	for _, e := range evs {
		all = append(all, e...)
	}
	require.Empty(t, agentevent.Validate(all).Violations)
	for i := 1; i < len(all); i++ {
		if all[i].SessionID == all[i-1].SessionID {
			require.Greater(t, all[i].Sequence, all[i-1].Sequence)
		}
	}
}

// TestNativeEnvelope: ids are stable for the same record, the envelope
// fields are set, identity attributes are never copied.
func TestNativeEnvelope(t *testing.T) {
	r := toolResult(at(0), "call_a", 1, map[string]any{"arguments": `{"cmd":"go test ./..."}`, "output": "ok"})
	a, err := NewNativeMapper().Map(r)
	require.NoError(t, err)
	b, err := NewNativeMapper().Map(r)
	require.NoError(t, err)
	require.Equal(t, a[0].EventID, b[0].EventID)
	require.NotEqual(t, a[0].EventID, a[1].EventID)
	require.Equal(t, agentevent.NativeID("codex", testConv, strconv.FormatInt(at(0).UnixNano(), 10), "codex.tool_result", "call_a", "1"), a[1].EventID)
	for _, ev := range a {
		require.Equal(t, Source, ev.Source)
		require.Equal(t, testConv, ev.SessionID)
		require.Equal(t, "0.155.0-alpha.9.2", ev.AgentVersion)
		require.Equal(t, agentevent.OriginNative, ev.Attributes[agentevent.AttrOrigin])
		require.Equal(t, r.TraceID, ev.Attributes[agentevent.AttrNativeTraceID])
		for k, v := range ev.Attributes {
			require.NotContains(t, fmt.Sprint(v), "someone@example.invalid", k)
			require.NotContains(t, fmt.Sprint(v), "a0a0a0a0-b1b1", k)
		}
	}
	require.Equal(t, `{"cmd":"go test ./..."}`, a[0].Text)
	require.Equal(t, "go test ./...", a[0].Attributes[agentevent.AttrToolCommand])
	require.Equal(t, "ok", a[1].Text)
}

// TestNativeConversationBound: beyond maxNativeConversations the least
// recently used conversation is forgotten (its next events have no turn).
func TestNativeConversationBound(t *testing.T) {
	m := NewNativeMapper()
	prompt := func(conv string, ms int) {
		_, err := m.Map(codexRecord("codex.user_prompt", at(ms), map[string]any{"conversation.id": conv, "prompt_length": "1"}))
		require.NoError(t, err)
	}
	prompt("first", 0)
	prompt("kept", 1)
	for i := range maxNativeConversations - 2 {
		prompt("c"+strconv.Itoa(i), 2+i)
	}
	// Using "kept" again makes "first" the least recently used.
	evs, err := m.Map(toolResult(at(100000), "call_k", 1, map[string]any{"conversation.id": "kept"}))
	require.NoError(t, err)
	require.NotEmpty(t, evs[0].ParentEventID)
	prompt("one more", 100001)
	require.Len(t, m.convs, maxNativeConversations)
	evs, err = m.Map(toolResult(at(100002), "call_f", 1, map[string]any{"conversation.id": "first"}))
	require.NoError(t, err)
	require.Empty(t, evs[0].ParentEventID, "forgotten")
	evs, err = m.Map(toolResult(at(100003), "call_k2", 2, map[string]any{"conversation.id": "kept"}))
	require.NoError(t, err)
	require.NotEmpty(t, evs[0].ParentEventID)
}
