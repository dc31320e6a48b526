// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

const testSession = "11111111-2222-4333-8444-555555555555"

// feeder hands records to a parser the way the receiver does: consecutive
// lines with their 1-based number and byte offset.
type feeder struct {
	p      *Parser
	lineNo int64
	offset int64
}

func newFeeder(path string) *feeder { return &feeder{p: NewParser(path)} }

func (f *feeder) feed(lines ...string) []agentevent.Event {
	var out []agentevent.Event
	for _, l := range lines {
		f.lineNo++
		out = append(out, f.p.Parse([]byte(l), f.lineNo, f.offset)...)
		f.offset += int64(len(l)) + 1
	}
	return out
}

// userRow is a user row, uuid u1, at 10:00.
func userRow(content string) string {
	return fmt.Sprintf(`{"parentUuid":null,"isSidechain":false,"cwd":"/w","sessionId":%q,"version":"2.1.50","gitBranch":"main","type":"user","message":{"role":"user","content":%s},"uuid":%q,"timestamp":%q}`,
		testSession, content, "u1", "2026-01-01T10:00:00.000Z")
}

// resultRow is a user row holding one tool result, uuid r1.
func resultRow(ts, toolID, content string, isError bool, toolUseResult string) string {
	tur := ""
	if toolUseResult != "" {
		tur = `,"toolUseResult":` + toolUseResult
	}
	return fmt.Sprintf(`{"isSidechain":false,"cwd":"/w","sessionId":%q,"version":"2.1.50","type":"user","message":{"role":"user","content":[{"tool_use_id":%q,"type":"tool_result","content":%s,"is_error":%t}]},"uuid":%q,"timestamp":%q%s}`,
		testSession, toolID, content, isError, "r1", ts, tur)
}

func assistantRow(uuid, ts, msgID, block string, out int64, stop string) string {
	sr := "null"
	if stop != "" {
		sr = fmt.Sprintf("%q", stop)
	}
	return fmt.Sprintf(`{"isSidechain":false,"cwd":"/w","sessionId":%q,"version":"2.1.50","type":"assistant","message":{"id":%q,"type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[%s],"stop_reason":%s,"usage":{"input_tokens":5,"cache_creation_input_tokens":300,"cache_read_input_tokens":9000,"output_tokens":%d}},"requestId":"req_1","uuid":%q,"timestamp":%q}`,
		testSession, msgID, block, sr, out, uuid, ts)
}

func toolUse(id, name, input string) string {
	return fmt.Sprintf(`{"type":"tool_use","id":%q,"name":%q,"input":%s}`, id, name, input)
}

func TestStreamingUsageIncrementsSumToMax(t *testing.T) {
	// One response streamed as four rows; output_tokens grows 8, 8, 8, 322
	// (≤2.1.6x writes partial counts on early rows).
	f := newFeeder(testSession + ".jsonl")
	f.feed(userRow(`"go"`))
	events := f.feed(
		assistantRow("a1", "2026-01-01T10:00:01.000Z", "msg_A", `{"type":"thinking","thinking":"hm","signature":"x"}`, 8, ""),
		assistantRow("a2", "2026-01-01T10:00:02.000Z", "msg_A", `{"type":"text","text":"ok"}`, 8, ""),
		assistantRow("a3", "2026-01-01T10:00:03.000Z", "msg_A", toolUse("t1", "Read", `{"file_path":"/w/a.go"}`), 8, ""),
		assistantRow("a4", "2026-01-01T10:00:04.000Z", "msg_A", toolUse("t2", "Read", `{"file_path":"/w/b.go"}`), 322, "tool_use"),
	)
	require.Len(t, events, 4)

	type tokens struct{ in, read, create, out, total *int64 }
	got := make([]tokens, len(events))
	for i, ev := range events {
		got[i] = tokens{ev.TokensInput, ev.TokensCached, ev.TokensCacheCreation, ev.TokensOutput, ev.TokensTotal}
		assert.Equal(t, "msg_A", ev.ResponseID)
	}
	i := agentevent.Int
	assert.Equal(t, []tokens{
		{}, // held: the response goes on
		{},
		{},
		{i(9305), i(9000), i(300), i(322), i(9627)}, // its last row (stop_reason): the final usage, once
	}, got)
	assert.Equal(t, tokenTotals{Input: 5, Output: 322, CacheRead: 9000, CacheCreation: 300}, sumTokens(events))
	assert.Equal(t, "tool_use", events[3].FinishReason)
	assert.Empty(t, events[0].FinishReason)

	// A row repeating a smaller count (or the same) adds nothing.
	more := f.feed(assistantRow("a5", "2026-01-01T10:00:05.000Z", "msg_A", `{"type":"text","text":"again"}`, 100, ""))
	require.Len(t, more, 1)
	assert.Nil(t, more[0].TokensOutput)
}

