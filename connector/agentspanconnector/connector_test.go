// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/adapter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/metadata"
	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/state"
	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/storagecodec"
)

func TestShutdownBeforeStartAndTwice(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.c.Shutdown(t.Context()))
	require.NoError(t, h.c.Shutdown(t.Context()))

	h = newHarness(t)
	require.NoError(t, h.c.Start(t.Context(), componenttest.NewNopHost()))
	require.NoError(t, h.c.Shutdown(t.Context()))
	require.NoError(t, h.c.Shutdown(t.Context()))
}

func TestStartFailsOnMissingStorage(t *testing.T) {
	missing := component.MustNewID("nope")
	h := newHarness(t, func(c *Config) { c.Storage = &missing })
	err := h.c.Start(t.Context(), componenttest.NewNopHost())
	require.ErrorContains(t, err, "`storage`")
	require.NoError(t, h.c.Shutdown(t.Context()))

	notStorage := storagetest.NewNonStorageID("x")
	h = newHarness(t, func(c *Config) { c.Storage = &notStorage })
	err = h.c.Start(t.Context(), storagetest.NewStorageHost().WithNonStorageExtension("x"))
	require.ErrorContains(t, err, "non-storage extension")
	require.NoError(t, h.c.Shutdown(t.Context()))
}

func TestShutdownWithoutStorageFlushesOpenTurnsInProgress(t *testing.T) {
	h := newHarness(t)
	require.NoError(t, h.c.Start(t.Context(), componenttest.NewNopHost()))
	h.setNow(10 * time.Second)
	s := newSession("s1")
	h.feed(s.prompt("p1", 0), s.call("c1", "m1", "t1", "Bash", 1))
	assert.Empty(t, h.spans())
	require.NoError(t, h.c.Shutdown(t.Context()))
	spans := h.spans()
	require.Len(t, spans, 3)
	assert.Equal(t, spanmodel.StatusInProgress, attr(one(t, spans, "invoke_agent claude-code"), agentevent.AttrTurnStatus))
	assert.Equal(t, "in_progress", attr(one(t, spans, "execute_tool Bash"), "agent.tool.status"))
}

func TestNonEventRecordsAreSkipped(t *testing.T) {
	h := newHarness(t)
	h.history()
	logs := plog.NewLogs()
	logs.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("hello")
	require.NoError(t, h.c.ConsumeLogs(t.Context(), logs))
	assert.Empty(t, h.spans())
}

func TestResource(t *testing.T) {
	h := newHarness(t)
	h.history()
	s := newSession("s1")
	h.feed(s.prompt("p1", 0), s.answer("a1", "m1", 1))
	td := h.sink.AllTraces()[0]
	res := td.ResourceSpans().At(0).Resource().Attributes().AsRaw()
	assert.Equal(t, map[string]any{"service.name": "claude-code", "service.version": "2.1.152", "host.name": "host1"}, res)
	assert.Equal(t, "github.com/agentotel/agentotel/connector/agentspanconnector", td.ResourceSpans().At(0).ScopeSpans().At(0).Scope().Name())
}

