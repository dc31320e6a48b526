// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"
	"weak"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// TestEvictedSessionsComeBackFromStorage reads many sessions through a
// connector that may keep only a few in memory: memory holds at most
// max_cached_sessions, yet every turn goes out exactly once — a session
// read again after it was evicted is recognized from storage (nothing
// emitted twice), and its next turn still links to the previous one.
func TestEvictedSessionsComeBackFromStorage(t *testing.T) {
	id := storagetest.NewStorageID("state")
	h := newHarness(t, func(c *Config) { c.Storage = &id; c.MaxCachedSessions = 5 })
	require.NoError(t, h.c.Start(t.Context(), storagetest.NewStorageHost().WithFileBackedStorageExtension("state", t.TempDir())))
	h.history()
	const n = 40
	sessions := make([][]agentevent.Event, n)
	for i := range sessions {
		s := newSession(fmt.Sprintf("s%02d", i))
		sessions[i] = []agentevent.Event{s.prompt("p1", 0), s.answer("a1", "m1", 1), s.prompt("p2", 2), s.answer("a2", "m2", 3)}
		h.feed(sessions[i]...)
		assert.LessOrEqual(t, len(h.c.asm.store.sessions), 5, "at most max_cached_sessions in memory")
		assert.LessOrEqual(t, len(h.c.asm.store.threads), 5)
	}
	require.Len(t, roots(h.spans()), 2*n)

	// Every session again (a re-read): nothing new, whether in memory or not.
	for i := range sessions {
		h.feed(sessions[i]...)
	}
	assert.Len(t, roots(h.spans()), 2*n, "evicted sessions' markers came back from storage")

	// A new turn of the first (long evicted) session links to its last turn.
	s := newSession("s00")
	s.seq = 4
	h.feed(s.prompt("p3", 10), s.answer("a3", "m3", 11))
	var p3 []string
	for _, r := range roots(h.spans()) {
		if attr(r, agentevent.AttrEventID) == "p3" {
			require.Equal(t, 1, r.Links().Len())
			p3 = append(p3, r.Links().At(0).SpanID().String())
		}
	}
	require.Len(t, p3, 1)
	assert.Equal(t, spanmodel.UnitSpanID(unitKey{Thread: threadKey{Source: agentevent.Source("claude_code"), Session: "s00"}, Prompt: "p2"}).String(), p3[0])
	checkTraceShape(t, mergedTraces(h))
	require.NoError(t, h.c.Shutdown(t.Context()))
}

// TestPassesLookOnlyAtWhatIsOpen: the work of a pass does not grow with
// the sessions read before — the indexes a pass walks hold only open
// work.
func TestPassesLookOnlyAtWhatIsOpen(t *testing.T) {
	h := newHarness(t)
	h.history()
	for i := range 50 {
		s := newSession(fmt.Sprintf("s%02d", i))
		h.feed(s.ev(agentevent.TypeSessionSummary, "sum", 0), s.prompt("p1", 1), s.answer("a1", "m1", 2))
	}
	assert.Empty(t, h.c.asm.store.units)
	assert.Empty(t, h.c.asm.preambles.preambled, "no thread holds events waiting for a prompt")
	assert.Empty(t, h.c.asm.store.unresolved)
	assert.Empty(t, h.c.asm.store.dirty, "without storage too, changes are not kept")
}

func mergedTraces(h *harness) ptrace.Traces {
	merged := ptrace.NewTraces()
	for _, td := range h.sink.AllTraces() {
		c := ptrace.NewTraces()
		td.CopyTo(c)
		c.ResourceSpans().MoveAndAppendTo(merged.ResourceSpans())
	}
	return merged
}

// copyOf makes copy r of a session's events: another session (and file and
// project) with the same records, as the bench's history copies the
// fixtures.
func copyOf(evs []agentevent.Event, r int) []agentevent.Event {
	sfx := fmt.Sprintf("-copy%03d", r)
	out := make([]agentevent.Event, len(evs))
	copy(out, evs)
	for i := range out {
		ev := &out[i] // a copy of evs[i]: evs stays as it is
		ev.SessionID += sfx
		ev.LogFile += sfx
		if ev.ProjectRoot != "" {
			ev.ProjectRoot += sfx
		}
		if root, ok := ev.Attributes[agentevent.AttrRootSessionID].(string); ok && root != "" {
			ev.Attributes = maps.Clone(ev.Attributes)
			ev.Attributes[agentevent.AttrRootSessionID] = root + sfx
		}
	}
	return out
}

