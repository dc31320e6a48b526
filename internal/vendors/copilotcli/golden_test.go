// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package copilotcli

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

var update = flag.Bool("update", false, "regenerate testdata/copilot_cli/*/events.yaml")

// TestGoldenEvents: every case of testdata/copilot_cli (a ~/.copilot-like
// tree) maps to its events.yaml (-update regenerates), which satisfies the
// spec's invariants. Session files are read as the receiver reads them:
// each events.jsonl with the workspace.yaml beside it, flat <id>.jsonl
// files, and history-session-state files as settled snapshots.
func TestGoldenEvents(t *testing.T) {
	vendortest.GoldenEvents(t, "copilot_cli", *update, caseEvents, nil)
}

func caseEvents(t *testing.T, dir string) []agentevent.Event {
	jsonl, history := sessionFiles(t, dir)
	require.NotEmpty(t, append(jsonl, history...), "no session file in %s", dir)
	var events []agentevent.Event
	// Files are named relative to the case: the golden file does not
	// depend on where the repository is.
	for _, f := range jsonl {
		events = append(events, parseSessionFile(t, f, rel(t, dir, f))...)
	}
	for _, f := range history {
		events = append(events, mapHistoryFile(t, f, rel(t, dir, f))...)
	}
	return events
}

func rel(t *testing.T, dir, path string) string {
	r, err := filepath.Rel(dir, path)
	require.NoError(t, err)
	return filepath.ToSlash(r)
}