// TestRestartWithStorage stops the connector with a turn half read, and
// starts a new one on the same file-backed storage: the turn completes into
// exactly one trace with one root holding all its spans, and nothing is
// emitted twice, even when the input is delivered again.
func TestRestartWithStorage(t *testing.T) {
	dir := t.TempDir()
	id := storagetest.NewStorageID("state")
	host := func() component.Host {
		return storagetest.NewStorageHost().WithFileBackedStorageExtension("state", dir)
	}
	withStorage := func(c *Config) { c.Storage = &id }
	s := newSession("s1")
	p1, a1, p2 := s.prompt("p1", 0), s.answer("a1", "m1", 1), s.prompt("p2", 10)
	c2 := s.call("c2", "m2", "t2", "Bash", 11)
	r2, a2 := s.result("r2", "t2", "Bash", 12), s.answer("a2", "m3", 13)
	p3, a3 := s.prompt("p3", 20), s.answer("a3", "m4", 21)

	run1 := newHarness(t, withStorage)
	require.NoError(t, run1.c.Start(t.Context(), host()))
	run1.setNow(15 * time.Second) // live
	run1.feed(p1, a1, p2, c2)
	require.Len(t, roots(run1.spans()), 1, "turn 1 closed by the next prompt")
	require.NoError(t, run1.c.Shutdown(t.Context()))
	assert.Len(t, run1.spans(), 2, "with storage, shutdown keeps the open turn instead of flushing it")

	run2 := newHarness(t, withStorage)
	require.NoError(t, run2.c.Start(t.Context(), host()))
	run2.setNow(time.Hour) // the rest of the session is old by now; within emittedRetention
	run2.feed(r2, a2, p3, a3)
	run2.feed(p1, a1, p2, c2) // delivered again: nothing new
	require.NoError(t, run2.c.Shutdown(t.Context()))

	all := append(run1.spans(), run2.spans()...)
	seen := map[string]int{}
	byTrace := map[ptrace.Span]bool{}
	traces := map[string][]ptrace.Span{}
	for _, sp := range all {
		seen[sp.TraceID().String()+"/"+sp.SpanID().String()]++
		byTrace[sp] = true
		traces[sp.TraceID().String()] = append(traces[sp.TraceID().String()], sp)
	}
	for k, n := range seen {
		assert.Equal(t, 1, n, "span %s emitted %d times", k, n)
	}
	require.Len(t, traces, 3, "one trace per turn")
	turn2 := traces[spanmodel.TurnTraceID(threadKey{Source: agentevent.Source("claude_code"), Session: "s1"}, "p2").String()]
	var names []string
	for _, sp := range turn2 {
		names = append(names, sp.Name())
	}
	assert.ElementsMatch(t, []string{"invoke_agent claude-code", "chat claude-opus-4-7", "chat claude-opus-4-7", "execute_tool Bash"}, names)
	root := one(t, turn2, "invoke_agent claude-code")
	assert.Equal(t, spanmodel.StatusCompleted, attr(root, agentevent.AttrTurnStatus))
	assert.Equal(t, ts(13), root.EndTimestamp())
	tool := one(t, turn2, "execute_tool Bash")
	assert.Equal(t, "success", attr(tool, "agent.tool.status"))
	assert.Equal(t, ts(12), tool.EndTimestamp())
	require.Equal(t, 1, root.Links().Len(), "the link to turn 1 survived the restart")
	assert.Equal(t, spanmodel.TurnTraceID(threadKey{Source: agentevent.Source("claude_code"), Session: "s1"}, "p1"), root.Links().At(0).TraceID())
}

// TestStateRoundTrip saves every change of a pass and reads the sessions
// back into a fresh assembler: open units keep their events losslessly, and
// threads, links and calls come back as they were.
func TestStateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	id := storagetest.NewStorageID("state")
	host := storagetest.NewStorageHost().WithFileBackedStorageExtension("state", dir)
	ctx := t.Context()
	client, err := adapter.GetStorageClient(ctx, host, &id, component.NewID(metadata.Type))
	require.NoError(t, err)
	defer client.Close(ctx)
	noBad := func(key string, err error) { t.Errorf("unreadable %s: %v", key, err) }

	a := newAssembler(time.Minute, spanmodel.MapOptions{})
	require.NoError(t, a.saved.loadAll(ctx, client, noBad, math.MaxInt, time.Time{}))
	s := newSession("s1")
	x := s.subagent("ag", "Explore")
	now := t0.Add(time.Second)
	for _, ev := range []agentevent.Event{
		s.ev(agentevent.TypeFileSnapshot, "pre", 0),
		s.prompt("p1", 0), s.answer("a1", "m1", 0.5), s.prompt("p2", 1),
		s.call("c", "m2", "toolu_1", "Agent", 2),
		x.ev(agentevent.TypeLog, "xl", 2.5, func(e *agentevent.Event) {
			e.ParentToolCallID = "toolu_1"
			e.Attributes = map[string]any{"agent.n": int64(3)}
		}),
	} {
		a.add(ev, "h", now)
	}
	a.add(newSession("s2").ev(agentevent.TypeMeta, "pre2", 0), "h2", now)
	out := a.close(now, false)
	require.Positive(t, out.spans)
	ops, err := a.saved.flush()
	require.NoError(t, err)
	require.NoError(t, client.Batch(ctx, ops...))
	a.saved.committed()

	r := newAssembler(time.Minute, spanmodel.MapOptions{})
	require.NoError(t, r.saved.loadAll(ctx, client, noBad, math.MaxInt, time.Time{}))
	require.Len(t, r.store.units, len(a.store.units), "the active sessions are read back at start")
	for k, u := range a.store.units {
		require.Contains(t, r.store.units, k)
		assert.Equal(t, u.events, r.store.units[k].events, "events survive losslessly")
	}
	assert.Equal(t, a.store.links, r.store.links)
	assert.Equal(t, a.store.calls, r.store.calls)
	assert.NotEmpty(t, r.store.threads[threadKey{Source: agentevent.Source("claude_code"), Session: "s2"}].preamble)
	for _, sk := range []sessKey{{Source: agentevent.Source("claude_code"), Session: "s1"}, {Source: agentevent.Source("claude_code"), Session: "s2"}} {
		want, err := a.store.record(sk)
		require.NoError(t, err)
		got, err := r.store.record(sk)
		require.NoError(t, err)
		assert.Equal(t, want, got, "session %s", sk.Session)
	}
	main := r.store.threads[threadKey{Source: agentevent.Source("claude_code"), Session: "s1"}]
	m, ok := main.closedFor("p1")
	require.True(t, ok, "the emitted turn left its marker")
	assert.Equal(t, spanmodel.TurnTraceID(threadKey{Source: agentevent.Source("claude_code"), Session: "s1"}, "p1"), m.Trace)
	assert.Equal(t, int64(3), main.closedSeq)
}