func TestUsageOfUnmappableRowIsKept(t *testing.T) {
	// A row whose only block is an image still carries the response's usage.
	f := newFeeder(testSession + ".jsonl")
	events := f.feed(assistantRow("a1", "2026-01-01T10:00:01.000Z", "msg_I",
		`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}`, 40, "end_turn"))
	require.Len(t, events, 1)
	assert.Equal(t, agentevent.TypeAssistantMessage, events[0].Type)
	assert.Equal(t, int64(40), agentevent.Value(events[0].TokensOutput))
}

func TestToolLatency(t *testing.T) {
	tests := []struct {
		name      string
		callTS    string
		resultTS  string
		want      *int64
		wantTools int
	}{
		{"milliseconds", "2026-01-01T10:00:01.250Z", "2026-01-01T10:00:04.000Z", agentevent.Int(2750), 1},
		{"same instant", "2026-01-01T10:00:01.000Z", "2026-01-01T10:00:01.000Z", agentevent.Int(0), 1},
		{"result stamped before the call", "2026-01-01T10:00:05.000Z", "2026-01-01T10:00:04.000Z", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFeeder(testSession + ".jsonl")
			f.feed(userRow(`"list"`),
				assistantRow("a1", tt.callTS, "msg_A", toolUse("t1", "Glob", `{"pattern":"*.go"}`), 20, "tool_use"))
			res := f.feed(resultRow(tt.resultTS, "t1", `"a.go"`, false, `{"filenames":["a.go"],"durationMs":3,"numFiles":1,"truncated":false}`))
			require.Len(t, res, 1)
			assert.Equal(t, tt.want, res[0].ToolLatencyMs)
			assert.Equal(t, "Glob", res[0].ToolName)
			assert.Equal(t, agentevent.ToolSuccess, res[0].ToolStatus)
		})
	}
	t.Run("unknown call", func(t *testing.T) {
		f := newFeeder(testSession + ".jsonl")
		res := f.feed(resultRow("2026-01-01T10:00:04.000Z", "t-missing", `"x"`, false, ""))
		require.Len(t, res, 1)
		assert.Nil(t, res[0].ToolLatencyMs)
		assert.Empty(t, res[0].ToolName)
		assert.Equal(t, "t-missing", res[0].ToolCallID)
	})
}

