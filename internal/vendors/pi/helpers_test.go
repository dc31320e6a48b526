// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package pi

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

var repoRoot = vendortest.RepoRoot

var splitLines = vendortest.SplitLines

// sessionFiles lists the .jsonl files below dir, sorted, relative to dir.
func sessionFiles(tb testing.TB, dir string) []string {
	tb.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".jsonl") {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		files = append(files, rel)
		return err
	})
	require.NoError(tb, err)
	slices.Sort(files)
	return files
}

// openclawCorpus is the repository's corpus of OpenClaw transcripts (Pi's
// format, constructed from OpenClaw's source).
func openclawCorpus(tb testing.TB) string {
	tb.Helper()
	return filepath.Join(repoRoot(tb), "testdata", "corpus", "openclaw")
}

// allFiles lists the files below dir, sorted, relative to dir (OpenClaw's
// archived transcripts do not end in .jsonl).
func allFiles(tb testing.TB, dir string) []string {
	tb.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(d.Name(), ".jsonl") {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		files = append(files, rel)
		return err
	})
	require.NoError(tb, err)
	slices.Sort(files)
	return files
}

// parseBytes feeds every line of data to a parser made for path.
func parseBytes(path string, data []byte) []agentevent.Event {
	p := NewParser(path)
	var events []agentevent.Event
	for _, l := range splitLines(data) {
		events = append(events, p.Parse(l.Data, l.No, l.Offset)...)
	}
	return events
}

// parseFile feeds every line of dir/rel to a parser made for rel.
func parseFile(tb testing.TB, dir, rel string) []agentevent.Event {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(dir, rel))
	require.NoError(tb, err)
	return parseBytes(rel, data)
}

// parseDir parses the session files of dir in sorted order.
func parseDir(tb testing.TB, dir string) []agentevent.Event {
	tb.Helper()
	var events []agentevent.Event
	for _, rel := range sessionFiles(tb, dir) {
		events = append(events, parseFile(tb, dir, rel)...)
	}
	return events
}
