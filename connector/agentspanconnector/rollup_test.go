// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// Facts the parsers put on events, as the connector's tests build them.

func command(cmd string) mod {
	return func(e *agentevent.Event) { e.Attributes = map[string]any{agentevent.AttrToolCommand: cmd} }
}

func edited(path, change string, added, removed int64) mod {
	return func(e *agentevent.Event) {
		e.FilePath, e.FileOp = path, agentevent.FileModify
		e.Attributes = map[string]any{agentevent.AttrFileChangeType: change, agentevent.AttrFileLinesAdded: added, agentevent.AttrFileLinesRemoved: removed}
	}
}

func exited(code int64) mod {
	return func(e *agentevent.Event) { e.ToolExitCode = agentevent.Int(code) }
}

func tested(runner string, counts ...int64) mod {
	return func(e *agentevent.Event) {
		e.Attributes = map[string]any{agentevent.AttrTestRunner: runner}
		if len(counts) == 2 {
			e.Attributes[agentevent.AttrTestRun], e.Attributes[agentevent.AttrTestPassed] = counts[0], counts[1]
		}
	}
}

// rollupTurn is one turn that edits, creates and fails to edit files, runs
// tests that fail and pass, a plain command, a declined command and one
// still running when the turn closes.
func rollupTurn(s *session) []agentevent.Event {
	return []agentevent.Event{
		s.prompt("p1", 0),
		s.call("c1", "m1", "t1", "Edit", 1),
		s.result("r1", "t1", "Edit", 2, edited("/w/a.go", "modified", 3, 1)),
		s.call("c2", "m2", "t2", "Write", 3),
		s.result("r2", "t2", "Write", 4, edited("/w/b.go", "created", 10, 0)),
		s.call("c3", "m3", "t3", "Edit", 5),
		s.result("r3", "t3", "Edit", 6, func(e *agentevent.Event) { e.FilePath, e.FileOp = "/w/c.go", agentevent.FileModify }, failed(0, "tool_error"), exitless),
		s.call("c4", "m4", "t4", "Bash", 7, command("go test ./...")),
		s.result("r4", "t4", "Bash", 9, failed(1, "exit_code"), tested("go", 3, 2)),
		s.call("c5", "m5", "t5", "Edit", 10),
		s.result("r5", "t5", "Edit", 11, edited("/w/a.go", "modified", 1, 1)),
		s.call("c6", "m6", "t6", "Bash", 12, command("go test ./...")),
		s.result("r6", "t6", "Bash", 14, exited(0), tested("go")),
		s.call("c7", "m7", "t7", "Bash", 15, command("ls -la")),
		s.result("r7", "t7", "Bash", 15.5, exited(0)),
		s.call("c8", "m8", "t8", "Bash", 16, command("rm -rf build")),
		s.result("r8", "t8", "Bash", 17, failed(0, agentevent.ErrorTypeRejected), exitless),
		s.call("c9", "m9", "t9", "Bash", 18, command("sleep 600")),
	}
}

func exitless(e *agentevent.Event) { e.ToolExitCode = nil }

func jsonAttr(t *testing.T, sp ptrace.Span, k string) any {
	t.Helper()
	s, ok := attr(sp, k).(string)
	require.True(t, ok, "%s is a string", k)
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v), "%s is JSON", k)
	return v
}

