// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package schemas

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// valid is one good line per format; the cases below break it one way at a
// time, each a rule of the seed the schema must hold.
var valid = map[string]string{
	"agtrace_v1": `{"schema_version":"agtrace.event.v1","source":"claude_code","project_hash":"","project_root":null,
		"session_id":"s1","event_id":"e2","parent_event_id":"e1","ts":"2025-11-26T12:51:28.093Z","event_type":"tool_result",
		"role":"tool","channel":"terminal","text":null,"tool_name":"Bash","tool_call_id":"c1","tool_status":"error",
		"tool_latency_ms":12,"tool_exit_code":1,"file_path":null,"file_language":null,"file_op":null,"model":null,
		"tokens_input":null,"tokens_output":null,"tokens_total":null,"tokens_cached":null,"tokens_thinking":null,
		"tokens_tool":null,"agent_id":null,"raw":null,"sequence":3}`,
	"universal": `{"event_id":"evt_1","sequence":1,"time":"2026-01-27T19:10:11Z","session_id":"sess_1","native_session_id":"n1",
		"synthetic":false,"source":"agent","type":"item.completed","raw":null,
		"data":{"item":{"item_id":"itm_1","native_item_id":null,"parent_id":null,"kind":"tool_result","role":"tool",
		"status":"failed","content":[{"type":"tool_result","call_id":"c1","output":"x"},{"type":"file_ref","path":"/a","action":"patch","diff":"@@"}]}}}`,
	"agent_manager": `{"id":"6f3b0a52-9a0e-5c43-8d4e-3c1a7f0d2b91","runId":"6f3b0a52-9a0e-5c43-8d4e-3c1a7f0d2b92","sequence":0,
		"eventType":"metric","timestamp":"2025-12-20T04:18:42.709878Z",
		"data":{"inputTokens":3562,"outputTokens":401,"cacheReadTokens":6144,"cacheCreationTokens":0,"totalCostUsd":0.00197528}}`,
	"canonical_task": `{"id":"agent-task-0123456789abcdef","canonicalId":"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"providerId":"agentotel","type":"AGENT_TASK_COMPLETED","timestamp":"2025-01-01T00:00:00.000Z","title":"t","description":"d",
		"author":{"id":"claude-code","name":"Claude Code","email":null},"branches":[],"hash":null,"parentIds":[],"childIds":[],
		"impact":{"filesChanged":0,"linesAdded":0,"linesRemoved":0},
		"visualization":{"icon":"robot","color":"purple","priority":"medium","tags":["agent"]},
		"metadata":{"userPrompt":null,"userIntent":null,"sessionId":"s","sessionDuration":1.5,"idleTimeout":false,
		"activities":{"filesModified":[],"testsRun":[],"commandsExecuted":[]},"testsPass":null,"buildSuccess":null,
		"errorsEncountered":0,"agentVersion":null,"conversationTurns":1,"modelUsed":null,"status":"completed"}}`,
}

func compact(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(s), &m))
	return m
}

func TestValidLines(t *testing.T) {
	for format, line := range valid {
		b, err := json.Marshal(compact(t, line))
		require.NoError(t, err)
		assert.NoError(t, Validate(format, b), format)
	}
}

func TestSchemasHoldTheSeedsRules(t *testing.T) {
	for _, tc := range []struct {
		format, name string
		change       func(m map[string]any)
	}{
		{"agtrace_v1", "section 4: a tool_result's role is tool", func(m map[string]any) { m["role"] = "assistant" }},
		{"agtrace_v1", "section 3.1: a user_message has no parent", func(m map[string]any) { m["event_type"], m["role"] = "user_message", "user" }},
		{"agtrace_v1", "every field is present", func(m map[string]any) { delete(m, "tokens_tool") }},
		{"agtrace_v1", "the schema version", func(m map[string]any) { m["schema_version"] = "agtrace.event.v2" }},
		{"agtrace_v1", "ts is RFC 3339", func(m map[string]any) { m["ts"] = "yesterday" }},
		{"agtrace_v1", "the source is a registered agent", func(m map[string]any) { m["source"] = "not_an_agent" }},
		{"agtrace_v1", "a tool_call has its id", func(m map[string]any) { m["event_type"], m["role"], m["tool_call_id"] = "tool_call", "assistant", nil }},
		{"universal", "raw is always present", func(m map[string]any) { delete(m, "raw") }},
		{"universal", "synthetic mirrors source", func(m map[string]any) { m["synthetic"] = true }},
		{"universal", "item kinds", func(m map[string]any) { m["data"].(map[string]any)["item"].(map[string]any)["kind"] = "tool" }},
		{"universal", "file_ref actions", func(m map[string]any) {
			m["data"].(map[string]any)["item"].(map[string]any)["content"].([]any)[1].(map[string]any)["action"] = "delete"
		}},
		{"universal", "item.started is in progress", func(m map[string]any) { m["type"], m["source"], m["synthetic"] = "item.started", "daemon", true }},
		{"agent_manager", "ids are UUIDs", func(m map[string]any) { m["runId"] = "run-1" }},
		{"agent_manager", "a metric has its cost", func(m map[string]any) { delete(m["data"].(map[string]any), "totalCostUsd") }},
		{"agent_manager", "event types", func(m map[string]any) { m["eventType"] = "cost" }},
		{"canonical_task", "status values", func(m map[string]any) { m["metadata"].(map[string]any)["status"] = "done" }},
		{"canonical_task", "idleTimeout means abandoned", func(m map[string]any) { m["metadata"].(map[string]any)["idleTimeout"] = true }},
		{"canonical_task", "change types", func(m map[string]any) {
			m["metadata"].(map[string]any)["activities"].(map[string]any)["filesModified"] = []any{
				map[string]any{"path": "a", "changeType": "renamed", "linesAdded": 1, "linesRemoved": 0, "editCount": 1},
			}
		}},
	} {
		t.Run(tc.format+"/"+tc.name, func(t *testing.T) {
			m := compact(t, valid[tc.format])
			tc.change(m)
			b, err := json.Marshal(m)
			require.NoError(t, err)
			assert.Error(t, Validate(tc.format, b))
		})
	}
}

func TestValidateLines(t *testing.T) {
	n, err := ValidateLines("agent_manager", nil)
	assert.NoError(t, err)
	assert.Zero(t, n)
	line, err := json.Marshal(compact(t, valid["agent_manager"]))
	require.NoError(t, err)
	doc := append(append(append([]byte{}, line...), '\n'), []byte("{}\n")...)
	n, err = ValidateLines("agent_manager", doc)
	assert.ErrorContains(t, err, "line 2")
	assert.Equal(t, 2, n)
	_, err = ValidateLines("otlp", line)
	assert.ErrorContains(t, err, `no schema for format "otlp"`)
}
