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

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

var repoRoot = vendortest.RepoRoot

var splitLines = vendortest.SplitLines

// sessionFiles lists the .jsonl files below dir in the order they are fed
// to parsers: main session files first, then subagent files, each sorted by
// path. Paths are relative to dir.
func sessionFiles(tb testing.TB, dir string) []string {
	tb.Helper()
	var mains, agents []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if strings.HasPrefix(filepath.Base(rel), "agent-") {
			agents = append(agents, rel)
		} else {
			mains = append(mains, rel)
		}
		return nil
	})
	require.NoError(tb, err)
	slices.Sort(mains)
	slices.Sort(agents)
	return append(mains, agents...)
}

// parseFile feeds every line of dir/rel to a parser made for rel, told
// whether the file is an orphan subagent as the receiver tells it.
func parseFile(tb testing.TB, dir, rel string) []agentevent.Event {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(dir, rel))
	require.NoError(tb, err)
	p := parserFor(dir, rel)
	var events []agentevent.Event
	for _, l := range splitLines(data) {
		events = append(events, p.Parse(l.Data, l.No, l.Offset)...)
	}
	// The end of the file's data, as the receiver reports it.
	return append(events, p.Flush()...)
}

// parserFor makes the parser for dir/rel, named rel, as the receiver makes
// it (an orphan subagent is told so).
func parserFor(dir, rel string) *Parser {
	return NewParserWithOptions(rel, Options{Orphan: orphanSubagent(filepath.Join(dir, rel))})
}

// orphanSubagent tells whether path is a subagent file whose session's
// transcript is missing, as the receiver finds out (agents.Reader.FileOptions).
func orphanSubagent(path string) bool {
	return agents.Lookup(Source).Reader.FileOptions(path, agents.ParseOptions{}).OwnerMissing
}

// parseDir parses the session files of dir in feeding order.
func parseDir(tb testing.TB, dir string) []agentevent.Event {
	tb.Helper()
	var events []agentevent.Event
	for _, rel := range sessionFiles(tb, dir) {
		events = append(events, parseFile(tb, dir, rel)...)
	}
	return events
}

// tokenTotals sums the token fields of events the way ccusage reports them.
type tokenTotals = vendortest.Tokens

var sumTokens = vendortest.SumTokens