func TestToolOutcomes(t *testing.T) {
	tests := []struct {
		name      string
		tool      string
		content   string // tool_result content (JSON)
		isError   bool
		tur       string // toolUseResult (JSON), "" for none
		status    agentevent.ToolStatus
		exitCode  *int64
		errorType string
	}{
		{"bash success", "Bash", `"ok"`, false, `{"stdout":"ok","stderr":"","interrupted":false,"isImage":false}`, agentevent.ToolSuccess, agentevent.Int(0), ""},
		{"bash exit code in content", "Bash", `"Exit code 2\nmain.go:3: undefined: x"`, true, `"Error: Exit code 2\nmain.go:3: undefined: x"`, agentevent.ToolError, agentevent.Int(2), agentevent.ErrorTypeExitCode},
		{"bash exit code only in toolUseResult", "Bash", `"command failed"`, true, `"Error: Exit code 127\nbash: foo: command not found"`, agentevent.ToolError, agentevent.Int(127), agentevent.ErrorTypeExitCode},
		{"bash exit code in content blocks", "Bash", `[{"type":"text","text":"Exit code 1\nFAIL"}]`, true, "", agentevent.ToolError, agentevent.Int(1), agentevent.ErrorTypeExitCode},
		{"bash error without code", "Bash", `"error: target shim binary not found"`, true, `"Error: error: target shim binary not found"`, agentevent.ToolError, nil, agentevent.ErrorTypeTool},
		{"bash interrupted", "Bash", `"[Request interrupted by user for tool use]"`, true, `{"stdout":"","stderr":"","interrupted":true,"isImage":false}`, agentevent.ToolError, nil, agentevent.ErrorTypeInterrupted},
		{"bash interrupted flag only", "Bash", `"partial output"`, false, `{"stdout":"partial output","stderr":"","interrupted":true,"isImage":false}`, agentevent.ToolError, nil, agentevent.ErrorTypeInterrupted},
		{"bash non-zero judged fine", "Bash", `"No matches found"`, false, `{"stdout":"","stderr":"","interrupted":false,"isImage":false,"returnCodeInterpretation":"No matches found"}`, agentevent.ToolSuccess, nil, ""},
		{"bash in background", "Bash", `"Command running in background with ID: b1"`, false, `{"stdout":"","stderr":"","interrupted":false,"isImage":false,"backgroundTaskId":"b1"}`, agentevent.ToolSuccess, nil, ""},
		{"rejected", "Write", `"The user doesn't want to proceed with this tool use. The tool use was rejected."`, true, `"Error: The user doesn't want to proceed with this tool use."`, agentevent.ToolError, nil, agentevent.ErrorTypeRejected},
		{"rejected, take this action", "Bash", `"The user doesn't want to take this action right now."`, true, `"The user doesn't want to take this action right now."`, agentevent.ToolError, nil, agentevent.ErrorTypeRejected},
		{"permission not granted", "Write", `"Claude requested permissions to write to /w/a.md, but you haven't granted it yet."`, true, `"Error: Claude requested permissions to write to /w/a.md, but you haven't granted it yet."`, agentevent.ToolError, nil, agentevent.ErrorTypePermissionDenied},
		{"read error", "Read", `"File content (14893 tokens) exceeds maximum allowed tokens (10000)."`, true, `"Error: File content (14893 tokens) exceeds maximum allowed tokens (10000)."`, agentevent.ToolError, nil, agentevent.ErrorTypeTool},
		{"mcp list result", "mcp__gh__get_issue", `[{"type":"text","text":"{\"number\":1}"}]`, false, `[{"type":"text","text":"{\"number\":1}"}]`, agentevent.ToolSuccess, nil, ""},
		{"mcp error list", "mcp__gh__get_issue", `[{"type":"text","text":"Not Found"}]`, true, `[{"type":"text","text":"Error: Not Found"}]`, agentevent.ToolError, nil, agentevent.ErrorTypeTool},
		{"no toolUseResult", "Glob", `"No files found"`, false, "", agentevent.ToolSuccess, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFeeder(testSession + ".jsonl")
			f.feed(userRow(`"do it"`),
				assistantRow("a1", "2026-01-01T10:00:01.000Z", "msg_A", toolUse("t1", tt.tool, `{"command":"x"}`), 20, "tool_use"))
			res := f.feed(resultRow("2026-01-01T10:00:02.000Z", "t1", tt.content, tt.isError, tt.tur))
			require.Len(t, res, 1)
			ev := res[0]
			assert.Equal(t, agentevent.TypeToolResult, ev.Type)
			assert.Equal(t, agentevent.RoleTool, ev.Role)
			assert.Equal(t, tt.tool, ev.ToolName)
			assert.Equal(t, tt.status, ev.ToolStatus)
			assert.Equal(t, tt.exitCode, ev.ToolExitCode)
			assert.Equal(t, tt.errorType, ev.ErrorType)
			assert.Equal(t, "u1", ev.ParentEventID)
		})
	}
}

