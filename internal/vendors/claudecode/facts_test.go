// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// resultAt is the tool_result event a file's line yields.
func resultAt(t *testing.T, events []agentevent.Event, line int64) agentevent.Event {
	t.Helper()
	for i := range events {
		ev := &events[i]
		if ev.LogLine == line && ev.Type == agentevent.TypeToolResult {
			return *ev
		}
	}
	require.FailNow(t, "no tool_result", "line %d", line)
	return agentevent.Event{}
}

// fileChange is what a file tool's result says it changed; lines -1 = not told.
type fileChange struct {
	change         string
	added, removed int64
}

func changeOf(ev agentevent.Event) fileChange {
	c := fileChange{added: -1, removed: -1}
	c.change, _ = ev.Attributes[agentevent.AttrFileChangeType].(string)
	if v, ok := ev.Attributes[agentevent.AttrFileLinesAdded].(int64); ok {
		c.added = v
	}
	if v, ok := ev.Attributes[agentevent.AttrFileLinesRemoved].(int64); ok {
		c.removed = v
	}
	return c
}

// Real rows of the testdata (copied MIT/Apache fixtures and hand-written
// cases) and of the shared corpus, read in place.
func TestFileFactsOnRealRows(t *testing.T) {
	corpus := fixturesDir(t)
	for _, tc := range []struct {
		name      string
		dir, file string // dir "" = testdata/claude_code
		line      int64
		want      fileChange
	}{
		// Write of a new file (2.0.28): type create, empty structuredPatch,
		// the content's one line.
		{"write create", "", "v2.0.28_agtrace_with_agent_files/7f2abd2d-7cfc-4447-9ddd-3ca8d14e02e9.jsonl", 10, fileChange{"created", 1, 0}},
		// Write refused for lack of permission (1.0.98): nothing changed.
		{"write not permitted", "", "v1.0.98_viewer_basic/1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl", 26, fileChange{"", -1, -1}},
		// Edit with one hunk adding a line (2.1.42 shape).
		{"edit adds a line", "", "streaming_split/3c0e8f52-7a41-4b9e-9d2a-5e6f7a8b9c01.jsonl", 8, fileChange{"modified", 1, 0}},
		{"edit replaces a line", "", "bash_failure/8d2b7c1e-0f3a-4c5d-9e6f-1a2b3c4d5e6f.jsonl", 10, fileChange{"modified", 1, 1}},
		{"multiedit, two hunks", "", "turn_rollup/5b7e9d1f-2c4a-4e6b-8d0f-1a3c5e7b9d2f.jsonl", 10, fileChange{"modified", 5, 1}},
		{"write create with content", "", "turn_rollup/5b7e9d1f-2c4a-4e6b-8d0f-1a3c5e7b9d2f.jsonl", 12, fileChange{"created", 8, 0}},
		{"write update", "", "turn_rollup/5b7e9d1f-2c4a-4e6b-8d0f-1a3c5e7b9d2f.jsonl", 27, fileChange{"modified", 3, 0}},
		// 2.1.68 Edits of a Windows path, one line swapped each.
		{"corpus edit", corpus, "claude_code/v2.1.68_opus_haiku_with_subagent/66db2ce0-393a-4771-9986-2462861a8eb7.jsonl", 161, fileChange{"modified", 1, 1}},
		{"corpus edit again", corpus, "claude_code/v2.1.68_opus_haiku_with_subagent/66db2ce0-393a-4771-9986-2462861a8eb7.jsonl", 179, fileChange{"modified", 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir
			if dir == "" {
				dir = filepath.Join(repoRoot(t), "testdata", "claude_code")
			} else {
				vendortest.SkipIfAbsent(t, dir)
			}
			ev := resultAt(t, parseFile(t, dir, tc.file), tc.line)
			assert.Equal(t, tc.want, changeOf(ev))
		})
	}
}

