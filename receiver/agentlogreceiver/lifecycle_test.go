// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/storagecodec"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/checkpoint"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/jsonl"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/metadata"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/snapshot"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/source"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/testfiles"
)

// fakeClock is the real clock moved forward by advance.
type fakeClock struct{ offset atomic.Int64 }

func (c *fakeClock) advance(d time.Duration) { c.offset.Add(int64(d)) }

func (c *fakeClock) clock() clock {
	base := realClock()
	return clock{now: func() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }, wait: base.wait}
}

// jsonlSourceOf returns the source of one JSONL agent of a running receiver
// (for Copilot CLI, the JSONL one of its sources).
func jsonlSourceOf(t *testing.T, h *harness, key string) *jsonl.Source {
	t.Helper()
	h.rcv.mu.Lock()
	defer h.rcv.mu.Unlock()
	for _, s := range h.rcv.sources {
		all, ok := s.(source.Group)
		if !ok {
			all = source.Group{s}
		}
		for _, s := range all {
			if js, ok := s.(*jsonl.Source); ok && js.Agent == key {
				return js
			}
		}
	}
	require.FailNow(t, "no source for "+key)
	return nil
}

// storedState reads one key of the receiver's storage (the receiver
// stopped).
func storedState(t *testing.T, s restartSetup, key string) []byte {
	t.Helper()
	ctx := t.Context()
	client, err := storedClient(ctx, s.host, s.ext.ID, component.NewID(metadata.Type))
	require.NoError(t, err)
	defer func() { require.NoError(t, client.Close(ctx)) }()
	b, err := storagecodec.Wrap(client, nil).Get(ctx, key)
	require.NoError(t, err)
	return b
}

// TestDeletedTranscriptIsForgotten: a session whose file is deleted stays
// known while it has been idle for less than forget_after, then its memory
// and its storage key are deleted.
func TestDeletedTranscriptIsForgotten(t *testing.T) {
	s := newRestartSetup(t)
	s.cfg.ForgetAfter = time.Hour
	clk := &fakeClock{}
	h := newHarness(t, s.cfg, s.host, withClock(clk.clock()), withSweepInterval(10*time.Millisecond))
	h.start()
	h.waitEvents(s.path, 3)
	h.barrier(s.logsDir)
	src := jsonlSourceOf(t, h, "claude_code")
	key := checkpoint.ParserKey(s.path)
	require.True(t, src.Sessions().Known(key))

	require.NoError(t, os.Remove(s.path))
	h.barrier(s.logsDir)
	h.barrier(s.logsDir) // sweeps run every 10ms here
	assert.True(t, src.Sessions().Known(key), "idle for less than forget_after: still known")

	clk.advance(2 * time.Hour)
	require.Eventually(t, func() bool { return !src.Sessions().Known(key) }, 20*time.Second, 5*time.Millisecond,
		"gone and idle for forget_after: forgotten")
	h.stop()
	assert.Nil(t, storedState(t, s, "claude_code."+key), "the storage key is deleted")
	assert.NotNil(t, storedState(t, s, "claude_code."+checkpoint.ParserKey(filepath.Join(s.logsDir, "barrier-"+fmt.Sprint(barrierSeq.Load())+".jsonl"))),
		"a session whose file exists keeps its state")
}