func TestExitCodePattern(t *testing.T) {
	tests := []struct {
		text string
		code int64
		ok   bool
	}{
		{"Exit code 2", 2, true},
		{"Exit code 1\nsome output", 1, true},
		{"Error: Exit code 137\nKilled", 137, true},
		{"  \nExit code 3", 3, true},
		{"Exit code -1", -1, true},
		{"the tests passed. Exit code 2 was not expected", 0, false},
		{"exit code 2", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		code, ok := parseExitCode(tt.text)
		assert.Equalf(t, tt.ok, ok, "%q", tt.text)
		assert.Equalf(t, tt.code, code, "%q", tt.text)
	}
}

func TestToolCallFields(t *testing.T) {
	tests := []struct {
		tool, input string
		path        string
		op          agentevent.FileOp
		lang        string
		channel     agentevent.Channel
		subagent    string
	}{
		{"Read", `{"file_path":"/w/main.go"}`, "/w/main.go", agentevent.FileRead, "go", agentevent.ChannelEditor, ""},
		{"Write", `{"file_path":"C:\\w\\App.TSX","content":"x"}`, `C:\w\App.TSX`, agentevent.FileWrite, "typescript", agentevent.ChannelEditor, ""},
		{"Edit", `{"file_path":"/w/Makefile"}`, "/w/Makefile", agentevent.FileModify, "makefile", agentevent.ChannelEditor, ""},
		{"MultiEdit", `{"file_path":"/w/x.py","edits":[]}`, "/w/x.py", agentevent.FileModify, "python", agentevent.ChannelEditor, ""},
		{"NotebookEdit", `{"notebook_path":"/w/n.ipynb","new_source":""}`, "/w/n.ipynb", agentevent.FileModify, "python", agentevent.ChannelEditor, ""},
		{"Grep", `{"pattern":"x","path":"/w/src"}`, "/w/src", "", "", agentevent.ChannelChat, ""},
		{"Bash", `{"command":"ls"}`, "", "", "", agentevent.ChannelTerminal, ""},
		{"Task", `{"description":"d","prompt":"p","subagent_type":"general-purpose"}`, "", "", "", agentevent.ChannelChat, "general-purpose"},
		{"Agent", `{"description":"d","prompt":"p","subagent_type":"Explore"}`, "", "", "", agentevent.ChannelChat, "Explore"},
		{"Write", `{"file_path":"/w/.env"}`, "/w/.env", agentevent.FileWrite, "", agentevent.ChannelEditor, ""},
	}
	for _, tt := range tests {
		t.Run(tt.tool+" "+tt.path, func(t *testing.T) {
			f := newFeeder(testSession + ".jsonl")
			f.feed(userRow(`"x"`))
			evs := f.feed(assistantRow("a1", "2026-01-01T10:00:01.000Z", "msg_A", toolUse("t1", tt.tool, tt.input), 9, "tool_use"))
			require.Len(t, evs, 1)
			ev := evs[0]
			assert.Equal(t, agentevent.TypeToolCall, ev.Type)
			assert.Equal(t, "t1", ev.ToolCallID)
			assert.Equal(t, tt.tool, ev.ToolName)
			assert.Equal(t, tt.input, ev.Text)
			assert.Equal(t, tt.path, ev.FilePath)
			assert.Equal(t, tt.op, ev.FileOp)
			assert.Equal(t, tt.lang, ev.FileLanguage)
			assert.Equal(t, tt.channel, ev.Channel)
			assert.Equal(t, tt.subagent, ev.SubagentType)
			assert.Equal(t, "anthropic", ev.Provider)
			assert.Equal(t, "claude-sonnet-4-5", ev.Model)
		})
	}
}

func TestUserRowKinds(t *testing.T) {
	tests := []struct {
		name    string
		row     string
		typ     agentevent.EventType
		role    agentevent.Role
		text    string
		status  string
		command string
	}{
		{"string prompt", userRow(`"fix the bug"`), agentevent.TypeUserMessage, agentevent.RoleUser, "fix the bug", "", ""},
		{"text blocks with IDE context", userRow(`[{"type":"text","text":"<ide_opened_file>The user opened a.go</ide_opened_file>"},{"type":"text","text":"what does this do?"}]`), agentevent.TypeUserMessage, agentevent.RoleUser, "what does this do?", "", ""},
		{"slash command", userRow(`"<command-name>/review</command-name>\n<command-message>review</command-message>\n<command-args>PR 12</command-args>"`), agentevent.TypeUserMessage, agentevent.RoleUser, "/review PR 12", "", "/review"},
		{"local command output", userRow(`"<local-command-stdout>Goodbye!</local-command-stdout>"`), agentevent.TypeLog, agentevent.RoleCLI, "Goodbye!", "", ""},
		{"bash mode input", userRow(`"<bash-input>git status</bash-input>"`), agentevent.TypeLog, agentevent.RoleCLI, "git status", "", ""},
		{"interrupt", userRow(`[{"type":"text","text":"[Request interrupted by user]"}]`), agentevent.TypeLog, agentevent.RoleSystem, "[Request interrupted by user]", "interrupted", ""},
		{"interrupt for tool use", userRow(`"[Request interrupted by user for tool use]"`), agentevent.TypeLog, agentevent.RoleSystem, "[Request interrupted by user for tool use]", "interrupted", ""},
		{"meta", strings.Replace(userRow(`"Caveat: local commands below"`), `"type":"user"`, `"type":"user","isMeta":true`, 1), agentevent.TypeMeta, agentevent.RoleSystem, "Caveat: local commands below", "", ""},
		{"compact summary", strings.Replace(userRow(`"This session is being continued..."`), `"type":"user"`, `"type":"user","isCompactSummary":true`, 1), agentevent.TypeSessionSummary, agentevent.RoleAssistant, "This session is being continued...", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := newFeeder(testSession + ".jsonl").feed(tt.row)
			require.Len(t, evs, 1)
			ev := evs[0]
			assert.Equal(t, tt.typ, ev.Type)
			assert.Equal(t, tt.role, ev.Role)
			assert.Equal(t, tt.text, ev.Text)
			assert.Equal(t, tt.status, ev.Status)
			if tt.command != "" {
				assert.Equal(t, tt.command, ev.Attributes[agentevent.AttrCommandName])
			}
			assert.Equal(t, "u1", ev.EventID)
			assert.Empty(t, ev.Unparsed)
		})
	}
}

