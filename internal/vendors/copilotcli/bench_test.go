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
func BenchmarkParse(b *testing.B) {
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
			p := NewParser("session-state/s/events.jsonl")
			for _, l := range lines {
				p.Parse(l.Data, l.No, l.Offset)
			}
		}
	}
}
