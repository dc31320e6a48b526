// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package opencode

import (
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

// TestCorpus maps every OpenCode fixture of every corpus root (opencode/ of
// vendortest.FixtureRoots), read in place — a SQLite database through a
// copy (testenv.CopyOpenCodeDB) — : zero unparsed objects, zero Validate violations,
// no open tool call, and token totals equal to the sum of the assistant
// messages' own tokens (steps not added again). The storage trees' and the
// databases' tokens are also held, per session, to ccusage opencode's.
func TestCorpus(t *testing.T) {
	vendortest.EachCorpus(t, "opencode", func(t *testing.T, dir string) {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		n := 0
		var all tokenSums
		oracle := map[string]string{} // scratch data dir → the tree or database to lay out there
		for _, e := range entries {
			name := e.Name()
			path := filepath.Join(dir, name)
			var events []agentevent.Event
			var want tokenSums
			before := testenv.FileStates(t, path)
			switch {
			case e.IsDir() && exists(t, filepath.Join(path, "storage")):
				events = mapTree(t, path)
				want = treeTokens(t, filepath.Join(path, "storage", "message"))
				oracle[name] = path
			case e.IsDir() && exists(t, filepath.Join(path, "opencode.db")):
				db := testenv.CopyOpenCodeDB(t, path, t.TempDir())
				events = mapDB(t, db, "opencode.db")
				want = dbTokens(t, db)
				oracle[name] = filepath.Dir(db)
			case e.IsDir():
				t.Errorf("%s: neither a storage tree nor an opencode.db; the corpus test does not know this layout", name)
				continue
			case strings.HasSuffix(name, ".json"):
				events = mapAPI(t, path, name)
				want = apiTokens(t, path)
			default:
				continue
			}
			require.Equal(t, before, testenv.FileStates(t, path), "%s: reading the fixture changed it", name)
			n++
			t.Run(name, func(t *testing.T) {
				require.NotEmpty(t, events)
				for _, ev := range events {
					require.Empty(t, ev.Unparsed, "event %s: %v", ev.EventID, ev.Attributes)
				}
				report := agentevent.Validate(events)
				require.Empty(t, report.Violations)
				require.Empty(t, report.OpenToolCalls)
				var got tokenSums
				for _, ev := range events {
					got.input += agentevent.Value(ev.TokensInput)
					got.output += agentevent.Value(ev.TokensOutput)
					got.cacheRead += agentevent.Value(ev.TokensCached)
					got.cacheWrite += agentevent.Value(ev.TokensCacheCreation)
				}
				require.Equal(t, want, got)
				t.Logf("%d events, tokens %+v", len(events), got)
			})
			all.input += want.input
		}
		require.NotZero(t, n, "no OpenCode fixture in %s", dir)
		// Per root, not per fixture: a real session may record no usage
		// at all (sqlite_v1.4.0_wal_only: a provider that answered nothing,
		// tokens 0 and cost 0).
		require.NotZero(t, all.input, "no OpenCode fixture of %s records tokens", dir)
		if testing.Short() {
			t.Log("-short: not running ccusage")
			return
		}
		for name, src := range oracle {
			t.Run(name+"/ccusage", func(t *testing.T) { assertCcusageTotals(t, src) })
		}
	})
}

type tokenSums struct{ input, output, cacheRead, cacheWrite int64 }

func (s *tokenSums) add(m Message) {
	if m.Role != RoleAssistant || m.Tokens == nil {
		return
	}
	t := m.Tokens
	s.input += t.Input + t.Cache.Read + t.Cache.Write
	s.output += t.Output + t.Reasoning
	s.cacheRead += t.Cache.Read
	s.cacheWrite += t.Cache.Write
}

func treeTokens(t *testing.T, messages string) tokenSums {
	var s tokenSums
	sessions, err := os.ReadDir(messages)
	require.NoError(t, err)
	for _, sd := range sessions {
		_, data := readJSONFiles(t, filepath.Join(messages, sd.Name()))
		for _, b := range data {
			m, err := DecodeMessage(b)
			require.NoError(t, err)
			s.add(m)
		}
	}
	return s
}

func apiTokens(t *testing.T, path string) tokenSums {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	msgs, err := DecodeAPIMessages(b)
	require.NoError(t, err)
	var s tokenSums
	for i := range msgs {
		m := &msgs[i]
		s.add(m.Info)
	}
	return s
}

func exists(t *testing.T, path string) bool {
	_, err := os.Stat(path)
	if os.IsNotExist(err) {
		return false
	}
	require.NoError(t, err)
	return true
}

// ccusageTokens are a session's tokens the way ccusage reports OpenCode
// usage: input without the cache reads and writes, output without
// reasoning, total with everything.
type ccusageTokens struct {
	Input      int64 `json:"inputTokens"`
	Output     int64 `json:"outputTokens"`
	CacheRead  int64 `json:"cacheReadTokens"`
	CacheWrite int64 `json:"cacheCreationTokens"`
	Total      int64 `json:"totalTokens"`
}

// assertCcusageTotals holds the per-session tokens of one data directory
// (src: a folder holding storage/ or a copy of opencode.db) to `ccusage
// opencode session`, run with ~/.local/share/opencode laid out from it.
func assertCcusageTotals(t *testing.T, src string) {
	home := t.TempDir()
	data := filepath.Join(home, ".local", "share", "opencode")
	require.NoError(t, os.CopyFS(data, os.DirFS(src)))
	var events []agentevent.Event
	if exists(t, filepath.Join(data, "storage")) {
		events = mapTree(t, data)
	} else {
		events = mapDB(t, filepath.Join(data, "opencode.db"), "opencode.db")
	}
	got := map[string]ccusageTokens{}
	for i := range events {
		ev := &events[i]
		s := got[ev.SessionID]
		read, write := agentevent.Value(ev.TokensCached), agentevent.Value(ev.TokensCacheCreation)
		s.Input += agentevent.Value(ev.TokensInput) - read - write
		s.CacheRead += read
		s.CacheWrite += write
		s.Output += agentevent.Value(ev.TokensOutput) - agentevent.Value(ev.TokensThinking)
		s.Total += agentevent.Value(ev.TokensTotal)
		got[ev.SessionID] = s
	}
	type session struct {
		SessionID string `json:"sessionId"`
		ccusageTokens
	}
	oracle := map[string]ccusageTokens{}
	for _, s := range testenv.CcusageSessions[session](t, home, "opencode") {
		oracle[s.SessionID] = s.ccusageTokens
	}
	for id, g := range got {
		if g == (ccusageTokens{}) {
			assert.NotContainsf(t, oracle, id, "session %s: ccusage counts tokens the events do not", id)
			continue
		}
		assert.Equalf(t, oracle[id], g, "session %s: token totals differ from ccusage", id)
	}
	for id := range oracle {
		assert.Containsf(t, got, id, "ccusage reports session %s, which the events do not hold", id)
	}
	t.Logf("%d OpenCode sessions compared with ccusage", len(got))
}
