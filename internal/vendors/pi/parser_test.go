// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package pi

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
)

const testPath = "--home-dev-calc--/2026-06-26T00-00-00-000Z_5a1c0de0-0000-4000-8000-000000000001.jsonl"

const headerV3 = `{"type":"session","version":3,"id":"s3","timestamp":"2026-06-26T10:00:00.000Z","cwd":"/home/dev/calc"}`

func parseLines(lines ...string) []agentevent.Event {
	return parseBytes(testPath, []byte(strings.Join(lines, "\n")+"\n"))
}

func ofType(events []agentevent.Event, typ agentevent.EventType) []agentevent.Event {
	var out []agentevent.Event
	for i := range events {
		ev := &events[i]
		if ev.Type == typ {
			out = append(out, *ev)
		}
	}
	return out
}

func TestBashExitCodes(t *testing.T) {
	call := `{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-06-26T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"make"}}],"provider":"anthropic","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0},"stopReason":"toolUse"}}`
	user := `{"type":"message","id":"u1","parentId":null,"timestamp":"2026-06-26T10:00:01.000Z","message":{"role":"user","content":"build"}}`
	for _, tc := range []struct {
		name    string
		text    string
		isError bool
		code    *int64
		errType string
		status  agentevent.ToolStatus
	}{
		{"success", "ok", false, agentevent.Int(0), "", agentevent.ToolSuccess},
		{"exit code", "boom\\n\\nCommand exited with code 2", true, agentevent.Int(2), "exit_code", agentevent.ToolError},
		{"v1 exit code alone", "Command exited with code 1", true, agentevent.Int(1), "exit_code", agentevent.ToolError},
		{"last code wins, note after it", "sub: Command exited with code 9\\n\\nCommand exited with code 1\\n\\n[Output truncated]", true, agentevent.Int(1), "exit_code", agentevent.ToolError},
		{"aborted", "partial output\\n\\nCommand aborted", true, nil, "interrupted", agentevent.ToolError},
		{"timeout", "Command timed out after 30 seconds", true, nil, "timeout", agentevent.ToolError},
		{"other error", "spawn /bin/sh ENOENT", true, nil, "tool_error", agentevent.ToolError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isErr := "false"
			if tc.isError {
				isErr = "true"
			}
			res := `{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-06-26T10:00:04.500Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"` + tc.text + `"}],"isError":` + isErr + `}}`
			events := parseLines(headerV3, user, call, res)
			results := ofType(events, agentevent.TypeToolResult)
			require.Len(t, results, 1)
			r := results[0]
			assert.Equal(t, tc.code, r.ToolExitCode)
			assert.Equal(t, tc.errType, r.ErrorType)
			assert.Equal(t, tc.status, r.ToolStatus)
			assert.Equal(t, agentevent.Int(2500), r.ToolLatencyMs, "result entry time − call entry time")
			assert.Equal(t, "bash", r.ToolName)
			assert.Equal(t, agentevent.ChannelTerminal, r.Channel)
			assert.Equal(t, "make", ofType(events, agentevent.TypeToolCall)[0].Attributes[agentevent.AttrToolCommand])
			assert.Empty(t, agentevent.Validate(events).Violations)
		})
	}
}

func TestBashExecution(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fields  string
		code    *int64
		status  agentevent.ToolStatus
		errType string
	}{
		{"exit 0", `"exitCode":0,"cancelled":false`, agentevent.Int(0), agentevent.ToolSuccess, ""},
		{"exit 3", `"exitCode":3,"cancelled":false`, agentevent.Int(3), agentevent.ToolError, ""},
		{"cancelled", `"cancelled":true`, nil, agentevent.ToolError, ""},
		{"no code", `"cancelled":false`, nil, agentevent.ToolUnknown, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events := parseLines(headerV3,
				`{"type":"message","id":"b1","parentId":null,"timestamp":"2026-06-26T10:00:01.000Z","message":{"role":"bashExecution","command":"ls","output":"x","truncated":false,`+tc.fields+`}}`)
			require.Len(t, events, 1)
			ev := events[0]
			assert.Equal(t, agentevent.TypeLog, ev.Type)
			assert.Equal(t, agentevent.RoleCLI, ev.Role)
			assert.Equal(t, tc.code, ev.ToolExitCode)
			assert.Equal(t, tc.status, ev.ToolStatus)
			assert.Equal(t, tc.errType, ev.ErrorType, "the user's own command never fails the agent's turn")
			assert.Equal(t, "ls", ev.Attributes[agentevent.AttrToolCommand])
		})
	}
}

