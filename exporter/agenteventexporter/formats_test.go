// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agenteventexporter

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// exportEvents writes events with cfg and returns the session file's lines.
// The events are numbered (Sequence) in the order given, as the receiver
// numbers what it reads: the tests build them in another order at times, and
// an event numbered below one written before it is taken for a delivery
// again.
func exportEvents(t *testing.T, cfg *Config, events ...agentevent.Event) []map[string]any {
	t.Helper()
	events = slices.Clone(events)
	for i := range events {
		events[i].Sequence = int64(i + 1)
	}
	files := exportLogs(t, cfg, []plog.Logs{logsOf(events...)})
	requireSchema(t, cfg.Format, files)
	require.Len(t, files, 1)
	for _, b := range files {
		return decodeLines(t, b)
	}
	return nil
}

func ofType(lines []map[string]any, key, typ string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l[key] == typ {
			out = append(out, l)
		}
	}
	return out
}

func data(l map[string]any) map[string]any { return l["data"].(map[string]any) }

// TestContentIsOffByDefault: without include_content no format writes the
// text the events carry (prompts, answers, reasoning, tool input/output),
// whatever the receiver kept.
func TestContentIsOffByDefault(t *testing.T) {
	dirs := claudeCases(t, "events.yaml")
	for _, format := range []Format{FormatAgtraceV1, FormatUniversal, FormatAgentManager} {
		for _, dir := range dirs {
			logs, err := golden.ReadLogs(filepath.Join(dir, "events.yaml"))
			require.NoError(t, err)
			events, _ := agentevent.DecodeLogs(logs)
			files := exportLogs(t, testConfig(format, t.TempDir()), []plog.Logs{logs})
			requireSchema(t, format, files)
			var all strings.Builder
			for _, b := range files {
				all.Write(b)
			}
			assert.NotContains(t, all.String(), agentevent.ContentAttrPrefix, "%s %s: content attributes written without include_content", format, filepath.Base(dir))
			assert.NotContains(t, all.String(), `"diff"`, "%s %s: a file diff written without include_content", format, filepath.Base(dir))
			for _, ev := range events {
				// Text of some length that is not also an always-on fact
				// (a file path, a command line).
				if len(ev.Text) < 24 || isFact(ev) {
					continue
				}
				text, err := marshal(ev.Text)
				require.NoError(t, err)
				assert.NotContains(t, all.String(), string(text), "%s %s: %s text written without include_content", format, filepath.Base(dir), ev.Type)
			}
		}
	}
}

// isFact reports whether an event's text is also one of its always-on facts.
func isFact(ev agentevent.Event) bool {
	return ev.Text == ev.FilePath || ev.Text == attrString(&ev, agentevent.AttrToolCommand)
}

// TestUniversalWithoutContent: messages have no text part and no delta; the
// item lifecycle, tool names, files and errors are still there.
func TestUniversalWithoutContent(t *testing.T) {
	s := newTestSession("55555555-0000-4000-8000-000000000005")
	call := s.call("c1", "r1", "toolu_1", "Read", `{"file_path":"/src/a.go"}`, 1)
	call.FilePath, call.FileOp = "/src/a.go", agentevent.FileRead
	lines := exportEvents(t, testConfig(FormatUniversal, t.TempDir()),
		s.userPrompt("p1", "secret prompt", 0), call, s.result("t1", call, "secret file content", 2), s.answer("a1", "r2", "secret answer", 3))
	assert.Empty(t, ofType(lines, "type", "item.delta"))
	for _, l := range ofType(lines, "type", "item.completed") {
		item := data(l)["item"].(map[string]any)
		for _, p := range item["content"].([]any) {
			part := p.(map[string]any)
			assert.NotEqual(t, "text", part["type"], "text part without content")
			switch part["type"] {
			case "tool_call":
				assert.Equal(t, "Read", part["name"])
				assert.Empty(t, part["arguments"])
			case "tool_result":
				assert.Empty(t, part["output"])
			case "file_ref":
				assert.Equal(t, "/src/a.go", part["path"])
			}
		}
	}
}

