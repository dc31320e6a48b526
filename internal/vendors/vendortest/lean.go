// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package vendortest

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// Stripped is what the receiver emits of events without include_content and
// include_raw: agentevent.StripContent, no Raw. An attribute map left empty
// by the strip counts as none.
func Stripped(events []agentevent.Event) []agentevent.Event {
	out := make([]agentevent.Event, len(events))
	for i := range events {
		ev := events[i] // a copy, stripped below
		if ev.Attributes != nil {
			attrs := make(map[string]any, len(ev.Attributes))
			maps.Copy(attrs, ev.Attributes)
			ev.Attributes = attrs
		}
		agentevent.StripContent(&ev)
		ev.Raw = nil
		if len(ev.Attributes) == 0 {
			ev.Attributes = nil
		}
		out[i] = ev
	}
	return out
}

// RequireLeanParse checks a parser option that skips content against the
// full parser: for every file, parse(lean) == Stripped(parse(full)). parse
// maps one file (relative to dir) with or without the option. It fails when
// the files yield no event at all (nothing was compared).
func RequireLeanParse(t *testing.T, files []string, parse func(t *testing.T, rel string, lean bool) []agentevent.Event) {
	t.Helper()
	n := 0
	for _, rel := range files {
		full := Stripped(parse(t, rel, false))
		lean := Stripped(parse(t, rel, true)) // Stripped only normalizes empty attribute maps here
		require.Len(t, lean, len(full), "%s: event count", rel)
		n += len(full)
		for i := range full {
			require.Equal(t, full[i], lean[i], "%s: event %d (line %d)", rel, i, full[i].LogLine)
		}
	}
	require.NotZero(t, n, "no events compared")
	t.Logf("%d files, %d events: the same without content", len(files), n)
}

// LeanParser parses data (the file rel, or a fuzz input) with the parser
// option that skips content and raw records (lean) or without it.
type LeanParser func(rel string, data []byte, lean bool) []agentevent.Event

// RequireLeanDir is RequireLeanParse over files (relative to dir), each read
// from dir and handed to parse.
func RequireLeanDir(t *testing.T, dir string, files []string, parse LeanParser) {
	t.Helper()
	RequireLeanParse(t, files, func(t *testing.T, rel string, lean bool) []agentevent.Event {
		data, err := os.ReadFile(filepath.Join(dir, rel))
		require.NoError(t, err)
		return parse(rel, data, lean)
	})
}

// TestOmitContent runs RequireLeanDir as subtest "golden" over every case
// directory of testdata/<agent> (caseFiles lists a case's files, relative to
// it) and as subtest "corpus" over every .jsonl file below the <agent>
// directory of every fixture root (EachCorpus), skipped when absent.
func TestOmitContent(t *testing.T, agent string, caseFiles func(t testing.TB, dir string) []string, parse LeanParser) {
	t.Run("golden", func(t *testing.T) {
		root := filepath.Join(RepoRoot(t), "testdata", agent)
		entries, err := os.ReadDir(root)
		require.NoError(t, err)
		n := 0
		for _, e := range entries {
			if e.IsDir() {
				dir := filepath.Join(root, e.Name())
				RequireLeanDir(t, dir, caseFiles(t, dir), parse)
				n++
			}
		}
		require.NotZero(t, n, "no golden cases in %s", root)
	})
	t.Run("corpus", func(t *testing.T) {
		EachCorpus(t, agent, func(t *testing.T, dir string) {
			files := Files(t, dir, ".jsonl")
			require.NotEmpty(t, files, "no .jsonl files in the fixture corpus %s", dir)
			RequireLeanDir(t, dir, files, parse)
		})
	})
}

// AddLines adds every line shorter than maxLen of the files at paths to
// f's seed corpus, each as one []byte input.
func AddLines(f *testing.F, paths []string, maxLen int) {
	f.Helper()
	for _, path := range paths {
		data, err := os.ReadFile(path)
		require.NoError(f, err)
		for _, l := range SplitLines(data) {
			if len(l.Data) < maxLen {
				f.Add(l.Data)
			}
		}
	}
}

// FuzzLeanParse fuzzes f over arbitrary []byte inputs: the events of
// parse(data, lean) are always those of parse(data, full), stripped.
func FuzzLeanParse(f *testing.F, parse func(data []byte, lean bool) []agentevent.Event) {
	f.Fuzz(func(t *testing.T, data []byte) {
		require.Equal(t, Stripped(parse(data, false)), Stripped(parse(data, true)))
	})
}

// Files lists the files below dir whose name ends with suffix, relative to
// dir and sorted; none when dir does not exist.
func Files(tb testing.TB, dir, suffix string) []string {
	tb.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, suffix) {
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return err
			}
			files = append(files, rel)
		}
		return nil
	})
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(tb, err)
	slices.Sort(files)
	return files
}
