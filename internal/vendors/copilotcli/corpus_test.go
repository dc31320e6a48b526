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
func sessionFiles(tb testing.TB, root string) (jsonl, history []string) {
	tb.Helper()
	require.NoError(tb, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
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

func mapHistoryFile(tb testing.TB, path, name string) []agentevent.Event {
	tb.Helper()
	if name == "" {
		name = path
	}
	data, err := os.ReadFile(path)
	require.NoError(tb, err)
	h, err := DecodeHistory(data)
	require.NoError(tb, err)
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
	usages := map[string]sessionUsage{}
	open := map[string]bool{}
	check := func(path string, events []agentevent.Event) {
		require.NotEmptyf(t, events, "%s yields no event", path)
		for i := range events {
			ev := &events[i]
			assert.Emptyf(t, ev.Unparsed, "%s line %d: unparsed (%s) %v", path, ev.LogLine, ev.Unparsed, ev.Attributes)
			assert.Equal(t, Source, ev.Source)
		}
		report := agentevent.Validate(events)
		assert.Emptyf(t, report.Violations, "%s", path)
		for i := range report.OpenToolCalls {
			c := &report.OpenToolCalls[i]
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
		usages[events[0].SessionID] = fileUsage(t, path)
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
	assertCcusageTotals(t, append(slices.Clone(jsonl), history...), dir, totals, usages)
}

// sessionUsage is what a session file's records say about its tokens, read
// independently of the parser: the per-model usage of each session.shutdown
// (each covers its own run of a resumed session) and the outputTokens of
// the responses after the last one (all of them when there is none).
type sessionUsage struct {
	shutdowns []map[string]tokenTotals
	tail      int64
}

// ours is the session's tokens by this package's definition: every
// shutdown's usage plus the output of the responses of a last run that
// has no shutdown.
func (u sessionUsage) ours() tokenTotals {
	t := tokenTotals{Output: u.tail}
	for _, sd := range u.shutdowns {
		for _, m := range sd {
			t = addTokens(t, m)
		}
	}
	return t
}

// ccusage is what ccusage 20.0.24 reports for the session: per model, each
// field's maximum over the shutdowns, summed over the models; nothing
// (false) without a shutdown. For one shutdown that is the shutdown's
// usage; for a resumed session it is less than ours.
func (u sessionUsage) ccusage() (tokenTotals, bool) {
	if len(u.shutdowns) == 0 {
		return tokenTotals{}, false
	}
	byModel := map[string]tokenTotals{}
	for _, sd := range u.shutdowns {
		for name, m := range sd {
			b := byModel[name]
			byModel[name] = tokenTotals{
				Input: max(b.Input, m.Input), Output: max(b.Output, m.Output),
				CacheRead: max(b.CacheRead, m.CacheRead), CacheCreation: max(b.CacheCreation, m.CacheCreation),
			}
		}
	}
	var t tokenTotals
	for _, m := range byModel {
		t = addTokens(t, m)
	}
	return t, true
}

func addTokens(a, b tokenTotals) tokenTotals {
	return tokenTotals{
		Input: a.Input + b.Input, Output: a.Output + b.Output,
		CacheRead: a.CacheRead + b.CacheRead, CacheCreation: a.CacheCreation + b.CacheCreation,
	}
}

// fileUsage reads a session file's shutdowns and responses (sessionUsage).
func fileUsage(tb testing.TB, path string) sessionUsage {
	data, err := os.ReadFile(path)
	require.NoError(tb, err)
	var u sessionUsage
	for _, l := range splitLines(data) {
		var r struct {
			Type string `json:"type"`
			Data struct {
				OutputTokens int64 `json:"outputTokens"`
				ModelMetrics map[string]struct {
					Usage struct {
						InputTokens      int64 `json:"inputTokens"`
						OutputTokens     int64 `json:"outputTokens"`
						CacheReadTokens  int64 `json:"cacheReadTokens"`
						CacheWriteTokens int64 `json:"cacheWriteTokens"`
					} `json:"usage"`
				} `json:"modelMetrics"`
			} `json:"data"`
		}
		if json.Unmarshal(l.Data, &r) != nil {
			continue
		}
		switch r.Type {
		case "assistant.message":
			u.tail += r.Data.OutputTokens
		case "session.shutdown":
			sd := map[string]tokenTotals{}
			for name, m := range r.Data.ModelMetrics {
				x := m.Usage
				// ccusage's input is net of cache reads and writes, which
				// the CLI's inputTokens include.
				sd[name] = tokenTotals{
					Input: x.InputTokens - x.CacheReadTokens - x.CacheWriteTokens, Output: x.OutputTokens,
					CacheRead: x.CacheReadTokens, CacheCreation: x.CacheWriteTokens,
				}
			}
			u.shutdowns = append(u.shutdowns, sd)
			u.tail = 0 // the run's responses are in its shutdown's usage
		}
	}
	return u
}

// assertCcusageTotals holds per-session totals to the records and to
// ccusage. Every session's totals are sessionUsage.ours, read from the
// file independently of the parser; ccusage 20.0.24, which reads only the
// session.shutdown records, must report exactly sessionUsage.ccusage (so
// the independent reading is ccusage's), and a session with one shutdown
// and no response after it must equal ccusage's figure outright. A
// session without a shutdown (the CLI never shut down, or an older one
// without per-model metrics) has no ccusage total: its own are the
// per-response output tokens its log carries, and nothing else.
func assertCcusageTotals(t *testing.T, files []string, root string, totals map[string]tokenTotals, usages map[string]sessionUsage) {
	oracle := ccusageSessions(t, files, root)
	require.NotEmpty(t, oracle, "ccusage reported no session at all")
	compared := 0
	for sid, got := range totals {
		u := usages[sid]
		assert.Equalf(t, u.ours(), got, "session %s: every shutdown's usage plus the last run's per-response output", sid)
		want, hasShutdown := u.ccusage()
		reported, ok := oracle[sid]
		if !hasShutdown {
			assert.Falsef(t, ok, "session %s: ccusage reports a session without a shutdown record", sid)
			continue
		}
		compared++
		assert.Equalf(t, want, reported, "session %s: ccusage's figure is not the per-model maximum over the shutdowns", sid)
		if len(u.shutdowns) == 1 && u.tail == 0 {
			assert.Equalf(t, reported, got, "session %s: token totals differ from ccusage", sid)
		}
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
	usages := map[string]sessionUsage{}
	for _, f := range jsonl {
		evs := parseSessionFile(t, f, "")
		totals[evs[0].SessionID] = sumTokens(evs)
		usages[evs[0].SessionID] = fileUsage(t, f)
	}
	for _, f := range history {
		evs := mapHistoryFile(t, f, "")
		totals[evs[0].SessionID] = sumTokens(evs)
	}
	// Every case is its own copy of ~/.copilot: laid out side by side they
	// form one home (session ids differ).
	assertCcusageTotals(t, append(slices.Clone(jsonl), history...), root, totals, usages)
}
