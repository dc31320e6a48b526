// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package copilotcli

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

func parseWith(name string, data []byte, opts Options) []agentevent.Event {
	p := NewParserWithOptions(name, opts)
	var events []agentevent.Event
	for _, l := range splitLines(data) {
		events = append(events, p.Parse(l.Data, l.No, l.Offset)...)
	}
	return events
}

// TestOmitContent: without content and raw records, every golden case and
// every corpus session file maps to the events the full parser gives,
// stripped the way the receiver strips them.
func TestOmitContent(t *testing.T) {
	type corpusRoot struct {
		root    string
		fixture bool
	}
	roots := []corpusRoot{{filepath.Join(repoRoot(t), "testdata", "copilot_cli"), false}}
	for _, r := range vendortest.FixtureRoots(t) {
		roots = append(roots, corpusRoot{filepath.Join(r, "copilot_cli"), true})
	}
	for _, tc := range roots {
		root := tc.root
		t.Run(filepath.Base(filepath.Dir(root)), func(t *testing.T) {
			if tc.fixture {
				vendortest.SkipIfAbsent(t, root)
			}
			jsonl, _ := sessionFiles(t, root)
			require.NotEmpty(t, jsonl, "no Copilot CLI session files in %s", root)
			var rels []string
			for _, path := range jsonl {
				rel, err := filepath.Rel(root, path)
				require.NoError(t, err)
				rels = append(rels, rel)
			}
			vendortest.RequireLeanDir(t, root, rels, func(rel string, data []byte, lean bool) []agentevent.Event {
				return parseWith(rel, data, Options{OmitContent: lean, OmitRaw: lean})
			})
		})
	}
}

// FuzzOmitContent feeds arbitrary lines after a session's first record to
// a full parser and to one without content and raw records: the latter's
// events are always the former's, stripped.
func FuzzOmitContent(f *testing.F) {
	jsonl, _ := sessionFiles(f, filepath.Join(repoRoot(f), "testdata", "copilot_cli"))
	vendortest.AddLines(f, jsonl, 4096)
	vendortest.FuzzLeanParse(f, func(data []byte, lean bool) []agentevent.Event {
		input := append([]byte(startLine+"\n"), data...)
		return parseWith("session-state/s-1/events.jsonl", input, Options{OmitContent: lean, OmitRaw: lean})
	})
}
