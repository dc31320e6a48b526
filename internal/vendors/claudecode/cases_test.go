// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// The golden files pin every field; these tests state, per case, the few
// facts the case exists for, so that a regenerated golden file that lost one
// of them fails loudly.

func parseCase(t *testing.T, name string) []agentevent.Event {
	t.Helper()
	events := parseDir(t, filepath.Join(repoRoot(t), "testdata", "claude_code", name))
	require.NotEmpty(t, events)
	return events
}

func filter(events []agentevent.Event, keep func(agentevent.Event) bool) []agentevent.Event {
	var out []agentevent.Event
	for i := range events {
		ev := &events[i]
		if keep(*ev) {
			out = append(out, *ev)
		}
	}
	return out
}

func ofType(events []agentevent.Event, typ agentevent.EventType) []agentevent.Event {
	return filter(events, func(ev agentevent.Event) bool { return ev.Type == typ })
}

func byTool(events []agentevent.Event, typ agentevent.EventType, tool string) []agentevent.Event {
	return filter(events, func(ev agentevent.Event) bool { return ev.Type == typ && ev.ToolName == tool })
}

func TestCaseStreamingSplit(t *testing.T) {
	events := parseCase(t, "streaming_split")
	// Two responses: output 412 (streamed 8, 8, 8, 412) and 57 (2, 57).
	assert.Equal(t, tokenTotals{Input: 10, Output: 469, CacheRead: 11840 + 14055, CacheCreation: 2215 + 655}, sumTokens(events))
	// Each response's final usage is on exactly one event: the first event
	// of its last row (the one with a stop_reason), never split over rows.
	withTokens := filter(events, func(ev agentevent.Event) bool { return ev.TokensOutput != nil })
	require.Len(t, withTokens, 2)
	assert.Equal(t, []int64{412, 57}, []int64{*withTokens[0].TokensOutput, *withTokens[1].TokensOutput})
	for _, ev := range withTokens {
		assert.NotEmpty(t, ev.FinishReason, "the last row of the response carries its usage")
		assert.Nil(t, ev.Attributes[agentevent.AttrUsageCarrier])
	}
	turn := ofType(events, agentevent.TypeMeta)
	require.Len(t, turn, 1)
	assert.Equal(t, int64(16240), turn[0].Attributes[agentevent.AttrTurnDurationMs])
}

func TestCaseBashFailure(t *testing.T) {
	events := parseCase(t, "bash_failure")
	results := byTool(events, agentevent.TypeToolResult, "Bash")
	require.Len(t, results, 2)
	assert.Equal(t, agentevent.ToolError, results[0].ToolStatus)
	assert.Equal(t, agentevent.Int(2), results[0].ToolExitCode)
	assert.Equal(t, agentevent.ErrorTypeExitCode, results[0].ErrorType)
	assert.Equal(t, agentevent.Int(4120), results[0].ToolLatencyMs)
	assert.Equal(t, agentevent.ToolSuccess, results[1].ToolStatus)
	assert.Equal(t, agentevent.Int(0), results[1].ToolExitCode)
	edit := byTool(events, agentevent.TypeToolResult, "Edit")
	require.Len(t, edit, 1)
	assert.Equal(t, "/home/dev/src/inventory/store/sku.go", edit[0].FilePath)
	assert.Equal(t, agentevent.FileModify, edit[0].FileOp)
	assert.Equal(t, "go", edit[0].FileLanguage)
}