func TestFileFacts(t *testing.T) {
	for _, tc := range []struct {
		name, tool, tur string
		isError         bool
		want            fileChange
	}{
		{"edit", "Edit", `{"filePath":"/w/a.go","oldString":"a","newString":"b\nc","structuredPatch":[{"oldStart":3,"oldLines":3,"newStart":3,"newLines":4,"lines":[" x","-a","+b","+c"," y"]}]}`, false, fileChange{"modified", 2, 1}},
		{"edit, no newline at end of file", "Edit", `{"structuredPatch":[{"lines":["-a","\\ No newline at end of file","+a","+b"]}]}`, false, fileChange{"modified", 2, 1}},
		{"edit without structuredPatch", "Edit", `{"filePath":"/w/a.go","oldString":"a","newString":"b"}`, false, fileChange{"modified", -1, -1}},
		{"edit with a patch of another shape", "Edit", `{"structuredPatch":"@@ -1 +1 @@"}`, false, fileChange{"modified", -1, -1}},
		{"edit, toolUseResult a string", "Edit", `"done"`, false, fileChange{"modified", -1, -1}},
		{"edit, no toolUseResult", "Edit", ``, false, fileChange{"modified", -1, -1}},
		{"edit failed", "Edit", `"Error: String to replace not found in file."`, true, fileChange{"", -1, -1}},
		{"write create without trailing newline", "Write", `{"type":"create","filePath":"/w/n.txt","content":"a\nb","structuredPatch":[]}`, false, fileChange{"created", 2, 0}},
		{"write create of an empty file", "Write", `{"type":"create","filePath":"/w/n.txt","content":"","structuredPatch":[]}`, false, fileChange{"created", 0, 0}},
		{"write create with a patch", "Write", `{"type":"create","content":"a\n","structuredPatch":[{"lines":["+a"]}]}`, false, fileChange{"created", 1, 0}},
		{"write update, unchanged", "Write", `{"type":"update","content":"a\n","structuredPatch":[]}`, false, fileChange{"modified", 0, 0}},
		{"write, unknown result", "Write", `{"filePath":"/w/x"}`, false, fileChange{"modified", -1, -1}},
		{"multiedit", "MultiEdit", `{"edits":[{},{}],"structuredPatch":[{"lines":["+a"]},{"lines":["-b","+c"]}]}`, false, fileChange{"modified", 2, 1}},
		{"notebook edit", "NotebookEdit", `{"new_source":"x = 1","cell_id":"c1","edit_mode":"replace"}`, false, fileChange{"modified", -1, -1}},
		{"read", "Read", `{"type":"text","file":{"filePath":"/w/a.go","content":"x"}}`, false, fileChange{"", -1, -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFeeder(testSession + ".jsonl")
			f.feed(userRow(`"change it"`),
				assistantRow("a1", "2026-01-01T10:00:01.000Z", "msg_A", toolUse("t1", tc.tool, `{"file_path":"/w/a.go"}`), 20, "tool_use"))
			res := f.feed(resultRow("2026-01-01T10:00:02.000Z", "t1", `"ok"`, tc.isError, tc.tur))
			require.Len(t, res, 1)
			assert.Equal(t, tc.want, changeOf(res[0]))
		})
	}
}

func TestFileFactsWithSeveralResultsInARow(t *testing.T) {
	f := newFeeder(testSession + ".jsonl")
	f.feed(userRow(`"x"`),
		assistantRow("a1", "2026-01-01T10:00:01.000Z", "msg_A", toolUse("t1", "Edit", `{"file_path":"/w/a"}`)+","+toolUse("t2", "Edit", `{"file_path":"/w/b"}`), 20, "tool_use"))
	// toolUseResult describes one result; with two it says nothing about either.
	res := f.feed(`{"type":"user","sessionId":"` + testSession + `","message":{"role":"user","content":[` +
		`{"tool_use_id":"t1","type":"tool_result","content":"ok"},{"tool_use_id":"t2","type":"tool_result","content":"ok"}]},` +
		`"uuid":"r1","timestamp":"2026-01-01T10:00:02.000Z","toolUseResult":{"structuredPatch":[{"lines":["+a"]}]}}`)
	require.Len(t, res, 2)
	for _, ev := range res {
		assert.Equal(t, fileChange{"modified", -1, -1}, changeOf(ev))
	}
}