// heldInMemory is what the assembler holds of open work: sessions, open
// units and their events (and the events waiting for a prompt).
type heldInMemory struct{ sessions, units, events, preambleQueue int }

func held(a *assembler) heldInMemory {
	n := heldInMemory{sessions: len(a.store.sessions), units: len(a.store.units), preambleQueue: len(a.preambles.preambleDue)}
	for _, u := range a.store.units {
		n.events += len(u.events)
	}
	for _, t := range a.store.threads {
		n.events += len(t.preamble)
	}
	return n
}

// TestOpenTurnsOfAHistoryLeaveMemory reads copies of every JSONL session of
// the fixtures and of the newest real files (Claude Code, Codex, Pi) as a
// backfill does: each file in reads of 100 records, the last flagged caught
// up, the wall clock still
// (history: the turns that wait for a subagent file that never comes, and
// the subagents no call claims, stay open for turn_idle_timeout of wall
// clock, as in a real backfill). Among them are Codex /review rollouts: the
// fixtures' own, whose parent session is not there (it waits for an anchor
// that never comes), and the golden case's, read before the session whose
// anchor claims it. With storage and max_cached_sessions 8, memory holds at
// most 8 sessions after every batch, whatever the number of copies — open
// turns and subagent runs of the others wait in storage — and the spans are
// those of a run that keeps every session in memory.
func TestOpenTurnsOfAHistoryLeaveMemory(t *testing.T) {
	roots := vendortest.FixtureRoots(t)
	vendortest.SkipIfAbsent(t, roots[0])
	var files [][]agentevent.Event
	for _, root := range roots {
		for _, agent := range []string{"claude_code", "codex", "pi"} {
			dir := filepath.Join(root, agent)
			if _, err := os.Stat(dir); os.IsNotExist(err) {
				continue // a root of the newest files need not have every agent
			}
			require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
					files = append(files, parseFixture(t, agent, p))
				}
				return err
			}))
		}
	}
	require.NotEmpty(t, files, "the fixture corpus %v holds no Claude Code, Codex or Pi session file", roots)
	// The golden /review case by file: the parent session (its anchor) and
	// the review rollout.
	logs, err := golden.ReadLogs(filepath.Join("..", "..", "testdata", "codex", "review_subagent", "events.yaml"))
	require.NoError(t, err)
	reviewEvs, _ := agentevent.DecodeLogs(logs)
	var parent, review []agentevent.Event
	for _, ev := range reviewEvs {
		if ev.Attributes[agentevent.AttrSubagentLink] == agentevent.SubagentLinkAnchor {
			review = append(review, ev)
		} else {
			parent = append(parent, ev)
		}
	}
	require.NotEmpty(t, review)
	require.NotEmpty(t, parent)

	type result struct {
		peak, atEnd heldInMemory
		open        int // open units at the end of the backfill, in memory or not
		waiting     int // sessions out of memory waiting for an anchor, at the most
		spans       []string
	}
	// run reads the history; with restart, the connector is killed before
	// the parents of the golden rollouts come and started again on its
	// storage (the rollouts still waiting leave memory again at start).
	run := func(maxCached, copies int, restart bool) result {
		var res result
		id := storagetest.NewStorageID("state")
		stateDir := t.TempDir()
		start := func() *harness {
			h := newHarness(t, func(c *Config) {
				c.Storage = &id
				c.MaxCachedSessions = maxCached
				c.MaxOpenToolDuration = 12 * time.Minute
			})
			h.history()
			require.NoError(t, h.c.Start(t.Context(), storagetest.NewStorageHost().WithFileBackedStorageExtension("state", stateDir)))
			return h
		}
		h := start()
		var spans []ptrace.Span
		read := func(evs []agentevent.Event) {
			for _, b := range splitLogs(markFileEnds(agentevent.EncodeLogs(evs, "host1")), 100) {
				require.NoError(t, h.c.ConsumeLogs(t.Context(), b))
				n := held(h.c.asm)
				res.peak = heldInMemory{max(res.peak.sessions, n.sessions), max(res.peak.units, n.units), max(res.peak.events, n.events), max(res.peak.preambleQueue, n.preambleQueue)}
				waiting := 0
				for _, m := range h.c.asm.evictor.waitingAsleep {
					waiting += len(m)
				}
				res.waiting = max(res.waiting, waiting)
			}
		}
		for r := range copies {
			read(copyOf(review, r))
			for _, f := range files {
				read(copyOf(f, r))
			}
		}
		if restart {
			h.crash()
			spans = h.spans()
			h = start()
			assert.LessOrEqual(t, len(h.c.asm.store.sessions), maxCached, "sessions in memory after start")
		}
		for r := range copies {
			read(copyOf(parent, r))
		}
		res.atEnd, res.open = held(h.c.asm), h.c.asm.openUnits()
		h.setNow(365*24*time.Hour + time.Hour)
		h.tick()
		require.NoError(t, h.c.Shutdown(t.Context()))
		spans = append(spans, h.spans()...)
		nested := 0
		for _, sp := range named(spans, "invoke_agent review") {
			if id, _ := attr(sp, "gen_ai.conversation.id").(string); strings.HasPrefix(id, review[0].SessionID) {
				assert.False(t, sp.ParentSpanID().IsEmpty(), "the golden /review rollout nests under its anchor's turn")
				nested++
			}
		}
		assert.Equal(t, copies, nested)
		res.spans = fullSpanKeys(spans)
		return res
	}

	const copies = 12
	all := run(100_000, copies, false)
	capped := run(8, copies, false)
	more := run(8, 3*copies, false)
	restarted := run(8, copies, true)
	t.Logf("in memory at the most (sessions/units/events): %+v with room for all, %+v with max_cached_sessions 8, %+v with 3x the history", all.peak, capped.peak, more.peak)
	t.Logf("at the end of the backfill: %d open units, %+v in memory with max_cached_sessions 8 (%d open, %+v with 3x the history)", capped.open, capped.atEnd, more.open, more.atEnd)
	assert.Equal(t, all.spans, capped.spans, "the same spans, ids and content")
	assert.Equal(t, all.spans, restarted.spans, "killed and started again: the same spans, each once")
	assert.LessOrEqual(t, restarted.peak.sessions, 8)
	assert.LessOrEqual(t, capped.peak.sessions, 8, "sessions in memory after any batch")
	assert.LessOrEqual(t, more.peak.sessions, 8)
	assert.Equal(t, capped.peak, more.peak, "what memory holds does not grow with the history")
	assert.Greater(t, more.open, capped.open, "more open turns, all out of memory but a few")
	assert.Positive(t, capped.waiting, "review rollouts waited for their anchor out of memory")
}

