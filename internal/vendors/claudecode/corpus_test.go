// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/tests/testenv"
)

// expectedOpenCalls lists every tool call of the corpus that no tool_result
// answers, keyed "<session group>/<tool call id>", with the reason it is
// open. The corpus test fails on any open call not listed here, and on a
// listed call that is no longer open.
var expectedOpenCalls = map[string]string{}

var fixturesDir = vendortest.FixturesDir

// sessionGroup is what ccusage reports as one session: a main session file
// with the subagent files nested below it (<session>/subagents/), or a flat
// ≤2.0 agent-<id>.jsonl file on its own.
type sessionGroup struct {
	project string   // the directory the main file lives in
	id      string   // the main file's base name without .jsonl
	files   []string // relative to the claude_code fixture dir: main first, then subagents sorted
	// orphan: the group is subagent files whose main session file is
	// absent. ccusage still names them after their session's directory.
	orphan bool
}

func (g sessionGroup) key() string { return g.project + "/" + g.id }

func corpusGroups(t *testing.T, dir string) []sessionGroup {
	var groups []sessionGroup
	byMain := map[string]int{}
	var nested []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if filepath.Base(filepath.Dir(rel)) == "subagents" {
			nested = append(nested, rel)
			return nil
		}
		project := filepath.Base(filepath.Dir(rel))
		if project == "." {
			project = filepath.Base(dir) // a session file at the top of the corpus
		}
		byMain[strings.TrimSuffix(rel, ".jsonl")] = len(groups)
		groups = append(groups, sessionGroup{
			project: project,
			id:      strings.TrimSuffix(filepath.Base(rel), ".jsonl"),
			files:   []string{rel},
		})
		return nil
	})
	require.NoError(t, err)
	slices.Sort(nested)
	for _, rel := range nested {
		main := filepath.Dir(filepath.Dir(rel)) // <dir>/<session>
		i, ok := byMain[main]
		if !ok {
			project := filepath.Base(filepath.Dir(main))
			if project == "." {
				project = filepath.Base(dir)
			}
			i = len(groups)
			byMain[main] = i
			groups = append(groups, sessionGroup{project: project, id: filepath.Base(main), orphan: true})
		}
		groups[i].files = append(groups[i].files, rel)
	}
	return groups
}

// TestCorpus parses every Claude Code file of the shared fixture corpus:
// nothing unparsed, no invariant broken, every open tool call explained, and
// per-session token totals equal to ccusage's.
func TestCorpus(t *testing.T) {
	vendortest.EachCorpus(t, "claude_code", corpus)
}

func corpus(t *testing.T, dir string) {
	groups := corpusGroups(t, dir)
	require.NotEmpty(t, groups)

	totals := map[string]tokenTotals{}
	open := map[string]bool{}
	for _, g := range groups {
		var events []agentevent.Event
		for _, rel := range g.files {
			evs := parseFile(t, dir, rel)
			for i := range evs {
				ev := &evs[i]
				assert.Emptyf(t, ev.Unparsed, "%s line %d: unparsed (%s) %v", rel, ev.LogLine, ev.Unparsed, ev.Attributes)
				orphan, _ := ev.Attributes[agentevent.AttrSubagentOrphan].(bool)
				assert.Equalf(t, g.orphan, orphan, "%s line %d: orphan mark", rel, ev.LogLine)
			}
			events = append(events, evs...)
		}
		report := agentevent.Validate(events)
		assert.Emptyf(t, report.Violations, "session %s", g.key())
		for i := range report.OpenToolCalls {
			c := &report.OpenToolCalls[i]
			k := g.key() + "/" + c.ToolCallID
			open[k] = true
			_, listed := expectedOpenCalls[k]
			assert.Truef(t, listed, "open tool call %s (%s, %s line %d) is not listed in expectedOpenCalls", k, c.ToolName, c.LogFile, c.LogLine)
		}
		totals[g.key()] = sumTokens(events)
	}
	for k := range expectedOpenCalls {
		assert.Truef(t, open[k], "expectedOpenCalls lists %s, which is not open", k)
	}

	assertCcusageTotals(t, dir, groups, totals)
}

// TestTestdataTokensMatchCcusage holds the hand-written golden cases to the
// same oracle: streamed rows, inline sidechains and nested subagents count
// what ccusage counts.
func TestTestdataTokensMatchCcusage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not running ccusage over testdata")
	}
	dir := filepath.Join(repoRoot(t), "testdata", "claude_code")
	var groups []sessionGroup
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	totals := map[string]tokenTotals{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		for _, g := range corpusGroups(t, filepath.Join(dir, e.Name())) {
			g.project = e.Name()
			var events []agentevent.Event
			for _, rel := range g.files {
				events = append(events, parseFile(t, filepath.Join(dir, e.Name()), rel)...)
			}
			totals[g.key()] = sumTokens(events)
			for i := range g.files {
				g.files[i] = filepath.Join(e.Name(), g.files[i])
			}
			groups = append(groups, g)
		}
	}
	assertCcusageTotals(t, dir, groups, totals)
}

// assertCcusageTotals compares per-session token totals with ccusage's.
func assertCcusageTotals(t *testing.T, dir string, groups []sessionGroup, totals map[string]tokenTotals) {
	oracle := ccusageSessions(t, dir, groups)
	require.NotEmpty(t, oracle, "ccusage reported no session at all")
	compared := 0
	for _, g := range groups {
		got := totals[g.key()]
		want, ok := oracle[g.key()]
		if !ok {
			assert.Equalf(t, tokenTotals{}, got, "session %s: ccusage reports no usage", g.key())
			continue
		}
		compared++
		assert.Equalf(t, want, got, "session %s: token totals differ from ccusage", g.key())
	}
	for k := range oracle {
		assert.Containsf(t, totals, k, "ccusage reports session %s that the grouping does not know", k)
	}
	t.Logf("%d sessions compared with ccusage", compared)
}

// ccusageSessions runs ccusage (the token-count oracle) over a copy of the
// corpus laid out as ~/.claude/projects/<project>/<session>.jsonl (subagent
// files where they live) and returns its per-session totals keyed like
// sessionGroup.key. ccusage names a session after its main file (flat agent
// files are sessions of their own) and counts nested subagent files with
// their session.
func ccusageSessions(t *testing.T, dir string, groups []sessionGroup) map[string]tokenTotals {
	files := map[string]string{}
	for _, g := range groups {
		for _, rel := range g.files {
			// <project>/<session>.jsonl and <project>/<session>/subagents/...
			top := filepath.Dir(g.files[0])
			if g.orphan {
				top = filepath.Dir(filepath.Dir(top)) // above <session>/subagents
			}
			inProject, err := filepath.Rel(top, rel)
			require.NoError(t, err)
			files[filepath.Join(".claude", "projects", g.project, inProject)] = filepath.Join(dir, rel)
		}
	}
	sessions := map[string]tokenTotals{}
	for _, s := range testenv.CcusageSessions[testenv.CcusageSession](t, testenv.CcusageHome(t, files), "claude") {
		sessions[s.ProjectPath+"/"+s.SessionID] = vendortest.CcusageTokens(s)
	}
	return sessions
}
