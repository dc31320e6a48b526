// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package amp

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkDecodeAndMap decodes and maps every thread file of the golden
// cases whole, as a reader does at each rewrite (throughput in bytes of
// JSON).
func BenchmarkDecodeAndMap(b *testing.B) {
	files, err := filepath.Glob(filepath.Join(repoRoot(b), "testdata", "amp", "*", "threads", "T-*.json"))
	require.NoError(b, err)
	require.NotEmpty(b, files)
	var data [][]byte
	var size int64
	for _, f := range files {
		d, err := os.ReadFile(f)
		require.NoError(b, err)
		data = append(data, d)
		size += int64(len(d))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range data {
			th, err := DecodeThread(d)
			require.NoError(b, err)
			MapThread(Context{LogFile: "t"}, th, nil, true)
		}
	}
}
