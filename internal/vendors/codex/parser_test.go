// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

const meta = `{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s1","cwd":"/w","cli_version":"0.98.0","source":"cli","model_provider":"openai"}}`

func tc(in, cached, out, reasoning int) string {
	u := `{"input_tokens":` + itoa(in) + `,"cached_input_tokens":` + itoa(cached) + `,"output_tokens":` + itoa(out) + `,"reasoning_output_tokens":` + itoa(reasoning) + `,"total_tokens":0}`
	return `{"timestamp":"2026-01-01T00:00:01Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":` + u + `,"last_token_usage":` + u + `}}}`
}

func itoa(n int) string { return strconv.Itoa(n) }

func lines(ls ...string) []byte { return []byte(strings.Join(ls, "\n") + "\n") }

// Trap 2: token_count re-emitted unchanged and info null count nothing;
// increments of the cumulative total sum to the final total.
func TestTokenCountIncrements(t *testing.T) {
	data := lines(meta,
		`{"timestamp":"2026-01-01T00:00:01Z","type":"event_msg","payload":{"type":"token_count","info":null}}`,
		tc(100, 40, 10, 5), tc(100, 40, 10, 5), tc(250, 140, 30, 5), tc(250, 140, 30, 5))
	events := parseBytes("r.jsonl", data)
	var usageEvents int
	for _, ev := range events {
		if ev.TokensInput != nil {
			usageEvents++
		}
	}
	assert.Equal(t, 2, usageEvents)
	assert.Equal(t, tokenTotals{Input: 110, CacheRead: 140, Output: 30, Reasoning: 5}, sumTokens(events))
}

// Trap 3: a forked child skips the replayed parent history and never
// counts the inherited totals.
func TestForkSkipsReplay(t *testing.T) {
	data := lines(
		`{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"child","source":{"subagent":{"thread_spawn":{"parent_thread_id":"parent","depth":1,"agent_role":"worker"}}}}}`,
		`{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"parent","source":"cli"}}`,
		`{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"task_started"}}`,
		`{"timestamp":"2026-01-01T00:00:00Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"parent prompt"}]}}`,
		tc(1000, 500, 50, 0),
		`{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"task_started"}}`,
		`{"timestamp":"2026-01-01T00:00:00Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"child prompt"}]}}`,
		tc(1300, 700, 70, 0))
	events := parseBytes("c.jsonl", data)
	var prompts []string
	for _, ev := range events {
		// The child keeps its own thread id and names its parent.
		assert.Equal(t, "child", ev.SessionID)
		assert.Equal(t, "parent", ev.Attributes[agentevent.AttrParentSessionID])
		assert.Equal(t, "parent", ev.Attributes[agentevent.AttrRootSessionID])
		assert.Equal(t, "parent", agentevent.TreeSession(&ev))
		assert.Equal(t, "child", ev.AgentID)
		assert.Equal(t, "worker", ev.SubagentType)
		assert.Equal(t, agentevent.SubagentLinkTurn, ev.Attributes[agentevent.AttrSubagentLink])
		if ev.Type == agentevent.TypeUserMessage {
			prompts = append(prompts, ev.Text)
		}
	}
	assert.Equal(t, []string{"child prompt"}, prompts)
	assert.Equal(t, tokenTotals{Input: 100, CacheRead: 200, Output: 20}, sumTokens(events))
}

// The prompt is in both a response_item message and an event_msg
// user_message: one user_message; injected context is no prompt.
func TestPromptOnce(t *testing.T) {
	data := lines(meta,
		`{"timestamp":"2026-01-01T00:00:00Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>x</environment_context>"}]}}`,
		`{"timestamp":"2026-01-01T00:00:00Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}`,
		`{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"user_message","message":"hi"}}`,
		`{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"user_message","message":"hi"}}`,
		`{"timestamp":"2026-01-01T00:00:00Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}`)
	var n int
	for _, ev := range parseBytes("r.jsonl", data) {
		if ev.Type == agentevent.TypeUserMessage {
			n++
		}
	}
	assert.Equal(t, 2, n, "each copy pair is one prompt; the same text sent twice is two prompts")
}