func TestCommandFact(t *testing.T) {
	long := strings.Repeat("é", agentevent.MaxCommandLength) // 2 bytes each: the cut falls mid-character
	for _, tc := range []struct {
		name, tool, input string
		want              any
	}{
		{"bash", "Bash", `{"command":"go test ./...","description":"Run the tests"}`, "go test ./..."},
		{"multi-line", "Bash", `{"command":"cd api &&\n  make test\n"}`, "cd api &&\n  make test"},
		{"long", "Bash", `{"command":"` + long + `"}`, long[:agentevent.MaxCommandLength] + "…"},
		{"empty", "Bash", `{"command":""}`, nil},
		{"not a string", "Bash", `{"command":["ls"]}`, nil},
		{"another tool's command", "SlashCommand", `{"command":"/review"}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFeeder(testSession + ".jsonl")
			f.feed(userRow(`"x"`))
			evs := f.feed(assistantRow("a1", "2026-01-01T10:00:01.000Z", "msg_A", toolUse("t1", tc.tool, tc.input), 9, "tool_use"))
			require.Len(t, evs, 1)
			got, has := evs[0].Attributes[agentevent.AttrToolCommand]
			if tc.want == nil {
				assert.False(t, has, "no command: %v", got)
				return
			}
			assert.Equal(t, tc.want, got)
			assert.True(t, utf8.ValidString(got.(string)))
			assert.LessOrEqual(t, len(got.(string)), agentevent.MaxCommandLength+len("…"))
		})
	}
}

func TestCommandFactKeepsFileFields(t *testing.T) {
	// A "command" of an unexpected JSON type must not cost the fields decoded beside it.
	f := newFeeder(testSession + ".jsonl")
	f.feed(userRow(`"x"`))
	evs := f.feed(assistantRow("a1", "2026-01-01T10:00:01.000Z", "msg_A", toolUse("t1", "Edit", `{"command":{"x":1},"file_path":"/w/a.go"}`), 9, "tool_use"))
	require.Len(t, evs, 1)
	assert.Equal(t, "/w/a.go", evs[0].FilePath)
}

// testFact is what a test command's result says; counts -1 = not told.
type testFact struct {
	runner              string
	run, passed, failed int64
}

func testOf(ev agentevent.Event) testFact {
	f := testFact{run: -1, passed: -1, failed: -1}
	f.runner, _ = ev.Attributes[agentevent.AttrTestRunner].(string)
	for k, p := range map[string]*int64{agentevent.AttrTestRun: &f.run, agentevent.AttrTestPassed: &f.passed, agentevent.AttrTestFailed: &f.failed} {
		if v, ok := ev.Attributes[k].(int64); ok {
			*p = v
		}
	}
	return f
}

func TestTestFacts(t *testing.T) {
	const pytestFail = "Exit code 1\n============ 1 failed, 7 passed in 0.31s ============"
	for _, tc := range []struct {
		name, command, content, tur string
		isError                     bool
		want                        testFact
	}{
		{
			"pytest failing", "uv run pytest -q", `"` + strings.ReplaceAll(pytestFail, "\n", `\n`) + `"`, `"Error: ` + strings.ReplaceAll(pytestFail, "\n", `\n`) + `"`, true,
			testFact{"pytest", 8, 7, 1},
		},
		{
			"go test passing, counts from stdout", "go test -v ./...", `""`, `{"stdout":"=== RUN   TestA\n--- PASS: TestA (0.00s)\nPASS\nok  \tp\t0.1s","stderr":"","interrupted":false,"isImage":false}`, false,
			testFact{"go", 1, 1, 0},
		},
		{
			"jest on stderr", "npx jest", `"Tests:       2 passed, 2 total"`, `{"stdout":"","stderr":"Tests:       2 passed, 2 total","interrupted":false,"isImage":false}`, false,
			testFact{"jest", 2, 2, 0},
		},
		{
			"go test without -v", "go test ./...", `"ok  \tp\t0.1s"`, `{"stdout":"ok  \tp\t0.1s","stderr":"","interrupted":false,"isImage":false}`, false,
			testFact{"go", -1, -1, -1},
		},
		{
			"interrupted", "cargo test", `"[Request interrupted by user for tool use]"`, `{"stdout":"","stderr":"","interrupted":true,"isImage":false}`, true,
			testFact{"cargo", -1, -1, -1},
		},
		{
			"declined: never ran", "npm test", `"The user doesn't want to proceed with this tool use. The tool use was rejected."`, `"Error: The user doesn't want to proceed with this tool use."`, true,
			testFact{"", -1, -1, -1},
		},
		{
			"in the background: no output yet", "pytest", `"Command running in background with ID: b1"`, `{"stdout":"","stderr":"","interrupted":false,"isImage":false,"backgroundTaskId":"b1"}`, false,
			testFact{"", -1, -1, -1},
		},
		{
			"not a test command", "ls -la", `"total 0"`, `{"stdout":"total 0","stderr":"","interrupted":false,"isImage":false}`, false,
			testFact{"", -1, -1, -1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFeeder(testSession + ".jsonl")
			f.feed(userRow(`"test it"`),
				assistantRow("a1", "2026-01-01T10:00:01.000Z", "msg_A", toolUse("t1", "Bash", `{"command":"`+tc.command+`"}`), 20, "tool_use"))
			res := f.feed(resultRow("2026-01-01T10:00:09.000Z", "t1", tc.content, tc.isError, tc.tur))
			require.Len(t, res, 1)
			assert.Equal(t, tc.want, testOf(res[0]))
		})
	}
}

func TestTestRunnerSurvivesARestart(t *testing.T) {
	f := newFeeder(testSession + ".jsonl")
	f.feed(userRow(`"test it"`),
		assistantRow("a1", "2026-01-01T10:00:01.000Z", "msg_A", toolUse("t1", "Bash", `{"command":"cargo test"}`), 20, "tool_use"))
	state, err := f.p.MarshalState()
	require.NoError(t, err)
	restored := newFeeder(testSession + ".jsonl")
	require.NoError(t, restored.p.UnmarshalState(state))
	restored.lineNo, restored.offset = f.lineNo, f.offset
	res := restored.feed(resultRow("2026-01-01T10:00:09.000Z", "t1",
		`"test result: ok. 4 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s"`, false, ""))
	require.Len(t, res, 1)
	assert.Equal(t, testFact{"cargo", 4, 4, 0}, testOf(res[0]))
}

func TestCountLines(t *testing.T) {
	for s, want := range map[string]int{"": 0, "a": 1, "a\n": 1, "a\nb": 2, "a\nb\n": 2, "\n": 1, "\n\n": 2} {
		assert.Equalf(t, want, agentevent.CountLines(s), "%q", s)
	}
}
