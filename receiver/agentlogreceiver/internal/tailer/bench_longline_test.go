// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package tailer

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap"
)

// longLineSize is the one long line of the benchmarks below: a transcript
// line of that size (a pasted image or a huge tool output, base64) written
// by an agent, under the default max_log_size.
const longLineSize = 64 << 20

// longLineTailer is a tailer over dir's *.jsonl files (with maxLogSize),
// whose emit hands each batch's lines to got.
func longLineTailer(tb testing.TB, dir string, maxLogSize int, got func(Batch)) *Tailer {
	tb.Helper()
	tl := testTailer(tb, dir, maxLogSize)
	tl.store, tl.logger = newMemTailStore(), zap.NewNop()
	tl.emit = func(_ context.Context, b Batch) error {
		got(b)
		return nil
	}
	return tl
}

// writeLongLine writes a file of one line of n bytes ("x"…), terminated or
// not, followed (when terminated) by a short line.
func writeLongLine(tb testing.TB, path string, n int, terminated bool) {
	tb.Helper()
	b := bytes.Repeat([]byte("x"), n)
	if terminated {
		b = append(b, "\n{\"next\":1}\n"...)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkTailLongLineUnterminated: a 64 MiB line still being written (no
// "\n" yet), 4 KiB more of it at each poll. One op is one poll: what the
// tailer allocates to find the line still unterminated.
func BenchmarkTailLongLineUnterminated(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	writeLongLine(b, path, longLineSize, false)
	lines := 0
	tl := longLineTailer(b, dir, 256<<20 /* max_log_size's default */, func(bt Batch) { lines += len(bt.Lines) })
	tl.pollOnce(b.Context()) // the first sight of the file
	more := bytes.Repeat([]byte("x"), 4096)
	fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer fh.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		if _, err := fh.Write(more); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		tl.pollOnce(b.Context())
	}
	b.StopTimer()
	if lines != 0 {
		b.Fatalf("an unterminated line was handed out")
	}
}

// BenchmarkTailLongLineComplete: a 64 MiB line and a short one after it,
// read from the start by a new tailer. One op is one read of the file: what
// the tailer allocates to hand out the long line (the line itself is
// 64 MiB).
func BenchmarkTailLongLineComplete(b *testing.B) {
	benchLongLineRead(b, 256<<20 /* max_log_size's default */, longLineSize)
}

// BenchmarkTailLineTooLong: the same file with max_log_size 16 MiB: the long
// line is skipped (handed out as too long, without its bytes) and the next
// one read whole.
func BenchmarkTailLineTooLong(b *testing.B) {
	benchLongLineRead(b, 16<<20, 0)
}

func benchLongLineRead(b *testing.B, maxLogSize, wantLen int) {
	dir := b.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	writeLongLine(b, path, longLineSize, true)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		// What is kept of each line: its length, and the short one's text
		// (a line is valid only during its emit).
		var lens []int
		var next string
		tl := longLineTailer(b, dir, maxLogSize, func(bt Batch) {
			for _, l := range bt.Lines {
				lens = append(lens, len(l))
				if len(l) < 100 {
					next = string(l)
				}
			}
		})
		b.StartTimer()
		tl.pollOnce(b.Context())
		b.StopTimer()
		if len(lens) != 2 || next != `{"next":1}` {
			b.Fatalf("want the long line and the next one whole, got %d lines", len(lens))
		}
		if wantLen > 0 && lens[0] != wantLen {
			b.Fatalf("long line of %d bytes, want %d", lens[0], wantLen)
		}
		b.StartTimer()
	}
}