func TestCaseTurnRollup(t *testing.T) {
	events := parseCase(t, "turn_rollup")
	require.Len(t, ofType(events, agentevent.TypeUserMessage), 3)

	type change struct {
		path, change   string
		added, removed int64
	}
	var changes []change
	for _, ev := range ofType(events, agentevent.TypeToolResult) {
		if c, ok := ev.Attributes[agentevent.AttrFileChangeType].(string); ok {
			changes = append(changes, change{filepath.Base(ev.FilePath), c, ev.Attributes[agentevent.AttrFileLinesAdded].(int64), ev.Attributes[agentevent.AttrFileLinesRemoved].(int64)})
		}
	}
	assert.Equal(t, []change{
		{"UserValidator.ts", "modified", 3, 1},      // Edit, one hunk
		{"UserValidator.test.ts", "modified", 5, 1}, // MultiEdit, two hunks
		{"nullable.ts", "created", 8, 0},            // Write create: the content's lines
		{"UserValidator.ts", "modified", 3, 1},      // Edit, two hunks
		{"handler.go", "modified", 3, 0},            // Write update: its patch
	}, changes)

	var commands []string
	for _, ev := range byTool(events, agentevent.TypeToolCall, "Bash") {
		commands = append(commands, ev.Attributes[agentevent.AttrToolCommand].(string))
	}
	assert.Equal(t, []string{"npx jest src/validators", "npx jest src/validators", "git status --short", "cd api && go test -v ./...", "go test ./..."}, commands)

	var tests []testFact
	for _, ev := range byTool(events, agentevent.TypeToolResult, "Bash") {
		tests = append(tests, testOf(ev))
	}
	assert.Equal(t, []testFact{
		{"jest", 5, 4, 1},  // failing run, "Exit code 1" first
		{"jest", 5, 5, 0},  // jest writes to stderr: the content has it
		{"", -1, -1, -1},   // git status is no test
		{"go", 5, 5, 0},    // go test -v: 2 tests, 3 subtests; a skip is not run
		{"go", -1, -1, -1}, // go test without -v prints packages only
	}, tests)
}

func TestCaseToolResultShapes(t *testing.T) {
	events := parseCase(t, "tool_result_shapes")
	results := ofType(events, agentevent.TypeToolResult)
	require.Len(t, results, 3)
	assert.Equal(t, "mcp__github__get_issue", results[0].ToolName) // toolUseResult is a list
	assert.Equal(t, agentevent.ToolSuccess, results[0].ToolStatus)
	assert.Contains(t, results[0].Text, `"number":214`)
	assert.Equal(t, "Read", results[1].ToolName) // content is an image block
	assert.Equal(t, "[image]", results[1].Text)
	assert.Equal(t, "WebFetch", results[2].ToolName) // toolUseResult is a string
	assert.Equal(t, agentevent.ToolError, results[2].ToolStatus)
	assert.Equal(t, agentevent.ErrorTypeTool, results[2].ErrorType)
	assert.Nil(t, results[2].ToolExitCode)
}

func TestCaseInterrupt(t *testing.T) {
	events := parseCase(t, "interrupt")
	interrupts := filter(events, func(ev agentevent.Event) bool { return ev.Status == "interrupted" })
	require.Len(t, interrupts, 2)
	for _, ev := range interrupts {
		assert.Equal(t, agentevent.TypeLog, ev.Type)
	}
	prompts := ofType(events, agentevent.TypeUserMessage)
	require.Len(t, prompts, 3, "interrupt notices are not prompts")
	first := byTool(events, agentevent.TypeToolResult, "Bash")[0]
	assert.Equal(t, agentevent.ErrorTypeInterrupted, first.ErrorType)
	assert.Nil(t, first.ToolExitCode)
}

func TestCaseSyntheticAPIError(t *testing.T) {
	events := parseCase(t, "synthetic_api_error")
	retries := filter(events, func(ev agentevent.Event) bool { return ev.ErrorType == agentevent.ErrorTypeAPIRetry })
	require.Len(t, retries, 2)
	failures := filter(events, func(ev agentevent.Event) bool { return ev.ErrorType == agentevent.ErrorTypeAPI })
	require.Len(t, failures, 1)
	assert.Equal(t, "error", failures[0].Status)
	assert.Empty(t, failures[0].Model)
	assert.Nil(t, failures[0].TokensInput)
	for _, ev := range events {
		assert.NotEqual(t, syntheticModel, ev.Model)
	}
}

func TestCaseThinking(t *testing.T) {
	events := parseCase(t, "thinking")
	reasoning := ofType(events, agentevent.TypeReasoning)
	require.Len(t, reasoning, 2) // thinking and redacted_thinking
	// 2.1.111 repeats the final usage on every row: counted once.
	assert.Equal(t, tokenTotals{Input: 10, Output: 356, CacheRead: 15210, CacheCreation: 1304}, sumTokens(events))
}

func TestCaseCompaction(t *testing.T) {
	events := parseCase(t, "compaction")
	boundary := filter(events, func(ev agentevent.Event) bool { return ev.Attributes[agentevent.AttrMetaKind] == "compact_boundary" })
	require.Len(t, boundary, 1)
	assert.Equal(t, "manual", boundary[0].Attributes[agentevent.AttrCompactionTrigger])
	assert.Equal(t, int64(22874), boundary[0].Attributes[agentevent.AttrCompactionPreTokens])
	assert.Equal(t, int64(3120), boundary[0].Attributes[agentevent.AttrCompactionPostTokens])
	summaries := ofType(events, agentevent.TypeSessionSummary)
	require.Len(t, summaries, 1)
	assert.Greater(t, summaries[0].Sequence, boundary[0].Sequence)
	prompts := ofType(events, agentevent.TypeUserMessage)
	require.Len(t, prompts, 3)
	assert.Equal(t, "/compact keep the TODO list", prompts[1].Text)
}

