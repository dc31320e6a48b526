// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// parseLean feeds every line of data to a parser for name, made with or
// without content and raw records, and flushes it.
func parseLean(name string, data []byte, lean bool) []agentevent.Event {
	p := NewParserWithOptions(name, Options{OmitContent: lean, OmitRaw: lean})
	var events []agentevent.Event
	for _, l := range vendortest.SplitLines(data) {
		events = append(events, p.Parse(l.Data, l.No, l.Offset)...)
	}
	return append(events, p.Flush()...)
}

// TestOmitContent: without content and raw records, every golden case and
// every corpus file maps to the events the full parser gives, stripped the
// way the receiver strips them (facts read from content included).
func TestOmitContent(t *testing.T) {
	vendortest.TestOmitContent(t, "claude_code", func(tb testing.TB, dir string) []string {
		return vendortest.Files(tb, dir, ".jsonl")
	}, parseLean)
}

// FuzzOmitContent feeds arbitrary records (one per line of the input) to a
// full parser and to one without content and raw records: the latter's
// events are always the former's, stripped.
func FuzzOmitContent(f *testing.F) {
	root := filepath.Join(repoRoot(f), "testdata", "claude_code")
	files, _ := filepath.Glob(filepath.Join(root, "*", "*.jsonl"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(f, err)
		lines := vendortest.SplitLines(data)
		for i, l := range lines {
			f.Add(l.Data)
			if i > 0 {
				// Two records in a row: held usage, open calls.
				f.Add(append(append(append([]byte(nil), lines[i-1].Data...), '\n'), l.Data...))
			}
		}
	}
	vendortest.FuzzLeanParse(f, func(data []byte, lean bool) []agentevent.Event {
		return parseLean(testSession+".jsonl", data, lean)
	})
}
