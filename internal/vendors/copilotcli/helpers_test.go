// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package copilotcli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

var (
	repoRoot   = vendortest.RepoRoot
	splitLines = vendortest.SplitLines
)

// parseBytes feeds every line of data to a parser made for name, with the
// workspace (when not nil) given first.
func parseBytes(name string, data []byte, ws *Workspace) []agentevent.Event {
	p := NewParser(name)
	if ws != nil {
		p.SetWorkspace(*ws)
	}
	var events []agentevent.Event
	for _, l := range splitLines(data) {
		events = append(events, p.Parse(l.Data, l.No, l.Offset)...)
	}
	return events
}

// parseSessionFile parses a session file the way the receiver does: with
// the workspace.yaml beside an events.jsonl, when there is one. name is the
// file identity the parser is given (path when "").
func parseSessionFile(tb testing.TB, path, name string) []agentevent.Event {
	tb.Helper()
	data, err := os.ReadFile(path)
	require.NoError(tb, err)
	var ws *Workspace
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(path), "workspace.yaml")); err == nil && filepath.Base(path) == "events.jsonl" {
		w := ParseWorkspace(b)
		ws = &w
	}
	if name == "" {
		name = path
	}
	return parseBytes(name, data, ws)
}

// tokenTotals are per-session totals the way ccusage reports them.
type tokenTotals = vendortest.Tokens

var sumTokens = vendortest.SumTokens
