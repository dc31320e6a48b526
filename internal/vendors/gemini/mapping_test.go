// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package gemini

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// chatJSON builds a chat snapshot from message objects written as JSON.
func chatJSON(t *testing.T, msgs ...string) Chat {
	t.Helper()
	b := `{"sessionId":"s1","projectHash":"ph","startTime":"2026-01-01T00:00:00Z","messages":[` + strings.Join(msgs, ",") + `]}`
	c, err := DecodeChat([]byte(b))
	require.NoError(t, err)
	return c
}

const (
	mUser    = `{"id":"u1","timestamp":"2026-01-01T00:00:01Z","type":"user","content":"hi"}`
	mAnswer  = `{"id":"g1","timestamp":"2026-01-01T00:00:02Z","type":"gemini","content":"hello","model":"gemini-2.5-flash","tokens":{"input":100,"output":10,"cached":40,"thoughts":5,"tool":2,"total":117}}`
	mUser2   = `{"id":"u2","timestamp":"2026-01-01T00:01:00Z","type":"user","content":[{"text":"run it"},{"text":"now"}]}`
	mToolMsg = `{"id":"g2","timestamp":"2026-01-01T00:01:02Z","type":"gemini","content":"","model":"gemini-2.5-pro","toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"ls"},"result":[{"functionResponse":{"id":"c1","name":"run_shell_command","response":{"output":"Command: ls\nOutput: a\nExit Code: 0"}}}],"status":"success","timestamp":"2026-01-01T00:01:03Z"}]}`
)

func ids(evs []agentevent.Event) []string {
	out := make([]string, len(evs))
	for i := range evs {
		ev := &evs[i]
		out[i] = ev.EventID
	}
	return out
}

// Trap 4 and the snapshot reader: a chat rewritten in place is mapped
// message by message; a restart with the watermark re-emits nothing; the
// last gemini message waits until it is settled or followed.
func TestMapChatIncremental(t *testing.T) {
	emitted := map[string]bool{}
	apply := func(r Result) {
		for _, id := range r.Emitted {
			emitted[id] = true
		}
	}
	c := Context{LogFile: "chat.json"}

	r := MapChat(c, chatJSON(t, mUser, mAnswer), emitted, false)
	assert.Equal(t, []string{"u1"}, ids(r.Events))
	assert.Equal(t, "g1", r.Held, "a last gemini message without tool calls may still change")
	apply(r)

	r = MapChat(c, chatJSON(t, mUser, mAnswer, mUser2), emitted, false)
	assert.Equal(t, []string{"g1", "u2"}, ids(r.Events))
	assert.Empty(t, r.Held)
	apply(r)

	r = MapChat(c, chatJSON(t, mUser, mAnswer, mUser2, mToolMsg), emitted, false)
	assert.Empty(t, r.Events, "a last gemini message waits, even with its tool calls done")
	assert.Equal(t, "g2", r.Held)
	r = MapChat(c, chatJSON(t, mUser, mAnswer, mUser2, mToolMsg), emitted, true)
	assert.Equal(t, []string{"g2:tool:c1", "g2:tool:c1:result"}, ids(r.Events))
	assert.Equal(t, []string{"g2", "g2:tool:c1", "g2:tool:c1:result"}, r.Emitted)
	apply(r)

	// Restart: the same snapshot with the stored watermark adds nothing.
	r = MapChat(c, chatJSON(t, mUser, mAnswer, mUser2, mToolMsg), emitted, true)
	assert.Empty(t, r.Events)

	// settled releases a held message.
	r = MapChat(c, chatJSON(t, mUser, mAnswer), map[string]bool{"u1": true}, true)
	assert.Equal(t, []string{"g1"}, ids(r.Events))
	assert.Equal(t, "u1", r.Events[0].ParentEventID)
}

