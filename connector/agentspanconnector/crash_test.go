// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// splitLogs cuts ld into batches of at most n records, in order, as a
// receiver reading the same files in small reads would hand them over.
func splitLogs(ld plog.Logs, n int) []plog.Logs {
	var out []plog.Logs
	cur, count := plog.NewLogs(), 0
	rls := ld.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			var dst plog.LogRecordSlice
			open := false
			for k := 0; k < lrs.Len(); k++ {
				if !open {
					rl := cur.ResourceLogs().AppendEmpty()
					rls.At(i).Resource().CopyTo(rl.Resource())
					sl := rl.ScopeLogs().AppendEmpty()
					sls.At(j).Scope().CopyTo(sl.Scope())
					dst, open = sl.LogRecords(), true
				}
				lrs.At(k).CopyTo(dst.AppendEmpty())
				count++
				if count == n {
					out = append(out, cur)
					cur, count, open = plog.NewLogs(), 0, false
				}
			}
		}
	}
	if count > 0 {
		out = append(out, cur)
	}
	return out
}

// crash stops a connector the way kill -9 does: no Shutdown, nothing saved
// beyond what ConsumeLogs already wrote; only the storage file is released.
func (h *harness) crash() {
	h.c.cancel()
	h.c.wg.Wait()
	if h.c.client != nil {
		require.NoError(h.t, h.c.client.Close(context.Background()))
	}
}

// spanKey is a span's identity and the content a restart must not change.
func spanKey(sp ptrace.Span) string {
	return fmt.Sprintf("%s/%s parent=%s %s [%d,%d] attrs=%v events=%d links=%d status=%d",
		sp.TraceID(), sp.SpanID(), sp.ParentSpanID(), sp.Name(), sp.StartTimestamp(), sp.EndTimestamp(),
		sp.Attributes().AsRaw(), sp.Events().Len(), sp.Links().Len(), sp.Status().Code())
}

func spanKeys(spans []ptrace.Span) map[string]int {
	out := map[string]int{}
	for _, sp := range spans {
		out[spanKey(sp)]++
	}
	return out
}

// TestCrashAtAnyBatchEmitsEveryTurnOnce reads every golden case in small
// batches with storage, kills the connector (no Shutdown) after random
// batches and restarts it on the same storage, delivering again the batch
// whose read position the receiver had not committed yet. The spans are
// those of an uninterrupted run with the same batches: same ids, same
// content, each exactly once.
func TestCrashAtAnyBatchEmitsEveryTurnOnce(t *testing.T) {
	testCrashes(t, nil)
}

// testCrashes runs every golden case once uninterrupted and once with kills
// after random batches (see TestCrashAtAnyBatchEmitsEveryTurnOnce);
// beforeRestart, if set, is called on the stopped connector's storage
// before each restart.
func testCrashes(t *testing.T, beforeRestart func(t *testing.T, host component.Host, id component.ID)) {
	for _, dir := range goldenCases(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			logs, err := golden.ReadLogs(filepath.Join(dir, "events.yaml"))
			require.NoError(t, err)
			batches := splitLogs(markCaughtUp(logs), 5)
			rng := rand.New(rand.NewPCG(uint64(len(batches)), 8))

			run := func(crashAfter func(i int) bool) []ptrace.Span {
				stateDir := t.TempDir()
				id := storagetest.NewStorageID("state")
				host := func() component.Host {
					return storagetest.NewStorageHost().WithFileBackedStorageExtension("state", stateDir)
				}
				var spans []ptrace.Span
				start := func() *harness {
					h := newHarness(t, func(c *Config) { c.Storage = &id })
					h.history()
					require.NoError(t, h.c.Start(t.Context(), host()))
					return h
				}
				h := start()
				for i := range batches {
					require.NoError(t, h.c.ConsumeLogs(t.Context(), batches[i]))
					if crashAfter(i) {
						h.crash()
						spans = append(spans, h.spans()...)
						if beforeRestart != nil {
							beforeRestart(t, host(), id)
						}
						h = start()
						// The receiver commits after ConsumeLogs returns: a
						// kill in between reads the batch again.
						require.NoError(t, h.c.ConsumeLogs(t.Context(), batches[i]))
					}
				}
				h.setNow(365*24*time.Hour + time.Hour)
				h.tick()
				require.NoError(t, h.c.Shutdown(t.Context()))
				return append(spans, h.spans()...)
			}

			want := run(func(int) bool { return false })
			got := run(func(int) bool { return rng.IntN(3) == 0 })
			wantKeys, gotKeys := spanKeys(want), spanKeys(got)
			for k, n := range gotKeys {
				assert.Equal(t, 1, n, "emitted %d times: %s", n, k)
			}
			assert.Equal(t, wantKeys, gotKeys)
		})
	}
}

