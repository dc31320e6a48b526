// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"context"
	"fmt"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// TestEvictedSessionsComeBackFromStorage reads many sessions through a
// connector that may keep only a few in memory: memory holds at most
// max_cached_sessions, yet every turn goes out exactly once — a session
// read again after it was evicted is recognized from storage (nothing
// emitted twice), and its next turn still links to the previous one.
func TestEvictedSessionsComeBackFromStorage(t *testing.T) {
	id := storagetest.NewStorageID("state")
	h := newHarness(t, func(c *Config) { c.Storage = &id; c.MaxCachedSessions = 5 })
	require.NoError(t, h.c.Start(context.Background(), storagetest.NewStorageHost().WithFileBackedStorageExtension("state", t.TempDir())))
	h.history()
	const n = 40
	sessions := make([][]agentevent.Event, n)
	for i := range sessions {
		s := newSession(fmt.Sprintf("s%02d", i))
		sessions[i] = []agentevent.Event{s.prompt("p1", 0), s.answer("a1", "m1", 1), s.prompt("p2", 2), s.answer("a2", "m2", 3)}
		h.feed(sessions[i]...)
		assert.LessOrEqual(t, len(h.c.asm.sessions), 5, "at most max_cached_sessions in memory")
		assert.LessOrEqual(t, len(h.c.asm.threads), 5)
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
	assert.Equal(t, unitSpanID(unitKey{Thread: threadKey{Source: agentevent.SourceClaudeCode, Session: "s00"}, Prompt: "p2"}).String(), p3[0])
	checkTraceShape(t, mergedTraces(h))
	require.NoError(t, h.c.Shutdown(context.Background()))
}

// TestPassesLookOnlyAtWhatIsOpen: the work of a pass does not grow with
// the sessions read before — the indexes a pass walks hold only open
// work.
func TestPassesLookOnlyAtWhatIsOpen(t *testing.T) {
	h := newHarness(t)
	h.history()
	for i := 0; i < 50; i++ {
		s := newSession(fmt.Sprintf("s%02d", i))
		h.feed(s.ev(agentevent.TypeSessionSummary, "sum", 0), s.prompt("p1", 1), s.answer("a1", "m1", 2))
	}
	assert.Empty(t, h.c.asm.units)
	assert.Empty(t, h.c.asm.preambled, "no thread holds events waiting for a prompt")
	assert.Empty(t, h.c.asm.unresolved)
	assert.Empty(t, h.c.asm.dirty, "without storage too, changes are not kept")
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
