// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package openclaw

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/pi"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// corpusDir is the repository's OpenClaw fixture corpus: constructed
// transcripts laid out as <agent>/sessions/<file> (SOURCES.md there).
func corpusDir(tb testing.TB) string {
	tb.Helper()
	return filepath.Join(vendortest.RepoRoot(tb), "testdata", "corpus", "openclaw")
}

// transcripts lists the transcripts below dir (Transcript), sorted,
// relative to dir and slash separated.
func transcripts(tb testing.TB, dir string) []string {
	tb.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !Transcript(d.Name()) {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	require.NoError(tb, err)
	slices.Sort(files)
	return files
}

// parseFile feeds every line of dir/rel to the parser OpenClaw's descriptor
// makes for rel.
func parseFile(tb testing.TB, dir, rel string, opts pi.Options) []agentevent.Event {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	require.NoError(tb, err)
	p := NewParser(rel, opts)
	var events []agentevent.Event
	for _, l := range vendortest.SplitLines(data) {
		events = append(events, p.Parse(l.Data, l.No, l.Offset)...)
	}
	return events
}