// Trap 5: exit codes and durations in the three dialects; *_end wins.
func TestExitCodeDialects(t *testing.T) {
	call := func(id string) string {
		return `{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"function_call","name":"shell_command","arguments":"{\"command\":\"ls\"}","call_id":"` + id + `"}}`
	}
	out := func(id, output string) string {
		return `{"timestamp":"2026-01-01T00:00:03Z","type":"response_item","payload":{"type":"function_call_output","call_id":"` + id + `","output":` + output + `}}`
	}
	data := lines(meta,
		call("a"), out("a", `"Exit code: 2\nWall time: 1.5 seconds\nOutput:\n"`),
		call("b"), out("b", `"{\"output\":\"x\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.25}}"`),
		call("c"), out("c", `"Chunk ID: 1\nWall time: 0.0500 seconds\nProcess exited with code 7\nOutput:\n"`),
		call("d"),
		`{"timestamp":"2026-01-01T00:00:02Z","type":"event_msg","payload":{"type":"exec_command_end","call_id":"d","exit_code":3,"duration":{"secs":4,"nanos":500000000},"status":"failed"}}`,
		out("d", `"Exit code: 0\nWall time: 9 seconds\n"`),
		call("e"), out("e", `"plain output"`))
	results := map[string]agentevent.Event{}
	for _, ev := range parseBytes("r.jsonl", data) {
		if ev.Type == agentevent.TypeToolResult {
			results[ev.ToolCallID] = ev
		}
	}
	for id, want := range map[string][2]int64{"a": {2, 1500}, "b": {0, 250}, "c": {7, 50}, "d": {3, 4500}} {
		assert.Equal(t, want[0], *results[id].ToolExitCode, id)
		assert.Equal(t, want[1], *results[id].ToolLatencyMs, id)
	}
	assert.Equal(t, agentevent.ToolError, results["a"].ToolStatus)
	assert.Equal(t, "exit_code", results["a"].ErrorType)
	assert.Equal(t, agentevent.ToolSuccess, results["b"].ToolStatus)
	assert.Nil(t, results["e"].ToolExitCode)
	assert.Equal(t, int64(2000), *results["e"].ToolLatencyMs, "no duration recorded: time since the call")
}

// Restart: a state round-trip after any line gives the events of an
// uninterrupted parse (every golden case), and records at or before the
// saved offset are dropped.
func TestStateRoundTrip(t *testing.T) {
	root := filepath.Join(repoRoot(t), "testdata", "codex")
	cases, err := os.ReadDir(root)
	require.NoError(t, err)
	for _, c := range cases {
		dir := filepath.Join(root, c.Name())
		for _, f := range caseFilesOf(t, dir) {
			data, err := os.ReadFile(filepath.Join(dir, f))
			require.NoError(t, err)
			ls := splitLines(data)
			want := parseBytes(f, data)
			for cut := 1; cut < len(ls); cut++ {
				p := NewParser(f)
				var got []agentevent.Event
				for _, l := range ls[:cut] {
					got = append(got, p.Parse(l.Data, l.No, l.Offset)...)
				}
				st, err := p.MarshalState()
				require.NoError(t, err)
				q := NewParser(f)
				require.NoError(t, q.UnmarshalState(st))
				for _, l := range ls { // replayed from the start: dropped up to cut
					got = append(got, q.Parse(l.Data, l.No, l.Offset)...)
				}
				require.Len(t, got, len(want), "%s cut at line %d", f, cut)
				for i := range want {
					w, g := want[i], got[i]
					w.Raw, g.Raw = nil, nil
					require.Equal(t, w, g, "%s cut at line %d, event %d", f, cut, i)
				}
			}
		}
	}
}

func caseFilesOf(tb testing.TB, dir string) []string {
	entries, err := os.ReadDir(dir)
	require.NoError(tb, err)
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".jsonl") {
			out = append(out, e.Name())
		}
	}
	return out
}