// A settled file can show a call still running, or a message that later
// gets more tool calls (a model step with no text or thoughts adds its calls
// to the last gemini message): each call and each result is emitted once.
func TestMapChatToolCallsGrow(t *testing.T) {
	call := func(id, status, result string) string {
		res := ""
		if result != "" {
			res = `,"result":[{"functionResponse":{"id":"` + id + `","name":"read_file","response":{"output":"` + result + `"}}}]`
		}
		return `{"id":"` + id + `","name":"read_file","args":{"absolute_path":"/a"},"status":"` + status + `","timestamp":"2026-01-01T00:00:09Z"` + res + `}`
	}
	msg := func(calls ...string) string {
		return `{"id":"g1","timestamp":"2026-01-01T00:00:02Z","type":"gemini","content":"","model":"m","tokens":{"input":10,"output":1,"cached":0,"thoughts":0,"tool":0,"total":11},"toolCalls":[` + strings.Join(calls, ",") + `]}`
	}
	emitted := map[string]bool{}
	step := func(m string) []string {
		r := MapChat(Context{}, chatJSON(t, mUser, m), emitted, true)
		for _, id := range r.Emitted {
			emitted[id] = true
		}
		return ids(r.Events)
	}
	got := step(msg(call("c1", "executing", "")))
	assert.Equal(t, []string{"u1", "g1:tool:c1"}, got)
	got = step(msg(call("c1", "success", "x")))
	assert.Equal(t, []string{"g1:tool:c1:result"}, got)
	got = step(msg(call("c1", "success", "x"), call("c2", "success", "y")))
	assert.Equal(t, []string{"g1:tool:c2", "g1:tool:c2:result"}, got)
	assert.Empty(t, step(msg(call("c1", "success", "x"), call("c2", "success", "y"))))
}

// Trap 8: the same session copied under a hash dir and a named dir is one
// session when the reader keys its watermark by sessionId.
func TestDuplicateCopiesEmitOnce(t *testing.T) {
	emitted := map[string]bool{}
	chat := chatJSON(t, mUser, mAnswer)
	r := MapChat(Context{LogFile: "tmp/<hash>/chats/session-x.json"}, chat, emitted, true)
	require.Len(t, r.Events, 2)
	for _, id := range r.Emitted {
		emitted[id] = true
	}
	r = MapChat(Context{LogFile: "tmp/project/chats/session-x.json"}, chat, emitted, true)
	assert.Empty(t, r.Events)
}

func TestTokens(t *testing.T) {
	r := MapChat(Context{}, chatJSON(t, mUser, mAnswer), nil, true)
	ev := r.Events[1]
	assert.Equal(t, agentevent.TypeAssistantMessage, ev.Type)
	assert.Equal(t, int64(100), agentevent.Value(ev.TokensInput), "input includes cached")
	assert.Equal(t, int64(40), agentevent.Value(ev.TokensCached))
	assert.Equal(t, int64(15), agentevent.Value(ev.TokensOutput), "output includes thoughts")
	assert.Equal(t, int64(5), agentevent.Value(ev.TokensThinking))
	assert.Equal(t, int64(2), agentevent.Value(ev.TokensTool))
	assert.Equal(t, int64(117), agentevent.Value(ev.TokensTotal))
	assert.Equal(t, "gemini-2.5-flash", ev.Model)
	assert.Equal(t, Provider, ev.Provider)
	assert.Equal(t, "g1", ev.ResponseID)
	assert.Equal(t, Source, ev.Source)
	assert.Equal(t, "gemini-cli", ev.Source.ServiceName())

	// Usage goes on the first model event only: the first thought here.
	msg := `{"id":"g1","timestamp":"2026-01-01T00:00:02Z","type":"gemini","content":"x","model":"m","thoughts":[{"subject":"S","description":"D","timestamp":"2026-01-01T00:00:01.5Z"}],"tokens":{"input":10,"output":1,"cached":0,"thoughts":3,"tool":0,"total":14}}`
	r = MapChat(Context{}, chatJSON(t, mUser, msg), nil, true)
	require.Len(t, r.Events, 3)
	assert.Equal(t, agentevent.TypeReasoning, r.Events[1].Type)
	assert.Equal(t, "S\nD", r.Events[1].Text)
	assert.Equal(t, int64(4), agentevent.Value(r.Events[1].TokensOutput))
	assert.Nil(t, r.Events[2].TokensInput)

	// A gemini message without tokens carries none.
	msg = `{"id":"g1","timestamp":"2026-01-01T00:00:02Z","type":"gemini","content":"x","model":"m"}`
	r = MapChat(Context{}, chatJSON(t, mUser, msg), nil, true)
	assert.Nil(t, r.Events[1].TokensInput)
}

