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

// parseWith feeds every line of dir/rel to a parser made with opts.
func parseWith(t *testing.T, dir, rel string, opts Options) []agentevent.Event {
	data, err := os.ReadFile(filepath.Join(dir, rel))
	require.NoError(t, err)
	p := NewParserWithOptions(rel, opts)
	var events []agentevent.Event
	for _, l := range vendortest.SplitLines(data) {
		events = append(events, p.Parse(l.Data, l.No, l.Offset)...)
	}
	return append(events, p.Flush()...)
}

func leanParse(dir string) func(t *testing.T, rel string, lean bool) []agentevent.Event {
	return func(t *testing.T, rel string, lean bool) []agentevent.Event {
		return parseWith(t, dir, rel, Options{OmitContent: lean, OmitRaw: lean})
	}
}

// TestOmitContent: without content and raw records, every golden case and
// every corpus file maps to the events the full parser gives, stripped the
// way the receiver strips them (facts read from content included).
func TestOmitContent(t *testing.T) {
	t.Run("golden", func(t *testing.T) {
		root, cases := goldenCases(t)
		for _, c := range cases {
			dir := filepath.Join(root, c)
			vendortest.RequireLeanParse(t, vendortest.Files(t, dir, ".jsonl"), leanParse(dir))
		}
	})
	t.Run("corpus", func(t *testing.T) {
		dir := filepath.Join(vendortest.FixturesDir(t), "claude_code")
		files := vendortest.Files(t, dir, ".jsonl")
		if len(files) == 0 {
			t.Skipf("no Claude Code fixtures in %s", dir)
		}
		vendortest.RequireLeanParse(t, files, leanParse(dir))
	})
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
	f.Fuzz(func(t *testing.T, data []byte) {
		parse := func(opts Options) []agentevent.Event {
			p := NewParserWithOptions(testSession+".jsonl", opts)
			var events []agentevent.Event
			for _, l := range vendortest.SplitLines(data) {
				events = append(events, p.Parse(l.Data, l.No, l.Offset)...)
			}
			return append(events, p.Flush()...)
		}
		full, lean := parse(Options{}), parse(Options{OmitContent: true, OmitRaw: true})
		require.Equal(t, vendortest.Stripped(full), vendortest.Stripped(lean))
	})
}