// FuzzConsumeLogs feeds arbitrary pdata (any protobuf the OTLP unmarshaler
// accepts) to the connector, with storage, then lets every turn close:
// nothing panics, and every trace it emits has one root.
func FuzzConsumeLogs(f *testing.F) {
	var m plog.ProtoMarshaler
	for _, dir := range goldenCases(f) {
		logs, err := golden.ReadLogs(filepath.Join(dir, "events.yaml"))
		require.NoError(f, err)
		for _, b := range splitLogs(logs, 8) {
			raw, err := m.MarshalLogs(b)
			require.NoError(f, err)
			f.Add(raw)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var u plog.ProtoUnmarshaler
		ld, err := u.UnmarshalLogs(b)
		if err != nil {
			return
		}
		id := storagetest.NewStorageID("state")
		h := newHarness(t, func(c *Config) { c.Storage = &id })
		require.NoError(t, h.c.Start(t.Context(), storagetest.NewStorageHost().WithInMemoryStorageExtension("state")))
		h.history()
		_ = h.c.ConsumeLogs(t.Context(), ld)
		_ = h.c.ConsumeLogs(t.Context(), ld) // delivered again
		h.setNow(2 * 365 * 24 * time.Hour)
		h.tick()
		require.NoError(t, h.c.Shutdown(t.Context()))
		roots := map[pcommon.TraceID]int{}
		for _, sp := range h.spans() {
			if sp.ParentSpanID().IsEmpty() {
				roots[sp.TraceID()]++
			}
		}
		for id, n := range roots {
			if n != 1 {
				t.Fatalf("trace %s has %d roots", id, n)
			}
		}
	})
}

// refusing is a next consumer that refuses while refuse is set.
type refusing struct {
	consumertest.TracesSink
	refuse bool
}

func (r *refusing) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	if r.refuse {
		return errors.New("downstream unavailable")
	}
	return r.TracesSink.ConsumeTraces(ctx, td)
}

// TestRefusedSpansComeAgainWithTheBatch: when the next consumer refuses a
// batch's spans, ConsumeLogs returns the error and keeps nothing of the
// batch, so the receiver's retry of the same batch emits every turn once.
func TestRefusedSpansComeAgainWithTheBatch(t *testing.T) {
	id := storagetest.NewStorageID("state")
	h := newHarness(t, func(c *Config) { c.Storage = &id })
	next := &refusing{refuse: true}
	h.c.next = next
	require.NoError(t, h.c.Start(t.Context(), storagetest.NewStorageHost().WithFileBackedStorageExtension("state", t.TempDir())))
	h.history()
	s := newSession("s1")
	batch := markCaughtUp(agentevent.EncodeLogs([]agentevent.Event{
		s.prompt("p1", 0), s.answer("a1", "m1", 1), s.prompt("p2", 2), s.call("c2", "m2", "toolu_2", "Bash", 3),
		s.result("r2", "toolu_2", "Bash", 4), s.answer("a2", "m3", 5),
	}, "host1"))
	require.Error(t, h.c.ConsumeLogs(t.Context(), batch))
	h.tick() // nothing is left to close: the batch was dropped
	assert.Empty(t, next.AllTraces())
	next.refuse = false
	require.NoError(t, h.c.ConsumeLogs(t.Context(), batch)) // the receiver's retry
	require.NoError(t, h.c.Shutdown(t.Context()))
	var spans []ptrace.Span
	for _, td := range next.AllTraces() {
		spans = append(spans, allSpans(td)...)
	}
	assert.Len(t, roots(spans), 2, "both turns, once")
	for k, n := range spanKeys(spans) {
		assert.Equal(t, 1, n, k)
	}
	assert.Len(t, spans, 6)
}