func TestUsageAndModel(t *testing.T) {
	// v1: the header names the model; the message's own fields win.
	events := parseBytes("--x--/2025-11-20T23-33-01-550Z_v1.jsonl", []byte(strings.Join([]string{
		`{"type":"session","id":"v1","timestamp":"2025-11-20T23:40:00.000Z","cwd":"/x","provider":"anthropic","modelId":"claude-sonnet-4-5","thinkingLevel":"off"}`,
		`{"type":"message","timestamp":"2025-11-20T23:33:01.550Z","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1763681581544}}`,
		`{"type":"message","timestamp":"2025-11-20T23:33:03.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"text","text":"hello"}],"api":"openai-responses","provider":"openai","model":"gpt-5.1-codex","usage":{"input":100,"output":20,"cacheRead":300,"cacheWrite":40,"cost":{"total":0.25}},"stopReason":"stop"}}`,
		`{"type":"message","timestamp":"2025-11-20T23:33:05.000Z","message":{"role":"assistant","content":[{"type":"text","text":"again"}],"usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0},"stopReason":"stop"}}`,
	}, "\n")))
	require.Len(t, events, 4)
	assert.Equal(t, "v1", events[0].SessionID)
	assert.Equal(t, "/x", events[0].ProjectRoot)
	r := events[1]
	assert.Equal(t, agentevent.TypeReasoning, r.Type)
	assert.Equal(t, "gpt-5.1-codex", r.Model)
	assert.Equal(t, "openai", r.Provider)
	assert.Equal(t, agentevent.Int(440), r.TokensInput, "input + cache read + cache write")
	assert.Equal(t, agentevent.Int(300), r.TokensCached)
	assert.Equal(t, agentevent.Int(40), r.TokensCacheCreation)
	assert.Equal(t, agentevent.Int(20), r.TokensOutput)
	assert.Equal(t, agentevent.Int(460), r.TokensTotal)
	assert.Equal(t, agentevent.Float(0.25), r.CostUSD)
	assert.Equal(t, r.ResponseID, events[2].ResponseID, "one response")
	assert.Nil(t, events[2].TokensInput, "usage only on the first event of a response")
	assert.Equal(t, "stop", events[2].FinishReason)
	assert.Empty(t, r.FinishReason)
	// The v1 header is written after the first messages: nothing is skipped
	// for it, and the model it names is the fallback.
	assert.Equal(t, "claude-sonnet-4-5", events[3].Model)
	assert.Equal(t, "anthropic", events[3].Provider)
	assert.Nil(t, events[3].CostUSD)
}

func TestProvider(t *testing.T) {
	for id, want := range map[string]string{
		"anthropic": "anthropic", "openai-codex": "openai", "google": "gcp.gemini", "amazon-bedrock": "aws.bedrock",
		"xai": "x_ai", "ollama": "ollama", "fireworks": "fireworks",
	} {
		assert.Equal(t, want, Provider(id), id)
	}
}

