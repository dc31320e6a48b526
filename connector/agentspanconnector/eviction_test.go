// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/state"
	"github.com/agentotel/agentotel/internal/agentevent"
)

// fullSpanKey is everything of a span: ids, names, times, attributes,
// events and links with theirs, status.
func fullSpanKey(sp ptrace.Span) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s parent=%s %s kind=%d [%d,%d] attrs=%v status=%d %q", sp.TraceID(), sp.SpanID(), sp.ParentSpanID(),
		sp.Name(), sp.Kind(), sp.StartTimestamp(), sp.EndTimestamp(), sp.Attributes().AsRaw(), sp.Status().Code(), sp.Status().Message())
	for i := 0; i < sp.Events().Len(); i++ {
		e := sp.Events().At(i)
		fmt.Fprintf(&b, " event=%s@%d %v", e.Name(), e.Timestamp(), e.Attributes().AsRaw())
	}
	for i := 0; i < sp.Links().Len(); i++ {
		l := sp.Links().At(i)
		fmt.Fprintf(&b, " link=%s/%s %v", l.TraceID(), l.SpanID(), l.Attributes().AsRaw())
	}
	return b.String()
}

func fullSpanKeys(spans []ptrace.Span) []string {
	out := make([]string, 0, len(spans))
	for _, sp := range spans {
		out = append(out, fullSpanKey(sp))
	}
	slices.Sort(out)
	return out
}

// withStorage gives a harness file-backed storage of its own and starts it.
func withStorage(t *testing.T, maxCached int) *harness {
	t.Helper()
	id := storagetest.NewStorageID("state")
	h := newHarness(t, func(c *Config) {
		c.Storage = &id
		c.MaxCachedSessions = maxCached
		c.MaxOpenToolDuration = 12 * time.Minute
	})
	require.NoError(t, h.c.Start(t.Context(), storagetest.NewStorageHost().WithFileBackedStorageExtension("state", t.TempDir())))
	return h
}

// watchSleep counts, after every batch, the sessions with open work that
// evict took out of memory.
type watchSleep struct{ max, units int }

func (w *watchSleep) look(h *harness) {
	w.max = max(w.max, len(h.c.asm.evictor.asleep))
	w.units = max(w.units, h.c.asm.evictor.sleepingUnits)
}

// TestEvictedOpenTurnsGiveTheSameSpans: the interleaved live sessions of
// TestIncrementalPassesMatchFullPasses (subagents read late or never, tool
// calls open past turn_idle_timeout, ticks) read with storage and at most
// one or two sessions in memory — sessions with open turns leave memory
// and come back on their next event or when their deadline comes — give
// exactly the spans (ids and content) of a run that keeps every session.
func TestEvictedOpenTurnsGiveTheSameSpans(t *testing.T) {
	for seed := range int64(10) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			run := func(maxCached int, w *watchSleep) []string {
				h := withStorage(t, maxCached)
				h.afterBatch = func() { w.look(h) }
				runInterleaved(h, seed)
				assert.Empty(t, h.c.asm.evictor.asleep, "every evicted session woke when due (turns, waiting events)")
				require.NoError(t, h.c.Shutdown(t.Context()))
				assert.Zero(t, h.c.asm.openUnits())
				return fullSpanKeys(h.spans())
			}
			var all, capped watchSleep
			want := run(1000, &all)
			require.NotEmpty(t, want)
			require.Zero(t, all.max, "nothing evicted with room for every session")
			for _, maxCached := range []int{1, 2} {
				got := run(maxCached, &capped)
				assert.Equal(t, want, got, "max_cached_sessions %d", maxCached)
			}
			assert.Positive(t, capped.units, "open turns left memory")
		})
	}
}