func TestRollup(t *testing.T) {
	h := newHarness(t)
	h.history()
	h.feed(rollupTurn(newSession("s1"))...)
	root := one(t, h.spans(), "invoke_agent claude-code")

	assert.Equal(t, []any{
		map[string]any{"path": "/w/a.go", "change_type": "modified", "lines_added": 4.0, "lines_removed": 2.0, "edit_count": 2.0},
		map[string]any{"path": "/w/b.go", "change_type": "created", "lines_added": 10.0, "lines_removed": 0.0, "edit_count": 1.0},
	}, jsonAttr(t, root, agentevent.AttrTurnFiles), "sorted by path; the failed edit of c.go changed nothing")
	assert.Equal(t, int64(2), attr(root, agentevent.AttrTurnFilesChanged))
	assert.Equal(t, int64(14), attr(root, agentevent.AttrTurnLinesAdded))
	assert.Equal(t, int64(2), attr(root, agentevent.AttrTurnLinesRemoved))

	assert.Equal(t, []any{
		map[string]any{"command": "go test ./...", "exit_code": 1.0, "timestamp": "2025-11-26T12:00:07Z"},
		map[string]any{"command": "go test ./...", "exit_code": 0.0, "timestamp": "2025-11-26T12:00:12Z"},
		map[string]any{"command": "ls -la", "exit_code": 0.0, "timestamp": "2025-11-26T12:00:15Z"},
		map[string]any{"command": "sleep 600", "exit_code": nil, "timestamp": "2025-11-26T12:00:18Z"},
	}, jsonAttr(t, root, agentevent.AttrTurnCommands), "in order; the declined rm never ran; sleep has not exited")
	assert.Equal(t, int64(4), attr(root, agentevent.AttrTurnCommandsRun))

	assert.Equal(t, []any{
		map[string]any{"command": "go test ./...", "runner": "go", "status": "failed", "tests_run": 3.0, "tests_passed": 2.0, "exit_code": 1.0, "timestamp": "2025-11-26T12:00:07Z"},
		map[string]any{"command": "go test ./...", "runner": "go", "status": "passed", "tests_run": nil, "tests_passed": nil, "exit_code": 0.0, "timestamp": "2025-11-26T12:00:12Z"},
	}, jsonAttr(t, root, agentevent.AttrTurnTests))
	assert.Equal(t, int64(4), attr(root, agentevent.AttrTurnTestsRun), "3 counted, and 1 for the run whose output gave no count")
	assert.Equal(t, int64(3), attr(root, agentevent.AttrTurnTestsPassed))

	assert.Equal(t, int64(9), attr(root, agentevent.AttrTurnToolCalls))
	assert.Equal(t, int64(3), attr(root, agentevent.AttrTurnToolErrors), "failed edit, failed tests, declined command")
	assert.Equal(t, int64(3), attr(root, agentevent.AttrTurnErrors))
	assert.Equal(t, int64(18000), attr(root, agentevent.AttrTurnDurationMs), "prompt → the turn's last event")
	assert.Equal(t, "Modified 2 files, +14 -2 lines, 3/4 tests passed", attr(root, agentevent.AttrTurnSummary))
	assert.Nil(t, attr(root, agentevent.AttrTurnPreviousID), "the session's first turn")
	assert.Nil(t, attr(root, agentevent.AttrInputMessages), "no prompt text without include_content")
}

func TestRollupOfATurnThatDidNothing(t *testing.T) {
	h := newHarness(t)
	h.history()
	s := newSession("s1")
	h.feed(s.prompt("p1", 0), s.answer("a1", "m1", 2.5))
	root := one(t, h.spans(), "invoke_agent claude-code")
	for k, want := range map[string]any{
		agentevent.AttrTurnFiles: "[]", agentevent.AttrTurnCommands: "[]", agentevent.AttrTurnTests: "[]",
		agentevent.AttrTurnFilesChanged: int64(0), agentevent.AttrTurnLinesAdded: int64(0), agentevent.AttrTurnLinesRemoved: int64(0),
		agentevent.AttrTurnCommandsRun: int64(0), agentevent.AttrTurnTestsRun: int64(0), agentevent.AttrTurnTestsPassed: int64(0),
		agentevent.AttrTurnErrors: int64(0), agentevent.AttrTurnDurationMs: int64(2500), agentevent.AttrTurnSummary: "No changes",
		agentevent.AttrTurnModelCalls: int64(1), agentevent.AttrTurnToolCalls: int64(0),
	} {
		assert.Equal(t, want, attr(root, k), k)
	}
}

func TestRollupErrorsCountAPIErrors(t *testing.T) {
	h := newHarness(t)
	h.history()
	s := newSession("s1")
	h.feed(
		s.prompt("p1", 0),
		// A retried API call and a model response that failed after using tokens.
		s.ev(agentevent.TypeLog, "retry", 1, func(e *agentevent.Event) { e.ErrorType = "api_retry" }),
		s.answer("a1", "m1", 2, func(e *agentevent.Event) { e.ErrorType = "max_tokens" }),
		s.call("c1", "m2", "t1", "Bash", 3),
		s.result("r1", "t1", "Bash", 4, failed(2, "exit_code")),
		s.answer("a2", "m3", 5),
	)
	root := one(t, h.spans(), "invoke_agent claude-code")
	assert.Equal(t, int64(1), attr(root, agentevent.AttrTurnToolErrors))
	assert.Equal(t, int64(3), attr(root, agentevent.AttrTurnErrors), "1 tool error + 2 API errors")
}

func TestRollupPreviousID(t *testing.T) {
	h := newHarness(t)
	h.history()
	s := newSession("s1")
	h.feed(s.prompt("p1", 0), s.answer("a1", "m1", 1), s.prompt("p2", 10), s.answer("a2", "m2", 11))
	byPrompt := map[any]ptrace.Span{}
	for _, r := range roots(h.spans()) {
		byPrompt[attr(r, agentevent.AttrEventID)] = r
	}
	assert.Nil(t, attr(byPrompt["p1"], agentevent.AttrTurnPreviousID))
	assert.Equal(t, "p1", attr(byPrompt["p2"], agentevent.AttrTurnPreviousID), "the event id of the previous turn's prompt")
}