func TestFailedResponseClosesItsToolCalls(t *testing.T) {
	for _, tc := range []struct{ stop, status, errType string }{
		{"aborted", "interrupted", ""},
		{"error", "error", "api_error"},
	} {
		t.Run(tc.stop, func(t *testing.T) {
			events := parseLines(headerV3,
				`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-06-26T10:00:01.000Z","message":{"role":"user","content":"go"}}`,
				`{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-06-26T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"edit","arguments":{"path":"a.go"}},{"type":"toolCall","id":"c2","name":"read","arguments":{"path":"b.go"}}],"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0},"stopReason":"`+tc.stop+`","errorMessage":"boom"}}`)
			report := agentevent.Validate(events)
			assert.Empty(t, report.Violations)
			assert.Empty(t, report.OpenToolCalls)
			results := ofType(events, agentevent.TypeToolResult)
			require.Len(t, results, 2)
			for _, r := range results {
				assert.Equal(t, agentevent.ToolError, r.ToolStatus)
				assert.Equal(t, "interrupted", r.ErrorType)
				assert.Equal(t, true, r.Attributes[agentevent.AttrToolNotExecuted])
			}
			assert.Equal(t, "edit", results[0].ToolName)
			last := events[len(events)-1]
			assert.Equal(t, agentevent.TypeLog, last.Type)
			assert.Equal(t, tc.status, last.Status)
			assert.Equal(t, tc.errType, last.ErrorType)
			assert.Equal(t, "boom", last.Text)

			// Should a result for such a call come after all, it does not
			// answer the call a second time.
			late := parseLines(headerV3,
				`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-06-26T10:00:01.000Z","message":{"role":"user","content":"go"}}`,
				`{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-06-26T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"edit","arguments":{"path":"a.go"}}],"stopReason":"`+tc.stop+`"}}`,
				`{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-06-26T10:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"edit","content":"done","isError":false}}`)
			assert.Empty(t, agentevent.Validate(late).Violations)
			lr := late[len(late)-1]
			assert.Equal(t, agentevent.TypeToolResult, lr.Type)
			assert.Empty(t, lr.ToolCallID)
			assert.Equal(t, "c1", lr.Attributes["agent.tool.late_call_id"])
		})
	}
}

func TestBranches(t *testing.T) {
	e := func(id, parent, typ, rest string) string {
		p := `null`
		if parent != "" {
			p = `"` + parent + `"`
		}
		return `{"type":"` + typ + `","id":"` + id + `","parentId":` + p + `,"timestamp":"2026-06-26T10:00:01.000Z"` + rest + `}`
	}
	user := func(id, parent string) string {
		return e(id, parent, "message", `,"message":{"role":"user","content":"p `+id+`"}`)
	}
	asst := func(id, parent string) string {
		return e(id, parent, "message", `,"message":{"role":"assistant","content":[{"type":"text","text":"a"}],"stopReason":"stop"}`)
	}
	events := parseLines(headerV3,
		user("u1", ""), asst("a1", "u1"), user("u2", "a1"), asst("a2", "u2"),
		// back to a1: u2 and a2 are abandoned
		e("bs", "a1", "branch_summary", `,"fromId":"a2","summary":"left"`),
		user("u3", "bs"), asst("a3", "u3"),
		// back before the first entry: everything on the current path is abandoned
		user("u4", ""),
	)
	var branches []agentevent.Event
	for _, ev := range ofType(events, agentevent.TypeMeta) {
		if ev.Attributes[agentevent.AttrMetaKind] == "branch" {
			branches = append(branches, ev)
		}
	}
	require.Len(t, branches, 2)
	assert.Equal(t, "a2", branches[0].Attributes[agentevent.AttrBranchFromEntry])
	assert.Equal(t, "a1", branches[0].Attributes["agent.branch.to_entry"])
	assert.Equal(t, int64(2), branches[0].Attributes["agent.branch.abandoned_entries"])
	assert.Equal(t, "a3", branches[1].Attributes[agentevent.AttrBranchFromEntry])
	assert.Exactly(t, "", branches[1].Attributes["agent.branch.to_entry"]) //nolint:testifylint // the attribute is there, as ""
	assert.Equal(t, int64(5), branches[1].Attributes["agent.branch.abandoned_entries"], "a3, u3, bs, a1, u1")
	summaries := ofType(events, agentevent.TypeSessionSummary)
	require.Len(t, summaries, 1)
	assert.Equal(t, "branch", summaries[0].Attributes[agentevent.AttrSummaryKind])
	assert.Len(t, ofType(events, agentevent.TypeUserMessage), 4)
	assert.Empty(t, agentevent.Validate(events).Violations)
	// Ids are the session and entry id; the branch notice has its own.
	assert.Equal(t, "s3:u1", events[0].EventID)
	assert.Equal(t, "s3:bs#branch", branches[0].EventID)
}

