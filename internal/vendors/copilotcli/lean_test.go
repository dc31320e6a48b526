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
	for _, root := range []string{
		filepath.Join(repoRoot(t), "testdata", "copilot_cli"),
		filepath.Join(vendortest.FixturesDir(t), "copilot_cli"),
	} {
		t.Run(filepath.Base(filepath.Dir(root)), func(t *testing.T) {
			if _, err := os.Stat(root); err != nil {
				t.Skipf("no Copilot CLI files in %s", root)
			}
			jsonl, _ := sessionFiles(t, root)
			var rels []string
			for _, path := range jsonl {
				rel, err := filepath.Rel(root, path)
				require.NoError(t, err)
				rels = append(rels, rel)
			}
			vendortest.RequireLeanParse(t, rels, func(t *testing.T, rel string, lean bool) []agentevent.Event {
				data, err := os.ReadFile(filepath.Join(root, rel))
				require.NoError(t, err)
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
	for _, path := range jsonl {
		data, err := os.ReadFile(path)
		require.NoError(f, err)
		for _, l := range splitLines(data) {
			if len(l.Data) < 4096 {
				f.Add(l.Data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		input := append([]byte(startLine+"\n"), data...)
		const name = "session-state/s-1/events.jsonl"
		full := parseWith(name, input, Options{})
		lean := parseWith(name, input, Options{OmitContent: true, OmitRaw: true})
		require.Equal(t, vendortest.Stripped(full), vendortest.Stripped(lean))
	})
}