// Bad input never panics: malformed JSON and unknown types are Unparsed.
func TestBadInput(t *testing.T) {
	for in, reason := range map[string]string{
		`{"type":"session_meta","payload":`: ReasonMalformedJSON,
		`[1,2]`:                             ReasonUnexpectedShape,
		`{"timestamp":"x","type":"nope","payload":{}}`:                ReasonUnknownType,
		`{"type":"event_msg","payload":{"type":"brand_new_event"}}`:   ReasonUnknownType,
		`{"type":"response_item","payload":{"type":"new_item_kind"}}`: ReasonUnknownType,
		`{"type":"event_msg","payload":"str"}`:                        ReasonUnexpectedShape,
	} {
		evs := NewParser("r.jsonl").Parse([]byte(in), 1, 0)
		require.Len(t, evs, 1, in)
		assert.Equal(t, reason, evs[0].Unparsed, in)
		assert.Empty(t, agentevent.Validate(evs).Violations)
	}
}

// A /review rollout names no parent: a subagent thread of its own session
// that asks to be nested under the turn whose entered_review_mode anchors it
// (same project, just before); when the caller names the parent, a
// turn-linked subagent of it.
func TestReviewRollout(t *testing.T) {
	data := lines(
		`{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"rev","cwd":"/proj","source":{"subagent":"review"},"model_provider":"openai"}}`,
		`{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Review the changes."}]}}`)
	for _, ev := range parseBytes("r.jsonl", data) {
		assert.Equal(t, "rev", ev.SessionID)
		assert.Equal(t, "rev", ev.AgentID)
		assert.True(t, ev.IsSidechain)
		assert.Equal(t, "review", ev.SubagentType)
		assert.Equal(t, "/proj", ev.ProjectRoot)
		assert.Equal(t, agentevent.SubagentLinkAnchor, ev.Attributes[agentevent.AttrSubagentLink])
		assert.Equal(t, "review", ev.Attributes[agentevent.AttrSubagentAnchor])
	}

	// The parent's entered_review_mode is the anchor.
	parent := lines(meta,
		`{"timestamp":"2026-01-01T00:00:00Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"/review"}]}}`,
		`{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"entered_review_mode"}}`)
	var anchors int
	for _, ev := range parseBytes("p.jsonl", parent) {
		if ev.Attributes[agentevent.AttrSubagentAnchor] == "review" {
			anchors++
			assert.Empty(t, ev.AgentID, "the anchor is on the parent's main thread")
		}
	}
	assert.Equal(t, 1, anchors)
	p := NewParser("r.jsonl")
	p.SetParentSession("parent")
	var events []agentevent.Event
	for _, l := range splitLines(data) {
		events = append(events, p.Parse(l.Data, l.No, l.Offset)...)
	}
	require.Len(t, events, 2)
	for _, ev := range events {
		assert.Equal(t, "rev", ev.SessionID)
		assert.Equal(t, "parent", agentevent.TreeSession(&ev))
		assert.Equal(t, "rev", ev.AgentID)
		assert.True(t, ev.IsSidechain)
		assert.Equal(t, agentevent.SubagentLinkTurn, ev.Attributes[agentevent.AttrSubagentLink])
	}
	assert.Empty(t, agentevent.Validate(events).Violations)
}