func TestForkSkipsCopiedPath(t *testing.T) {
	header := `{"type":"session","version":3,"id":"fork","timestamp":"2026-06-26T12:00:00.000Z","cwd":"/x","parentSession":"/p.jsonl"}`
	events := parseLines(header,
		`{"type":"model_change","id":"m1","parentId":null,"timestamp":"2026-06-26T10:00:00.000Z","provider":"anthropic","modelId":"claude-opus-4-5"}`,
		`{"type":"message","id":"u1","parentId":"m1","timestamp":"2026-06-26T10:00:01.000Z","message":{"role":"user","content":"old"}}`,
		`{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-06-26T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a"}}],"usage":{"input":1000,"output":1,"cacheRead":0,"cacheWrite":0},"stopReason":"toolUse"}}`,
		`{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-06-26T10:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":"x","isError":false}}`,
		`{"type":"message","id":"u2","parentId":"r1","timestamp":"2026-06-26T12:00:05.000Z","message":{"role":"user","content":"new"}}`,
		`{"type":"message","id":"a2","parentId":"u2","timestamp":"2026-06-26T12:00:06.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"usage":{"input":5,"output":1,"cacheRead":0,"cacheWrite":0},"stopReason":"stop"}}`,
	)
	require.Len(t, events, 2, "only the entries written after the fork")
	assert.Equal(t, "new", events[0].Text)
	assert.Equal(t, agentevent.Int(5), events[1].TokensInput)
	assert.Equal(t, "claude-opus-4-5", events[1].Model, "the copied model_change still sets the model")
	assert.Empty(t, agentevent.Validate(events).Violations)
}

func TestReplayAfterRestartIsDropped(t *testing.T) {
	lines := []string{
		headerV3,
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-06-26T10:00:01.000Z","message":{"role":"user","content":"go"}}`,
		`{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-06-26T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"go test ./..."}}],"usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0},"stopReason":"toolUse"}}`,
		`{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-06-26T10:00:09.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"ok  \tcalc\t0.01s"}],"isError":false}}`,
	}
	data := []byte(strings.Join(lines, "\n") + "\n")
	all := splitLines(data)
	whole := parseBytes(testPath, data)

	// Parse up to the tool call, save, restore into a new parser, and hand
	// it every line again (as a receiver does after a crash before it
	// saved its offset).
	p := NewParser(testPath)
	var first []agentevent.Event
	for _, l := range all[:3] {
		first = append(first, p.Parse(l.Data, l.No, l.Offset)...)
	}
	st, err := p.MarshalState()
	require.NoError(t, err)
	q := NewParser(testPath)
	require.NoError(t, q.UnmarshalState(st))
	var second []agentevent.Event
	for _, l := range all {
		second = append(second, q.Parse(l.Data, l.No, l.Offset)...)
	}
	require.Len(t, second, 1, "only the tool result is new")
	assert.Equal(t, whole, append(first, second...), "the same events as an uninterrupted parse")
	r := second[0]
	assert.Equal(t, "bash", r.ToolName, "the open call survived the restart")
	assert.Equal(t, agentevent.Int(7000), r.ToolLatencyMs)
	assert.Equal(t, "go", r.Attributes[agentevent.AttrTestRunner])

	assert.Error(t, q.UnmarshalState([]byte(`{"v":99}`)))
	assert.Error(t, q.UnmarshalState([]byte(`not json`)))
}

