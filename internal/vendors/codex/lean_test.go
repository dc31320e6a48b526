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

func leanParse(dir string) func(t *testing.T, rel string, lean bool) []agentevent.Event {
	return func(t *testing.T, rel string, lean bool) []agentevent.Event {
		data, err := os.ReadFile(filepath.Join(dir, rel))
		require.NoError(t, err)
		p := NewParserWithOptions(rel, Options{OmitContent: lean, OmitRaw: lean})
		var events []agentevent.Event
		for _, l := range splitLines(data) {
			events = append(events, p.Parse(l.Data, l.No, l.Offset)...)
		}
		return events
	}
}

// TestOmitContent: without content and raw records, every golden case and
// every corpus file maps to the events the full parser gives, stripped the
// way the receiver strips them (facts read from content included).
func TestOmitContent(t *testing.T) {
	t.Run("golden", func(t *testing.T) {
		root := filepath.Join(repoRoot(t), "testdata", "codex")
		entries, err := os.ReadDir(root)
		require.NoError(t, err)
		for _, e := range entries {
			if e.IsDir() {
				dir := filepath.Join(root, e.Name())
				vendortest.RequireLeanParse(t, caseFiles(t, dir), leanParse(dir))
			}
		}
	})
	t.Run("corpus", func(t *testing.T) {
		dir := filepath.Join(vendortest.FixturesDir(t), "codex")
		files := vendortest.Files(t, dir, ".jsonl")
		if len(files) == 0 {
			t.Skipf("no Codex fixtures in %s", dir)
		}
		vendortest.RequireLeanParse(t, files, leanParse(dir))
	})
}