// TestManySessionsWithASmallCap: 10,000 session files read with at most 10
// sessions in memory; files that grow later continue their turn (their
// evicted parser state is reloaded): nothing lost, nothing twice.
func TestManySessionsWithASmallCap(t *testing.T) {
	for _, persist := range []bool{true, false} {
		t.Run(fmt.Sprintf("storage=%v", persist), func(t *testing.T) {
			n := 10_000
			if testing.Short() {
				n = 1_000
			}
			if !persist {
				n = 500
			}
			dir := t.TempDir()
			cfg := testConfig(dir)
			cfg.MaxTrackedSessions = 10
			host := storagetest.NewStorageHost()
			if persist {
				ext := storagetest.NewFileBackedStorageExtension("state", t.TempDir())
				host = host.WithExtension(ext.ID, ext)
				cfg.Storage = &ext.ID
			}
			paths := make([]string, n)
			for i := range paths {
				paths[i] = filepath.Join(dir, fmt.Sprintf("p%02d", i%100), fmt.Sprintf("s%05d.jsonl", i))
				testfiles.WriteFile(t, paths[i], userLine(fmt.Sprintf("u%d", i), fmt.Sprintf("s%d", i), "hello"))
			}
			h := newHarness(t, cfg, host)
			// A poll looks at every file: a barrier waits for up to two
			// polls of n files.
			h.patience = 5 * time.Minute
			h.start()
			require.Eventually(t, func() bool { return h.sink.LogRecordCount() >= n }, 5*time.Minute, 50*time.Millisecond)
			// The last files of the first poll are read concurrently, their
			// sessions released after their events arrive: idle once a later
			// poll has been through.
			h.barrier(dir)
			src := jsonlSourceOf(t, h, "claude_code")
			require.LessOrEqual(t, src.Sessions().ResidentCount(), 10, "at most max_tracked_sessions in memory once idle")

			grown := []int{0, 1, n / 2, n - 1}
			for _, i := range grown {
				testfiles.AppendFile(t, paths[i], testfiles.JoinLines(assistantLine(fmt.Sprintf("a%d", i), fmt.Sprintf("u%d", i), fmt.Sprintf("s%d", i), fmt.Sprintf("msg_%d", i), "hi")))
			}
			require.Eventually(t, func() bool { return h.sink.LogRecordCount() >= n+len(grown)+int(h.barriers) }, h.patience, 10*time.Millisecond)
			h.barrier(dir)
			byID := map[string]agentevent.Event{}
			for _, ev := range h.events() {
				_, dup := byID[ev.EventID]
				require.False(t, dup, "event %s emitted twice", ev.EventID)
				byID[ev.EventID] = ev
			}
			assert.Len(t, byID, n+len(grown)+int(h.barriers))
			for _, i := range grown {
				ev := byID[fmt.Sprintf("a%d", i)]
				assert.Equal(t, fmt.Sprintf("u%d", i), ev.ParentEventID, "the evicted session's parser state was reloaded")
			}
		})
	}
}

// TestRotationAndTruncation: the two rotations of log files — a file
// moved away and a new one created at its path, and a file copied away and
// truncated — lose nothing and emit nothing twice.
func TestRotationAndTruncation(t *testing.T) {
	t.Run("move_create", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "p", "s1.jsonl")
		moved := filepath.Join(dir, "p", "s1.rotated.jsonl")
		testfiles.WriteFile(t, path, userLine("u1", "s1", "one"))
		h := newHarness(t, testConfig(dir), nil)
		h.start()
		h.waitEvents(path, 1)
		require.NoError(t, os.Rename(path, moved))
		// The tailer names a file's lines by the path it opened it under:
		// lines appended before a poll has seen the rename are read as the
		// old path's (a poll that opened it just before the rename, or that
		// reads it as lost). A poll after the rename reads it on as the
		// moved file; the barrier orders the append after one.
		h.barrier(dir)
		testfiles.AppendFile(t, moved, testfiles.JoinLines(assistantLine("a1", "u1", "s1", "msg_1", "one!")))
		testfiles.WriteFile(t, path, userLine("v1", "s2", "new session"))
		h.waitEvents(moved, 1)
		h.waitEvents(path, 2)
		h.barrier(dir)
		assert.Equal(t, []string{"u1", "v1"}, eventIDs(h.eventsOf(path)))
		assert.Equal(t, []string{"a1"}, eventIDs(h.eventsOf(moved)), "the moved file is read on from its position")
	})
	t.Run("copy_truncate", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "p", "s1.jsonl")
		testfiles.WriteFile(t, path, userLine("u1", "s1", "one"), assistantLine("a1", "u1", "s1", "msg_1", "one!"))
		h := newHarness(t, testConfig(dir), nil)
		h.start()
		h.waitEvents(path, 2)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		// A copy the include patterns do not match.
		require.NoError(t, os.WriteFile(filepath.Join(dir, "p", "s1.jsonl.1"), b, 0o600)) //nolint:gosec // G703: the data written was read from a file; the path is the test's own
		require.NoError(t, os.Truncate(path, 0))
		testfiles.AppendFile(t, path, testfiles.JoinLines(userLine("u2", "s1", "two")))
		h.waitEvents(path, 3)
		h.barrier(dir)
		assert.Equal(t, []string{"u1", "a1", "u2"}, eventIDs(h.eventsOf(path)))
	})
}

