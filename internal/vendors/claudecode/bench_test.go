// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// BenchmarkParse parses every golden case file (throughput in bytes of JSONL).
func BenchmarkParse(b *testing.B) { benchmarkParse(b, Options{}) }

// BenchmarkParseWithoutContent is BenchmarkParse as the receiver parses by
// default: without include_content and include_raw.
func BenchmarkParseWithoutContent(b *testing.B) {
	benchmarkParse(b, Options{OmitContent: true, OmitRaw: true})
}

func benchmarkParse(b *testing.B, opts Options) {
	root := filepath.Join(repoRoot(b), "testdata", "claude_code")
	type file struct {
		rel   string
		lines []vendortest.Line
	}
	var files []file
	var size int64
	entries, err := os.ReadDir(root)
	require.NoError(b, err)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		for _, rel := range sessionFiles(b, dir) {
			data, err := os.ReadFile(filepath.Join(dir, rel))
			require.NoError(b, err)
			files = append(files, file{rel: rel, lines: splitLines(data)})
			size += int64(len(data))
		}
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range files {
			p := NewParserWithOptions(f.rel, opts)
			for _, l := range f.lines {
				p.Parse(l.Data, l.No, l.Offset)
			}
		}
	}
}