func TestAPIErrorIsNotAModelCall(t *testing.T) {
	row := `{"type":"assistant","sessionId":"` + testSession + `","uuid":"a1","timestamp":"2026-01-01T10:00:01.000Z","message":{"id":"c104bed6","model":"<synthetic>","role":"assistant","stop_reason":"stop_sequence","type":"message","usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},"content":[{"type":"text","text":"Prompt is too long"}]},"error":"invalid_request","isApiErrorMessage":true,"apiErrorStatus":400}`
	evs := newFeeder(testSession + ".jsonl").feed(row)
	require.Len(t, evs, 1)
	ev := evs[0]
	assert.Equal(t, agentevent.TypeLog, ev.Type)
	assert.Equal(t, agentevent.RoleSystem, ev.Role)
	assert.Equal(t, agentevent.ErrorTypeAPI, ev.ErrorType)
	assert.Equal(t, "error", ev.Status)
	assert.Equal(t, "Prompt is too long", ev.Text)
	assert.Empty(t, ev.Model)
	assert.Empty(t, ev.ResponseID)
	assert.Nil(t, ev.TokensInput)
	assert.Nil(t, ev.TokensOutput)
	assert.Equal(t, "invalid_request", ev.Attributes[agentevent.AttrAPIError])
	assert.Equal(t, int64(400), ev.Attributes[agentevent.AttrAPIStatusCode])
}

func TestUnparsedRecords(t *testing.T) {
	tests := []struct {
		name   string
		line   string
		reason string
	}{
		{"cut mid-write", `{"type":"assistant","message":{"id":"msg_1","content":[{"type":"te`, ReasonMalformedJSON},
		{"not JSON", `hello`, ReasonMalformedJSON},
		{"unknown type", `{"type":"hologram","sessionId":"` + testSession + `"}`, ReasonUnknownType},
		{"no type", `{"sessionId":"` + testSession + `","uuid":"x"}`, ReasonUnexpectedShape},
		{"not an object", `[1,2,3]`, ReasonUnexpectedShape},
		{"user without message", `{"type":"user","uuid":"x"}`, ReasonUnexpectedShape},
		{"content of a wrong type", `{"type":"user","uuid":"x","message":{"role":"user","content":42}}`, ReasonUnexpectedShape},
		{"assistant content of a wrong type", `{"type":"assistant","uuid":"x","message":{"id":"m","content":{"a":1}}}`, ReasonUnexpectedShape},
		{"field of a wrong type", `{"type":"user","uuid":"x","sessionId":7,"message":{"role":"user","content":"hi"}}`, ReasonUnexpectedShape},
		{"attachment not an object", `{"type":"attachment","uuid":"x","attachment":"file"}`, ReasonUnexpectedShape},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFeeder(filepath.Join("p", testSession+".jsonl"))
			f.feed(userRow(`"hi"`))
			evs := f.feed(tt.line)
			require.Len(t, evs, 1)
			ev := evs[0]
			assert.Equal(t, tt.reason, ev.Unparsed)
			assert.Equal(t, agentevent.TypeLog, ev.Type)
			assert.Equal(t, agentevent.RoleSystem, ev.Role)
			assert.Equal(t, []byte(tt.line), ev.Raw)
			assert.Equal(t, int64(2), ev.LogLine)
			assert.Equal(t, filepath.Join("p", testSession+".jsonl"), ev.LogFile)
			assert.Equal(t, testSession, ev.SessionID)
			assert.NotEmpty(t, ev.EventID)
			assert.Empty(t, agentevent.Validate(append([]agentevent.Event{{SchemaVersion: agentevent.SchemaVersion, EventID: "u1", SessionID: testSession, Type: agentevent.TypeUserMessage, Role: agentevent.RoleUser}}, ev)).Violations)
		})
	}
	t.Run("blank line", func(t *testing.T) {
		assert.Empty(t, newFeeder(testSession+".jsonl").feed("", "  \t"))
	})
}

