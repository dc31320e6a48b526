// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package amp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/tests/testenv"
)

// expectedOpenCalls lists every tool call of the corpus that no final
// result answers, keyed "<thread id>/<call id>", with the reason.
var expectedOpenCalls = map[string]string{
	"T-1d0ef56c-0ecd-4bf7-af7b-5bc196dc8a6a/toolu_vrtx_01Fs4e3VReruSViG91ayaudh": "the file was committed while this Grep still ran (run.status in-progress, the thread's last message)",
}

// TestCorpus maps every Amp thread of every corpus root (amp/threads of
// vendortest.FixtureRoots), read in place and settled: zero unparsed, zero
// Validate violations, every open call explained, and per-thread tokens
// equal to ccusage's.
func TestCorpus(t *testing.T) {
	open := map[string]bool{}
	vendortest.EachCorpus(t, "amp", func(t *testing.T, dir string) {
		corpus(t, filepath.Join(dir, "threads"), open)
	})
	for k := range expectedOpenCalls {
		assert.Truef(t, open[k], "expectedOpenCalls lists %s, which is not open", k)
	}
}

func corpus(t *testing.T, dir string, open map[string]bool) {
	files := threadFiles(t, dir)
	require.NotEmpty(t, files, "no thread in %s", dir)
	totals := map[string]tokenTotals{}
	for _, f := range files {
		th := decodeFile(t, f)
		r := MapThread(Context{LogFile: f}, th, nil, true)
		require.NotEmpty(t, r.Events, f)
		assert.Equal(t, int64(-1), r.Held, "settled: nothing held")
		root := threadRoot(t, f)
		require.NotEmpty(t, root, "%s: the thread names its tree", f)
		for i := range r.Events {
			ev := &r.Events[i]
			assert.Emptyf(t, ev.Unparsed, "%s: unparsed (%s) %v", f, ev.Unparsed, ev.Attributes)
			assert.Equal(t, th.ID, ev.SessionID)
			assert.Equal(t, root, ev.ProjectRoot)
		}
		report := agentevent.Validate(r.Events)
		assert.Emptyf(t, report.Violations, "%s", f)
		for i := range report.OpenToolCalls {
			c := &report.OpenToolCalls[i]
			k := c.SessionID + "/" + c.ToolCallID
			open[k] = true
			_, listed := expectedOpenCalls[k]
			assert.Truef(t, listed, "open tool call %s (%s) is not listed in expectedOpenCalls", k, c.ToolName)
		}
		totals[th.ID] = sumTokens(r.Events)

		// Read as the CLI wrote it, one message more at each rewrite: the
		// same events, once.
		var grown []agentevent.Event
		w := Watermark{}
		for n := 1; n <= len(th.Messages); n++ {
			part := th
			part.Messages = th.Messages[:n]
			pr := MapThread(Context{LogFile: f, Sequence: int64(len(grown))}, part, w, n == len(th.Messages))
			grown = append(grown, pr.Events...)
			w.Add(pr.Emitted)
		}
		assert.ElementsMatch(t, eventIDs(r.Events), eventIDs(grown), "%s: grown one message at a time", f)
	}
	assertCcusageTotals(t, files, totals)
}

// threadRoot is the path of the file tree a thread ran in
// (env.initial.trees[0].uri), read without the package's decoder.
func threadRoot(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var th struct {
		Env struct {
			Initial struct {
				Trees []struct {
					URI string `json:"uri"`
				} `json:"trees"`
			} `json:"initial"`
		} `json:"env"`
	}
	require.NoError(t, json.Unmarshal(b, &th))
	if len(th.Env.Initial.Trees) == 0 {
		return ""
	}
	return strings.TrimPrefix(th.Env.Initial.Trees[0].URI, "file://")
}

// TestTestdataTokensMatchCcusage holds the golden cases to the same oracle
// (each case's threads/: the thread files as the CLI left them).
func TestTestdataTokensMatchCcusage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not running ccusage over testdata")
	}
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "testdata", "amp", "*", "threads", "T-*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	totals := map[string]tokenTotals{}
	for _, f := range files {
		th := decodeFile(t, f)
		totals[th.ID] = sumTokens(MapThread(Context{LogFile: f}, th, nil, true).Events)
	}
	assertCcusageTotals(t, files, totals)
}

func eventIDs(evs []agentevent.Event) []string {
	ids := make([]string, len(evs))
	for i := range evs {
		ids[i] = evs[i].EventID
	}
	return ids
}

func assertCcusageTotals(t *testing.T, files []string, totals map[string]tokenTotals) {
	oracle := ccusageSessions(t, files)
	require.Len(t, oracle, len(totals), "ccusage reports every thread")
	for id, got := range totals {
		assert.Equalf(t, oracle[id], got, "thread %s: token totals differ from ccusage", id)
	}
	t.Logf("%d threads compared with ccusage", len(totals))
}

// ccusageSessions runs `ccusage amp session --json --offline` with HOME at
// a scratch home holding the files under ~/.local/share/amp/threads.
func ccusageSessions(t *testing.T, files []string) map[string]tokenTotals {
	home := map[string]string{}
	for _, f := range files {
		home[filepath.Join(".local", "share", "amp", "threads", filepath.Base(f))] = f
	}
	sessions := map[string]tokenTotals{}
	for _, s := range testenv.CcusageSessions[testenv.CcusageSession](t, testenv.CcusageHome(t, home), "amp") {
		sessions[s.SessionID] = vendortest.CcusageTokens(s)
	}
	return sessions
}