func TestBadInputNeverPanics(t *testing.T) {
	for _, tc := range []struct{ line, reason string }{
		{`{"type":"message","id":"x"`, ReasonMalformedJSON},
		{`[1,2]`, ReasonUnexpectedShape},
		{`"str"`, ReasonUnexpectedShape},
		{`nonsense`, ReasonMalformedJSON},
		{`{"id":"x"}`, ReasonUnexpectedShape},
		{`{"type":"telemetry"}`, ReasonUnknownType},
		{`{"type":"message","message":"text"}`, ReasonUnexpectedShape},
		{`{"type":"message","message":{"role":"user","content":42}}`, ReasonUnexpectedShape},
		{`{"type":"message","message":{"role":"assistant","content":{"a":1}}}`, ReasonUnexpectedShape},
		{`{"type":"message","message":{"role":"toolResult","content":7}}`, ReasonUnexpectedShape},
		{`{"type":"message","message":{"role":"hologram"}}`, ReasonUnknownType},
		{`{"type":"message","message":{"content":"x"}}`, ReasonUnexpectedShape},
		{`{"type":"message","message":{"role":"user","content":"x","timestamp":"soon"}}`, ReasonUnexpectedShape},
		{`{"type":"custom_message","content":5}`, ReasonUnexpectedShape},
	} {
		events := parseLines(headerV3, tc.line)
		require.Len(t, events, 1, tc.line)
		ev := events[0]
		assert.Equal(t, tc.reason, ev.Unparsed, tc.line)
		assert.Equal(t, agentevent.TypeLog, ev.Type)
		assert.Equal(t, agentevent.RoleSystem, ev.Role)
		assert.Equal(t, tc.line, string(ev.Raw))
		assert.Equal(t, "s3", ev.SessionID)
	}
	// Blank lines yield nothing; a file without header takes its session
	// id from the file name.
	assert.Empty(t, parseLines(headerV3, "", "  "))
	events := parseLines(`{"type":"message","id":"u1","parentId":null,"timestamp":"2026-06-26T10:00:01.000Z","message":{"role":"user","content":"hi"}}`)
	require.Len(t, events, 1)
	assert.Equal(t, "5a1c0de0-0000-4000-8000-000000000001", events[0].SessionID)
}

// TestTurnsFollowTheBranch: after a switch of branch, the new prompt's
// previous turn is the last prompt on its own branch, not the abandoned one
// written just before it.
func TestTurnsFollowTheBranch(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "testdata", "pi", "branch", "*", "*.jsonl"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	var prompts []agentevent.Event
	for _, ev := range parseDir(t, filepath.Dir(filepath.Dir(files[0]))) {
		if ev.Type == agentevent.TypeUserMessage {
			prompts = append(prompts, ev)
		}
	}
	require.Len(t, prompts, 3, "a first prompt, one on the abandoned branch, one on the new branch")
	prev := func(ev agentevent.Event) any { return ev.Attributes[agentevent.AttrPreviousPrompt] }
	assert.Exactly(t, "", prev(prompts[0]), "the first turn has none") //nolint:testifylint // the attribute is there, as ""
	assert.Equal(t, prompts[0].EventID, prev(prompts[1]))
	assert.Equal(t, prompts[0].EventID, prev(prompts[2]), "skips the abandoned branch's prompt")
}

// The vendor's end-of-turn markers (agentevent.AttrTurnEnd): an answer that
// stopped on "stop" completes the turn; aborted and error responses end it
// interrupted / error, on their log event.
func TestTurnEndMarkers(t *testing.T) {
	events := parseDir(t, filepath.Join(repoRoot(t), "testdata", "pi", "aborted_and_error"))
	got := map[string][]agentevent.EventType{}
	for _, ev := range events {
		if e, ok := ev.Attributes[agentevent.AttrTurnEnd].(string); ok {
			got[e] = append(got[e], ev.Type)
			if e == agentevent.TurnEndCompleted {
				assert.Equal(t, "stop", ev.FinishReason)
			}
		}
	}
	assert.Equal(t, []agentevent.EventType{agentevent.TypeLog}, got[agentevent.TurnEndInterrupted])
	assert.Equal(t, []agentevent.EventType{agentevent.TypeLog}, got[agentevent.TurnEndError])
	assert.NotEmpty(t, got[agentevent.TurnEndCompleted])
}

// TestSourceOption: a parser made for another agent's files in Pi's format
// gives every event that agent's source, and takes the session id of a
// headerless file from the name up to ".jsonl".
func TestSourceOption(t *testing.T) {
	user := `{"type":"message","id":"u1","parentId":null,"timestamp":"2026-06-26T10:00:01.000Z","message":{"role":"user","content":"hi"}}`
	for _, tc := range []struct {
		name, path string
		src        agentevent.Source
		wantSrc    agentevent.Source
		session    string
	}{
		{"pi", testPath, "", Source, "5a1c0de0-0000-4000-8000-000000000001"},
		{"other", "agents/main/sessions/5a1c0de0-0000-4000-8000-00000000000a.jsonl", "openclaw", "openclaw", "5a1c0de0-0000-4000-8000-00000000000a"},
		{"other, archived", "agents/main/sessions/ab_cd.jsonl.reset.2026-06-26T10-00-00.000Z", "openclaw", "openclaw", "ab_cd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewParserWithOptions(tc.path, Options{Source: tc.src})
			evs := p.Parse([]byte(user), 1, 0)
			require.Len(t, evs, 1)
			assert.Equal(t, tc.wantSrc, evs[0].Source)
			assert.Equal(t, tc.session, evs[0].SessionID)
		})
	}
}