func TestSkippedRecords(t *testing.T) {
	f := newFeeder(testSession + ".jsonl")
	evs := f.feed(
		`{"type":"queue-operation","operation":"enqueue","timestamp":"2026-01-01T10:00:00.000Z","sessionId":"`+testSession+`","content":"hi"}`,
		`{"type":"last-prompt","lastPrompt":"hi","sessionId":"`+testSession+`"}`,
		`{"parentUuid":"a","type":"progress","data":{"type":"hook_progress","hookEvent":"PreToolUse","hookName":"PreToolUse:Read","command":"callback"},"toolUseID":"t1","parentToolUseID":"t1","uuid":"p1","timestamp":"2026-01-01T10:00:00.000Z"}`,
		`{"parentUuid":"a","type":"progress","data":{"type":"agent_progress","message":{"type":"assistant"}},"toolUseID":"agent_msg_1","parentToolUseID":"t1","uuid":"p2","timestamp":"2026-01-01T10:00:00.000Z"}`,
	)
	assert.Empty(t, evs)
}

// TestFileLayouts checks what a file's path tells when its records do not:
// the session of a subagent file, the agent of every record in it.
func TestFileLayouts(t *testing.T) {
	summary := `{"type":"summary","summary":"Fix tests","leafUuid":"l1"}`
	tests := []struct {
		path      string
		session   string
		agent     string
		sidechain bool
	}{
		{filepath.Join("projects", "-w", testSession+".jsonl"), testSession, "", false},
		{filepath.Join("projects", "-w", testSession, "subagents", "agent-a1b2c3d4e5f607182.jsonl"), testSession, "a1b2c3d4e5f607182", true},
		{filepath.Join("projects", "-w", testSession, "subagents", "agent-acompact-0a1b2c.jsonl"), testSession, "acompact-0a1b2c", true},
		{filepath.Join("projects", "-w", "agent-0c4c3cf8.jsonl"), "", "0c4c3cf8", true},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			evs := newFeeder(tt.path).feed(summary)
			require.Len(t, evs, 1)
			ev := evs[0]
			assert.Equal(t, agentevent.TypeSessionSummary, ev.Type)
			assert.Equal(t, tt.session, ev.SessionID)
			assert.Equal(t, tt.agent, ev.AgentID)
			assert.Equal(t, tt.sidechain, ev.IsSidechain)
			assert.Equal(t, tt.path, ev.LogFile)
		})
	}
}

func TestReplayAfterRestoreIsDropped(t *testing.T) {
	lines := []string{
		userRow(`"go"`),
		assistantRow("a1", "2026-01-01T10:00:01.000Z", "msg_A", toolUse("t1", "Bash", `{"command":"make"}`), 50, "tool_use"),
		resultRow("2026-01-01T10:00:03.000Z", "t1", `"done"`, false, `{"stdout":"done","stderr":"","interrupted":false}`),
	}
	first := newFeeder(testSession + ".jsonl")
	before := first.feed(lines[:2]...)
	require.Len(t, before, 2)
	state, err := first.p.MarshalState()
	require.NoError(t, err)

	// After a restart the receiver may hand over records it had already
	// passed on: they yield nothing; the first new record continues.
	second := newFeeder(testSession + ".jsonl")
	require.NoError(t, second.p.UnmarshalState(state))
	assert.Empty(t, second.feed(lines[:2]...))
	after := second.feed(lines[2])
	require.Len(t, after, 1)
	assert.Equal(t, int64(3), after[0].Sequence)
	assert.Equal(t, "u1", after[0].ParentEventID)
	assert.Equal(t, "Bash", after[0].ToolName)
	assert.Equal(t, agentevent.Int(2000), after[0].ToolLatencyMs)
	assert.Equal(t, agentevent.Int(0), after[0].ToolExitCode)

	// A record at an offset already seen is dropped even without a restart.
	assert.Empty(t, first.p.Parse([]byte(lines[1]), 2, int64(len(lines[0])+1)))
}

func TestUnmarshalStateRejectsGarbage(t *testing.T) {
	p := NewParser(testSession + ".jsonl")
	require.Error(t, p.UnmarshalState([]byte("{not json")))
	require.Error(t, p.UnmarshalState([]byte(`{"v":99}`)))
	// The parser still works from scratch.
	evs := p.Parse([]byte(userRow(`"hi"`)), 1, 0)
	require.Len(t, evs, 1)
}