// Trap 5: exit codes are text only; newer CLIs leave out "Exit Code: 0".
func TestToolResults(t *testing.T) {
	shell := func(status, response string) string {
		return `{"id":"g1","timestamp":"2026-01-01T00:00:02Z","type":"gemini","content":"","model":"m","toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"make test"},"result":[{"functionResponse":{"id":"c1","name":"run_shell_command","response":` + response + `}}],"status":"` + status + `","timestamp":"2026-01-01T00:00:05Z"}]}`
	}
	cases := []struct {
		name, status, response string
		exit                   *int64
		toolStatus             agentevent.ToolStatus
		errType                string
	}{
		{"exit 0", "success", `{"output":"Command: make test\nOutput: ok\nExit Code: 0\nSignal: 0"}`, agentevent.Int(0), agentevent.ToolSuccess, ""},
		{"exit 2", "success", `{"output":"Command: make test\nOutput: boom\nError: (none)\nExit Code: 2\nSignal: (none)"}`, agentevent.Int(2), agentevent.ToolError, agentevent.ErrorTypeExitCode},
		{"no exit line", "success", `{"output":"Command: make test\nDirectory: (root)\nOutput: ok\nError: (none)"}`, agentevent.Int(0), agentevent.ToolSuccess, ""},
		{"denied", "cancelled", `{"error":"[Operation Cancelled] Reason: User denied execution."}`, nil, agentevent.ToolError, agentevent.ErrorTypeRejected},
		{"cancelled", "cancelled", `{"error":"[Operation Cancelled] Reason: User cancelled the operation."}`, nil, agentevent.ToolError, agentevent.ErrorTypeInterrupted},
		{"error", "error", `{"error":"Command rejected: not allowed"}`, nil, agentevent.ToolError, agentevent.ErrorTypeTool},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := MapChat(Context{}, chatJSON(t, mUser, shell(tc.status, tc.response)), nil, true)
			require.Len(t, r.Events, 3)
			call, res := r.Events[1], r.Events[2]
			assert.Equal(t, agentevent.TypeToolCall, call.Type)
			assert.Equal(t, "make test", call.Attributes[agentevent.AttrToolCommand])
			assert.Equal(t, agentevent.ChannelTerminal, call.Channel)
			assert.Equal(t, agentevent.TypeToolResult, res.Type)
			assert.Equal(t, "c1", res.ToolCallID)
			assert.Equal(t, tc.exit, res.ToolExitCode)
			assert.Equal(t, tc.toolStatus, res.ToolStatus)
			assert.Equal(t, tc.errType, res.ErrorType)
			assert.Nil(t, res.ToolLatencyMs, "Gemini records no durations")
			assert.Equal(t, "2026-01-01T00:00:05Z", res.Timestamp.Format("2006-01-02T15:04:05Z07:00"))
			report := agentevent.Validate(r.Events)
			assert.Empty(t, report.Violations)
			assert.Empty(t, report.OpenToolCalls)
		})
	}

	// A call with no result and no final status stays open.
	running := `{"id":"g1","timestamp":"2026-01-01T00:00:02Z","type":"gemini","content":"","model":"m","toolCalls":[{"id":"c1","name":"read_file","args":{"absolute_path":"/a.go"},"status":"executing"}]}`
	r := MapChat(Context{}, chatJSON(t, mUser, running), nil, true)
	require.Len(t, r.Events, 2)
	assert.Equal(t, "/a.go", r.Events[1].FilePath)
	assert.Equal(t, agentevent.FileRead, r.Events[1].FileOp)
	assert.Len(t, agentevent.Validate(r.Events).OpenToolCalls, 1)
	// …and a last gemini message is held back until settled.
	assert.Equal(t, "g1", MapChat(Context{}, chatJSON(t, mUser, running), nil, false).Held)
}

