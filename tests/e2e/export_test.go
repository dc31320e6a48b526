// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/exporter/agenteventexporter/schemas"
	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/testhome"
	"github.com/agentotel/agentotel/internal/vendors/claudecode"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/tests/testenv"
)

// exportDirs are the folders config/export.yaml writes, by format.
var exportDirs = map[string]string{
	"agtrace_v1":     "agtrace",
	"universal":      "universal",
	"agent_manager":  "agent_manager",
	"canonical_task": "canonical",
}

// eventsPerSession counts the golden events of every Claude testdata case by session: with
// emit_unparsed on, the receiver emits exactly these (unparsed records included). timeless are the
// sessions none of whose events has a timestamp: the exporter holds those until the session ends.
func eventsPerSession(t *testing.T, root string) (events, unparsed map[string]int, timeless map[string]bool) {
	t.Helper()
	events, unparsed, timeless = map[string]int{}, map[string]int{}, map[string]bool{}
	timed := map[string]bool{}
	files, err := filepath.Glob(filepath.Join(root, "testdata", "claude_code", "*", "events.yaml"))
	require.NoError(t, err)
	for _, f := range files {
		logs, err := golden.ReadLogs(f)
		require.NoError(t, err)
		evs, _ := agentevent.DecodeLogs(logs)
		for i := range evs {
			ev := &evs[i]
			events[ev.SessionID]++
			if ev.Unparsed != "" {
				unparsed[ev.SessionID]++
			}
			if !ev.Timestamp.IsZero() {
				timed[ev.SessionID] = true
			}
		}
	}
	for s := range events {
		if !timed[s] {
			timeless[s] = true
		}
	}
	return events, unparsed, timeless
}

// exportedFiles reads <dir>/<agent>/<session>.jsonl into lines, keyed by session id.
func exportedFiles(t *testing.T, dir string) map[string][][]byte {
	t.Helper()
	files := map[string][][]byte{}
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return files
	}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		require.Equal(t, "claude-code", filepath.Base(filepath.Dir(path)), "files are grouped by agent: %s", path)
		b, err := os.ReadFile(path) //nolint:gosec // G122: the collector's output folder of this test
		if err != nil {
			return err
		}
		var lines [][]byte
		for l := range bytes.SplitSeq(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
			if len(l) > 0 {
				lines = append(lines, l)
			}
		}
		files[strings.TrimSuffix(filepath.Base(path), ".jsonl")] = lines
		return nil
	}))
	return files
}

func lineCounts(files map[string][][]byte) map[string]int {
	n := map[string]int{}
	for k, v := range files {
		n[k] = len(v)
	}
	return n
}