// TestOpenCodeSessionDeletedWhileDownIsForgotten: an OpenCode session
// deleted while the collector is down is forgotten by the next run (the
// index of sessions outlives the run), its watermark deleted.
func TestOpenCodeSessionDeletedWhileDownIsForgotten(t *testing.T) {
	data := t.TempDir()
	st := newOCStore(t, data)
	const ses = "ses_forget01"
	st.session(ses, 1771000000000)
	st.user(ses, "msg_f001", 1771000000000, "one")
	ext := storagetest.NewFileBackedStorageExtension("state", t.TempDir())
	host := storagetest.NewStorageHost().WithExtension(ext.ID, ext)
	cfg := ocConfig(data)
	cfg.Storage = &ext.ID
	cfg.ForgetAfter = 0
	s := restartSetup{ext: ext, host: host, cfg: cfg}
	key := "opencode." + checkpoint.TreeKey(st.storage, ses)

	h1 := newHarness(t, cfg, host)
	h1.start()
	h1.waitSession(ses, 1)
	h1.ocBarrier(st)
	h1.stop()
	require.NotNil(t, storedState(t, s, key))

	require.NoError(t, os.Remove(filepath.Join(st.storage, "session", ocProject, ses+".json")))
	require.NoError(t, os.RemoveAll(filepath.Join(st.storage, "message", ses)))
	h2 := newHarness(t, cfg, host, withSweepInterval(10*time.Millisecond))
	h2.start()
	h2.ocBarrier(st)
	h2.ocBarrier(st)
	h2.stop()
	assert.Nil(t, storedState(t, s, key), "the watermark of the deleted session is deleted")
	assert.Empty(t, h2.eventsOfSession(ses))
}

// snapshotSourceOf returns the snapshot source of one agent of a running
// receiver.
func snapshotSourceOf(t *testing.T, h *harness, key string) *snapshot.Source {
	t.Helper()
	h.rcv.mu.Lock()
	defer h.rcv.mu.Unlock()
	for _, s := range h.rcv.sources {
		if ss, ok := s.(*snapshot.Source); ok && ss.Agent == key {
			return ss
		}
	}
	require.FailNow(t, "no snapshot source for "+key)
	return nil
}

// TestDeletedThreadIsForgotten: the life cycle of a session read from a
// file rewritten in place (an Amp thread): once its file is deleted and it
// has been idle for forget_after, its watermark leaves memory and storage;
// a thread whose file exists keeps its own.
func TestDeletedThreadIsForgotten(t *testing.T) {
	snaps, err := filepath.Glob(filepath.Join(repoRoot(t), "testdata", "amp", "rewrite_in_place", "snapshots", "*.json"))
	require.NoError(t, err)
	require.Len(t, snaps, 3)
	final, err := os.ReadFile(snaps[2])
	require.NoError(t, err)
	const id = "T-7a1c0d2e-3f40-4a5b-8c6d-0000000a0002"
	dir := t.TempDir()
	path := filepath.Join(dir, "threads", id+".json")
	writeBytes(t, path, final)

	ext := storagetest.NewFileBackedStorageExtension("state", t.TempDir())
	host := storagetest.NewStorageHost().WithExtension(ext.ID, ext)
	cfg := copilotAmpConfig("", dir)
	cfg.Storage = &ext.ID
	cfg.ForgetAfter = time.Hour
	s := restartSetup{ext: ext, host: host, cfg: cfg}
	clk := &fakeClock{}
	h := newHarness(t, cfg, host, withClock(clk.clock()), withSweepInterval(10*time.Millisecond), withSettleDelay(10*time.Millisecond))
	h.start()
	h.waitSession(id, 6)
	h.ampBarrier(dir)
	src := snapshotSourceOf(t, h, "amp")
	key := checkpoint.ThreadKey(id)
	require.True(t, src.Threads().Known(key))

	require.NoError(t, os.Remove(path))
	h.ampBarrier(dir)
	h.ampBarrier(dir) // sweeps run every 10ms here
	assert.True(t, src.Threads().Known(key), "idle for less than forget_after: still known")

	clk.advance(2 * time.Hour)
	require.Eventually(t, func() bool { return !src.Threads().Known(key) }, 20*time.Second, 5*time.Millisecond,
		"gone and idle for forget_after: forgotten")
	h.stop()
	assert.Len(t, h.eventsOfSession(id), 6, "each message emitted once")
	assert.Nil(t, storedState(t, s, "amp."+key), "the watermark is deleted from storage")
	assert.NotNil(t, storedState(t, s, "amp."+checkpoint.ThreadKey(fmt.Sprintf("T-barrier-%d", barrierSeq.Load()))),
		"a thread whose file exists keeps its watermark")
}