func TestParseExitCode(t *testing.T) {
	for in, want := range map[string]int64{
		"Exit Code: 0":                      0,
		"Output: x\nExit Code: 127\nSignal": 127,
		"Exit Code: -1":                     -1,
	} {
		got, ok := parseExitCode(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "exit code: 1", "Output: Exit Code: 3 inside text"} {
		_, ok := parseExitCode(in)
		assert.False(t, ok, in)
	}
}

func TestMessageTypes(t *testing.T) {
	info := `{"id":"i1","timestamp":"2026-01-01T00:00:03Z","type":"info","content":"Request cancelled."}`
	errm := `{"id":"e1","timestamp":"2026-01-01T00:00:04Z","type":"error","content":"[API Error: quota]"}`
	warn := `{"id":"w1","timestamp":"2026-01-01T00:00:05Z","type":"warning","content":"careful"}`
	odd := `{"id":"x1","timestamp":"2026-01-01T00:00:06Z","type":"hologram","content":"?"}`
	r := MapChat(Context{}, chatJSON(t, mUser, info, errm, warn, odd), nil, true)
	require.Len(t, r.Events, 5)
	assert.Equal(t, "interrupted", r.Events[1].Status)
	assert.Equal(t, "error", r.Events[2].Status)
	assert.Equal(t, agentevent.ErrorTypeAPI, r.Events[2].ErrorType)
	assert.Empty(t, r.Events[3].Status)
	assert.Equal(t, "unknown_type", r.Events[4].Unparsed)
	assert.Empty(t, agentevent.Validate(r.Events).Violations)

	// User content: a string, [{text}] parts, displayContent first.
	r = MapChat(Context{}, chatJSON(t, mUser2), nil, true)
	assert.Equal(t, "run it\nnow", r.Events[0].Text)
	disp := `{"id":"u3","timestamp":"2026-01-01T00:00:01Z","type":"user","content":[{"text":"@a.go expanded"}],"displayContent":[{"text":"@a.go"}]}`
	r = MapChat(Context{}, chatJSON(t, disp), nil, true)
	assert.Equal(t, "@a.go", r.Events[0].Text)
}

func TestSubagentChat(t *testing.T) {
	parent, skill := Placement(`C:\Users\x\.gemini\tmp\proj\chats\b1f31681-4b57\tl63m8.json`)
	assert.Equal(t, "b1f31681-4b57", parent)
	assert.False(t, skill)
	parent, skill = Placement("/home/x/.gemini/tmp/proj/chats/skill-extraction-abc/q1.json")
	assert.Equal(t, "abc", parent)
	assert.True(t, skill)
	parent, _ = Placement("/home/x/.gemini/tmp/proj/chats/session-2026-01-01T00-00-abcd1234.json")
	assert.Empty(t, parent)

	chat := chatJSON(t, mUser, mAnswer)
	chat.Kind = KindSubagent
	r := MapChat(Context{ParentSessionID: "P", SkillExtraction: true}, chat, nil, true)
	for _, ev := range r.Events {
		assert.Equal(t, "s1", ev.SessionID, "a subagent chat keeps its own session id")
		assert.Equal(t, "P", ev.Attributes[agentevent.AttrParentSessionID])
		assert.Equal(t, "P", ev.Attributes[agentevent.AttrRootSessionID])
		assert.Equal(t, "s1", ev.AgentID)
		assert.True(t, ev.IsSidechain)
		assert.Equal(t, agentevent.SubagentLinkTurn, ev.Attributes[agentevent.AttrSubagentLink])
		assert.Equal(t, true, ev.Attributes[agentevent.AttrGeminiSkillExtraction])
	}
}

func TestDecodeChatErrors(t *testing.T) {
	full := `{"sessionId":"s1","projectHash":"p","messages":[` + mUser + `]}`
	_, err := DecodeChat([]byte(full[:len(full)-10])) // cut mid-write
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, ReasonMalformedJSON, de.Reason)
	_, err = DecodeChat([]byte(`[1,2]`))
	require.ErrorAs(t, err, &de)
	assert.Equal(t, ReasonUnexpectedShape, de.Reason)
	_, err = DecodeChat([]byte(`{"messages":[]}`))
	require.ErrorAs(t, err, &de)
	assert.Equal(t, ReasonUnexpectedShape, de.Reason)

	// One odd message costs that message, not the chat: it becomes an
	// unparsed event (never a prompt), keyed by its id or a hash of it.
	c, err := DecodeChat([]byte(`{"sessionId":"s","messages":[` + mUser + `,{"type":"user"},{"id":"g9","type":"gemini","tokens":"lots"},` + mAnswer + `]}`))
	require.NoError(t, err)
	require.Len(t, c.Messages, 4)
	r := MapChat(Context{}, c, nil, true)
	require.Len(t, r.Events, 4)
	assert.Equal(t, ReasonUnexpectedShape, r.Events[1].Unparsed)
	assert.True(t, strings.HasPrefix(r.Events[1].EventID, "message-"))
	assert.Equal(t, "u1", r.Events[1].ParentEventID)
	assert.Equal(t, "g9", r.Events[2].EventID)
	assert.Equal(t, ReasonUnexpectedShape, r.Events[2].Unparsed)
	assert.Equal(t, "u1", r.Events[3].ParentEventID)
	assert.Empty(t, agentevent.Validate(r.Events).Violations)
	again := MapChat(Context{}, c, nil, true)
	assert.Equal(t, ids(r.Events), ids(again.Events), "stable ids")
}

