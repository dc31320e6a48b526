// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/amp"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/snapshot"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/source"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/testfiles"
	"github.com/agentotel/agentotel/tests/testenv/history"
)

// TestSnapshotThreadsAreBatched: the threads read in one poll of a snapshot
// source go to the next consumer in few deliveries, each thread's events in
// order and as a poll per file would emit them, with agent.read.caught_up
// once per thread; a second poll emits nothing.
func TestSnapshotThreadsAreBatched(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "amp", "tools_and_title", "threads", "T-7a1c0d2e-3f40-4a5b-8c6d-0000000a0001.json"))
	require.NoError(t, err)
	dir := t.TempDir()
	const n = 200
	for r := range n {
		c := history.UniqueIDs(b, r)
		th, err := amp.DecodeThread(c)
		require.NoError(t, err)
		writeBytes(t, filepath.Join(dir, "threads", th.ID+".json"), c)
	}
	testfiles.TouchTree(t, dir, time.Now().Add(-time.Hour))
	sink := new(consumertest.LogsSink)
	srcs, stop := directSources(t, copilotAmpConfig("", dir), sink, componenttest.NewNopHost())
	defer stop()
	ctx := t.Context()
	srcs[0].(*snapshot.Source).Poll(ctx, false)

	require.LessOrEqual(t, len(sink.AllLogs()), (n+source.MaxBatchSessions-1)/source.MaxBatchSessions)
	// The same thread read alone.
	one := t.TempDir()
	writeBytes(t, filepath.Join(one, "threads", "T-7a1c0d2e-3f40-4a5b-8c6d-0000000a0001.json"), b)
	testfiles.TouchTree(t, one, time.Now().Add(-time.Hour))
	alone := new(consumertest.LogsSink)
	srcs1, stop1 := directSources(t, copilotAmpConfig("", one), alone, componenttest.NewNopHost())
	defer stop1()
	srcs1[0].(*snapshot.Source).Poll(ctx, false)
	require.Len(t, alone.AllLogs(), 1)
	single, _ := agentevent.DecodeLogs(alone.AllLogs()[0])
	require.NotEmpty(t, single)
	ids := map[string][]string{}
	seqs := map[string][]int64{}
	caughtUp := map[string]int{}
	for _, l := range sink.AllLogs() {
		for _, lr := range logRecords(l) {
			if agentevent.CaughtUp(lr) {
				ses, _ := lr.Attributes().Get(agentevent.AttrSessionID)
				caughtUp[ses.Str()]++
			}
		}
		evs, _ := agentevent.DecodeLogs(l)
		for _, ev := range evs {
			ids[ev.SessionID] = append(ids[ev.SessionID], ev.EventID)
			seqs[ev.SessionID] = append(seqs[ev.SessionID], ev.Sequence)
		}
	}
	require.Len(t, ids, n)
	for ses := range ids {
		assert.Len(t, ids[ses], len(single), ses)
		assert.True(t, slices.IsSorted(seqs[ses]), "a thread's events in order")
		assert.Equal(t, 1, caughtUp[ses], ses)
	}
	before := len(sink.AllLogs())
	srcs[0].(*snapshot.Source).Poll(ctx, false)
	assert.Len(t, sink.AllLogs(), before, "nothing twice")
}

// BenchmarkSnapshotStateDoesNotPinFiles: what a snapshot source keeps of
// the files it read (chat ids, watermark keys) does not hold the files'
// memory: a decoded string shares the memory of the whole file. It reads
// 20 chats of 2 MB each and reports the heap kept after (kept-B); it must
// stay well under their 40 MB.
func BenchmarkSnapshotStateDoesNotPinFiles(b *testing.B) {
	for range b.N {
		snapshotStateDoesNotPinFiles(b)
	}
}

func snapshotStateDoesNotPinFiles(b *testing.B) {
	home := b.TempDir()
	big := strings.Repeat("x", 2<<20)
	for i := range 20 {
		s := fmt.Sprintf("pin-%02d", i)
		writeChat(b, filepath.Join(home, "tmp", "p", "chats", s+".json"), s,
			gemUser(s+"-u", big, 0), gemAnswer(s+"-a", "ok", 0))
	}
	testfiles.TouchTree(b, home, time.Now().Add(-time.Hour))
	cfg := geminiConfig(b, home)
	cfg.IncludeContent = false
	sink := new(consumertest.LogsSink)
	srcs, stop := directSources(b, cfg, sink, componenttest.NewNopHost())
	defer stop()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	srcs[0].(*snapshot.Source).Poll(b.Context(), false)
	sink.Reset()
	runtime.GC()
	runtime.ReadMemStats(&after)
	require.Equal(b, 20, srcs[0].(*snapshot.Source).Files())
	grown := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	b.ReportMetric(float64(grown), "kept-B")
	assert.Less(b, grown, int64(8<<20), "heap kept after reading 40 MB of chats: %d bytes", grown)
	runtime.KeepAlive(srcs)
}