// TestModelSnapshot: OpenClaw's model-snapshot custom entry is a model
// change: a meta event naming the model, which becomes the model of the
// responses after it that name none; model_change does the same.
func TestModelSnapshot(t *testing.T) {
	user := `{"type":"message","id":"u1","parentId":null,"timestamp":"2026-06-26T10:00:01.000Z","message":{"role":"user","content":"hi"}}`
	answer := func(id, parent string) string {
		return `{"type":"message","id":"` + id + `","parentId":"` + parent + `","timestamp":"2026-06-26T10:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"usage":{"input":3,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":5},"stopReason":"stop"}}`
	}
	for _, tc := range []struct {
		name, line string
		model      string
		provider   string
		api        any
	}{
		{"snapshot", `{"type":"custom","customType":"model-snapshot","data":{"timestamp":1782468002000,"provider":"openai-codex","modelApi":"openai-codex-responses","modelId":"gpt-5.2"},"id":"m1","parentId":"u1","timestamp":"2026-06-26T10:00:02.000Z"}`, "gpt-5.2", "openai", "openai-codex-responses"},
		{"snapshot, model member", `{"type":"custom","customType":"model-snapshot","data":{"provider":"anthropic","model":"claude-opus-4-5"},"id":"m1","parentId":"u1","timestamp":"2026-06-26T10:00:02.000Z"}`, "claude-opus-4-5", "anthropic", nil},
		{"snapshot without data", `{"type":"custom","customType":"model-snapshot","provider":"anthropic","modelId":"claude-sonnet-4-5","id":"m1","parentId":"u1","timestamp":"2026-06-26T10:00:02.000Z"}`, "claude-sonnet-4-5", "anthropic", nil},
		{"model_change", `{"type":"model_change","provider":"openai-codex","modelId":"gpt-5.2","id":"m1","parentId":"u1","timestamp":"2026-06-26T10:00:02.000Z"}`, "gpt-5.2", "openai", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			events := parseLines(headerV3, user, tc.line, answer("a1", "m1"))
			metas := ofType(events, agentevent.TypeMeta)
			require.Len(t, metas, 1)
			m := metas[0]
			assert.Equal(t, "model_change", m.Attributes["agent.meta.kind"])
			assert.Equal(t, tc.model, m.Attributes["agent.model_change.model"])
			assert.Equal(t, tc.provider, m.Attributes["agent.model_change.provider"])
			assert.Equal(t, tc.api, m.Attributes["agent.api"])
			msgs := ofType(events, agentevent.TypeAssistantMessage)
			require.Len(t, msgs, 1)
			assert.Equal(t, tc.model, msgs[0].Model)
			assert.Equal(t, tc.provider, msgs[0].Provider)
			assert.Empty(t, agentevent.Validate(events).Violations)
		})
	}
}

// TestTranscriptOnlyAssistant: an assistant message OpenClaw wrote itself
// (a delivery mirror, a gateway injection) is no model call: a
// system_message without model, tokens or turn end.
func TestTranscriptOnlyAssistant(t *testing.T) {
	user := `{"type":"message","id":"u1","parentId":null,"timestamp":"2026-06-26T10:00:01.000Z","message":{"role":"user","content":"hi"}}`
	row := func(model, usage string) string {
		return `{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-06-26T10:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"sent to the channel"}],"api":"openai-responses","provider":"openclaw","model":"` + model + `","usage":` + usage + `,"stopReason":"stop","timestamp":1782468003000}}`
	}
	const zero = `{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}}`
	for _, model := range []string{"delivery-mirror", "gateway-injected"} {
		events := parseLines(headerV3, user, row(model, zero))
		require.Len(t, events, 2, model)
		ev := events[1]
		assert.Equal(t, agentevent.TypeSystemMessage, ev.Type)
		assert.Equal(t, agentevent.RoleSystem, ev.Role)
		assert.Equal(t, "sent to the channel", ev.Text)
		assert.Equal(t, model, ev.Attributes["agent.message.kind"])
		assert.Empty(t, ev.Model)
		assert.Nil(t, ev.TokensInput)
		assert.Nil(t, ev.Attributes[agentevent.AttrTurnEnd])
		assert.Empty(t, agentevent.Validate(events).Violations)
	}
	// Usage is never dropped: such a row that reports some is a response.
	events := parseLines(headerV3, user, row("delivery-mirror", `{"input":4,"output":1,"cacheRead":0,"cacheWrite":0}`))
	msgs := ofType(events, agentevent.TypeAssistantMessage)
	require.Len(t, msgs, 1)
	assert.Equal(t, agentevent.Int(4), msgs[0].TokensInput)
}

