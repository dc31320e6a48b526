// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package tailer

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/memtest"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/finder"
)

// memoryFiles is the size of the histories the per-file memory tests
// build: large enough that what is kept per file dwarfs the fixed costs.
const memoryFiles = 3000

// writeMemoryHistory writes n one-line JSONL files laid out as Claude Code
// lays out its transcripts (a directory per project, a UUID-named file per
// session), and returns the include pattern of them.
func writeMemoryHistory(tb testing.TB, n int) string {
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

// nopTailStore is a tailStore that has nothing stored and keeps nothing, so
// that what the test measures is the tailer's own memory.
type nopTailStore struct{}

func (nopTailStore) Position(context.Context, string) (Pos, bool)          { return Pos{}, false }
func (nopTailStore) FirstLineOwner(context.Context, string) (string, bool) { return "", false }
func (nopTailStore) Adopt(context.Context, string, string, string, Pos)    {}

// memoryTailer is a tailer over memoryFiles files that reads them to
// nowhere, and the live heap before it was made.
func memoryTailer(tb testing.TB) (tl *Tailer, include string, before uint64) {
	tb.Helper()
	if runtime.GOOS == "windows" {
		tb.Skip("the tailer uses fileconsumer's matcher on Windows")
	}
	include = writeMemoryHistory(tb, memoryFiles)
	before = memtest.LiveHeap()
	match, err := finder.NewMatcher([]string{include}, nil, 0)
	require.NoError(tb, err)
	tl = New(Config{Match: match, Poll: time.Second, Workers: 8, MaxLogSize: 256 << 20, HeadBytes: 1000})
	tl.store = nopTailStore{}
	tl.emit = func(context.Context, Batch) error { return nil }
	return tl, include, before
}

// BenchmarkTailerMemoryPerFile: what the tailer and its matcher keep per
// watched file once every file has been read to its end (live-B/file), so
// that the collector does not grow much with the length of the history:
// the path once (shared by the listing, the matches and the tailer's
// table, and kept when a directory is listed again), the tailer's entry,
// and the poll's reused scratch (each file's stat, a set of inodes). Paths
// here are about 140 bytes; the second poll lists the directories again,
// as every poll does a directory changed within the finder's settle time,
// like a project's while a session is written.
func BenchmarkTailerMemoryPerFile(b *testing.B) {
	for range b.N {
		tailerMemoryPerFile(b)
	}
}

func tailerMemoryPerFile(b *testing.B) {
	tl, _, before := memoryTailer(b)
	// The first poll reads every file; the second finds them unchanged:
	// what is left is what an idle receiver keeps.
	tl.pollOnce(b.Context())
	tl.pollOnce(b.Context())
	perFile := float64(int64(memtest.LiveHeap())-int64(before)) / memoryFiles
	b.ReportMetric(perFile, "live-B/file")
	require.Len(b, tl.files, memoryFiles)
	require.Less(b, perFile, 500.0)
	runtime.KeepAlive(tl)
}

// BenchmarkTailerIdlePoll is one poll of memoryFiles unchanged files (the
// finder's case: no directory listed, no pattern matched again: a stat
// per directory and per file), and what the tailer keeps per file (live
// B/file).
func BenchmarkTailerIdlePoll(b *testing.B) {
	tl, include, before := memoryTailer(b)
	// The listings are taken as made long after the directories' last
	// change, as they are on an idle history (those of directories changed
	// within the finder's settle time are made again at every poll).
	m, err := finder.New([]string{include}, nil)
	require.NoError(b, err)
	m.WithClock(func() time.Time { return time.Now().Add(time.Hour) })
	tl.match = m.Match
	ctx := b.Context()
	tl.pollOnce(ctx)
	tl.pollOnce(ctx)
	live := memtest.LiveHeap()
	listed := m.Listed()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		tl.pollOnce(ctx)
	}
	b.StopTimer()
	require.Equal(b, listed, m.Listed(), "an idle poll lists no directory")
	b.ReportMetric(float64(int64(live)-int64(before))/memoryFiles, "live-B/file")
	runtime.KeepAlive(tl)
}
