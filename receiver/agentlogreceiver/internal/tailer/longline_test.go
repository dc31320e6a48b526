// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package tailer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/testfiles"
)

// longSeen is a line as the tailer handed it out, with its too-long mark.
type longSeen struct {
	line    string
	no      int64
	offset  int64
	tooLong bool
}

func longRig(t *testing.T, dir string, maxLogSize int) (*Tailer, func() []longSeen) {
	var got []longSeen
	tl := longLineTailer(t, dir, maxLogSize, func(b Batch) {
		for i, l := range b.Lines {
			got = append(got, longSeen{
				string(l), b.LastLine - int64(len(b.Lines)) + 1 + int64(i), b.Offsets[i],
				i < len(b.TooLong) && b.TooLong[i],
			})
		}
	})
	return tl, func() []longSeen { out := got; got = nil; return out }
}

// Lines longer than the read buffer: one under max_log_size is handed out
// whole; one of max_log_size or more without its bytes, marked; the lines
// after them whole, numbered and placed right. A long line still being
// written is handed out once complete, and is looked at, between polls,
// only from where the last poll stopped.
func TestTailLongLines(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	const maxLogSize = 1 << 20
	long := strings.Repeat("a", 3*tailReadBuffer+17) // under max_log_size
	over := strings.Repeat("b", maxLogSize)          // max_log_size: too long
	testfiles.WriteFile(t, path, `{"n":1}`, long, `{"n":3}`, over, `{"n":5}`)
	tl, got := longRig(t, dir, maxLogSize)
	tl.pollOnce(t.Context())
	off := func(lines ...string) (n int64) {
		for _, l := range lines {
			n += int64(len(l)) + 1
		}
		return n
	}
	assert.Equal(t, []longSeen{
		{`{"n":1}`, 1, 0, false},
		{long, 2, off(`{"n":1}`), false},
		{`{"n":3}`, 3, off(`{"n":1}`, long), false},
		{"", 4, off(`{"n":1}`, long, `{"n":3}`), true},
		{`{"n":5}`, 5, off(`{"n":1}`, long, `{"n":3}`, over), false},
	}, got())

	// A long line written in parts, then one too long, then a short one.
	end := off(`{"n":1}`, long, `{"n":3}`, over, `{"n":5}`)
	part := strings.Repeat("c", 2*tailReadBuffer)
	testfiles.AppendFile(t, path, part)
	tl.pollOnce(t.Context())
	assert.Empty(t, got(), "unterminated")
	assert.Equal(t, lineScan{start: end, end: end + int64(len(part)), ino: tl.files[path].pos.ino}, tl.scans[path],
		"how far the line was looked at")
	testfiles.AppendFile(t, path, part)
	tl.pollOnce(t.Context())
	assert.Empty(t, got(), "unterminated")
	assert.Equal(t, end+2*int64(len(part)), tl.scans[path].end)
	testfiles.AppendFile(t, path, "\n"+over+"b") // ends the line; the next is too long
	tl.pollOnce(t.Context())
	assert.Equal(t, []longSeen{{part + part, 6, end, false}}, got())
	assert.Equal(t, end+off(part+part)+int64(len(over))+1, tl.scans[path].end, "the too-long line is looked at to its end, not kept")
	testfiles.AppendFile(t, path, "b\n"+`{"n":8}`+"\n")
	tl.pollOnce(t.Context())
	assert.Equal(t, []longSeen{
		{"", 7, end + off(part+part), true},
		{`{"n":8}`, 8, end + off(part+part, over+"bb"), false},
	}, got())
	assert.Empty(t, tl.scans, "nothing unterminated is left")
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, fi.Size(), tl.files[path].pos.offset)
}

// TestTailLongLineMemory holds the tailer's allocations for one 64 MiB line
// (BenchmarkTailLongLine*, default max_log_size) to about the line itself
// when it is complete, and to about nothing while it is still being
// written or when it is too long. Before lines were read this way, a poll
// of the unterminated line allocated 369 MB, the complete line's read
// 437 MB, and a too-long one (max_log_size 16 MiB) 112 MB.
func TestTailLongLineMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: writes 64 MiB files and reads them repeatedly")
	}
	for _, c := range []struct {
		name  string
		bench func(*testing.B)
		most  int64
	}{
		{"unterminated", BenchmarkTailLongLineUnterminated, 1 << 20},
		{"complete", BenchmarkTailLongLineComplete, longLineSize + 2<<20},
		{"too long", BenchmarkTailLineTooLong, 1 << 20},
	} {
		r := testing.Benchmark(c.bench)
		require.Positive(t, r.N, c.name)
		t.Logf("%s: %d B/op", c.name, r.AllocedBytesPerOp())
		assert.Less(t, r.AllocedBytesPerOp(), c.most, c.name)
	}
}
