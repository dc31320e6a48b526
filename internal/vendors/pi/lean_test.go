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

// parseLean is parseWith with or without content and raw records.
func parseLean(path string, data []byte, lean bool) []agentevent.Event {
	return parseWith(path, data, Options{OmitContent: lean, OmitRaw: lean})
}

// TestOmitContent: without content and raw records, every golden case and
// every corpus file maps to the events the full parser gives, stripped the
// way the receiver strips them (facts read from content included).
func TestOmitContent(t *testing.T) {
	vendortest.TestOmitContent(t, "pi", sessionFiles, parseLean)
}

// FuzzOmitContent feeds arbitrary lines after a v3 header to a full parser
// and to one without content and raw records: the latter's events are
// always the former's, stripped.
func FuzzOmitContent(f *testing.F) {
	root := filepath.Join(repoRoot(f), "testdata", "pi")
	var paths []string
	for _, rel := range sessionFiles(f, root) {
		paths = append(paths, filepath.Join(root, rel))
	}
	vendortest.AddLines(f, paths, 4096)
	vendortest.FuzzLeanParse(f, func(data []byte, lean bool) []agentevent.Event {
		return parseLean(testPath, append([]byte(headerV3+"\n"), data...), lean)
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