// TestEvictedGoldenSessionsGiveTheSameSpans reads every golden case (real
// sessions of every agent, with subagents, long tools, late usage) at
// once, each file on its own and the files interleaved three records at a
// time (a subagent's file may come before its parent's, a /review rollout
// before the anchor that claims it, and wait out of memory), with each
// file's end flagged as the receiver does, the wall clock moving and
// ticking, with storage
// and one or two sessions in memory: the spans are those of a run that
// keeps every session, ids and content — also when the connector is killed
// after random batches and restarted on its storage.
func TestEvictedGoldenSessionsGiveTheSameSpans(t *testing.T) {
	var cases [][]plog.Logs
	for _, dir := range goldenCases(t) {
		logs, err := golden.ReadLogs(filepath.Join(dir, "events.yaml"))
		require.NoError(t, err)
		// One queue per file, as the receiver reads each file on its own:
		// a subagent's file (a /review rollout) may come before its parent's.
		for _, f := range logsByFile(markFileEnds(logs)) {
			cases = append(cases, splitLogs(f, 3))
		}
	}
	// run reads the cases; with crash, the connector is killed (no
	// Shutdown) after random batches and restarted on the same storage,
	// the batch delivered again (the receiver had not committed it).
	run := func(maxCached int, w *watchSleep, crash bool) []string {
		id := storagetest.NewStorageID("state")
		stateDir := t.TempDir()
		var spans []ptrace.Span
		start := func(now time.Time) *harness {
			h := newHarness(t, func(c *Config) {
				c.Storage = &id
				c.MaxCachedSessions = maxCached
				c.MaxOpenToolDuration = 12 * time.Minute
			})
			h.now = now
			require.NoError(t, h.c.Start(t.Context(), storagetest.NewStorageHost().WithFileBackedStorageExtension("state", stateDir)))
			return h
		}
		h := start(t0.Add(365 * 24 * time.Hour))
		rng := rand.New(rand.NewPCG(11, 3))
		crashes := rand.New(rand.NewPCG(12, 4))
		queues := slices.Clone(cases)
		for {
			i, ok := pickQueue(rng, queues)
			if !ok {
				break
			}
			require.NoError(t, h.c.ConsumeLogs(t.Context(), queues[i][0]))
			w.look(h)
			if crash && crashes.IntN(8) == 0 {
				h.crash()
				spans = append(spans, h.spans()...)
				h = start(h.clock())
				require.NoError(t, h.c.ConsumeLogs(t.Context(), queues[i][0]))
			}
			queues[i] = queues[i][1:]
			h.mu.Lock()
			h.now = h.now.Add(time.Duration(rng.IntN(20)) * time.Second)
			h.mu.Unlock()
			if rng.IntN(4) == 0 {
				h.tick()
			}
		}
		h.mu.Lock()
		h.now = h.now.Add(24 * time.Hour)
		h.mu.Unlock()
		h.tick()
		require.NoError(t, h.c.Shutdown(t.Context()))
		assert.Zero(t, h.c.asm.openUnits())
		return fullSpanKeys(append(spans, h.spans()...))
	}
	var all, capped watchSleep
	want := run(100_000, &all, false)
	require.Zero(t, all.max)
	for _, maxCached := range []int{1, 2} {
		assert.Equal(t, want, run(maxCached, &capped, false), "max_cached_sessions %d", maxCached)
	}
	assert.Positive(t, capped.units, "open turns left memory")
	// Killed and restarted along the way: every span once, the same.
	got := run(1, &capped, true)
	for i := 1; i < len(got); i++ {
		assert.NotEqual(t, got[i-1], got[i], "emitted twice")
	}
	assert.Equal(t, want, got, "max_cached_sessions 1, killed after random batches")
}

// logsByFile splits logs by log file, in the order of each file's first
// record.
func logsByFile(ld plog.Logs) []plog.Logs {
	var out []plog.Logs
	byFile := map[string]plog.LogRecordSlice{}
	eachRecord(ld, func(rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord) {
		f := strAttr(lr, agentevent.AttrLogFile)
		dst, ok := byFile[f]
		if !ok {
			l := plog.NewLogs()
			nrl := l.ResourceLogs().AppendEmpty()
			rl.Resource().CopyTo(nrl.Resource())
			nsl := nrl.ScopeLogs().AppendEmpty()
			sl.Scope().CopyTo(nsl.Scope())
			dst = nsl.LogRecords()
			byFile[f] = dst
			out = append(out, l)
		}
		lr.CopyTo(dst.AppendEmpty())
	})
	return out
}