func TestCaseNestedSubagent(t *testing.T) {
	events := parseCase(t, "nested_subagent")
	const agent = "a4f19c27b80e3d615"
	spawn := byTool(events, agentevent.TypeToolResult, "Agent")
	require.Len(t, spawn, 1)
	assert.Equal(t, agent, spawn[0].SpawnedAgentID)
	assert.Empty(t, spawn[0].AgentID)
	call := byTool(events, agentevent.TypeToolCall, "Agent")
	require.Len(t, call, 1)
	assert.Equal(t, "general-purpose", call[0].SubagentType)

	sub := filter(events, func(ev agentevent.Event) bool { return ev.AgentID == agent })
	require.NotEmpty(t, sub)
	assert.Equal(t, agentevent.TypeUserMessage, sub[0].Type, "the subagent's prompt opens its own thread")
	assert.Empty(t, sub[0].ParentEventID)
	for _, ev := range sub {
		assert.True(t, ev.IsSidechain)
		assert.Equal(t, "2c7d9e1f-3a5b-4c8d-9e0f-6a1b2c3d4e5f", ev.SessionID)
	}
	failed := byTool(sub, agentevent.TypeToolResult, "Bash")
	require.Len(t, failed, 1)
	assert.Equal(t, agentevent.Int(1), failed[0].ToolExitCode)
	assert.Equal(t, agentevent.ErrorTypeExitCode, failed[0].ErrorType)
	// The subagent's usage is counted in its own file only (the Agent
	// result's toolUseResult.usage repeats it and is not added).
	assert.Equal(t, tokenTotals{Input: 13, Output: 379, CacheRead: 5210 + 5850, CacheCreation: 5210 + 640 + 410}, sumTokens(sub))
}

func TestCaseInlineSidechain(t *testing.T) {
	events := parseCase(t, "inline_sidechain")
	task := byTool(events, agentevent.TypeToolCall, "Task")
	require.Len(t, task, 1)
	agent := sidechainPrefix + task[0].ToolCallID
	side := filter(events, func(ev agentevent.Event) bool { return ev.IsSidechain })
	// 1.0.x rows have no stop_reason: the sidechain's response gets its
	// usage on an event of its own once the next record shows it ended.
	deferred := filter(side, func(ev agentevent.Event) bool {
		return ev.Attributes[agentevent.AttrUsageCarrier] == agentevent.UsageCarrierDeferred
	})
	require.Len(t, deferred, 2)
	for _, ev := range deferred {
		assert.Equal(t, agentevent.TypeAssistantMessage, ev.Type)
	}
	require.Len(t, side, 6)
	for _, ev := range side {
		assert.Equal(t, agent, ev.AgentID)
		assert.Equal(t, task[0].ToolCallID, ev.ParentToolCallID)
	}
	assert.Equal(t, agentevent.TypeUserMessage, side[0].Type)
	result := byTool(events, agentevent.TypeToolResult, "Task")
	require.Len(t, result, 1)
	assert.Equal(t, agent, result[0].SpawnedAgentID)
	assert.Empty(t, result[0].AgentID)
	assert.Equal(t, task[0].ParentEventID, result[0].ParentEventID, "the sidechain's prompt does not start a main-thread turn")
	for _, ev := range events {
		assert.Nil(t, ev.Attributes[agentevent.AttrSubagentLink], "a Task call spawned the sidechain")
	}
}