// TestEvictedSessionsKeepNoEventMemory: once a session with open work has
// left memory, nothing the connector keeps (its wake entry, the index of
// active sessions, the queue of events waiting for a prompt, what an
// anchor's subagent waits for) holds any memory of its events — a key
// taken from an event would keep all of that event's strings (ownStrings).
// Sessions of every kind of open work: events waiting for a prompt, a tool
// call running, a turn waiting for the file of the subagent it spawned, a
// /review rollout waiting for its anchor.
func TestEvictedSessionsKeepNoEventMemory(t *testing.T) {
	h := withStorage(t, 4)
	h.history()
	const n = 40
	var kept []weak.Pointer[byte]
	var first []sessKey
	for i := range n {
		s := newSession(fmt.Sprintf("s%02d", i))
		switch i % 4 {
		case 0:
			h.feedPartial(s.ev(agentevent.TypeSessionSummary, "sum", 0))
		case 1:
			h.feedPartial(s.prompt("p1", 0), s.call("c1", "m1", "toolu_1", "Bash", 1))
		case 2:
			h.feed(s.prompt("p1", 0), s.call("c1", "m1", "toolu_agent", "Agent", 1),
				s.result("r1", "toolu_agent", "Agent", 30, func(e *agentevent.Event) { e.SpawnedAgentID = "ag1" }),
				s.answer("a1", "m2", 31))
		case 3:
			x := s.subagent("rev", "review")
			review := anchored("/proj", map[string]any{agentevent.AttrSubagentLink: agentevent.SubagentLinkAnchor, agentevent.AttrSubagentAnchor: "review"})
			h.feed(x.prompt("xp", 6, review), x.answer("xa", "xr", 30, review))
		}
		h.sink.Reset()
		if i >= n/2 {
			continue
		}
		sk := sessKey{Source: agentevent.Source("claude_code"), Session: s.id}
		first = append(first, sk)
		idx := h.c.asm.store.sessions[sk]
		require.NotNil(t, idx, "in memory after its batch")
		var evs []agentevent.Event
		for k := range idx.units {
			evs = append(evs, h.c.asm.store.units[k].events...)
		}
		for th := range idx.threads {
			evs = append(evs, h.c.asm.store.threads[th].preamble...)
		}
		require.NotEmpty(t, evs)
		for i := range evs {
			kept = append(kept, weak.Make(stringsOf(&evs[i])))
		}
	}
	for _, sk := range first {
		require.NotContains(t, h.c.asm.store.sessions, sk)
		require.Contains(t, h.c.asm.evictor.asleep, sk, "out of memory, with its open work")
	}
	runtime.GC()
	for i, p := range kept {
		assert.Nil(t, p.Value(), "event %d of a session out of memory is still reachable", i)
	}
	require.NoError(t, h.c.Shutdown(t.Context()))
}