func TestResultShapes(t *testing.T) {
	for name, result := range map[string]string{
		"list":   `[{"functionResponse":{"id":"c1","name":"x","response":{"output":"out"}}}]`,
		"object": `{"functionResponse":{"id":"c1","name":"x","response":{"output":"out"}}}`,
		"string": `"out"`,
		"text":   `[{"text":"out"}]`,
	} {
		t.Run(name, func(t *testing.T) {
			msg := `{"id":"g1","timestamp":"2026-01-01T00:00:02Z","type":"gemini","content":"","model":"m","toolCalls":[{"id":"c1","name":"x","args":{},"result":` + result + `,"status":"success"}]}`
			r := MapChat(Context{}, chatJSON(t, mUser, msg), nil, true)
			require.Len(t, r.Events, 3)
			assert.Empty(t, r.Events[2].Unparsed)
			assert.Equal(t, "out", r.Events[2].Text)
		})
	}
}

// The JSONL chat log (CLI v0.39+), from the CLI's source: last record of an
// id wins in place, $set merges metadata, a $set.messages checkpoint
// replaces every message, $rewindTo drops a message and the rest (all of
// them for an unknown id), bad lines are reported and skipped.
func TestDecodeChatJSONL(t *testing.T) {
	lines := []string{
		`{"sessionId":"s1","projectHash":"ph","startTime":"2026-01-01T00:00:00Z","lastUpdated":"2026-01-01T00:00:00Z","kind":"main"}`,
		`{"id":"u1","type":"user","content":"a"}`,
		`{"id":"g1","type":"gemini","content":"draft"}`,
		`{"id":"g1","type":"gemini","content":"final","tokens":{"input":1,"output":1,"cached":0,"thoughts":0,"tool":0,"total":2}}`,
		`{"$set":{"summary":"sum","lastUpdated":"2026-01-01T00:05:00Z"}}`,
		``,
		`{"id":"u2","type":"user","content":"b"}`,
		`{"id":"g2","type":"gemini","content":"c"}`,
		`{"$rewindTo":"u2"}`,
		`not json`,
		`{"foo":1}`,
		`{"id":"u3","type":"user","content":"d"}`,
		`{"id":"g3","type":"gem`, // cut mid-write
	}
	c, errs := DecodeChatJSONL([]byte(strings.Join(lines, "\n")))
	assert.Equal(t, "s1", c.SessionID)
	assert.Equal(t, "sum", c.Summary)
	assert.Equal(t, "main", c.Kind)
	assert.Equal(t, "2026-01-01T00:05:00Z", c.LastUpdated)
	var got []string
	for _, m := range c.Messages {
		got = append(got, m.ID+"="+contentText(m.Content))
	}
	assert.Equal(t, []string{"u1=a", "g1=final", "u3=d"}, got)
	require.Len(t, errs, 3)
	assert.Equal(t, int64(10), errs[0].Line)
	assert.Equal(t, ReasonMalformedJSON, errs[0].Reason)
	assert.Equal(t, int64(11), errs[1].Line)
	assert.Equal(t, ReasonUnexpectedShape, errs[1].Reason)
	assert.Equal(t, int64(13), errs[2].Line)

	// Unknown rewind target: everything goes, as in the CLI.
	c, errs = DecodeChatJSONL([]byte(lines[0] + "\n" + lines[1] + "\n" + `{"$rewindTo":"nope"}` + "\n"))
	assert.Empty(t, errs)
	assert.Empty(t, c.Messages)

	// A $set.messages checkpoint replaces all messages.
	cp, _ := json.Marshal(map[string]any{"$set": map[string]any{"messages": []any{
		map[string]any{"id": "u9", "type": "user", "content": "z"},
	}}})
	c, errs = DecodeChatJSONL([]byte(strings.Join(lines[:4], "\n") + "\n" + string(cp) + "\n"))
	assert.Empty(t, errs)
	require.Len(t, c.Messages, 1)
	assert.Equal(t, "u9", c.Messages[0].ID)
}