// TestExportSeedFormats runs the collector with config/export.yaml exactly as a user would (HOME
// pointing at a folder laid out like ~/.claude/projects with the Claude testdata, the output under
// AGENTOTEL_EXPORT_DIR), stops it, and checks the four formats: one file per session, every line
// valid against its format's JSON Schema, one agtrace line per event, one canonical task event per
// turn, universal and agent-manager streams numbered without gaps, each universal session opened
// and closed, the unparsed records and the refused tool calls where the testdata has them.
func TestExportSeedFormats(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds the collector (skipped with -short)")
	}
	root := repoRoot(t)
	exp := expectedFromGoldens(t, root)
	events, unparsed, timeless := eventsPerSession(t, root)
	require.NotEmpty(t, unparsed, "the testdata must hold unparsed records")

	bin := collectorBinary(t)
	home := t.TempDir()
	projects := filepath.Join(home, ".claude", "projects")
	cases, err := os.ReadDir(filepath.Join(root, "testdata", "claude_code"))
	require.NoError(t, err)
	for _, c := range cases {
		copyTree(t, filepath.Join(root, "testdata", "claude_code", c.Name()), filepath.Join(projects, "-e2e-"+c.Name()),
			func(p string) bool { return strings.HasSuffix(p, ".jsonl") })
	}
	out := filepath.Join(t.TempDir(), "export")
	env := append(testhome.Env(home),
		"AGENTOTEL_STATE_DIR="+filepath.Join(t.TempDir(), "state"),
		"AGENTOTEL_EXPORT_DIR="+out,
	)
	p := start(t, "collector", bin, env, "--config", filepath.Join(root, "config", "export.yaml"))

	// An orphan subagent (its session's transcript gone) is a session of its own: each of its
	// turns is a canonical task too.
	tasks := maps.Clone(exp.turns)
	for session, n := range orphanTurns(t, root) {
		tasks[session] += n
	}
	wantTurns := 0
	for _, n := range tasks {
		wantTurns += n
	}
	waitFor(t, 90*time.Second, "every event in agtrace_v1 (but the timeless sessions') and every turn in canonical_task", func() (bool, string) {
		agtrace := lineCounts(exportedFiles(t, filepath.Join(out, exportDirs["agtrace_v1"])))
		turns := 0
		for _, n := range lineCounts(exportedFiles(t, filepath.Join(out, exportDirs["canonical_task"]))) {
			turns += n
		}
		var missing []string
		for s, n := range events {
			if agtrace[s] != n && !timeless[s] {
				missing = append(missing, fmt.Sprintf("%s (%d of %d events)", s, agtrace[s], n))
			}
		}
		return len(missing) == 0 && turns == wantTurns,
			fmt.Sprintf("agtrace_v1 sessions incomplete: %v; %d of %d turns in canonical_task", missing, turns, wantTurns)
	})
	p.Stop(t) // a graceful shutdown: idle sessions get their closing lines, held events are written
	require.True(t, p.Exited(), "collector still running after stop")

	all := map[string]map[string][][]byte{}
	for format, dir := range exportDirs {
		files := exportedFiles(t, filepath.Join(out, dir))
		all[format] = files
		checked := 0
		for session, lines := range files {
			for i, line := range lines {
				require.NoError(t, schemas.Validate(format, line), "%s %s line %d: %s", format, session, i+1, line)
				checked++
			}
		}
		assert.Positive(t, checked, "%s: no lines", format)
	}

	// agtrace_v1: one line per event, per session.
	assert.Equal(t, events, lineCounts(all["agtrace_v1"]))

	// canonical_task: one line per turn, per session.
	assert.Equal(t, tasks, lineCounts(all["canonical_task"]))

	// gen_ai_cost (in the recipe) priced the model responses: agtrace lines and canonical turns
	// with a cost.
	priced := func(format, field string) int {
		n := 0
		for _, lines := range all[format] {
			for _, line := range lines {
				var v map[string]any
				require.NoError(t, json.Unmarshal(line, &v))
				if c := findNumber(v, field); c > 0 {
					n++
				}
			}
		}
		return n
	}
	assert.Positive(t, priced("agtrace_v1", "cost_usd"), "agtrace_v1 lines with cost_usd")
	assert.Positive(t, priced("canonical_task", "costUsd"), "canonical_task turns with costUsd")

	// universal: every session opened and closed, sequence 1..n, the unparsed records.
	for session, lines := range all["universal"] {
		var first, last struct{ Type string }
		require.NoError(t, json.Unmarshal(lines[0], &first))
		require.NoError(t, json.Unmarshal(lines[len(lines)-1], &last))
		assert.Equal(t, "session.started", first.Type, session)
		assert.Equal(t, "session.ended", last.Type, session)
		assertSequence(t, lines, 1, session)
		assert.Equal(t, unparsed[session], countType(t, lines, "agent.unparsed"), "agent.unparsed in %s", session)
	}
	assert.Len(t, all["universal"], len(events), "one universal file per session")

	// agent_manager: sequence 0..n-1, one run per file.
	for session, lines := range all["agent_manager"] {
		assertSequence(t, lines, 0, session)
		runs := map[string]bool{}
		for _, l := range lines {
			var e struct{ RunID string }
			require.NoError(t, json.Unmarshal(l, &e))
			runs[e.RunID] = true
		}
		assert.Len(t, runs, 1, session)
	}
	assert.Len(t, all["agent_manager"], len(events), "one agent_manager file per session")

	// The refused git commit and push of the 1.0.17 fixture are permission denials.
	denied := 0
	for _, lines := range all["universal"] {
		denied += countType(t, lines, "permission.resolved")
	}
	assert.Positive(t, denied, "permission.resolved for the refused tool calls")
}

func assertSequence(t *testing.T, lines [][]byte, from int64, session string) {
	t.Helper()
	for i, l := range lines {
		var e struct{ Sequence int64 }
		require.NoError(t, json.Unmarshal(l, &e))
		require.Equal(t, from+int64(i), e.Sequence, "%s line %d", session, i+1)
	}
}

// countType counts the lines whose "type" is value.
func countType(t *testing.T, lines [][]byte, value string) int {
	t.Helper()
	n := 0
	for _, l := range lines {
		var m map[string]any
		require.NoError(t, json.Unmarshal(l, &m))
		if m["type"] == value {
			n++
		}
	}
	return n
}

// fixtureRoots are the folders of the shared fixture corpus (testenv.FixtureRoots: the fixtures,
// $AGENTOTEL_FIXTURES or ../shared/fixtures next to the repository root, then the newest real
// files when present).
func fixtureRoots(tb testing.TB) []string {
	tb.Helper()
	return testenv.FixtureRoots(tb)
}

// parseAll maps every line of the copied transcripts with the Claude Code parser, as the receiver
// does (one parser per file, blank lines skipped), and returns the events.
func parseAll(t *testing.T, projects string) []agentevent.Event {
	t.Helper()
	var events []agentevent.Event
	require.NoError(t, filepath.WalkDir(projects, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		b, err := os.ReadFile(path) //nolint:gosec // G122: the test's temporary copy of the transcripts
		if err != nil {
			return err
		}
		p := claudecode.NewParser(path)
		var offset, lineNo int64
		for _, line := range bytes.SplitAfter(b, []byte("\n")) {
			lineNo++
			text := bytes.TrimSuffix(line, []byte("\n"))
			if len(bytes.TrimSpace(text)) > 0 && bytes.HasSuffix(line, []byte("\n")) {
				events = append(events, p.Parse(text, lineNo, offset)...)
			}
			offset += int64(len(line))
		}
		// The receiver flushes the parser once it has read the whole file.
		events = append(events, p.Flush()...)
		return nil
	}))
	return events
}