func TestUnreadableStateIsIgnored(t *testing.T) {
	dir := t.TempDir()
	id := storagetest.NewStorageID("state")
	host := storagetest.NewStorageHost().WithFileBackedStorageExtension("state", dir)
	h := newHarness(t, func(c *Config) { c.Storage = &id })
	client, err := adapter.GetStorageClient(t.Context(), host, &id, h.c.set.ID)
	require.NoError(t, err)
	sk := sessKey{Source: agentevent.Source("claude_code"), Session: "s1"}
	index := fmt.Sprintf(`{"version":%d,"sessions":[{"source":"claude_code","session":"s1"}]}`, state.Version)
	require.NoError(t, client.Set(t.Context(), state.IndexShardKey(state.ShardOf(sk)), storagecodec.Encode([]byte(index))))
	// A compressed record whose CRC fails is as unreadable as any other
	// damaged record: a real record with one bit of a literal flipped
	// still decompresses, to valid JSON (zq7x → zq7y), which only the CRC
	// tells. The anchors are a value of this storage format that is not
	// their JSON.
	rec := storagecodec.Encode([]byte(fmt.Sprintf(`{"version":%d,"threads":[{"key":{"source":"claude_code","session":"s1"},"last_prompt":"zq7x","last_arrival":0}]}`, state.Version)))
	require.Equal(t, byte(1), rec[1], "compressed")
	i := bytes.Index(rec, []byte("zq7x"))
	require.Positive(t, i, "the prompt id is a literal of the block")
	rec[i+3] ^= 0x01
	require.NoError(t, client.Set(t.Context(), state.SessionKey(sk), rec))
	require.NoError(t, client.Set(t.Context(), state.KeyAnchors, storagecodec.Encode([]byte("\x7fgarbage"))))
	require.NoError(t, client.Close(t.Context()))
	core, logs := observer.New(zapcore.WarnLevel)
	h.c.set.Logger = zap.New(core)
	require.NoError(t, h.c.Start(t.Context(), host))
	var unreadable []string
	for _, e := range logs.FilterMessageSnippet("cannot read").All() {
		unreadable = append(unreadable, e.ContextMap()["key"].(string))
	}
	assert.ElementsMatch(t, []string{state.SessionKey(sk), state.KeyAnchors}, unreadable)
	s := newSession("s1")
	h.history()
	h.feed(s.prompt("p1", 0), s.answer("a1", "m1", 1))
	assert.Len(t, h.spans(), 2, "the session starts afresh")
	require.NoError(t, h.c.Shutdown(t.Context()))
}