func TestLogs(t *testing.T) {
	data := `[{"sessionId":"a","messageId":0,"type":"user","message":"hello","timestamp":"2026-01-01T00:00:00Z"},
	{"sessionId":"a","messageId":1,"type":"user","message":"/quit","timestamp":"2026-01-01T00:00:01Z"},
	{"sessionId":"a","messageId":2,"type":"user","message":"/home/x/file.go is broken","timestamp":"2026-01-01T00:00:02Z"},
	{"sessionId":"b","messageId":0,"type":"user","message":"in a chat","timestamp":"2026-01-01T00:00:03Z"},
	{"messageId":9},
	7]`
	entries, skipped, err := DecodeLogs([]byte(data))
	require.NoError(t, err)
	assert.Equal(t, 2, skipped)
	require.Len(t, entries, 4)
	emitted := map[string]bool{"a:log:0": true}
	r := MapLogs(Context{LogFile: "logs.json", Sequence: 5}, entries, func(id string) bool { return id == "b" }, emitted, time.Time{})
	assert.Equal(t, []string{"a:log:2"}, ids(r.Events))
	assert.Equal(t, []string{"a:log:2"}, r.Emitted)
	assert.Equal(t, int64(5), r.Events[0].Sequence)
	assert.Equal(t, agentevent.TypeUserMessage, r.Events[0].Type)

	// Entries inside the grace window wait for a later call.
	cut := time.Date(2026, 1, 1, 0, 0, 2, 0, time.UTC)
	r = MapLogs(Context{}, entries, nil, nil, cut)
	assert.Equal(t, []string{"a:log:0"}, ids(r.Events), "a:log:2 is at the cut, b:log:0 after it")

	_, _, err = DecodeLogs([]byte(`[{"sessionId":"a"`))
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, ReasonMalformedJSON, de.Reason)
}