// TestUniversalMapping: parents, deltas, lifecycle sources and a failed
// tool with its status parts.
func TestUniversalMapping(t *testing.T) {
	s := newTestSession("66666666-0000-4000-8000-000000000006")
	answer := s.answer("a1", "r1", "Running the tests.", 1)
	call := s.call("c1", "r1", "toolu_1", "Bash", `{"command":"go test ./..."}`, 1)
	call.Attributes = map[string]any{agentevent.AttrToolCommand: "go test ./..."}
	result := s.result("t1", call, "FAIL", 2)
	result.ToolStatus, result.ErrorType, result.ToolExitCode = agentevent.ToolError, "exit_code", agentevent.Int(1)
	result.Attributes = map[string]any{agentevent.AttrTestRunner: "go", agentevent.AttrTestRun: int64(3), agentevent.AttrTestPassed: int64(2), agentevent.AttrTestFailed: int64(1)}
	cfg := testConfig(FormatUniversal, t.TempDir())
	cfg.IncludeContent = true
	lines := exportEvents(t, cfg, s.userPrompt("p1", "run the tests", 0), answer, call, result)

	types := []string{}
	for _, l := range lines {
		types = append(types, l["type"].(string))
	}
	assert.Equal(t, []string{
		"session.started",
		"item.started", "item.delta", "item.completed", // prompt
		"item.started", "item.delta", "item.completed", // answer
		"item.started", "item.completed", // tool call
		"item.started", "item.completed", // tool result
		"session.ended",
	}, types)
	for _, l := range lines {
		synthetic := l["type"] != "item.completed"
		assert.Equal(t, synthetic, l["synthetic"], l["type"])
	}
	completed := ofType(lines, "type", "item.completed")
	answerItem := data(completed[1])["item"].(map[string]any)
	callItem := data(completed[2])["item"].(map[string]any)
	resultItem := data(completed[3])["item"].(map[string]any)
	assert.Equal(t, answerItem["item_id"], callItem["parent_id"], "a tool call points to its response's message")
	assert.Equal(t, answerItem["item_id"], resultItem["parent_id"], "so does its result")
	assert.Equal(t, "failed", resultItem["status"])
	assert.Equal(t, []any{
		map[string]any{"type": "tool_result", "call_id": "toolu_1", "output": "FAIL"},
		map[string]any{"type": "status", "label": "tests failed", "detail": "go: 2 of 3 passed"},
		map[string]any{"type": "status", "label": "exit_code", "detail": "exit code 1"},
	}, resultItem["content"])
	assert.Equal(t, "Running the tests.", data(ofType(lines, "type", "item.delta")[1])["delta"])
	assert.Equal(t, "66666666-0000-4000-8000-000000000006", lines[0]["native_session_id"])
}

// TestUniversalImage: reading an image file gives an image part.
func TestUniversalImage(t *testing.T) {
	s := newTestSession("eeeeeeee-0000-4000-8000-00000000000e")
	call := s.call("c1", "r1", "toolu_1", "Read", `{"file_path":"/tmp/Screen Shot.PNG"}`, 1)
	call.FilePath, call.FileOp = "/tmp/Screen Shot.PNG", agentevent.FileRead
	lines := exportEvents(t, testConfig(FormatUniversal, t.TempDir()), s.userPrompt("p1", "look", 0), call, s.result("t1", call, "[image]", 2))
	item := data(ofType(lines, "type", "item.completed")[2])["item"].(map[string]any)
	assert.Equal(t, []any{
		map[string]any{"type": "tool_result", "call_id": "toolu_1", "output": ""},
		map[string]any{"type": "file_ref", "path": "/tmp/Screen Shot.PNG", "action": "read"},
		map[string]any{"type": "image", "path": "/tmp/Screen Shot.PNG", "mime": "image/png"},
	}, item["content"])
}