// apply_patch facts, MCP and web search outcomes, compaction.
func TestToolsAndCompaction(t *testing.T) {
	data := lines(meta,
		`{"timestamp":"2026-01-01T00:00:00Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}}`,
		`{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"custom_tool_call","status":"completed","call_id":"p1","name":"apply_patch","input":"*** Begin Patch\n*** Add File: a/new.py\n+x = 1\n+y = 2\n*** Delete File: a/old.py\n*** End Patch"}}`,
		`{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"p1","output":"{\"output\":\"Success.\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.0}}"}}`,
		`{"timestamp":"2026-01-01T00:00:03Z","type":"response_item","payload":{"type":"function_call","name":"docs__search","arguments":"{\"q\":\"x\"}","call_id":"m1"}}`,
		`{"timestamp":"2026-01-01T00:00:04Z","type":"event_msg","payload":{"type":"mcp_tool_call_end","call_id":"m1","invocation":{"server":"docs","tool":"search"},"duration":{"secs":0,"nanos":250000000},"result":{"Err":"server gone"}}}`,
		`{"timestamp":"2026-01-01T00:00:05Z","type":"response_item","payload":{"type":"function_call_output","call_id":"m1","output":"server gone"}}`,
		`{"timestamp":"2026-01-01T00:00:06Z","type":"response_item","payload":{"type":"web_search_call","id":"ws1","status":"completed","action":{"type":"search","query":"otel"}}}`,
		`{"timestamp":"2026-01-01T00:00:07Z","type":"compacted","payload":{"message":"summary of the work so far","replacement_history":[]}}`,
		`{"timestamp":"2026-01-01T00:00:07Z","type":"event_msg","payload":{"type":"context_compacted"}}`)
	events := parseBytes("r.jsonl", data)
	require.Empty(t, agentevent.Validate(events).Violations)
	byCall := map[string][]agentevent.Event{}
	var summary, compactedMeta int
	for _, ev := range events {
		require.Empty(t, ev.Unparsed)
		if ev.ToolCallID != "" {
			byCall[ev.ToolCallID] = append(byCall[ev.ToolCallID], ev)
		}
		if ev.Type == agentevent.TypeSessionSummary {
			summary++
			assert.Equal(t, "summary of the work so far", ev.Text)
		}
		if ev.Attributes["agent.codex.event"] == "context_compacted" {
			compactedMeta++
		}
	}
	assert.Equal(t, 1, summary)
	assert.Equal(t, 1, compactedMeta)

	patch := byCall["p1"]
	require.Len(t, patch, 2)
	assert.Equal(t, "a/new.py", patch[0].FilePath)
	assert.Equal(t, agentevent.FileCreate, patch[0].FileOp)
	assert.Equal(t, "python", patch[0].FileLanguage)
	assert.Equal(t, agentevent.ChannelEditor, patch[0].Channel)
	assert.Equal(t, "created", patch[1].Attributes[agentevent.AttrFileChangeType])
	assert.Equal(t, int64(2), patch[1].Attributes[agentevent.AttrFileLinesAdded])
	assert.Equal(t, int64(0), patch[1].Attributes[agentevent.AttrFileLinesRemoved])
	assert.Equal(t, int64(0), *patch[1].ToolExitCode)

	mcp := byCall["m1"]
	require.Len(t, mcp, 2)
	assert.Equal(t, agentevent.ToolError, mcp[1].ToolStatus)
	assert.Equal(t, agentevent.ErrorTypeTool, mcp[1].ErrorType)
	assert.Equal(t, int64(250), *mcp[1].ToolLatencyMs)
	assert.Nil(t, mcp[1].ToolExitCode)

	ws := byCall["ws1"]
	require.Len(t, ws, 2)
	assert.Equal(t, agentevent.TypeToolCall, ws[0].Type)
	assert.Equal(t, "web_search", ws[1].ToolName)
	assert.Equal(t, agentevent.ToolSuccess, ws[1].ToolStatus)
}

// The provider follows model_provider: a local model is not openai.
func TestProvider(t *testing.T) {
	for in, want := range map[string]string{"": "openai", "openai": "openai", "ollama-launch": "ollama", "azure": "azure.ai.openai", "openrouter": "openrouter"} {
		assert.Equal(t, want, providerName(in), in)
	}
}

// A fork of a parent with several turns: the replay holds completed parent
// turns and the open spawning turn; the child's turn starts while that one
// is open. A replay with no task events ends at the first task_started.
func TestForkReplayBoundaries(t *testing.T) {
	head := []string{
		`{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"child","source":{"subagent":{"thread_spawn":{"parent_thread_id":"parent","depth":1}}}}}`,
		`{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"parent","source":"cli"}}`,
	}
	prompt := func(s string) string {
		return `{"timestamp":"2026-01-01T00:00:00Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"` + s + `"}]}}`
	}
	started := `{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"task_started"}}`
	complete := `{"timestamp":"2026-01-01T00:00:00Z","type":"event_msg","payload":{"type":"task_complete"}}`
	for name, tt := range map[string][]string{
		"several parent turns": append(append([]string{}, head...),
			started, prompt("p1"), tc(100, 0, 10, 0), complete,
			started, prompt("p2"), tc(300, 0, 30, 0),
			started, prompt("child"), tc(350, 0, 40, 0)),
		"no task events in the replay": append(append([]string{}, head...),
			prompt("p1"), tc(300, 0, 30, 0),
			started, prompt("child"), tc(350, 0, 40, 0)),
	} {
		t.Run(name, func(t *testing.T) {
			var prompts []string
			events := parseBytes("c.jsonl", lines(tt...))
			for _, ev := range events {
				if ev.Type == agentevent.TypeUserMessage {
					prompts = append(prompts, ev.Text)
				}
			}
			assert.Equal(t, []string{"child"}, prompts)
			assert.Equal(t, tokenTotals{Input: 50, Output: 10}, sumTokens(events))
		})
	}
}