// TestStateOfAnotherFormatReadsAsMissing: a value that is not of the
// storage format (internal/storagecodec) reads as missing, with one
// warning naming the storage, and the connector starts that state afresh.
func TestStateOfAnotherFormatReadsAsMissing(t *testing.T) {
	id := storagetest.NewStorageID("state")
	host := storagetest.NewStorageHost().WithFileBackedStorageExtension("state", t.TempDir())
	h := newHarness(t, func(c *Config) { c.Storage = &id })
	client, err := adapter.GetStorageClient(t.Context(), host, &id, h.c.set.ID)
	require.NoError(t, err)
	sk := sessKey{Source: agentevent.Source("claude_code"), Session: "s1"}
	require.NoError(t, client.Set(t.Context(), state.IndexShardKey(state.ShardOf(sk)), []byte(`{"version":1,"sessions":[{"source":"claude_code","session":"s1"}]}`)))
	require.NoError(t, client.Set(t.Context(), state.KeyAnchors, []byte("\x00\x7fgarbage")))
	require.NoError(t, client.Close(t.Context()))
	core, logs := observer.New(zapcore.WarnLevel)
	h.c.set.Logger = zap.New(core)
	require.NoError(t, h.c.Start(t.Context(), host))
	assert.Empty(t, logs.FilterMessageSnippet("cannot read").All(), "not unreadable: missing")
	warned := logs.FilterMessageSnippet("another storage format").All()
	require.Len(t, warned, 1, "one warning")
	assert.Equal(t, id.String(), warned[0].ContextMap()["storage"])
	s := newSession("s1")
	h.history()
	h.feed(s.prompt("p1", 0), s.answer("a1", "m1", 1))
	assert.Len(t, h.spans(), 2, "the session starts afresh")
	require.NoError(t, h.c.Shutdown(t.Context()))
}

// TestCaughtUpFlagsLeaveWithTheirUnits: a session's record keeps the
// reader's caught-up flag of a file only while an open unit's latest event
// came from it, in memory as in storage, so the paths of a session's many
// files (Claude Code writes one per subagent) do not pile up in the record
// that each of its batches rewrites.
func TestCaughtUpFlagsLeaveWithTheirUnits(t *testing.T) {
	id := storagetest.NewStorageID("state")
	h := newHarness(t, func(c *Config) { c.Storage = &id })
	h.setNow(4 * time.Second) // live: the turns are fresh
	require.NoError(t, h.c.Start(t.Context(), storagetest.NewStorageHost().WithFileBackedStorageExtension("state", t.TempDir())))
	sk := sessKey{Source: agentevent.Source("claude_code"), Session: "s1"}
	in := func(file string) mod { return func(e *agentevent.Event) { e.LogFile = file } }
	stored := func() map[string]bool {
		t.Helper()
		b, err := h.c.client.Get(t.Context(), state.SessionKey(sk))
		require.NoError(t, err)
		var rec state.SessionRecord
		require.NoError(t, json.Unmarshal(b, &rec))
		return rec.CaughtUp
	}

	s := newSession("s1")
	// Each turn ends on a tool call without its result: open until the
	// next prompt or max_open_tool_duration.
	h.feed(s.prompt("p1", 0, in("/p/b.jsonl")), s.call("c1", "m1", "toolu_1", "Bash", 1, in("/p/b.jsonl")))
	assert.Equal(t, map[string]bool{"/p/b.jsonl": true}, stored(), "turn 1 is open, its file read to the end")

	h.feed(s.prompt("p2", 2, in("/p/a.jsonl")), s.call("c2", "m2", "toolu_2", "Bash", 3, in("/p/a.jsonl")))
	require.Len(t, roots(h.spans()), 1, "turn 1 closed at the next prompt")
	assert.Equal(t, map[string]bool{"/p/a.jsonl": true}, h.c.asm.store.sessions[sk].caughtUp)
	assert.Equal(t, map[string]bool{"/p/a.jsonl": true}, stored(), "b's flag left with turn 1")

	h.setNow(5 * time.Hour)
	h.tick()
	require.Len(t, roots(h.spans()), 2, "turn 2 closed at max_open_tool_duration")
	assert.Nil(t, h.c.asm.store.sessions[sk].caughtUp)
	assert.Nil(t, stored(), "nothing open, no flag kept")
	require.NoError(t, h.c.Shutdown(t.Context()))

	// Without storage, the same in memory.
	h = newHarness(t)
	h.setNow(4 * time.Second)
	require.NoError(t, h.c.Start(t.Context(), componenttest.NewNopHost()))
	s = newSession("s1")
	h.feed(s.prompt("p1", 0, in("/p/b.jsonl")), s.call("c1", "m1", "toolu_1", "Bash", 1, in("/p/b.jsonl")))
	h.feed(s.prompt("p2", 2, in("/p/a.jsonl")), s.call("c2", "m2", "toolu_2", "Bash", 3, in("/p/a.jsonl")))
	assert.Equal(t, map[string]bool{"/p/a.jsonl": true}, h.c.asm.store.sessions[sk].caughtUp)
	require.NoError(t, h.c.Shutdown(t.Context()))
}