// failingWrites is a storage client whose writes fail while fail is set.
type failingWrites struct {
	storage.Client
	fail bool
}

func (f *failingWrites) Batch(ctx context.Context, ops ...*storage.Operation) error {
	if f.fail {
		for _, op := range ops {
			if op.Type != storage.Get {
				return errors.New("disk full")
			}
		}
	}
	return f.Client.Batch(ctx, ops...)
}

func (f *failingWrites) Set(ctx context.Context, key string, value []byte) error {
	if f.fail {
		return errors.New("disk full")
	}
	return f.Client.Set(ctx, key, value)
}

func (f *failingWrites) Delete(ctx context.Context, key string) error {
	if f.fail {
		return errors.New("disk full")
	}
	return f.Client.Delete(ctx, key)
}

// TestFailedWriteComesAgainWithTheBatch: when the state of a batch cannot
// be written, ConsumeLogs returns the error and memory goes back to what
// storage holds (open turns, the index of active sessions), so the
// receiver's retry of the same batch, and the batches after it, give the
// spans of a run without the failure. The spans the failed batch handed
// out before its write go out again with the retry, identical.
func TestFailedWriteComesAgainWithTheBatch(t *testing.T) {
	s := newSession("s1")
	batches := []plog.Logs{
		markCaughtUp(agentevent.EncodeLogs([]agentevent.Event{
			s.prompt("p1", 0), s.answer("a1", "m1", 1), s.prompt("p2", 2), s.call("c2", "m2", "toolu_2", "Bash", 3),
		}, "host1")),
		markCaughtUp(agentevent.EncodeLogs([]agentevent.Event{
			s.result("r2", "toolu_2", "Bash", 4), s.answer("a2", "m3", 5), s.prompt("p3", 6),
		}, "host1")),
		markCaughtUp(agentevent.EncodeLogs([]agentevent.Event{
			s.answer("a3", "m4", 7, finish("end_turn")),
		}, "host1")),
	}
	run := func(failAt int) (spans []ptrace.Span) {
		id := storagetest.NewStorageID("state")
		dir := t.TempDir()
		start := func() *harness {
			h := newHarness(t, func(c *Config) { c.Storage = &id })
			require.NoError(t, h.c.Start(t.Context(), storagetest.NewStorageHost().WithFileBackedStorageExtension("state", dir)))
			return h
		}
		h := start()
		fw := &failingWrites{Client: h.c.client}
		h.c.client = fw
		for i, b := range batches {
			if i == len(batches)-1 {
				// A restart: what memory holds beyond storage is lost.
				h.crash()
				spans = append(spans, h.spans()...)
				h = start()
				fw = &failingWrites{Client: h.c.client}
				h.c.client = fw
			}
			if i == failAt {
				fw.fail = true
				require.Error(t, h.c.ConsumeLogs(t.Context(), b))
				assert.Empty(t, h.c.asm.store.dirty, "nothing unsaved is left in memory")
				for sk := range h.c.asm.store.sessions {
					assert.Equal(t, h.c.asm.store.active(sk), h.c.asm.saved.isIndexed(sk), "the index in memory is the saved one")
				}
				fw.fail = false
			}
			require.NoError(t, h.c.ConsumeLogs(t.Context(), b))
		}
		h.setNow(time.Hour)
		h.tick()
		require.NoError(t, h.c.Shutdown(t.Context()))
		return append(spans, h.spans()...)
	}
	want := run(-1)
	require.NotEmpty(t, want)
	wantKeys := spanKeys(want)
	for k, n := range wantKeys {
		require.Equal(t, 1, n, k)
	}
	for failAt := range batches {
		got := run(failAt)
		gotKeys := spanKeys(got)
		distinct := map[string]int{}
		for k := range gotKeys {
			distinct[k] = 1
		}
		assert.Equal(t, wantKeys, distinct, "failing batch %d", failAt)
	}
}