func TestFileFacts(t *testing.T) {
	write := `{"id":"g1","timestamp":"2026-01-01T00:00:02Z","type":"gemini","content":"","model":"m","toolCalls":[{"id":"c1","name":"write_file","args":{"file_path":"a.txt","content":"x"},"result":[{"functionResponse":{"id":"c1","name":"write_file","response":{"output":"Successfully created and wrote to new file: a.txt."}}}],"status":"success","timestamp":"2026-01-01T00:00:03Z"}]}`
	r := MapChat(Context{}, chatJSON(t, mUser, write), nil, true)
	res := r.Events[2]
	assert.Equal(t, "created", res.Attributes[agentevent.AttrFileChangeType])
	assert.NotContains(t, res.Attributes, agentevent.AttrFileLinesAdded, "no diffStat: no line counts")
	assert.Equal(t, agentevent.FileWrite, res.FileOp)
	assert.Equal(t, "a.txt", res.FilePath)

	edit := `{"id":"g1","timestamp":"2026-01-01T00:00:02Z","type":"gemini","content":"","model":"m","toolCalls":[{"id":"c1","name":"replace","args":{"file_path":"a.txt"},"result":[{"functionResponse":{"id":"c1","name":"replace","response":{"output":"ok"}}}],"status":"success","timestamp":"2026-01-01T00:00:03Z","resultDisplay":{"fileDiff":"--- a\n+++ b\n","isNewFile":false,"diffStat":{"model_added_lines":3,"model_removed_lines":1,"user_added_lines":1,"user_removed_lines":0}}}]}`
	r = MapChat(Context{}, chatJSON(t, mUser, edit), nil, true)
	res = r.Events[2]
	assert.Equal(t, "modified", res.Attributes[agentevent.AttrFileChangeType])
	assert.Equal(t, int64(4), res.Attributes[agentevent.AttrFileLinesAdded])
	assert.Equal(t, int64(1), res.Attributes[agentevent.AttrFileLinesRemoved])
	assert.Equal(t, "--- a\n+++ b\n", res.Attributes[agentevent.AttrFileDiff])
	agentevent.StripContent(&res)
	assert.NotContains(t, res.Attributes, agentevent.AttrFileDiff)
}

// FuzzDecodeAndMap: no input makes the decoders or the mapping panic.
func FuzzDecodeAndMap(f *testing.F) {
	f.Add([]byte(`{"sessionId":"s","messages":[` + mUser + `,` + mToolMsg + `]}`))
	f.Add([]byte(`{"sessionId":"s","projectHash":"p"}` + "\n" + mUser + "\n" + `{"$rewindTo":"u1"}`))
	f.Add([]byte(`[{"sessionId":"a","messageId":0,"type":"user","message":"x"}]`))
	f.Fuzz(func(_ *testing.T, b []byte) {
		if c, err := DecodeChat(b); err == nil {
			MapChat(Context{}, c, nil, true)
		}
		c, _ := DecodeChatJSONL(b)
		MapChat(Context{ParentSessionID: "p"}, c, nil, false)
		if entries, _, err := DecodeLogs(b); err == nil {
			MapLogs(Context{}, entries, nil, nil, time.Time{})
		}
	})
}