// TestUniversalQuestions: Claude Code's AskUserQuestion becomes
// question.requested / question.resolved; ExitPlanMode asks to approve a
// plan; a refused question is rejected, not a permission denial.
func TestUniversalQuestions(t *testing.T) {
	s := newTestSession("77777777-0000-4000-8000-000000000007")
	ask := s.call("c1", "r1", "toolu_q1", "AskUserQuestion",
		`{"questions":[{"question":"Which key combo?","header":"Keys","options":[{"label":"Ctrl+M","description":"M for model"},{"label":"Alt+M","description":"fewer conflicts"}],"multiSelect":false}]}`, 1)
	answer := s.result("t1", ask, `User has answered your questions: "Which key combo?"="Ctrl+M".`, 2)
	plan := s.call("c2", "r2", "toolu_q2", "ExitPlanMode", `{"plan":"1. Add the flag\n2. Test it"}`, 3)
	refused := s.result("t2", plan, "The user doesn't want to proceed with this tool use.", 4)
	refused.ToolStatus, refused.ErrorType = agentevent.ToolError, "rejected"

	cfg := testConfig(FormatUniversal, t.TempDir())
	cfg.IncludeContent = true
	lines := exportEvents(t, cfg, s.userPrompt("p1", "add a keybinding", 0), ask, answer, plan, refused)
	requested := ofType(lines, "type", "question.requested")
	resolved := ofType(lines, "type", "question.resolved")
	require.Len(t, requested, 2)
	require.Len(t, resolved, 2)
	assert.Equal(t, map[string]any{"question_id": "toolu_q1", "prompt": "Which key combo?", "options": []any{"Ctrl+M", "Alt+M"}, "status": "requested"}, data(requested[0]))
	assert.Equal(t, map[string]any{
		"question_id": "toolu_q1", "prompt": "Which key combo?", "options": []any{"Ctrl+M", "Alt+M"}, "status": "answered",
		"response": `User has answered your questions: "Which key combo?"="Ctrl+M".`,
	}, data(resolved[0]))
	assert.Equal(t, "1. Add the flag\n2. Test it", data(requested[1])["prompt"])
	assert.Equal(t, "rejected", data(resolved[1])["status"])
	assert.Empty(t, ofType(lines, "type", "permission.resolved"), "a refused question is not a permission")

	// Without content: the questions are still there, without their text.
	lines = exportEvents(t, testConfig(FormatUniversal, t.TempDir()), s.userPrompt("p2", "again", 5), ask, answer)
	requested = ofType(lines, "type", "question.requested")
	require.Len(t, requested, 1)
	assert.Equal(t, map[string]any{"question_id": "toolu_q1", "prompt": "", "options": []any{}, "status": "requested"}, data(requested[0]))
	assert.NotContains(t, data(ofType(lines, "type", "question.resolved")[0]), "response")
}

// TestUniversalPermissionDenied: a refused tool call is a permission
// request denied.
func TestUniversalPermissionDenied(t *testing.T) {
	s := newTestSession("88888888-0000-4000-8000-000000000008")
	call := s.call("c1", "r1", "toolu_1", "Bash", `{"command":"git push"}`, 1)
	call.Attributes = map[string]any{agentevent.AttrToolCommand: "git push"}
	result := s.result("t1", call, "The user doesn't want to take this action right now.", 2)
	result.ToolStatus, result.ErrorType = agentevent.ToolError, "permission_denied"
	result.Attributes = call.Attributes
	lines := exportEvents(t, testConfig(FormatUniversal, t.TempDir()), s.userPrompt("p1", "push", 0), call, result)
	req := ofType(lines, "type", "permission.requested")
	res := ofType(lines, "type", "permission.resolved")
	require.Len(t, req, 1)
	require.Len(t, res, 1)
	assert.Equal(t, "requested", data(req[0])["status"])
	assert.Equal(t, map[string]any{
		"permission_id": "toolu_1", "action": "Bash", "status": "denied",
		"metadata": map[string]any{"tool_name": "Bash", "call_id": "toolu_1", "reason": "permission_denied", "command": "git push"},
	}, data(res[0]))
}