// Issue 10: every token advance lands on exactly one model-call event. One
// with no response to carry it (after turn_aborted or task_complete, after a
// compaction, a second advance within one response) stands for a model call
// of its own and says so; the end markers carry agent.turn.end.
func TestUsageWithoutResponse(t *testing.T) {
	prompt := func(text string) string {
		return `{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"` + text + `"}]}}`
	}
	answer := `{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}}`
	data := lines(meta,
		prompt("one"), answer, tc(100, 0, 10, 0), // carried by the answer
		tc(150, 0, 20, 0), // a second advance of the same response
		`{"timestamp":"2026-01-01T00:00:03Z","type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}`,
		tc(200, 0, 30, 0), // after the abort
		prompt("two"), answer, tc(300, 0, 40, 0),
		`{"timestamp":"2026-01-01T00:00:04Z","type":"event_msg","payload":{"type":"task_complete"}}`,
		tc(350, 0, 45, 0), // at the end of the turn
		`{"timestamp":"2026-01-01T00:00:05Z","type":"event_msg","payload":{"type":"context_compacted"}}`,
		tc(400, 0, 50, 0)) // around a compaction
	events := parseBytes("r.jsonl", data)

	type usageEv struct {
		resp, carrier, parentText string
		in                        int64
	}
	prompts := map[string]string{}
	var got []usageEv
	respOf := map[string]int{}
	var ends []string
	for _, ev := range events {
		if ev.Type == agentevent.TypeUserMessage {
			prompts[ev.EventID] = ev.Text
		}
		if ev.ResponseID != "" {
			respOf[ev.ResponseID]++
		}
		if e, ok := ev.Attributes[agentevent.AttrTurnEnd].(string); ok {
			ends = append(ends, e)
		}
		if ev.TokensInput == nil {
			continue
		}
		c, _ := ev.Attributes[agentevent.AttrUsageCarrier].(string)
		got = append(got, usageEv{resp: ev.ResponseID, carrier: c, parentText: prompts[ev.ParentEventID], in: *ev.TokensInput})
	}
	require.Len(t, got, 6)
	wantCarrier := []string{"", "own", "own", "", "own", "own"}
	wantParent := []string{"one", "one", "one", "two", "two", "two"}
	seen := map[string]bool{}
	for i, u := range got {
		assert.Equal(t, wantCarrier[i], u.carrier, "usage event %d", i)
		assert.Equal(t, wantParent[i], u.parentText, "usage event %d", i)
		assert.NotEmpty(t, u.resp, "usage event %d has a model call", i)
		assert.False(t, seen[u.resp], "usage event %d shares response %s with another usage event", i, u.resp)
		seen[u.resp] = true
		if u.carrier == "" {
			assert.Equal(t, 2, respOf[u.resp], "usage event %d joins its answer", i)
		} else {
			assert.Equal(t, 1, respOf[u.resp], "usage event %d stands alone", i)
		}
	}
	assert.Equal(t, tokenTotals{Input: 400, Output: 50}, sumTokens(events))
	assert.Equal(t, []string{agentevent.TurnEndInterrupted, agentevent.TurnEndCompleted}, ends)
}