// The same 1.0.x file without the rows that hold the Task call: no open
// call explains the sidechain (as with a warmup), so its events say that
// no tool call spawned it, also after a restart in its middle.
func TestCaseInlineSidechainUnexplained(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "testdata", "claude_code", "inline_sidechain")
	name := "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d.jsonl"
	data, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	lines := splitLines(data)
	require.Len(t, lines, 9)
	p := NewParser(name)
	var events []agentevent.Event
	for i, l := range lines[:7] {
		if i == 1 || i == 2 {
			continue // the assistant rows of the Task call
		}
		if i == 5 {
			state, err := p.MarshalState()
			require.NoError(t, err)
			p = NewParser(name)
			require.NoError(t, p.UnmarshalState(state))
		}
		events = append(events, p.Parse(l.Data, l.No, l.Offset)...)
	}
	events = append(events, p.Flush()...)
	side := filter(events, func(ev agentevent.Event) bool { return ev.IsSidechain })
	require.Len(t, side, 6)
	for _, ev := range side {
		assert.Equal(t, sidechainPrefix+side[0].EventID, ev.AgentID)
		assert.Empty(t, ev.ParentToolCallID)
		assert.Equal(t, agentevent.SubagentLinkNone, ev.Attributes[agentevent.AttrSubagentLink])
	}
	for _, ev := range filter(events, func(ev agentevent.Event) bool { return !ev.IsSidechain }) {
		assert.Nil(t, ev.Attributes[agentevent.AttrSubagentLink])
	}
}

func TestCaseFlatWarmupAgents(t *testing.T) {
	events := parseCase(t, "v2.0.28_agtrace_with_agent_files")
	for _, id := range []string{"0c4c3cf8", "90fa40b6"} {
		agent := filter(events, func(ev agentevent.Event) bool { return ev.AgentID == id })
		// Prompt, answer, and the answer's usage (2.0 rows have no
		// stop_reason: it goes out at the end of the file's data).
		require.Len(t, agent, 3)
		assert.Equal(t, "Warmup", agent[0].Text)
		assert.Equal(t, agentevent.UsageCarrierDeferred, agent[2].Attributes[agentevent.AttrUsageCarrier])
		assert.Equal(t, agent[1].ResponseID, agent[2].ResponseID)
		for _, ev := range agent {
			assert.True(t, ev.IsSidechain)
			assert.Empty(t, ev.ParentToolCallID, "warmup agents are spawned by no tool call")
			assert.Equal(t, agentevent.SubagentLinkNone, ev.Attributes[agentevent.AttrSubagentLink], "nothing will claim a warmup: its events say so")
		}
	}
	assert.Empty(t, filter(events, func(ev agentevent.Event) bool { return ev.SpawnedAgentID != "" }))
	main := filter(events, func(ev agentevent.Event) bool { return !ev.IsSidechain })
	require.NotEmpty(t, main)
	for _, ev := range main {
		assert.Nil(t, ev.Attributes[agentevent.AttrSubagentLink], "the main thread is no subagent")
	}
}

// A warmup file read in two parts, with a restart between them: the
// second part's events still say that nothing spawned the subagent.
func TestWarmupSurvivesRestart(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "testdata", "claude_code", "v2.0.28_agtrace_with_agent_files")
	data, err := os.ReadFile(filepath.Join(dir, "agent-0c4c3cf8.jsonl"))
	require.NoError(t, err)
	lines := splitLines(data)
	require.Len(t, lines, 2)
	first := NewParser("agent-0c4c3cf8.jsonl")
	require.Len(t, first.Parse(lines[0].Data, lines[0].No, lines[0].Offset), 1)
	state, err := first.MarshalState()
	require.NoError(t, err)

	second := NewParser("agent-0c4c3cf8.jsonl")
	require.NoError(t, second.UnmarshalState(state))
	rest := append(second.Parse(lines[1].Data, lines[1].No, lines[1].Offset), second.Flush()...)
	require.Len(t, rest, 2)
	for _, ev := range rest {
		assert.Equal(t, agentevent.SubagentLinkNone, ev.Attributes[agentevent.AttrSubagentLink])
	}
}

// A subagent file whose prompt is not the warmup word is spawned by a tool
// call: its events do not say otherwise.
func TestSpawnedAgentFileIsNotUnspawned(t *testing.T) {
	events := parseCase(t, "nested_subagent")
	side := filter(events, func(ev agentevent.Event) bool { return ev.IsSidechain })
	require.NotEmpty(t, side)
	for _, ev := range side {
		assert.Nil(t, ev.Attributes[agentevent.AttrSubagentLink])
	}
}

func TestCaseSlashCommand(t *testing.T) {
	events := parseCase(t, "v1.0.98_viewer_basic")
	require.Equal(t, agentevent.TypeUserMessage, events[0].Type)
	assert.Equal(t, "/init", events[0].Text)
	assert.Equal(t, agentevent.TypeMeta, events[1].Type, "the expanded /init prompt is injected (isMeta)")
	for _, ev := range events[1:] {
		assert.Equal(t, events[0].EventID, ev.ParentEventID, "the command's work belongs to its turn")
	}
}