// TestStateRoundTripMidFile stops every golden case after every record,
// persists the state, restores it into a new parser that is handed the whole
// file again (replays dropped), and expects exactly the events of one
// uninterrupted parse.
func TestStateRoundTripMidFile(t *testing.T) {
	root, cases := goldenCases(t)
	for _, name := range cases {
		dir := filepath.Join(root, name)
		for _, rel := range sessionFiles(t, dir) {
			data, err := os.ReadFile(filepath.Join(dir, rel))
			require.NoError(t, err)
			lines := splitLines(data)
			want := parseFile(t, dir, rel)
			for stop := 0; stop <= len(lines); stop++ {
				p1 := parserFor(dir, rel)
				var got []agentevent.Event
				for _, l := range lines[:stop] {
					got = append(got, p1.Parse(l.Data, l.No, l.Offset)...)
				}
				state, err := p1.MarshalState()
				require.NoError(t, err)
				p2 := parserFor(dir, rel)
				require.NoError(t, p2.UnmarshalState(state))
				for _, l := range lines {
					got = append(got, p2.Parse(l.Data, l.No, l.Offset)...)
				}
				got = append(got, p2.Flush()...)
				require.Equalf(t, want, got, "%s/%s stopped after line %d", name, rel, stop)
			}
		}
	}
}

func TestStateIsBounded(t *testing.T) {
	f := newFeeder(testSession + ".jsonl")
	f.feed(userRow(`"go"`))
	for i := range 3000 {
		f.feed(assistantRow(fmt.Sprintf("a%d", i), "2026-01-01T10:00:01.000Z", fmt.Sprintf("msg_%d", i),
			toolUse(fmt.Sprintf("t%d", i), "Read", `{"file_path":"/w/a.go"}`), 10, "tool_use"))
	}
	assert.LessOrEqual(t, len(f.p.st.Usage), maxUsageIDs)
	assert.LessOrEqual(t, len(f.p.st.Calls), maxOpenCalls)
	state, err := f.p.MarshalState()
	require.NoError(t, err)
	assert.Less(t, len(state), 256<<10)
}

// FuzzParse feeds arbitrary lines: Parse must never panic, and whatever it
// returns is a complete event.
func FuzzParse(f *testing.F) {
	root := filepath.Join(repoRoot(f), "testdata", "claude_code")
	files, _ := filepath.Glob(filepath.Join(root, "*", "*.jsonl"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(f, err)
		for _, l := range splitLines(data) {
			f.Add(l.Data)
		}
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		p := NewParser(testSession + ".jsonl")
		evs := p.Parse(line, 1, 0)
		for i := range evs {
			ev := &evs[i]
			require.NotEqual(t, ReasonParserError, ev.Unparsed, "the mapping panicked: %v", ev.Attributes)
			require.Equal(t, agentevent.SchemaVersion, ev.SchemaVersion)
			require.NotEmpty(t, ev.EventID)
			require.Equal(t, line, ev.Raw)
			require.Contains(t, agentevent.AllowedRoles(ev.Type), ev.Role)
		}
	})
}

func TestTimestamps(t *testing.T) {
	tests := []struct {
		name, ts string
		want     time.Time
	}{
		{"RFC 3339", `"2026-01-01T10:00:00.123Z"`, time.Date(2026, 1, 1, 10, 0, 0, 123e6, time.UTC)},
		{"offset", `"2026-01-01T11:00:00+01:00"`, time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)},
		{"epoch milliseconds", `1767261600123`, time.Date(2026, 1, 1, 10, 0, 0, 123e6, time.UTC)},
		{"epoch seconds", `1767261600`, time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := `{"type":"user","uuid":"u1","sessionId":"` + testSession + `","timestamp":` + tt.ts + `,"message":{"role":"user","content":"hi"}}`
			evs := newFeeder(testSession + ".jsonl").feed(row)
			require.Len(t, evs, 1)
			assert.Equal(t, tt.want, evs[0].Timestamp)
		})
	}
	t.Run("missing or unreadable: the last time seen", func(t *testing.T) {
		f := newFeeder(testSession + ".jsonl")
		f.feed(userRow(`"hi"`))
		evs := f.feed(`{"type":"summary","summary":"s","leafUuid":"u1"}`,
			`{"type":"user","uuid":"u2","sessionId":"`+testSession+`","timestamp":"yesterday","message":{"role":"user","content":"again"}}`)
		require.Len(t, evs, 2)
		for _, ev := range evs {
			assert.Equal(t, time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC), ev.Timestamp)
		}
	})
}