func TestRollupCountsSubagentWork(t *testing.T) {
	h := newHarness(t)
	h.history()
	s := newSession("s1")
	x := s.subagent("ag1", "general-purpose")
	h.feed(
		s.prompt("p1", 0),
		s.call("c1", "m1", "t1", "Edit", 1),
		s.result("r1", "t1", "Edit", 2, edited("/w/shared.go", "modified", 2, 0)),
		s.call("c2", "m2", "toolu_agent", "Agent", 3),
		s.result("r2", "toolu_agent", "Agent", 30, func(e *agentevent.Event) { e.SpawnedAgentID = "ag1" }),
		s.call("c3", "m3", "t3", "Bash", 31, command("npm test")),
		s.result("r3", "t3", "Bash", 35, exited(0), tested("npm", 12, 12)),
		s.answer("a1", "m4", 36),
	)
	h.feed(
		x.prompt("xp", 4),
		x.call("xc1", "xm1", "tx1", "Write", 5),
		x.result("xr1", "tx1", "Write", 6, edited("/w/new.go", "created", 20, 0)),
		x.call("xc2", "xm2", "tx2", "Edit", 7),
		x.result("xr2", "tx2", "Edit", 8, edited("/w/shared.go", "modified", 1, 3)),
		x.call("xc3", "xm3", "tx3", "Bash", 9, command("go test -v ./...")),
		x.result("xr3", "tx3", "Bash", 12, failed(1, "exit_code"), tested("go", 8, 7)),
		x.answer("xa", "xm4", 29),
	)
	spans := h.spans()
	root := one(t, spans, "invoke_agent claude-code")
	sub := one(t, spans, "invoke_agent general-purpose")

	assert.Equal(t, []any{
		map[string]any{"path": "/w/new.go", "change_type": "created", "lines_added": 20.0, "lines_removed": 0.0, "edit_count": 1.0},
		map[string]any{"path": "/w/shared.go", "change_type": "modified", "lines_added": 3.0, "lines_removed": 3.0, "edit_count": 2.0},
	}, jsonAttr(t, root, agentevent.AttrTurnFiles), "the parent's and the subagent's changes, merged per file")
	var cmds []any
	for _, c := range jsonAttr(t, root, agentevent.AttrTurnCommands).([]any) {
		cmds = append(cmds, c.(map[string]any)["command"])
	}
	assert.Equal(t, []any{"go test -v ./...", "npm test"}, cmds, "in time order across parent and subagent")
	assert.Equal(t, int64(20), attr(root, agentevent.AttrTurnTestsRun))
	assert.Equal(t, int64(19), attr(root, agentevent.AttrTurnTestsPassed))
	assert.Equal(t, "Modified 2 files, +23 -3 lines, 19/20 tests passed", attr(root, agentevent.AttrTurnSummary))
	assert.Equal(t, int64(1), attr(root, agentevent.AttrTurnErrors))
	assert.Equal(t, int64(36000), attr(root, agentevent.AttrTurnDurationMs))

	// The subagent's own span rolls up its own work only.
	assert.Equal(t, "Modified 2 files, +21 -3 lines, 7/8 tests passed", attr(sub, agentevent.AttrTurnSummary))
	assert.Equal(t, int64(25000), attr(sub, agentevent.AttrTurnDurationMs))
	assert.Nil(t, attr(sub, agentevent.AttrTurnPreviousID), "subagent runs have no previous turn")
}

func TestRollupFallsBackOnFileOp(t *testing.T) {
	// Events without agent.file.change_type (a vendor that only knows the
	// operation): the change type comes from file_op, lines are unknown (0).
	h := newHarness(t)
	h.history()
	s := newSession("s1")
	op := func(path string, o agentevent.FileOp) mod {
		return func(e *agentevent.Event) { e.FilePath, e.FileOp = path, o }
	}
	h.feed(
		s.prompt("p1", 0),
		s.call("c1", "m1", "t1", "apply_patch", 1, op("/w/new.txt", agentevent.FileCreate)),
		s.result("r1", "t1", "apply_patch", 2),
		s.call("c2", "m2", "t2", "apply_patch", 3, op("/w/old.txt", agentevent.FileDelete)),
		s.result("r2", "t2", "apply_patch", 4),
		s.call("c3", "m3", "t3", "read_file", 5, op("/w/readme", agentevent.FileRead)),
		s.result("r3", "t3", "read_file", 6),
		s.call("c4", "m4", "t4", "write_file", 7, op("/w/pending.txt", agentevent.FileWrite)),
	)
	root := one(t, h.spans(), "invoke_agent claude-code")
	assert.Equal(t, []any{
		map[string]any{"path": "/w/new.txt", "change_type": "created", "lines_added": 0.0, "lines_removed": 0.0, "edit_count": 1.0},
		map[string]any{"path": "/w/old.txt", "change_type": "deleted", "lines_added": 0.0, "lines_removed": 0.0, "edit_count": 1.0},
	}, jsonAttr(t, root, agentevent.AttrTurnFiles), "a read is no change; a write with no result yet is not known to have happened")
	assert.Equal(t, "Modified 2 files", attr(root, agentevent.AttrTurnSummary))
}