// TestExecResults: OpenClaw's shell tool (exec) records the exit code and
// duration in its result's details, and returns a non-zero exit as a
// normal result whose text ends "(Command exited with code N)".
func TestExecResults(t *testing.T) {
	user := `{"type":"message","id":"u1","parentId":null,"timestamp":"2026-06-26T10:00:01.000Z","message":{"role":"user","content":"test"}}`
	call := `{"type":"message","id":"a1","parentId":"u1","timestamp":"2026-06-26T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"exec","arguments":{"command":"go test ./...","workdir":"/home/dev/calc"}}],"provider":"anthropic","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0},"stopReason":"toolUse"}}`
	for _, tc := range []struct {
		name, text, details string
		isError             bool
		code                *int64
		latency             *int64
		errType             string
		status              agentevent.ToolStatus
		background          any
	}{
		{"success", "ok  \\tcalc\\t0.01s", `{"status":"completed","exitCode":0,"durationMs":812,"aggregated":"ok","cwd":"/home/dev/calc"}`, false, agentevent.Int(0), agentevent.Int(812), "", agentevent.ToolSuccess, nil},
		{"non-zero exit", "FAIL\\n\\n(Command exited with code 1)", `{"status":"completed","exitCode":1,"durationMs":1500,"aggregated":"FAIL","cwd":"/home/dev/calc"}`, false, agentevent.Int(1), agentevent.Int(1500), "exit_code", agentevent.ToolError, nil},
		{"not found", "sh: 1: gotest: not found\\n\\nCommand not found", `{"status":"failed","exitCode":127,"durationMs":9,"aggregated":"sh: 1: gotest: not found","cwd":"/home/dev/calc"}`, false, agentevent.Int(127), agentevent.Int(9), "exit_code", agentevent.ToolError, nil},
		{"timed out", "Command timed out after 30 seconds", `{"status":"failed","exitCode":null,"durationMs":30000,"aggregated":"","timedOut":true}`, false, nil, agentevent.Int(30000), "timeout", agentevent.ToolError, nil},
		{"background", "Command still running (session s1, pid 42).", `{"status":"running","sessionId":"s1","pid":42,"startedAt":1782468002000,"cwd":"/home/dev/calc","tail":""}`, false, nil, agentevent.Int(2500), "", agentevent.ToolSuccess, true},
		{"no details", "FAIL\\n\\n(Command exited with code 2)", `null`, false, agentevent.Int(2), agentevent.Int(2500), "exit_code", agentevent.ToolError, nil},
		{"thrown", "spawn /bin/sh ENOENT", `{}`, true, nil, agentevent.Int(2500), "tool_error", agentevent.ToolError, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isErr := "false"
			if tc.isError {
				isErr = "true"
			}
			res := `{"type":"message","id":"r1","parentId":"a1","timestamp":"2026-06-26T10:00:04.500Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"exec","content":[{"type":"text","text":"` + tc.text + `"}],"details":` + tc.details + `,"isError":` + isErr + `}}`
			events := parseLines(headerV3, user, call, res)
			results := ofType(events, agentevent.TypeToolResult)
			require.Len(t, results, 1)
			r := results[0]
			assert.Equal(t, tc.code, r.ToolExitCode)
			assert.Equal(t, tc.errType, r.ErrorType)
			assert.Equal(t, tc.status, r.ToolStatus)
			assert.Equal(t, tc.latency, r.ToolLatencyMs)
			assert.Equal(t, tc.background, r.Attributes["agent.tool.background"])
			assert.Equal(t, agentevent.ChannelTerminal, r.Channel)
			assert.Equal(t, "go", r.Attributes[agentevent.AttrTestRunner])
			assert.Equal(t, "go test ./...", ofType(events, agentevent.TypeToolCall)[0].Attributes[agentevent.AttrToolCommand])
			assert.Empty(t, agentevent.Validate(events).Violations)
			fast, typed := parseBoth(testPath, splitLines([]byte(strings.Join([]string{headerV3, user, call, res}, "\n"))), Options{OmitContent: true, OmitRaw: true})
			assert.Equal(t, typed, fast)
		})
	}
}