// pinRows parses large records whose tool calls stay open, and returns the
// parser and the records: the state keeps a few short strings of each.
func pinRows(tb testing.TB, rows, size int) (*Parser, [][]byte) {
	tb.Helper()
	big := strings.Repeat("x", size)
	p := NewParser(testSession + ".jsonl")
	var records [][]byte
	var offset int64
	for i := range rows {
		line := []byte(assistantRow(fmt.Sprintf("a%d", i), "2026-01-01T10:00:01.000Z", fmt.Sprintf("msg_%d", i),
			toolUse(fmt.Sprintf("t%d", i), "Write", `{"file_path":"/w/big.txt","content":"`+big+`"}`), 10, "tool_use"))
		require.Len(tb, p.Parse(line, int64(i+1), offset), 1)
		offset += int64(len(line)) + 1
		records = append(records, line)
	}
	require.Len(tb, p.st.Calls, rows)
	return p, records
}

// TestStateDoesNotPinRecords: the state keeps copies of the records'
// strings, not pieces of their buffers (BenchmarkStateHeldHeap measures it).
func TestStateDoesNotPinRecords(t *testing.T) {
	p, records := pinRows(t, 20, 1<<10)
	vendortest.RequireNoAlias(t, p, records...)
}

// BenchmarkStateHeldHeap: the heap a parser holds after 20 records of 2 MiB
// whose tool calls stay open stays under half of those records.
func BenchmarkStateHeldHeap(b *testing.B) {
	const rows, size = 20, 2 << 20
	vendortest.HeldHeap(b, rows*size/2, func() any {
		p, _ := pinRows(b, rows, size)
		return p
	})
}

// ≤2.0 rows carry no stop_reason: the response's usage is held until a
// record that is not one of its rows, or the end of the file's data, and then
// goes out once on an event of its own; a restart in between loses nothing;
// a row of the response read after that carries only the growth.
func TestHeldUsageWithoutStopReason(t *testing.T) {
	rows := []string{
		userRow(`"go"`),
		assistantRow("a1", "2026-01-01T10:00:01.000Z", "msg_A", `{"type":"text","text":"ok"}`, 8, ""),
		assistantRow("a2", "2026-01-01T10:00:02.000Z", "msg_A", toolUse("t1", "Read", `{"file_path":"/w/a.go"}`), 120, ""),
		resultRow("2026-01-01T10:00:03.000Z", "t1", `"package a"`, false, ""),
		assistantRow("a3", "2026-01-01T10:00:04.000Z", "msg_B", `{"type":"text","text":"done"}`, 40, ""),
	}
	f := newFeeder(testSession + ".jsonl")
	events := f.feed(rows...)
	var usage []agentevent.Event
	for _, ev := range events {
		if ev.TokensInput != nil {
			usage = append(usage, ev)
		}
	}
	require.Len(t, usage, 1, "msg_B is still held")
	assert.Equal(t, "a2#usage", usage[0].EventID)
	assert.Equal(t, "msg_A", usage[0].ResponseID)
	assert.Equal(t, int64(120), *usage[0].TokensOutput)
	assert.Equal(t, int64(9305), *usage[0].TokensInput)
	assert.Equal(t, agentevent.UsageCarrierDeferred, usage[0].Attributes[agentevent.AttrUsageCarrier])
	assert.Equal(t, "u1", usage[0].ParentEventID)
	assert.Equal(t, agentevent.TypeToolResult, events[len(events)-2].Type, "the usage goes out before the record that ended the response")
	assert.Equal(t, "a2#usage", events[len(events)-3].EventID)

	// A restart while msg_B is held, then the end of the data.
	state, err := f.p.MarshalState()
	require.NoError(t, err)
	p := NewParser(testSession + ".jsonl")
	require.NoError(t, p.UnmarshalState(state))
	flushed := p.Flush()
	require.Len(t, flushed, 1)
	assert.Equal(t, "msg_B", flushed[0].ResponseID)
	assert.Equal(t, int64(40), *flushed[0].TokensOutput)
	assert.Empty(t, p.Flush(), "flushed once")

	// The file goes on with a row of msg_B with more output: a correction.
	more := p.Parse([]byte(assistantRow("a4", "2026-01-01T10:00:05.000Z", "msg_B", `{"type":"text","text":"more"}`, 55, "")), 6, 10_000)
	require.Len(t, more, 1)
	assert.Equal(t, int64(15), *more[0].TokensOutput)
	assert.Equal(t, int64(0), *more[0].TokensInput)
	assert.Equal(t, agentevent.UsageCarrierCorrection, more[0].Attributes[agentevent.AttrUsageCarrier])
}