// markFileEnds sets agentevent.AttrReadCaughtUp on the last record of each
// log file, as the receiver does when it has read the file to its end.
func markFileEnds(ld plog.Logs) plog.Logs {
	last := map[string]plog.LogRecord{}
	eachRecord(ld, func(_ plog.ResourceLogs, _ plog.ScopeLogs, lr plog.LogRecord) {
		last[strAttr(lr, agentevent.AttrLogFile)] = lr
	})
	for _, lr := range last {
		lr.Attributes().PutBool(agentevent.AttrReadCaughtUp, true)
	}
	return ld
}

// TestSavedCallsAreCompact: a session record's tool calls are written
// compactly (the session's agent and id left out) and read back whole.
func TestSavedCallsAreCompact(t *testing.T) {
	sk := sessKey{Source: agentevent.Source("claude_code"), Session: "s1"}
	main := unitKey{Thread: threadKey{Source: sk.Source, Session: sk.Session}, Prompt: "p1"}
	sub := unitKey{Thread: threadKey{Source: sk.Source, Session: sk.Session, Agent: "ag1"}}
	calls := map[callKey]callRef{
		{Source: sk.Source, Session: sk.Session, CallID: "t1"}: {Unit: main, SubagentType: "Explore"},
		{Source: sk.Source, Session: sk.Session, CallID: "t2"}: {Unit: main},
		{Source: sk.Source, Session: sk.Session, CallID: "t3"}: {Unit: sub},
	}
	load := func(b []byte) map[callKey]callRef {
		var rec state.SessionRecord
		require.NoError(t, json.Unmarshal(b, &rec))
		a := newAssembler(time.Minute, spanmodel.MapOptions{})
		a.store.sessions[sk] = newSessIndex()
		require.NoError(t, a.store.restore(sk, &rec))
		return a.store.calls
	}
	rec := state.SessionRecord{Version: state.Version}
	for c, r := range calls {
		rec.Calls = append(rec.Calls, state.SavedCall{Call: c, Ref: r})
	}
	b, err := json.Marshal(rec)
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"s1"`, "the session id is the record's")
	assert.Equal(t, calls, load(b))
}

// TestKeptStringsDoNotPinRecords: the strings the connector keeps of an
// event do not share memory with the strings it was decoded with (which
// the receiver's parser may have cut out of a whole record).
func TestKeptStringsDoNotPinRecords(t *testing.T) {
	record := strings.Repeat("x", 1<<20) + "p1" + "s1" + "call1" + "review"
	at := func(i, n int) string { return record[len(record)-i : len(record)-i+n] }
	s := newSession("s1")
	ev := s.prompt("p1", 0)
	ev.EventID, ev.SessionID, ev.ToolCallID = at(15, 2), at(13, 2), at(11, 5)
	ev.Attributes = map[string]any{"agent.subagent.anchor": at(6, 6), "agent.n": int64(3)}
	ownStrings(&ev)
	assert.Equal(t, "p1", ev.EventID)
	assert.Equal(t, "s1", ev.SessionID)
	assert.Equal(t, "call1", ev.ToolCallID)
	assert.Equal(t, map[string]any{"agent.subagent.anchor": "review", "agent.n": int64(3)}, ev.Attributes)
	inRecord := func(v string) bool {
		p := uintptr(unsafe.Pointer(unsafe.StringData(v)))
		base := uintptr(unsafe.Pointer(unsafe.StringData(record)))
		return p >= base && p < base+uintptr(len(record))
	}
	for _, v := range []string{ev.EventID, ev.SessionID, ev.ToolCallID, ev.Attributes["agent.subagent.anchor"].(string), ev.LogFile, ev.Model} {
		assert.False(t, v != "" && inRecord(v), "%q still points into the record", v)
	}
}

// TestStartHoldsAtMostTheCap: a storage holding many sessions with open
// turns (open tool calls, answers not yet followed by anything, a file not
// read to its end) is read back at start with at most max_cached_sessions
// of them in memory — the rest wait as wake entries — and the spans of the
// restarted connector, as events come for some sessions and the clock
// brings the others' deadlines, are those of a run that never stopped.
func TestStartHoldsAtMostTheCap(t *testing.T) {
	const n = 24
	first := make([]agentevent.Event, 0, 3*n)
	var later []agentevent.Event
	for i := range n {
		s := newSession(fmt.Sprintf("s%02d", i))
		sec := float64(i)
		first = append(first, s.prompt("p1", sec), s.call("c1", "m1", "toolu_1", "Bash", sec+1))
		if i%2 == 0 {
			first = append(first, s.result("r1", "toolu_1", "Bash", sec+2), s.answer("a1", "m2", sec+3))
		}
		if i%3 == 0 {
			later = append(later, s.result("r1b", "toolu_1", "Bash", sec+40), s.answer("a1b", "m3", sec+41), s.prompt("p2", sec+50), s.answer("a2", "m4", sec+51, finish("end_turn")))
		}
	}
	stateDir := t.TempDir()
	id := storagetest.NewStorageID("state")
	start := func(maxCached int, now time.Duration) *harness {
		h := newHarness(t, func(c *Config) {
			c.Storage = &id
			c.MaxCachedSessions = maxCached
			c.MaxOpenToolDuration = 12 * time.Minute
		})
		h.setNow(now)
		require.NoError(t, h.c.Start(t.Context(), storagetest.NewStorageHost().WithFileBackedStorageExtension("state", stateDir)))
		return h
	}
	rest := func(h *harness) []string {
		h.setNow(2 * time.Minute)
		h.feedPartial(later...)
		h.setNow(3 * time.Minute)
		h.tick()
		h.setNow(30 * time.Minute)
		h.tick()
		require.NoError(t, h.c.Shutdown(t.Context()))
		assert.Zero(t, h.c.asm.openUnits())
		return fullSpanKeys(h.spans())
	}

	h := newHarness(t, func(c *Config) {
		c.Storage = &id
		c.MaxOpenToolDuration = 12 * time.Minute
	})
	require.NoError(t, h.c.Start(t.Context(), storagetest.NewStorageHost().WithFileBackedStorageExtension("state", t.TempDir())))
	h.setNow(time.Minute)
	h.feedPartial(first...)
	want := rest(h)
	require.NotEmpty(t, want)

	h = start(100_000, time.Minute)
	h.feedPartial(first...)
	require.Empty(t, h.spans(), "every turn still open")
	require.NoError(t, h.c.Shutdown(t.Context()))
	require.Len(t, h.c.asm.store.sessions, n)

	for _, maxCached := range []int{1, 2} {
		t.Run(fmt.Sprint(maxCached), func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.CopyFS(dir, os.DirFS(stateDir)))
			h := newHarness(t, func(c *Config) {
				c.Storage = &id
				c.MaxCachedSessions = maxCached
				c.MaxOpenToolDuration = 12 * time.Minute
			})
			h.setNow(time.Minute + time.Second)
			require.NoError(t, h.c.Start(t.Context(), storagetest.NewStorageHost().WithFileBackedStorageExtension("state", dir)))
			assert.LessOrEqual(t, len(h.c.asm.store.sessions), maxCached, "sessions in memory after start")
			assert.Len(t, h.c.asm.evictor.asleep, n-len(h.c.asm.store.sessions), "the others wait as wake entries")
			assert.Equal(t, n, h.c.asm.openUnits(), "every open turn still counts")
			assert.Equal(t, want, rest(h))
		})
	}
}
