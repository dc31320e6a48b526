// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

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
	root := filepath.Join(repoRoot(b), "testdata", "codex")
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
		sub, err := os.ReadDir(dir)
		require.NoError(b, err)
		for _, f := range sub {
			if filepath.Ext(f.Name()) != ".jsonl" {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, f.Name()))
			require.NoError(b, err)
			files = append(files, file{rel: f.Name(), lines: splitLines(data)})
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
