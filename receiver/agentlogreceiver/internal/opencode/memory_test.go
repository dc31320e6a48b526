// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package opencode

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/internal/memtest"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/checkpoint"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/source"
)

// BenchmarkTreeReaderMemoryPerSession: what OpenCode's tree reader keeps
// per session once it has listed them, as at its first poll (every session
// is listed before any is read: the collector's peak), live-B/session. A
// listed session keeps only its ids and creation time, not its record (read
// again when it is polled), nor its file's joined path.
func BenchmarkTreeReaderMemoryPerSession(b *testing.B) {
	for range b.N {
		treeReaderMemoryPerSession(b)
	}
}

func treeReaderMemoryPerSession(b *testing.B) {
	const sessions = 2000
	store := newTreeStore(b, b.TempDir())
	for i := range sessions {
		store.session(fmt.Sprintf("ses_%026x", i*104729), int64(1_700_000_000_000+i))
	}
	rd, err := New(source.Settings{
		Logger:      zap.NewNop(),
		Checkpoints: checkpoint.New(nil, "opencode", false),
		Life:        checkpoint.LifeCycle{MaxSessions: 100, Now: time.Now},
		Now:         time.Now,
	}, OpenCode)
	require.NoError(b, err)
	// A first listing fills the JSON decoder's caches (once per process).
	newTreeReader(rd, store.storage, false).listSessions(b.Context(), false)
	before := memtest.LiveHeap()
	tr := newTreeReader(rd, store.storage, false)
	tr.listSessions(b.Context(), false)
	perSession := float64(int64(memtest.LiveHeap())-int64(before)) / sessions
	b.ReportMetric(perSession, "live-B/session")
	require.Len(b, tr.sessions, sessions)
	require.Less(b, perSession, 400.0)
	runtime.KeepAlive(tr)
}
