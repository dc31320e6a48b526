// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/state"
	"github.com/agentotel/agentotel/internal/agentevent"
)

// BenchmarkHistoryMemory reads a history of many sessions (ten turns of a
// prompt, a tool call with its result and an answer each) through the
// connector with file-backed storage, and reports the live heap after
// 1000 and after 4000 sessions: with max_cached_sessions bounding what
// stays in memory, the two are about equal (memory does not grow with the
// history). Run: go test -run '^$' -bench HistoryMemory ./connector/agentspanconnector/
func BenchmarkHistoryMemory(b *testing.B) {
	for b.Loop() {
		h := newHarness(b)
		// The storage's own memory is not the connector's: a client that
		// keeps nothing in memory (storagetest's keeps a map of it all).
		h.c.client = diskClient(b.TempDir())
		h.c.asm.saved.load = state.StorageLoader{Ctx: b.Context(), Client: h.c.client, Unreadable: func(string, error) {}}
		require.NoError(b, h.c.Start(b.Context(), componenttest.NewNopHost()))
		h.history()
		heapAt := map[int]float64{}
		for i := 1; i <= 4000; i++ {
			s := newSession(fmt.Sprintf("s%05d", i))
			var evs []agentevent.Event
			for turn := range 10 {
				sec := float64(turn * 10)
				p := fmt.Sprintf("p%d", turn)
				evs = append(evs, s.prompt(p, sec), s.call(p+"c", p+"m1", p+"t", "Bash", sec+1),
					s.result(p+"r", p+"t", "Bash", sec+2), s.answer(p+"a", p+"m2", sec+3))
			}
			require.NoError(b, h.c.ConsumeLogs(b.Context(), markCaughtUp(agentevent.EncodeLogs(evs, "host1"))))
			h.sink.Reset()
			if i == 1000 || i == 4000 {
				runtime.GC()
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				heapAt[i] = float64(m.HeapInuse) / (1 << 20)
			}
		}
		b.ReportMetric(heapAt[1000], "heap-MB@1000")
		b.ReportMetric(heapAt[4000], "heap-MB@4000")
		b.ReportMetric(float64(len(h.c.asm.store.sessions)), "sessions-in-memory")
		require.NoError(b, h.c.Shutdown(b.Context()))
	}
}

// BenchmarkHistoryMemoryOpenTurns is BenchmarkHistoryMemory with the last
// turn of every session left open — a tool call running, nothing caught up,
// the clock at the events (live): 4000 open turns at the end. With storage
// they leave memory with their sessions past max_cached_sessions, so the
// live heap after 4000 sessions is about that after 1000. Run: go test -run
// '^$' -bench HistoryMemoryOpenTurns ./connector/agentspanconnector/
func BenchmarkHistoryMemoryOpenTurns(b *testing.B) {
	for b.Loop() {
		h := newHarness(b)
		h.c.client = diskClient(b.TempDir())
		h.c.asm.saved.load = state.StorageLoader{Ctx: b.Context(), Client: h.c.client, Unreadable: func(string, error) {}}
		require.NoError(b, h.c.Start(b.Context(), componenttest.NewNopHost()))
		h.setNow(100 * time.Second)
		heapAt := map[int]float64{}
		for i := 1; i <= 4000; i++ {
			s := newSession(fmt.Sprintf("s%05d", i))
			var evs []agentevent.Event
			for turn := range 10 {
				sec := float64(turn * 10)
				p := fmt.Sprintf("p%d", turn)
				evs = append(evs, s.prompt(p, sec), s.call(p+"c", p+"m1", p+"t", "Bash", sec+1))
				if turn < 9 {
					evs = append(evs, s.result(p+"r", p+"t", "Bash", sec+2), s.answer(p+"a", p+"m2", sec+3))
				}
			}
			require.NoError(b, h.c.ConsumeLogs(b.Context(), agentevent.EncodeLogs(evs, "host1")))
			h.sink.Reset()
			if i == 1000 || i == 4000 {
				runtime.GC()
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				heapAt[i] = float64(m.HeapInuse) / (1 << 20)
			}
		}
		require.Equal(b, 4000, h.c.asm.openUnits())
		b.ReportMetric(heapAt[1000], "heap-MB@1000")
		b.ReportMetric(heapAt[4000], "heap-MB@4000")
		b.ReportMetric(float64(len(h.c.asm.store.sessions)), "sessions-in-memory")
		b.ReportMetric(float64(len(h.c.asm.store.units)), "open-turns-in-memory")
		require.NoError(b, h.c.Shutdown(b.Context()))
	}
}

