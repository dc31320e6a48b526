// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

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

// expectedOpenCalls lists every tool call of the corpus that no output
// answers, keyed "<file>/<call id>", with the reason. The test fails on any
// open call not listed, and on a listed call that is not open.
var expectedOpenCalls = map[string]string{}

// corpusFiles are the rollouts below dir, as paths relative to it: a
// corpus may keep each rollout in a folder named after its version.
func corpusFiles(t *testing.T, dir string) []string {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".jsonl") {
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return err
			}
			files = append(files, rel)
		}
		return nil
	})
	require.NoError(t, err)
	slices.Sort(files)
	return files
}

// TestCorpus parses every Codex rollout of the shared fixture corpus:
// nothing unparsed, no invariant broken, every open tool call explained,
// per-session token totals equal to ccusage's.
func TestCorpus(t *testing.T) {
	vendortest.EachCorpus(t, "codex", func(t *testing.T, dir string) {
		files := corpusFiles(t, dir)
		require.NotEmpty(t, files)
		totals := map[string]tokenTotals{}
		open := map[string]bool{}
		for _, f := range files {
			events := parseFile(t, dir, f)
			require.NotEmptyf(t, events, "%s yields no event", f)
			for _, ev := range events {
				assert.Emptyf(t, ev.Unparsed, "%s line %d: unparsed (%s) %v", f, ev.LogLine, ev.Unparsed, ev.Attributes)
			}
			report := agentevent.Validate(events)
			assert.Emptyf(t, report.Violations, "%s", f)
			for _, c := range report.OpenToolCalls {
				k := f + "/" + c.ToolCallID
				open[k] = true
				_, listed := expectedOpenCalls[k]
				assert.Truef(t, listed, "open tool call %s (%s, line %d) is not listed in expectedOpenCalls", k, c.ToolName, c.LogLine)
			}
			totals[strings.TrimSuffix(filepath.Base(f), ".jsonl")] = sumTokens(events)
		}
		for k := range expectedOpenCalls {
			assert.Truef(t, open[k], "expectedOpenCalls lists %s, which is not open", k)
		}
		assertCcusageTotals(t, dir, files, totals)
	})
}

// TestTestdataTokensMatchCcusage holds the hand-written golden cases to the
// same oracle.
func TestTestdataTokensMatchCcusage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not running ccusage over testdata")
	}
	root := filepath.Join(repoRoot(t), "testdata", "codex")
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	totals := map[string]tokenTotals{}
	var files []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		for _, f := range caseFiles(t, filepath.Join(root, e.Name())) {
			rel := filepath.Join(e.Name(), f)
			files = append(files, rel)
			totals[strings.TrimSuffix(filepath.Base(rel), ".jsonl")] = sumTokens(parseFile(t, root, rel))
		}
	}
	assertCcusageTotals(t, root, files, totals)
}

// assertCcusageTotals compares per-file totals (ccusage codex reports one
// session per rollout file, named by the file) with ccusage's.
func assertCcusageTotals(t *testing.T, dir string, files []string, totals map[string]tokenTotals) {
	oracle := ccusageSessions(t, dir, files)
	require.NotEmpty(t, oracle, "ccusage reported no session at all")
	compared := 0
	for k, got := range totals {
		want, ok := oracle[k]
		if !ok {
			assert.Equalf(t, tokenTotals{}, got, "session %s: ccusage reports no usage", k)
			continue
		}
		compared++
		assert.Equalf(t, want, got, "session %s: token totals differ from ccusage", k)
	}
	for k := range oracle {
		assert.Containsf(t, totals, k, "ccusage reports session %s that the test does not know", k)
	}
	t.Logf("%d sessions compared with ccusage", compared)
}

// ccusageSessions runs `ccusage codex session --json --offline` with
// CODEX_HOME at a scratch copy laid out as sessions/YYYY/MM/DD/<file>.
func ccusageSessions(t *testing.T, dir string, files []string) map[string]tokenTotals {
	home := map[string]string{}
	for _, rel := range files {
		home[filepath.Join(".codex", "sessions", "2025", "01", "01", filepath.Base(rel))] = filepath.Join(dir, rel)
	}
	sessions := map[string]tokenTotals{}
	for _, s := range testenv.CcusageSessions[testenv.CcusageSession](t, testenv.CcusageHome(t, home), "codex") {
		sessions[s.SessionFile] = tokenTotals{
			Input:     s.InputTokens,
			CacheRead: s.CacheReadTokens,
			Output:    s.OutputTokens,
			Reasoning: s.ReasoningOutputTokens,
		}
	}
	return sessions
}