func TestWatermarkState(t *testing.T) {
	w := Watermark{}
	w.Add([]string{"b", "a", "g1:tool:c1"})
	b, err := w.MarshalState()
	require.NoError(t, err)
	assert.JSONEq(t, `["a","b","g1:tool:c1"]`, string(b))
	got, err := UnmarshalState(b)
	require.NoError(t, err)
	assert.Equal(t, w, got)
	got, err = UnmarshalState(nil)
	require.NoError(t, err)
	assert.Empty(t, got)
	_, err = UnmarshalState([]byte(`{`))
	require.Error(t, err)

	assert.Equal(t, "s1", ThreadKey(Context{}, Chat{SessionID: "s1"}))
	assert.Equal(t, "p/s1", ThreadKey(Context{ParentSessionID: "p"}, Chat{SessionID: "s1"}))
}

func TestSummary(t *testing.T) {
	chat := chatJSON(t, mUser, mAnswer)
	chat.Summary = "Say hello."
	chat.LastUpdated = "2026-01-01T00:09:00Z"
	r := MapChat(Context{}, chat, nil, false)
	assert.Equal(t, []string{"u1"}, ids(r.Events), "no summary while a message is held")
	w := Watermark{}
	w.Add(r.Emitted)
	r = MapChat(Context{}, chat, w, true)
	require.Equal(t, []string{"g1", "s1:summary"}, ids(r.Events))
	sum := r.Events[1]
	assert.Equal(t, agentevent.TypeSessionSummary, sum.Type)
	assert.Equal(t, "u1", sum.ParentEventID)
	assert.Equal(t, "Say hello.", sum.Text)
	assert.Equal(t, r.Events[0].Timestamp, sum.Timestamp, "dated at the last message, not lastUpdated")
	w.Add(r.Emitted)
	assert.Empty(t, MapChat(Context{}, chat, w, true).Events)
	assert.Empty(t, agentevent.Validate(MapChat(Context{}, chat, nil, true).Events).Violations)
}

// TestPanicCostsOnlyItsMessage: a panic while mapping one message rolls
// back what that message emitted and becomes one parser_error event in the
// turn it falls in, reported once; the next message maps as usual.
func TestPanicCostsOnlyItsMessage(t *testing.T) {
	chat := chatJSON(t, mUser, mAnswer, mUser2)
	m := mapper{c: Context{LogFile: "chat.json"}, chat: chat, seq: 7, emitted: map[string]bool{}, sessionID: chat.SessionID}
	m.guard(chat.Messages[1], "u1", func() {
		m.gemini(chat.Messages[1]) // emits, then fails
		calls := nilMap[bool]()
		calls["x"] = true
	})
	require.Len(t, m.events, 1, "the message's own events are rolled back")
	ev := m.events[0]
	assert.Equal(t, agentevent.ReasonParserError, ev.Unparsed)
	assert.Equal(t, "g1:error", ev.EventID)
	assert.Equal(t, "u1", ev.ParentEventID)
	assert.Equal(t, int64(7), ev.Sequence, "numbered from the caller's sequence, as if the rolled-back events never were")
	assert.Contains(t, ev.Attributes[agentevent.AttrUnparsedDetail], "nil map")
	assert.Equal(t, []byte(chat.Messages[1].Raw), ev.Raw)
	assert.Equal(t, []string{"g1:error"}, m.keys)

	m.guard(chat.Messages[2], "u1", func() {
		m.message(chat.Messages[2])
		m.keys = append(m.keys, chat.Messages[2].ID)
	})
	require.Len(t, m.events, 2)
	assert.Equal(t, int64(8), m.events[1].Sequence)
	assert.Equal(t, []string{"g1:error", "u2"}, m.keys)

	// Read again with what was sent: the failure is not reported twice.
	m2 := mapper{chat: chat, emitted: map[string]bool{"g1:error": true}, sessionID: chat.SessionID}
	m2.guard(chat.Messages[1], "u1", func() { panic("again") })
	assert.Empty(t, m2.events)
	assert.Empty(t, m2.keys)
}

// nilMap is a nil map that vet does not see as nil where it is written to.
func nilMap[V any]() map[string]V { return nil }
