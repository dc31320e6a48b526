// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package copilotcli

import (
	"encoding/json"
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

// expectedOpenCalls lists every tool call of the corpus that no result
// answers, keyed "<session id>/<call id>", with the reason. The test fails
// on any open call not listed, and on a listed call that is not open.
var expectedOpenCalls = map[string]string{}

// sessionFiles lists the Copilot CLI session files under root, as the
// receiver finds them under ~/.copilot: session-state/<id>/events.jsonl,
// session-state/<id>.jsonl and history-session-state/*.json.
func sessionFiles(t testing.TB, root string) (jsonl, history []string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		switch {
		case slices.Contains(parts, "session-state") && strings.HasSuffix(path, ".jsonl"):
			jsonl = append(jsonl, path)
		case slices.Contains(parts, "history-session-state") && strings.HasSuffix(path, ".json"):
			history = append(history, path)
		}
		return nil
	}))
	slices.Sort(jsonl)
	slices.Sort(history)
	return jsonl, history
}

func mapHistoryFile(t testing.TB, path, name string) []agentevent.Event {
	t.Helper()
	if name == "" {
		name = path
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	h, err := DecodeHistory(data)
	require.NoError(t, err)
	return MapHistory(HistoryContext{LogFile: name}, h, nil).Events
}

// TestCorpus parses every Copilot CLI session of the shared fixture corpus
// (all four on-disk generations), read in place: nothing unparsed, no
// invariant broken, every open tool call explained, and per-session tokens
// equal to ccusage's.
func TestCorpus(t *testing.T) {
	vendortest.EachCorpus(t, "copilot_cli", corpus)
}

func corpus(t *testing.T, dir string) {
	jsonl, history := sessionFiles(t, dir)
	require.NotEmpty(t, jsonl, "JSONL sessions")
	totals := map[string]tokenTotals{}
	outputs := map[string]int64{}
	open := map[string]bool{}
	check := func(path string, events []agentevent.Event) {
		require.NotEmptyf(t, events, "%s yields no event", path)
		for _, ev := range events {
			assert.Emptyf(t, ev.Unparsed, "%s line %d: unparsed (%s) %v", path, ev.LogLine, ev.Unparsed, ev.Attributes)
			assert.Equal(t, agentevent.SourceCopilotCLI, ev.Source)
		}
		report := agentevent.Validate(events)
		assert.Emptyf(t, report.Violations, "%s", path)
		for _, c := range report.OpenToolCalls {
			k := c.SessionID + "/" + c.ToolCallID
			open[k] = true
			_, listed := expectedOpenCalls[k]
			assert.Truef(t, listed, "open tool call %s (%s, line %d) is not listed in expectedOpenCalls", k, c.ToolName, c.LogLine)
		}
		sid := events[0].SessionID
		totals[sid] = sumTokens(events)
	}
	for _, path := range jsonl {
		events := parseSessionFile(t, path, "")
		check(path, events)
		// Every events.jsonl names its project: from session.start, or
		// from workspace.yaml beside it.
		if filepath.Base(path) == "events.jsonl" {
			assert.NotEmptyf(t, events[len(events)-1].ProjectRoot, "%s: no project root", path)
		}
		outputs[events[0].SessionID] = fileOutputTokens(t, path)
	}
	for _, path := range history {
		events := mapHistoryFile(t, path, "")
		check(path, events)
		assert.Equal(t, HistorySessionID(path), events[0].SessionID)
		// The oldest format records no usage at all.
		assert.Equal(t, tokenTotals{}, sumTokens(events), "%s carries no token counts", path)
	}
	for k := range expectedOpenCalls {
		assert.Truef(t, open[k], "expectedOpenCalls lists %s, which is not open", k)
	}
	assertCcusageTotals(t, append(slices.Clone(jsonl), history...), dir, totals, outputs)
}

// fileOutputTokens sums the outputTokens of a file's assistant.message
// records, read independently of the parser.
func fileOutputTokens(t testing.TB, path string) int64 {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var n int64
	for _, l := range splitLines(data) {
		var r struct {
			Type string `json:"type"`
			Data struct {
				OutputTokens int64 `json:"outputTokens"`
			} `json:"data"`
		}
		if json.Unmarshal(l.Data, &r) == nil && r.Type == "assistant.message" {
			n += r.Data.OutputTokens
		}
	}
	return n
}

// assertCcusageTotals compares per-session totals with ccusage's.
// ccusage 20.0.24 reads a session's usage from its session.shutdown record
// only: a session the CLI never shut down (or an older one without
// per-model metrics) has no ccusage total. Such a session's own totals are
// the per-response output tokens its log carries (outputs), and nothing else.
func assertCcusageTotals(t *testing.T, files []string, root string, totals map[string]tokenTotals, outputs map[string]int64) {
	oracle := ccusageSessions(t, files, root)
	require.NotEmpty(t, oracle, "ccusage reported no session at all")
	compared := 0
	for sid, got := range totals {
		want, ok := oracle[sid]
		if !ok {
			assert.Equalf(t, tokenTotals{Output: outputs[sid]}, got, "session %s: without a shutdown record only per-response output tokens", sid)
			continue
		}
		compared++
		assert.Equalf(t, want, got, "session %s: token totals differ from ccusage", sid)
	}
	for sid := range oracle {
		assert.Containsf(t, totals, sid, "ccusage reports session %s that the test does not know", sid)
	}
	require.NotZero(t, compared)
	t.Logf("%d sessions compared with ccusage", compared)
}

// ccusageSessions runs `ccusage copilot session --json --offline` with HOME
// at a scratch home holding the files under ~/.copilot as the CLI lays them
// out (the path below session-state/ or history-session-state/ kept).
func ccusageSessions(t *testing.T, files []string, root string) map[string]tokenTotals {
	home := map[string]string{}
	for _, f := range files {
		rel, err := filepath.Rel(root, f)
		require.NoError(t, err)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		i := slices.IndexFunc(parts, func(p string) bool { return p == "session-state" || p == "history-session-state" })
		require.GreaterOrEqual(t, i, 0, f)
		home[filepath.Join(append([]string{".copilot"}, parts[i:]...)...)] = f
	}
	sessions := map[string]tokenTotals{}
	for _, s := range testenv.CcusageSessions[testenv.CcusageSession](t, testenv.CcusageHome(t, home), "copilot") {
		sessions[s.SessionID] = vendortest.CcusageTokens(s)
	}
	return sessions
}

// TestTestdataTokensMatchCcusage holds the golden cases to the same oracle.
func TestTestdataTokensMatchCcusage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not running ccusage over testdata")
	}
	root := filepath.Join(repoRoot(t), "testdata", "copilot_cli")
	jsonl, history := sessionFiles(t, root)
	totals := map[string]tokenTotals{}
	outputs := map[string]int64{}
	for _, f := range jsonl {
		evs := parseSessionFile(t, f, "")
		totals[evs[0].SessionID] = sumTokens(evs)
		outputs[evs[0].SessionID] = fileOutputTokens(t, f)
	}
	for _, f := range history {
		evs := mapHistoryFile(t, f, "")
		totals[evs[0].SessionID] = sumTokens(evs)
	}
	// Every case is its own copy of ~/.copilot: laid out side by side they
	// form one home (session ids differ).
	assertCcusageTotals(t, append(slices.Clone(jsonl), history...), root, totals, outputs)
}