func TestCaseNoConversation(t *testing.T) {
	for name, typ := range map[string]agentevent.EventType{
		"summary_only":  agentevent.TypeSessionSummary,
		"snapshot_only": agentevent.TypeFileSnapshot,
	} {
		t.Run(name, func(t *testing.T) {
			events := parseCase(t, name)
			for _, ev := range events {
				assert.Equal(t, typ, ev.Type)
				assert.Empty(t, ev.Unparsed)
				assert.Empty(t, ev.ParentEventID)
			}
		})
	}
	snapshots := parseCase(t, "snapshot_only")
	require.Len(t, snapshots, 3)
	assert.Equal(t, "snapshot of 2 files", snapshots[1].Text)
}

func TestCaseMalformed(t *testing.T) {
	events := parseCase(t, "malformed")
	var reasons []string
	for _, ev := range events {
		if ev.Unparsed != "" {
			reasons = append(reasons, ev.Unparsed)
		}
	}
	assert.Equal(t, []string{ReasonMalformedJSON, ReasonUnknownType, ReasonUnexpectedShape, ReasonUnexpectedShape}, reasons)
	prompts := ofType(events, agentevent.TypeUserMessage)
	require.Len(t, prompts, 2, "the records after the bad ones are mapped")
	last := events[len(events)-1]
	assert.Equal(t, agentevent.TypeAssistantMessage, last.Type)
	assert.Equal(t, prompts[1].EventID, last.ParentEventID)
	assert.Equal(t, int64(len(events)), last.Sequence)
}

// A /btw side-question file opens with a copy of the parent's rows (same
// uuid and message.id): only the side question and its answer come out, and
// the session's usage equals the main file's plus the answer's, once.
func TestCaseAsideQuestion(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "testdata", "claude_code", "aside_question")
	main := parseFile(t, dir, "9e4b2d71-5c3a-4f08-b6e2-d17a0c5f3e92.jsonl")
	aside := parseFile(t, dir, "9e4b2d71-5c3a-4f08-b6e2-d17a0c5f3e92/subagents/agent-aside_question-5c1e0a9d7b3f2468.jsonl")
	require.Len(t, aside, 2)
	assert.Equal(t, agentevent.TypeUserMessage, aside[0].Type)
	assert.Equal(t, "btw, which Go version does the CI use?", aside[0].Text)
	assert.Equal(t, agentevent.TypeAssistantMessage, aside[1].Type)
	assert.Equal(t, aside[0].EventID, aside[1].ParentEventID)
	for _, ev := range aside {
		assert.Equal(t, "aside_question-5c1e0a9d7b3f2468", ev.AgentID)
		assert.True(t, ev.IsSidechain)
	}
	ids := map[string]bool{}
	for _, ev := range append(main, aside...) {
		assert.False(t, ids[ev.EventID], "event %s emitted twice", ev.EventID)
		ids[ev.EventID] = true
	}
	want := sumTokens(main)
	want.Input += 4
	want.CacheCreation += 120
	want.CacheRead += 14700
	want.Output += 31
	assert.Equal(t, want, sumTokens(append(main, aside...)))
	assert.Empty(t, agentevent.Validate(append(main, aside...)).Violations)
}

// The vendor's end-of-turn markers, in the form the connector reads
// (agentevent.AttrTurnEnd): turn_duration (completed), the interrupt rows
// (interrupted), Claude Code giving up on a model call (error).
func TestTurnEndMarkers(t *testing.T) {
	ends := func(name string) map[string]int {
		got := map[string]int{}
		for _, ev := range parseCase(t, name) {
			if e, ok := ev.Attributes[agentevent.AttrTurnEnd].(string); ok {
				got[e]++
			}
		}
		return got
	}
	assert.Equal(t, map[string]int{agentevent.TurnEndCompleted: 1}, ends("streaming_split"))
	assert.Equal(t, 2, ends("interrupt")[agentevent.TurnEndInterrupted])
	assert.Equal(t, 1, ends("synthetic_api_error")[agentevent.TurnEndError])
	for _, ev := range parseCase(t, "streaming_split") {
		if ev.Attributes[agentevent.AttrTurnEnd] != nil {
			assert.Equal(t, agentevent.TypeMeta, ev.Type, "on the turn_duration row")
		}
	}
}