// diskClient is a storage.Client with one file per key and nothing in memory.
type diskClient string

func (d diskClient) path(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(string(d), hex.EncodeToString(sum[:16]))
}

func (d diskClient) Get(_ context.Context, key string) ([]byte, error) {
	b, err := os.ReadFile(d.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

func (d diskClient) Set(_ context.Context, key string, value []byte) error {
	return os.WriteFile(d.path(key), value, 0o600)
}

func (d diskClient) Delete(_ context.Context, key string) error {
	err := os.Remove(d.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

func (d diskClient) Batch(ctx context.Context, ops ...*storage.Operation) error {
	for _, op := range ops {
		var err error
		switch op.Type {
		case storage.Get:
			op.Value, err = d.Get(ctx, op.Key)
		case storage.Set:
			err = d.Set(ctx, op.Key, op.Value)
		case storage.Delete:
			err = d.Delete(ctx, op.Key)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (diskClient) Close(context.Context) error { return nil }

// BenchmarkConsumeWithManyOpenTurns measures one ConsumeLogs of a small
// batch (a whole turn of a new session, ended and caught up, so it goes
// out at once) while 100 or 10,000 other turns stay open (a tool call
// running in each, live): a close pass looks only at what the batch
// touched, and at the groups whose deadline came, so the cost per batch
// is the same for both. Run: go test -run '^$' -bench ConsumeWithManyOpenTurns ./connector/agentspanconnector/
func BenchmarkConsumeWithManyOpenTurns(b *testing.B) {
	for _, c := range []struct {
		open    int
		storage bool
	}{{100, false}, {10_000, false}, {100, true}, {10_000, true}} {
		open := c.open
		name := fmt.Sprintf("open=%d", open)
		if c.storage {
			name += "/storage"
		}
		b.Run(name, func(b *testing.B) {
			// The tests' checks walk every unit and every session.
			pass, ev, links, pre := verifyPass, verifyEvict, verifyLinks, verifyPreambles
			verifyPass, verifyEvict, verifyLinks, verifyPreambles = nil, nil, nil, nil
			defer func() { verifyPass, verifyEvict, verifyLinks, verifyPreambles = pass, ev, links, pre }()
			h := newHarness(b)
			if c.storage {
				// A file per key, as BenchmarkHistoryMemory (storagetest's
				// client copies its whole map on every Batch).
				h.c.client = diskClient(b.TempDir())
				h.c.asm.saved.load = state.StorageLoader{Ctx: b.Context(), Client: h.c.client, Unreadable: func(string, error) {}}
			}
			for i := range open {
				s := newSession(fmt.Sprintf("open%05d", i))
				h.feedPartial(s.prompt("p", 0), s.call("c", "m1", "t", "Bash", 1))
			}
			require.Equal(b, open, h.c.asm.openUnits())
			i := 0
			for b.Loop() {
				s := newSession(fmt.Sprintf("done%08d", i))
				i++
				ld := markCaughtUp(agentevent.EncodeLogs([]agentevent.Event{
					s.prompt("p", 2), s.answer("a", "m", 3, endMarker("end_turn")),
				}, "host1"))
				if err := h.c.ConsumeLogs(b.Context(), ld); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			require.Equal(b, open, h.c.asm.openUnits())
			require.Positive(b, h.sink.SpanCount())
			h.sink.Reset()
		})
	}
}
