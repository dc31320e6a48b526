// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package progress

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/internal/memtest"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/metadata"
)

// BenchmarkProgressMemoryPerFile: what the backfill's progress keeps per
// file of the history found at start (live-B/file). Files are kept by a
// hash of their path, not by a copy of it (the tailer holds the paths); 80
// bytes a file leaves room for the hash map's own overhead only.
func BenchmarkProgressMemoryPerFile(b *testing.B) {
	const files = 3000
	include := writeHistory(b, files)
	tb, err := metadata.NewTelemetryBuilder(componenttest.NewNopTelemetrySettings())
	require.NoError(b, err)
	b.ReportAllocs()
	var perFile float64
	for range b.N {
		p := New(zap.NewNop(), tb, 0, 0)
		before := memtest.LiveHeap()
		p.Found(b.Context(), "claude_code", FileHistory([]string{include}, nil))
		perFile = float64(int64(memtest.LiveHeap())-int64(before)) / files
		require.Equal(b, files, p.agents["claude_code"].filesFound)
		runtime.KeepAlive(p)
	}
	b.ReportMetric(perFile, "live-B/file")
	require.Less(b, perFile, 80.0)
}

// writeHistory writes n one-line JSONL files laid out as Claude Code lays
// out its transcripts, and returns the include pattern of them.
func writeHistory(tb testing.TB, n int) string {
	tb.Helper()
	root := filepath.Join(tb.TempDir(), ".claude", "projects")
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("-Users-someone-src-github-com-project-%03d", i%100))
		if i < 100 {
			require.NoError(tb, os.MkdirAll(dir, 0o755))
		}
		name := fmt.Sprintf("%08x-1b2c-4d3e-8f40-%012x.jsonl", i, i*7919)
		require.NoError(tb, os.WriteFile(filepath.Join(dir, name), []byte(`{"type":"user","n":1}`+"\n"), 0o600))
	}
	return filepath.Join(root, "**", "*.jsonl")
}
