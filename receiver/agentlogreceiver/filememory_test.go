// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/finder"
)

// memoryFiles is the size of the histories the per-file memory tests
// build: large enough that what is kept per file dwarfs the fixed costs.
const memoryFiles = 3000

// writeMemoryHistory writes n one-line JSONL files laid out as Claude Code
// lays out its transcripts (a directory per project, a UUID-named file per
// session), and returns the include pattern of them.
func writeMemoryHistory(t testing.TB, n int) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), ".claude", "projects")
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("-Users-someone-src-github-com-project-%03d", i%100))
		if i < 100 {
			require.NoError(t, os.MkdirAll(dir, 0o755))
		}
		name := fmt.Sprintf("%08x-1b2c-4d3e-8f40-%012x.jsonl", i, i*7919)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(`{"type":"user","n":1}`+"\n"), 0o600))
	}
	return filepath.Join(root, "**", "*.jsonl")
}

// heapPer is the live heap grown since before, per each of n items (logged
// as what holds them and what they are).
func heapPer(t *testing.T, before uint64, n int, holder, item string) float64 {
	t.Helper()
	per := float64(int64(liveHeap())-int64(before)) / float64(n)
	t.Logf("%s: %.0f bytes per %s", holder, per, item)
	return per
}

// liveHeap is the live heap after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// nopTailStore is a tailStore that has nothing stored and keeps nothing, so
// that what the test measures is the tailer's own memory.
type nopTailStore struct{}

func (nopTailStore) position(context.Context, string) (tailPos, bool)       { return tailPos{}, false }
func (nopTailStore) firstLineOwner(context.Context, string) (string, bool)  { return "", false }
func (nopTailStore) adopt(context.Context, string, string, string, tailPos) {}

// memoryTailer is a tailer over memoryFiles files that reads them to
// nowhere, and the live heap before it was made.
func memoryTailer(tb testing.TB) (tl *tailer, include string, before uint64) {
	tb.Helper()
	if runtime.GOOS == "windows" {
		tb.Skip("the tailer uses fileconsumer's matcher on Windows")
	}
	include = writeMemoryHistory(tb, memoryFiles)
	cfg := testConfig(tb.TempDir())
	before = liveHeap()
	tl, err := newJSONLTailer(cfg, &cfg.ClaudeCode, []string{include}, nil)
	require.NoError(tb, err)
	tl.store, tl.logger = nopTailStore{}, zap.NewNop()
	tl.emit = func(context.Context, tailBatch) error { return nil }
	return tl, include, before
}

// TestTailerMemoryPerFile: what the tailer and its matcher keep per watched
// file, once every file has been read to its end, must not make the
// collector grow much with the length of the history. Here (paths of about
// 140 bytes; the second poll lists the directories again, as every poll
// does a directory changed within listingSettle, like a project's while a
// session is written) it kept 683 bytes per file when the matcher kept each
// name, joined it again into a path per pattern at every listing (the
// tailer kept the first), and the tailer the sha256 of each file's head as
// a hex string. It keeps about 400 now: the path once (shared by the
// listing, the matches and the tailer's table, and kept when a directory is
// listed again), the tailer's entry, and the poll's reused scratch (each
// file's stat, a set of inodes). 500 fails the old code with room to spare.
// (With settled listings, BenchmarkTailerIdlePoll: 536 before, 397 now.)
func TestTailerMemoryPerFile(t *testing.T) {
	tl, _, before := memoryTailer(t)
	// The first poll reads every file; the second finds them unchanged:
	// what is left is what an idle receiver keeps.
	tl.pollOnce(context.Background())
	tl.pollOnce(context.Background())
	perFile := heapPer(t, before, memoryFiles, "tailer and matcher", "file")
	require.Len(t, tl.files, memoryFiles)
	require.Less(t, perFile, 500.0)
	runtime.KeepAlive(tl)
}

// BenchmarkTailerIdlePoll is one poll of memoryFiles unchanged files (the
// dir cache's case: no directory listed, no pattern matched again: a stat
// per directory and per file), and what the tailer keeps per file (live
// B/file).
func BenchmarkTailerIdlePoll(b *testing.B) {
	tl, include, before := memoryTailer(b)
	// The listings are taken as made long after the directories' last
	// change, as they are on an idle history (those of directories changed
	// within listingSettle are made again at every poll).
	m, err := finder.New([]string{include}, nil)
	require.NoError(b, err)
	m.WithClock(func() time.Time { return time.Now().Add(time.Hour) })
	tl.match = m.Match
	ctx := context.Background()
	tl.pollOnce(ctx)
	tl.pollOnce(ctx)
	live := liveHeap()
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

// TestTreeReaderMemoryPerSession: what OpenCode's tree reader keeps per
// session once it has listed them, as at its first poll (every session is
// listed before any is read: the collector's peak). It kept 742 bytes per
// session here with each session file's joined path, a map of the files to
// retry that kept the room of all of them, and the session's flags spread
// over its struct; 543 without; 327 since a listed session keeps only its
// ids and creation time, not its record (read again when it is polled; the
// records of real sessions, with their titles, are larger than these).
func TestTreeReaderMemoryPerSession(t *testing.T) {
	const sessions = 2000
	store := newOCStore(t, t.TempDir())
	for i := range sessions {
		store.session(fmt.Sprintf("ses_%026x", i*104729), int64(1_700_000_000_000+i))
	}
	cfg := testConfig(t.TempDir())
	rd, err := newOpenCodeSource(sourceSettings{
		cfg: cfg, ac: &cfg.OpenCode, logger: zap.NewNop(),
		checkpoints: newCheckpoints(nil, "opencode", false),
		life:        lifeCycle{maxSessions: 100, now: time.Now},
		clock:       clock{now: time.Now},
	})
	require.NoError(t, err)
	// A first listing fills the JSON decoder's caches (once per process).
	newTreeReader(rd, store.storage, false).listSessions(context.Background(), false)
	before := liveHeap()
	tr := newTreeReader(rd, store.storage, false)
	tr.listSessions(context.Background(), false)
	perSession := heapPer(t, before, sessions, "tree reader", "session")
	require.Len(t, tr.sessions, sessions)
	require.Less(t, perSession, 400.0)
	runtime.KeepAlive(tr)
}