// TestOpenClawTreeEntries: OpenClaw's reset boundary is a meta event; its
// leaf control moves the branch's end (a branch notice when it leaves
// entries behind) and entries appended on the side leave the branch as it
// is.
func TestOpenClawTreeEntries(t *testing.T) {
	msg := func(id, parent, role, extra string) string {
		content := `"hi"`
		if role == "assistant" {
			content = `[{"type":"text","text":"ok"}],"provider":"anthropic","model":"m","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0},"stopReason":"stop"`
		}
		return `{"type":"message","id":"` + id + `","parentId":"` + parent + `","timestamp":"2026-06-26T10:00:01.000Z"` + extra + `,"message":{"role":"` + role + `","content":` + content + `}}`
	}
	lines := []string{
		headerV3,
		strings.Replace(msg("u1", "", "user", ""), `"parentId":""`, `"parentId":null`, 1),
		msg("a1", "u1", "assistant", ""),
		msg("u2", "a1", "user", ""),
		msg("a2", "u2", "assistant", ""),
		// Back to a1: u2 and a2 are left behind.
		`{"type":"leaf","id":"l1","parentId":"a2","timestamp":"2026-06-26T10:00:02.000Z","targetId":"a1","appendParentId":"a1"}`,
		msg("u3", "a1", "user", ""),
		// A side note beside the branch, then on along it.
		`{"type":"leaf","id":"l2","parentId":"u3","timestamp":"2026-06-26T10:00:03.000Z","targetId":"u3","appendParentId":"a1","appendMode":"side"}`,
		msg("u4", "a1", "user", `,"appendMode":"side"`),
		msg("a3", "u3", "assistant", ""),
		`{"type":"reset","id":"r1","parentId":"a3","timestamp":"2026-06-26T10:00:04.000Z","reason":"daily","firstKeptEntryId":"a3"}`,
	}
	events := parseLines(lines...)
	requireSameEvents(t, testPath, splitLines([]byte(strings.Join(lines, "\n"))))
	var branches, leaves, resets []agentevent.Event
	for _, ev := range ofType(events, agentevent.TypeMeta) {
		switch ev.Attributes["agent.meta.kind"] {
		case "branch":
			branches = append(branches, ev)
		case "leaf":
			leaves = append(leaves, ev)
		case "reset":
			resets = append(resets, ev)
		}
	}
	require.Len(t, branches, 1, "only the leaf control that leaves entries behind")
	assert.Equal(t, "s3:l1#branch", branches[0].EventID)
	assert.Equal(t, "a2", branches[0].Attributes["agent.branch.from_entry"])
	assert.Equal(t, "a1", branches[0].Attributes["agent.branch.to_entry"])
	assert.Equal(t, int64(2), branches[0].Attributes["agent.branch.abandoned_entries"])
	require.Len(t, leaves, 2)
	assert.Equal(t, "a1", leaves[0].Attributes["agent.leaf.target"])
	assert.Equal(t, "side", leaves[1].Attributes["agent.leaf.append_mode"])
	require.Len(t, resets, 1)
	assert.Equal(t, "daily", resets[0].Attributes["agent.reset.reason"])
	assert.Equal(t, "a3", resets[0].Attributes["agent.reset.first_kept_entry"])
	for i := range events {
		assert.Empty(t, events[i].Unparsed)
	}
	assert.Empty(t, agentevent.Validate(events).Violations)
}