// TestIncludeRaw: the vendor record goes to raw (agtrace_v1, universal)
// only with include_raw; otherwise raw is null.
func TestIncludeRaw(t *testing.T) {
	s := newTestSession("99999999-0000-4000-8000-000000000009")
	prompt := s.userPrompt("p1", "hi", 0)
	prompt.Raw = []byte(`{"type":"user","message":{"role":"user","content":"hi"}}`)
	broken := s.event(agentevent.TypeLog, "x1", 1)
	broken.Unparsed, broken.Raw, broken.Role = "malformed_json", []byte(`{"type":"us`), agentevent.RoleSystem
	for _, format := range []Format{FormatAgtraceV1, FormatUniversal} {
		cfg := testConfig(format, t.TempDir())
		for _, l := range exportEvents(t, cfg, prompt, broken) {
			assert.Nil(t, l["raw"], "%s without include_raw", format)
		}
		cfg = testConfig(format, t.TempDir())
		cfg.IncludeRaw = true
		lines := exportEvents(t, cfg, prompt, broken)
		var raws []any
		for _, l := range lines {
			if l["raw"] != nil {
				raws = append(raws, l["raw"])
			}
		}
		assert.Contains(t, raws, map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": "hi"}}, format)
		assert.Contains(t, raws, `{"type":"us`, "%s: a record that is not JSON is kept as a string", format)
	}
}

// TestAgentManagerMapping: envelope, payloads and the run status.
func TestAgentManagerMapping(t *testing.T) {
	s := newTestSession("not-a-uuid")
	call := s.call("c1", "r1", "toolu_1", "Write", `{"file_path":"/tmp/a.txt","content":"x"}`, 1)
	call.FilePath = "/tmp/a.txt"
	failed := s.result("t1", call, "", 2)
	failed.ToolStatus, failed.ErrorType, failed.ToolExitCode = agentevent.ToolError, "exit_code", agentevent.Int(2)
	apiErr := s.event(agentevent.TypeLog, "e1", 3)
	apiErr.ErrorType, apiErr.Status, apiErr.Role = "api_error", "error", agentevent.RoleSystem
	lines := exportEvents(t, testConfig(FormatAgentManager, t.TempDir()), s.userPrompt("p1", "write it", 0), call, failed, apiErr, s.userPrompt("p2", "again", 4))

	var types []string
	for _, l := range lines {
		types = append(types, l["eventType"].(string))
		assert.Equal(t, lines[0]["runId"], l["runId"])
	}
	assert.Equal(t, []string{"status", "message", "tool_call", "tool_result", "error", "status", "status", "message", "status"}, types)
	assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-`, lines[0]["runId"], "a run id made from a session id that is no UUID")
	assert.Equal(t, map[string]any{"toolName": "Write", "input": map[string]any{"file_path": "/tmp/a.txt"}}, data(lines[2]),
		"without content the input holds the always-on facts")
	assert.Equal(t, map[string]any{"toolName": "Write", "toolCallId": "toolu_1", "error": "exit_code, exit code 2", "success": false}, data(lines[3]))
	assert.Equal(t, map[string]any{"code": "api_error", "message": "api_error", "retryable": false}, data(lines[4]))
	assert.Equal(t, map[string]any{"oldStatus": "running", "newStatus": "failed", "reason": "api_error"}, data(lines[5]))
	assert.Equal(t, map[string]any{"oldStatus": "failed", "newStatus": "running", "reason": "new prompt"}, data(lines[6]))
	assert.Equal(t, map[string]any{"role": "user", "content": ""}, data(lines[7]))
	assert.Equal(t, "complete", data(lines[8])["newStatus"])
}

// TestAgentManagerMetric: tokens are split the agent-manager way (input
// without the cache), with the cost when the agent reported one.
func TestAgentManagerMetric(t *testing.T) {
	s := newTestSession("aaaaaaaa-0000-4000-8000-00000000000a")
	a := s.answer("a1", "r1", "ok", 1)
	a.CostUSD = agentevent.Float(0.0125)
	lines := exportEvents(t, testConfig(FormatAgentManager, t.TempDir()), a)
	m := ofType(lines, "eventType", "metric")
	require.Len(t, m, 1)
	assert.Equal(t, map[string]any{
		"inputTokens": 50.0, "outputTokens": 80.0, "cacheReadTokens": 1000.0, "cacheCreationTokens": 150.0,
		"totalCostUsd": 0.0125, "model": "claude-opus-4-7",
	}, data(m[0]))
}

// TestAgtraceToolStatus: a tool_call line shows the call's status when it is
// written — in_progress, or the vendor's own when the call record has one —
// and its tool_result line the outcome; a call never answered stays
// in_progress.
func TestAgtraceToolStatus(t *testing.T) {
	s := newTestSession("77777777-0000-4000-8000-000000000007")
	answered := s.call("c1", "r1", "toolu_1", "Bash", `{"command":"false"}`, 1)
	failed := s.result("t1", answered, "exit 1", 2)
	failed.ToolStatus, failed.ErrorType = agentevent.ToolError, "exit_code"
	unanswered := s.call("c2", "r2", "toolu_2", "Read", `{"file_path":"/src/a.go"}`, 3)
	vendor := s.call("c3", "r2", "toolu_3", "Read", `{"file_path":"/src/b.go"}`, 3)
	vendor.ToolStatus = agentevent.ToolUnknown // a status on the call record, kept as written
	events := []agentevent.Event{s.userPrompt("p1", "look", 0), answered, failed, unanswered, vendor}
	lines := exportEvents(t, testConfig(FormatAgtraceV1, t.TempDir()), events...)

	got := map[string]any{}
	for _, l := range lines {
		got[l["event_id"].(string)] = l["tool_status"]
	}
	assert.Equal(t, map[string]any{
		"p1": nil,
		"c1": "in_progress", // written before its result
		"t1": "error",
		"c2": "in_progress", // never answered
		"c3": "unknown",
	}, got)
}
