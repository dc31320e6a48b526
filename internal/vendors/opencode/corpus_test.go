// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package opencode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// TestCorpus maps every OpenCode fixture of ../shared/fixtures/opencode (or
// $AGENTOTEL_FIXTURES/opencode), read in place: zero unparsed objects, zero
// Validate violations, no open tool call, and token totals equal to the sum
// of the assistant messages' own tokens (steps not added again).
//
// A ≥1.2 SQLite database (a directory holding opencode.db) is read through
// SQLite by the receiver, which hands its rows to this package: the
// receiver's TestReadsOpenCodeFixtureCorpus maps those with the same checks.
func TestCorpus(t *testing.T) {
	vendortest.EachCorpus(t, "opencode", corpus)
}

func corpus(t *testing.T, dir string) {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		name := e.Name()
		path := filepath.Join(dir, name)
		var events []agentevent.Event
		var want tokenSums
		switch {
		case e.IsDir() && fileExists(filepath.Join(path, "opencode.db")):
			n++ // read by the receiver's corpus test
			continue
		case e.IsDir():
			events = mapTree(t, path)
			want = treeTokens(t, filepath.Join(path, "storage", "message"))
		case strings.HasSuffix(name, ".json"):
			events = mapAPI(t, path, name)
			want = apiTokens(t, path)
		default:
			continue
		}
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
			require.NotZero(t, got.input)
		})
	}
	require.NotZero(t, n, "no OpenCode fixture in %s", dir)
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
	for _, m := range msgs {
		s.add(m.Info)
	}
	return s
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
