// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package copilotcli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// BenchmarkParse parses every JSONL session file of the golden cases
// (throughput in bytes of JSONL).
func BenchmarkParse(b *testing.B) { benchmarkParse(b, Options{}) }

// BenchmarkParseWithoutContent is BenchmarkParse as the receiver parses by
// default: without include_content and include_raw.
func BenchmarkParseWithoutContent(b *testing.B) {
	benchmarkParse(b, Options{OmitContent: true, OmitRaw: true})
}

func benchmarkParse(b *testing.B, opts Options) {
	jsonl, _ := sessionFiles(b, filepath.Join(repoRoot(b), "testdata", "copilot_cli"))
	require.NotEmpty(b, jsonl)
	var files [][]vendortest.Line
	var size int64
	for _, f := range jsonl {
		data, err := os.ReadFile(f)
		require.NoError(b, err)
		files = append(files, splitLines(data))
		size += int64(len(data))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, lines := range files {
			p := NewParserWithOptions("session-state/s/events.jsonl", opts)
			for _, l := range lines {
				p.Parse(l.Data, l.No, l.Offset)
			}
		}
	}
}
