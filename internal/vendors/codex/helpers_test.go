// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

var repoRoot = vendortest.RepoRoot

var splitLines = vendortest.SplitLines

// parseBytes feeds every line of data to a parser made for name.
func parseBytes(name string, data []byte) []agentevent.Event {
	p := NewParser(name)
	var events []agentevent.Event
	for _, l := range splitLines(data) {
		events = append(events, p.Parse(l.Data, l.No, l.Offset)...)
	}
	return events
}

func parseFile(tb testing.TB, dir, rel string) []agentevent.Event {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(dir, rel))
	require.NoError(tb, err)
	return parseBytes(rel, data)
}

// tokenTotals are per-session totals the way ccusage codex reports them:
// input net of cached.
type tokenTotals struct {
	Input     int64
	CacheRead int64
	Output    int64
	Reasoning int64
}

func sumTokens(events []agentevent.Event) tokenTotals {
	var s tokenTotals
	for i := range events {
		ev := &events[i]
		s.Input += agentevent.Value(ev.TokensInput) - agentevent.Value(ev.TokensCached)
		s.CacheRead += agentevent.Value(ev.TokensCached)
		s.Output += agentevent.Value(ev.TokensOutput)
		s.Reasoning += agentevent.Value(ev.TokensThinking)
	}
	return s
}