// TestExportFixtureCorpus runs config/export.yaml over the Claude Code fixtures of every corpus root
// (read where they are, copied to a temporary HOME at test time; skipped when absent): every line of every
// format is valid against its schema, agtrace_v1 has one line per event the parser yields, and
// the AskUserQuestion calls of the corpus come out as question.requested / question.resolved.
func TestExportFixtureCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds the collector (skipped with -short)")
	}
	root := repoRoot(t)
	roots := fixtureRoots(t)
	vendortest.SkipIfAbsent(t, filepath.Join(roots[0], "claude_code"))
	home := t.TempDir()
	projects := filepath.Join(home, ".claude", "projects")
	for _, fixtures := range roots {
		corpus := filepath.Join(fixtures, "claude_code")
		entries, err := os.ReadDir(corpus)
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		for _, en := range entries {
			dst := filepath.Join(projects, "-corpus-"+filepath.Base(fixtures)+"-"+strings.TrimSuffix(en.Name(), ".jsonl"))
			if en.IsDir() {
				copyTree(t, filepath.Join(corpus, en.Name()), dst, func(p string) bool { return strings.HasSuffix(p, ".jsonl") })
				continue
			}
			if strings.HasSuffix(en.Name(), ".jsonl") {
				copyTree(t, corpus, dst, func(p string) bool { return p == filepath.Join(corpus, en.Name()) })
			}
		}
	}
	events := map[string]int{}
	timed := map[string]bool{}
	questions := 0
	for _, ev := range parseAll(t, projects) {
		events[ev.SessionID]++
		if !ev.Timestamp.IsZero() {
			timed[ev.SessionID] = true
		}
		if ev.Type == agentevent.TypeToolCall && (ev.ToolName == "AskUserQuestion" || ev.ToolName == "ExitPlanMode") {
			questions++
		}
	}
	require.Positive(t, questions, "the corpus holds AskUserQuestion calls")

	bin := collectorBinary(t)
	out := filepath.Join(t.TempDir(), "export")
	env := append(testhome.Env(home),
		"AGENTOTEL_STATE_DIR="+filepath.Join(t.TempDir(), "state"),
		"AGENTOTEL_EXPORT_DIR="+out,
	)
	p := start(t, "collector", bin, env, "--config", filepath.Join(root, "config", "export.yaml"))
	waitFor(t, 90*time.Second, "every event of the corpus in agtrace_v1", func() (bool, string) {
		agtrace := lineCounts(exportedFiles(t, filepath.Join(out, exportDirs["agtrace_v1"])))
		var missing []string
		for s, n := range events {
			if agtrace[s] != n && timed[s] {
				missing = append(missing, fmt.Sprintf("%s (%d of %d events)", s, agtrace[s], n))
			}
		}
		return len(missing) == 0, fmt.Sprintf("incomplete: %v", missing)
	})
	p.Stop(t)

	all := map[string]map[string][][]byte{}
	for format, dir := range exportDirs {
		all[format] = exportedFiles(t, filepath.Join(out, dir))
		for session, lines := range all[format] {
			for i, line := range lines {
				require.NoError(t, schemas.Validate(format, line), "%s %s line %d: %s", format, session, i+1, line)
			}
		}
	}
	assert.Equal(t, events, lineCounts(all["agtrace_v1"]))
	requested, resolved := 0, 0
	for _, lines := range all["universal"] {
		requested += countType(t, lines, "question.requested")
		resolved += countType(t, lines, "question.resolved")
	}
	assert.Equal(t, questions, requested, "question.requested per question tool call")
	assert.Equal(t, questions, resolved, "every question of the corpus was answered")
}

// findNumber is the first positive number under key anywhere in v (0 when none).
func findNumber(v any, key string) float64 {
	switch x := v.(type) {
	case map[string]any:
		if f, ok := x[key].(float64); ok && f > 0 {
			return f
		}
		for _, e := range x {
			if f := findNumber(e, key); f > 0 {
				return f
			}
		}
	case []any:
		for _, e := range x {
			if f := findNumber(e, key); f > 0 {
				return f
			}
		}
	}
	return 0
}

// orphanTurns counts the turns of the orphan subagents of the Claude Code goldens, per session.
func orphanTurns(t *testing.T, root string) map[string]int {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "testdata", "claude_code", "*", "events.yaml"))
	require.NoError(t, err)
	n := map[string]int{}
	for _, f := range files {
		logs, err := golden.ReadLogs(f)
		require.NoError(t, err)
		evs, _ := agentevent.DecodeLogs(logs)
		for i := range evs {
			if ev := &evs[i]; ev.Type == agentevent.TypeUserMessage && ev.AgentID != "" && ev.Attributes[agentevent.AttrSubagentOrphan] == true {
				n[ev.SessionID]++
			}
		}
	}
	return n
}