// pinRows parses large records whose strings the state keeps (session_meta
// with long instructions, tool calls that stay open with long arguments),
// and returns the parser and the records.
func pinRows(tb testing.TB, rows, size int) (*Parser, [][]byte) {
	tb.Helper()
	big := strings.Repeat("x", size)
	p := NewParser("rollout-2026-01-01T10-00-00-0199a213-81c0-7800-8aa1-bbab2a035a53.jsonl")
	records := [][]byte{[]byte(`{"timestamp":"2026-01-01T10:00:00.000Z","type":"session_meta","payload":{"id":"0199a213-81c0-7800-8aa1-bbab2a035a53","cwd":"/w","cli_version":"0.50.0","originator":"codex_cli_rs","base_instructions":{"text":"` + big + `"}}}`)}
	for i := range rows {
		records = append(records, fmt.Appendf(nil, `{"timestamp":"2026-01-01T10:00:01.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"echo\",\"%s\"]}","call_id":"call_%d"}}`, big, i))
	}
	offset := int64(0)
	for i, r := range records {
		require.NotEmpty(tb, p.Parse(r, int64(i+1), offset))
		offset += int64(len(r)) + 1
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
// whose strings its state keeps stays under half of those records.
func BenchmarkStateHeldHeap(b *testing.B) {
	const rows, size = 20, 2 << 20
	vendortest.HeldHeap(b, rows*size/2, func() any {
		p, _ := pinRows(b, rows, size)
		return p
	})
}

// A spawn_agent child that is no fork (Codex Desktop ≥ 0.126) starts fresh:
// its own session_meta naming the parent thread, then its own task_started
// and messages, no replayed parent history. It counts every advance of its
// own cumulative total and still nests under the parent like a fork.
//
// The rows after the session_meta are real rows of
// ../shared/fixtures-new/codex/v0.131.0_tui_reasoning.jsonl (GPL: read in
// place, never copied into testdata), shortened: the developer and
// environment messages, the rate limits, the answers' text and the
// encrypted reasoning are cut, the turn_context keeps its turn id, cwd and
// model, the cwd is shortened. The session_meta is that file's, with the
// instructions cut and the originator, source, nickname and role of a
// Desktop spawned child (no such child is in the corpus).
func TestFreshSpawnCountsItsTokens(t *testing.T) {
	const usage1 = `{"input_tokens":15564,"cached_input_tokens":5504,"output_tokens":118,"reasoning_output_tokens":12,"total_tokens":15682}`
	const usage2 = `{"input_tokens":35831,"cached_input_tokens":11008,"output_tokens":165,"reasoning_output_tokens":12,"total_tokens":35996}`
	const last2 = `{"input_tokens":20267,"cached_input_tokens":5504,"output_tokens":47,"reasoning_output_tokens":0,"total_tokens":20314}`
	data := lines(
		`{"timestamp":"2026-05-20T02:07:09.086Z","type":"session_meta","payload":{"id":"019e4322-e5ef-77d2-b4f0-a543c9f7819e","timestamp":"2026-05-20T02:07:01.122Z","cwd":"/Users/dev/useful","originator":"Codex Desktop","cli_version":"0.131.0","source":{"subagent":{"thread_spawn":{"parent_thread_id":"019e4300-0000-7000-8000-000000000001","depth":1,"agent_nickname":"Euclid","agent_role":"explorer"}}},"agent_nickname":"Euclid","agent_role":"explorer","thread_source":"subagent","model_provider":"openai","git":{"commit_hash":"28be4319247442f69145071d1c608f59ebf58e68","branch":"main"}}}`,
		`{"timestamp":"2026-05-20T02:07:09.086Z","type":"event_msg","payload":{"type":"task_started","turn_id":"019e4323-0506-7d20-b53d-0762dc45f9e3","started_at":1779242829,"model_context_window":258400,"collaboration_mode_kind":"default"}}`,
		`{"timestamp":"2026-05-20T02:07:09.090Z","type":"turn_context","payload":{"turn_id":"019e4323-0506-7d20-b53d-0762dc45f9e3","cwd":"/Users/dev/useful","model":"gpt-5.4","approval_policy":"on-request"}}`,
		`{"timestamp":"2026-05-20T02:07:09.092Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"can you do anything"}]}}`,
		`{"timestamp":"2026-05-20T02:07:09.092Z","type":"event_msg","payload":{"type":"user_message","message":"can you do anything","images":[],"local_images":[],"text_elements":[]}}`,
		`{"timestamp":"2026-05-20T02:07:10.826Z","type":"response_item","payload":{"type":"reasoning","summary":[],"content":null,"encrypted_content":"gAAAAABqDRdOP7HhlPXNV9AAc81Wxxi7k_Em7NWF"}}`,
		`{"timestamp":"2026-05-20T02:07:12.690Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Yes."}],"phase":"final_answer"}}`,
		`{"timestamp":"2026-05-20T02:07:12.765Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":`+usage1+`,"last_token_usage":`+usage1+`,"model_context_window":258400}}}`,
		`{"timestamp":"2026-05-20T02:07:12.773Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"019e4323-0506-7d20-b53d-0762dc45f9e3","completed_at":1779242832,"duration_ms":3705,"time_to_first_token_ms":1758}}`,
		`{"timestamp":"2026-05-20T02:07:48.303Z","type":"event_msg","payload":{"type":"task_started","turn_id":"019e4323-9e4a-75c2-8270-0a64070672c7","started_at":1779242868,"model_context_window":258400,"collaboration_mode_kind":"default"}}`,
		`{"timestamp":"2026-05-20T02:07:48.310Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"how many token credits do you have"}]}}`,
		`{"timestamp":"2026-05-20T02:07:48.310Z","type":"event_msg","payload":{"type":"user_message","message":"how many token credits do you have","images":[],"local_images":[],"text_elements":[]}}`,
		`{"timestamp":"2026-05-20T02:07:51.289Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"I don't have visibility into your token-credit balance."}],"phase":"final_answer"}}`,
		`{"timestamp":"2026-05-20T02:07:51.339Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":`+usage2+`,"last_token_usage":`+last2+`,"model_context_window":258400}}}`,
		`{"timestamp":"2026-05-20T02:07:51.341Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"019e4323-9e4a-75c2-8270-0a64070672c7","completed_at":1779242871,"duration_ms":3038,"time_to_first_token_ms":2117}}`)
	check := func(t *testing.T, events []agentevent.Event) {
		t.Helper()
		// The advances of total_token_usage: 0 → usage1 → usage2.
		assert.Equal(t, tokenTotals{Input: 35831 - 11008, CacheRead: 11008, Output: 165, Reasoning: 12}, sumTokens(events))
		var prompts []string
		for _, ev := range events {
			assert.Equal(t, "019e4322-e5ef-77d2-b4f0-a543c9f7819e", ev.SessionID)
			assert.Equal(t, "019e4322-e5ef-77d2-b4f0-a543c9f7819e", ev.AgentID)
			assert.Equal(t, "019e4300-0000-7000-8000-000000000001", ev.Attributes[agentevent.AttrParentSessionID])
			assert.Equal(t, "019e4300-0000-7000-8000-000000000001", agentevent.TreeSession(&ev))
			assert.Equal(t, "explorer", ev.SubagentType)
			assert.True(t, ev.IsSidechain)
			assert.Equal(t, agentevent.SubagentLinkTurn, ev.Attributes[agentevent.AttrSubagentLink])
			if ev.Type == agentevent.TypeUserMessage {
				prompts = append(prompts, ev.Text)
			}
		}
		assert.Equal(t, []string{"can you do anything", "how many token credits do you have"}, prompts)
	}
	t.Run("whole file", func(t *testing.T) { check(t, parseBytes("c.jsonl", data)) })
	t.Run("restart after the session_meta", func(t *testing.T) {
		ls := splitLines(data)
		p := NewParser("c.jsonl")
		events := p.Parse(ls[0].Data, ls[0].No, ls[0].Offset)
		st, err := p.MarshalState()
		require.NoError(t, err)
		p = NewParser("c.jsonl")
		require.NoError(t, p.UnmarshalState(st))
		for _, l := range ls[1:] {
			events = append(events, p.Parse(l.Data, l.No, l.Offset)...)
		}
		check(t, events)
	})
}