// stringsOf is the start of the memory the connector gave an event's strings
// (ownStrings: one allocation, in field order, so the lowest address).
func stringsOf(ev *agentevent.Event) *byte {
	var low *byte
	for _, s := range []string{ev.SchemaVersion, string(ev.Source), ev.ProjectHash, ev.ProjectRoot, ev.SessionID, ev.EventID} {
		if p := unsafe.StringData(s); s != "" && (low == nil || uintptr(unsafe.Pointer(p)) < uintptr(unsafe.Pointer(low))) {
			low = p
		}
	}
	return low
}

// TestEmittedTurnsLeaveNoEventMemory: once a turn went out, what its
// session keeps of it in memory — its marker, its prompt among the
// thread's prompts, its tool calls in the call index, its subagent's link,
// the caught-up flag of its file — holds none of its events' memory, their
// content included (include_content): each kept id has memory of its own.
func TestEmittedTurnsLeaveNoEventMemory(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.IncludeContent = true })
	s := newSession("s1")
	x := s.subagent("ag1", "Explore")
	h.feed(s.prompt("p1", 0), s.call("c1", "m1", "toolu_agent", "Agent", 1),
		x.prompt("xp", 2), x.call("xc", "xm1", "toolu_x1", "Grep", 3), x.result("xr", "toolu_x1", "Grep", 4), x.answer("xa", "xm2", 5),
		s.result("r1", "toolu_agent", "Agent", 6, func(e *agentevent.Event) { e.SpawnedAgentID = "ag1" }), s.answer("a1", "m2", 7))
	require.Empty(t, h.spans(), "live: open until the next prompt")
	var kept []weak.Pointer[byte]
	for _, u := range h.c.asm.store.units {
		for i := range u.events {
			kept = append(kept, weak.Make(stringsOf(&u.events[i])))
		}
	}
	require.Len(t, kept, 8)
	h.feed(s.prompt("p2", 10))
	require.Len(t, named(h.spans(), "invoke_agent Explore"), 1, "the turn went out with its subagent")
	h.sink.Reset()

	main := threadKey{Source: agentevent.Source("claude_code"), Session: "s1"}
	_, marked := h.c.asm.store.threads[main].closedFor("p1")
	require.True(t, marked)
	require.Contains(t, h.c.asm.store.calls, callKey{Source: agentevent.Source("claude_code"), Session: "s1", CallID: "toolu_agent"})
	require.Contains(t, h.c.asm.store.links, threadKey{Source: agentevent.Source("claude_code"), Session: "s1", Agent: "ag1"})
	runtime.GC()
	for i, p := range kept {
		assert.Nil(t, p.Value(), "event %d of the emitted turn is still reachable", i)
	}
	require.NoError(t, h.c.Shutdown(t.Context()))
}
