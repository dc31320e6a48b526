// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package opencode

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/kilo"
	oc "github.com/agentotel/agentotel/internal/vendors/opencode"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/tests/testenv"
)

var update = flag.Bool("update", false, "regenerate testdata/kilo/*/events.yaml")

// kiloStore is Kilo CLI's store, as its descriptor names it.
var kiloStore = Store{Source: kilo.Source, Database: kilo.Database}

// readDataDir reads the data directory data with the source of store, in
// one poll, and returns the events as the next consumer decodes them.
func readDataDir(t *testing.T, data string, store Store) []agentevent.Event {
	t.Helper()
	rec := &recorder{}
	rd := newStoreSource(t, data, rec, store)
	t.Cleanup(func() {
		for _, d := range rd.dbs {
			_ = d.close()
		}
	})
	rd.Poll(t.Context())
	return rec.events(t)
}

// kiloCorpus is the repository's Kilo fixture corpus
// (testdata/corpus/kilo/<case>/kilo.db); the golden events and traces of a
// case are in testdata/kilo/<case>.
func kiloCorpus(tb testing.TB) string {
	tb.Helper()
	return filepath.Join(vendortest.RepoRoot(tb), "testdata", "corpus", kilo.Fixtures)
}

// kiloCase reads a case of the Kilo corpus (dir holds its kilo.db) as the
// receiver does, its database copied into a data directory of its own.
// LogFile is the database's name, the same wherever the copy is.
func kiloCase(t *testing.T, dir string) []agentevent.Event {
	t.Helper()
	data := t.TempDir()
	testenv.CopyFile(t, filepath.Join(dir, kilo.Database), filepath.Join(data, kilo.Database))
	events := readDataDir(t, data, kiloStore)
	for i := range events {
		require.Equal(t, filepath.Join(data, kilo.Database), events[i].LogFile)
		events[i].LogFile = kilo.Database
	}
	return events
}

// TestKiloGoldenEvents: every case of the Kilo corpus, read through the
// OpenCode source with Kilo's store, yields its events.yaml (-update
// regenerates): Kilo's source, no unparsed record, every tool call
// answered.
func TestKiloGoldenEvents(t *testing.T) {
	corpus, err := filepath.Glob(filepath.Join(kiloCorpus(t), "*", kilo.Database))
	require.NoError(t, err)
	golden, err := filepath.Glob(filepath.Join(vendortest.RepoRoot(t), "testdata", "kilo", "*"))
	require.NoError(t, err)
	caseNames := func(paths []string, up int) []string {
		var out []string
		for _, p := range paths {
			for range up {
				p = filepath.Dir(p)
			}
			out = append(out, filepath.Base(p))
		}
		return out
	}
	require.Equal(t, caseNames(corpus, 1), caseNames(golden, 0), "each corpus case has its golden case (run with -update to write one)")
	vendortest.GoldenEvents(t, "kilo", *update, func(t *testing.T, dir string) []agentevent.Event {
		events := kiloCase(t, filepath.Join(kiloCorpus(t), filepath.Base(dir)))
		for _, ev := range events {
			require.Equal(t, kilo.Source, ev.Source, ev.EventID)
			require.Empty(t, ev.Unparsed, "event %s", ev.EventID)
		}
		return events
	}, func(t *testing.T, r agentevent.Report) {
		require.Empty(t, r.OpenToolCalls, "every tool call of a case is answered")
	})
}

// TestStoreDatabaseName: a store reads its own database only.
func TestStoreDatabaseName(t *testing.T) {
	dir := filepath.Join(kiloCorpus(t), "tools_and_errors")
	asOpenCode := t.TempDir()
	testenv.CopyFile(t, filepath.Join(dir, kilo.Database), filepath.Join(asOpenCode, "opencode.db"))
	events := readDataDir(t, asOpenCode, OpenCode)
	require.NotEmpty(t, events)
	for _, ev := range events {
		assert.Equal(t, oc.Source, ev.Source)
	}
	assert.Empty(t, readDataDir(t, asOpenCode, kiloStore), "no kilo.db in the directory")

	asKilo := t.TempDir()
	testenv.CopyFile(t, filepath.Join(dir, kilo.Database), filepath.Join(asKilo, kilo.Database))
	assert.Empty(t, readDataDir(t, asKilo, OpenCode), "no opencode.db in the directory")
}

// kiloSums are a session's figures the way ccusage reports Kilo: input
// without cache reads and writes, output without reasoning, the cost as
// logged on the messages.
type kiloSums struct {
	Input      int64   `json:"inputTokens"`
	Output     int64   `json:"outputTokens"`
	CacheRead  int64   `json:"cacheReadTokens"`
	CacheWrite int64   `json:"cacheCreationTokens"`
	Total      int64   `json:"totalTokens"`
	Cost       float64 `json:"totalCost"`
}

// TestKiloCcusage holds every case's per-session figures to `ccusage kilo
// session`, run with the case's database in ~/.local/share/kilo. The cost
// compared is CostUSD plus agent.cost.subagents_usd: ccusage takes a
// message's cost as Kilo logged it, the cost of the subagents it ran
// included.
func TestKiloCcusage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not running ccusage")
	}
	cases, err := filepath.Glob(filepath.Join(kiloCorpus(t), "*", kilo.Database))
	require.NoError(t, err)
	require.NotEmpty(t, cases)
	for _, db := range cases {
		t.Run(filepath.Base(filepath.Dir(db)), func(t *testing.T) {
			home := testenv.CcusageHome(t, map[string]string{filepath.Join(".local", "share", "kilo", kilo.Database): db})
			got := map[string]kiloSums{}
			for _, ev := range kiloCase(t, filepath.Dir(db)) {
				s := got[ev.SessionID]
				read, write := agentevent.Value(ev.TokensCached), agentevent.Value(ev.TokensCacheCreation)
				s.Input += agentevent.Value(ev.TokensInput) - read - write
				s.CacheRead += read
				s.CacheWrite += write
				s.Output += agentevent.Value(ev.TokensOutput) - agentevent.Value(ev.TokensThinking)
				s.Total += agentevent.Value(ev.TokensTotal)
				if ev.CostUSD != nil {
					s.Cost += *ev.CostUSD
				}
				if sub, ok := ev.Attributes[agentevent.AttrSubagentsCostUSD].(float64); ok {
					s.Cost += sub
				}
				got[ev.SessionID] = s
			}
			type session struct {
				SessionID string `json:"sessionId"`
				kiloSums
			}
			oracle := map[string]kiloSums{}
			for _, s := range testenv.CcusageSessions[session](t, home, "kilo") {
				oracle[s.SessionID] = s.kiloSums
			}
			require.Len(t, oracle, len(got), "the same sessions")
			for id, g := range got {
				o, ok := oracle[id]
				require.True(t, ok, "ccusage has no session %s", id)
				t.Logf("session %s: ccusage %+v, events %+v", id, o, g)
				assert.InDelta(t, o.Cost, g.Cost, 1e-9, "session %s: cost", id)
				g.Cost, o.Cost = 0, 0
				assert.Equal(t, o, g, "session %s: tokens", id)
			}
		})
	}
}
