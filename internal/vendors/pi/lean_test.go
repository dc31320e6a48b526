// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package pi

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

func parseWith(path string, data []byte, opts Options) []agentevent.Event {
	p := NewParserWithOptions(path, opts)
	var events []agentevent.Event
	for _, l := range splitLines(data) {
		events = append(events, p.Parse(l.Data, l.No, l.Offset)...)
	}
	return events
}

func leanParse(dir string) func(t *testing.T, rel string, lean bool) []agentevent.Event {
	return func(t *testing.T, rel string, lean bool) []agentevent.Event {
		data, err := os.ReadFile(filepath.Join(dir, rel))
		require.NoError(t, err)
		return parseWith(rel, data, Options{OmitContent: lean, OmitRaw: lean})
	}
}

// TestOmitContent: without content and raw records, every golden case and
// every corpus file maps to the events the full parser gives, stripped the
// way the receiver strips them (facts read from content included).
func TestOmitContent(t *testing.T) {
	t.Run("golden", func(t *testing.T) {
		root := filepath.Join(repoRoot(t), "testdata", "pi")
		entries, err := os.ReadDir(root)
		require.NoError(t, err)
		for _, e := range entries {
			if e.IsDir() {
				dir := filepath.Join(root, e.Name())
				vendortest.RequireLeanParse(t, sessionFiles(t, dir), leanParse(dir))
			}
		}
	})
	t.Run("corpus", func(t *testing.T) {
		dir := filepath.Join(vendortest.FixturesDir(t), "pi")
		files := vendortest.Files(t, dir, ".jsonl")
		if len(files) == 0 {
			t.Skipf("no Pi fixtures in %s", dir)
		}
		vendortest.RequireLeanParse(t, files, leanParse(dir))
	})
}

// FuzzOmitContent feeds arbitrary lines after a v3 header to a full parser
// and to one without content and raw records: the latter's events are
// always the former's, stripped.
func FuzzOmitContent(f *testing.F) {
	root := filepath.Join(repoRoot(f), "testdata", "pi")
	for _, rel := range sessionFiles(f, root) {
		data, err := os.ReadFile(filepath.Join(root, rel))
		require.NoError(f, err)
		for _, l := range splitLines(data) {
			if len(l.Data) < 4096 {
				f.Add(l.Data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		input := append([]byte(headerV3+"\n"), data...)
		full := parseWith(testPath, input, Options{})
		lean := parseWith(testPath, input, Options{OmitContent: true, OmitRaw: true})
		require.Equal(t, vendortest.Stripped(full), vendortest.Stripped(lean))
	})
}

// BenchmarkParse parses every golden case file (throughput in bytes of JSONL).
func BenchmarkParse(b *testing.B) { benchmarkParse(b, Options{}) }

// BenchmarkParseWithoutContent is BenchmarkParse as the receiver parses by
// default: without include_content and include_raw.
func BenchmarkParseWithoutContent(b *testing.B) {
	benchmarkParse(b, Options{OmitContent: true, OmitRaw: true})
}

func benchmarkParse(b *testing.B, opts Options) {
	root := filepath.Join(repoRoot(b), "testdata", "pi")
	var files [][]byte
	var size int64
	for _, rel := range sessionFiles(b, root) {
		data, err := os.ReadFile(filepath.Join(root, rel))
		require.NoError(b, err)
		files = append(files, data)
		size += int64(len(data))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, data := range files {
			parseWith(testPath, data, opts)
		}
	}
}
