// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/internal/agentevent"
)

func native(e *agentevent.Event) {
	agentevent.SetAttr(e, agentevent.AttrOrigin, agentevent.OriginNative)
}

func noParent(e *agentevent.Event) { e.ParentEventID = "" }

func parent(p string) mod { return func(e *agentevent.Event) { e.ParentEventID = p } }

// chatInputs maps each chat span's response id to its input tokens.
func chatInputs(spans []ptrace.Span) map[string]int64 {
	out := map[string]int64{}
	for _, sp := range spans {
		if v, ok := sp.Attributes().Get(agentevent.AttrResponseID); ok {
			in, _ := sp.Attributes().Get(agentevent.AttrTokensInput)
			out[v.Str()] = in.Int()
		}
	}
	return out
}

// TestNativeRecordWithoutTurnJoinsTheOpenTurn: a native record that names no
// turn (Claude Code's session-title call has no prompt.id) while a turn of
// its thread is open is part of that turn, tokens included; the same record
// read from a file would wait for the next prompt.
func TestNativeRecordWithoutTurnJoinsTheOpenTurn(t *testing.T) {
	h := newHarness(t)
	s := newSession("s1")
	h.feedPartial(
		s.prompt("p1", 0, native),
		s.answer("a1", "r1", 2, native),
		s.answer("title", "r-title", 3, native, noParent, tokens(40, 4)),
		s.answer("a2", "r2", 5, native),
	)
	h.setNow(time.Hour)
	h.tick()
	spans := h.spans()
	require.Len(t, roots(spans), 1)
	assert.Equal(t, map[string]int64{"r1": 100, "r-title": 40, "r2": 100}, chatInputs(spans), "the title call is a chat span of the open turn")
}

// TestNativeTurnWithoutPromptClaimsThePreamble: records that came before any
// turn of their thread join the first turn, also when that turn is one of an
// agent's own telemetry whose prompt record never came; that turn links to
// the previous one like any other.
func TestNativeTurnWithoutPromptClaimsThePreamble(t *testing.T) {
	h := newHarness(t)
	s := newSession("s1")
	h.feedPartial(
		s.answer("title", "r-title", 1, native, noParent, tokens(40, 4)),
		s.answer("a1", "r1", 2, native, parent("p1")),
		s.prompt("p2", 10, native),
		s.answer("a2", "r2", 11, native),
	)
	h.setNow(time.Hour)
	h.tick()
	spans := h.spans()
	rs := roots(spans)
	require.Len(t, rs, 2, "the promptless turn p1 and the turn p2")
	assert.Equal(t, map[string]int64{"r-title": 40, "r1": 100, "r2": 100}, chatInputs(spans), "nothing waits for a prompt: every call is on a turn")
	byPrompt := map[string]ptrace.Span{}
	for _, r := range rs {
		id, _ := r.Attributes().Get(agentevent.AttrEventID)
		byPrompt[id.Str()] = r
	}
	missing, _ := byPrompt["p1"].Attributes().Get("agent.turn.prompt_missing")
	assert.True(t, missing.Bool(), "p1's prompt record never came")
	require.Equal(t, 1, byPrompt["p2"].Links().Len(), "p2 links to the turn before it")
	assert.Equal(t, byPrompt["p1"].SpanID(), byPrompt["p2"].Links().At(0).SpanID())
}

// codexPreamble is a conversation's records as a collector started after
// its prompt gets them: native, naming no turn (Codex's log records carry
// no turn id, and its prompt record never came).
func codexPreamble(s *session) []agentevent.Event {
	return []agentevent.Event{
		s.ev(agentevent.TypeMeta, "start", 0, native, noParent),
		s.answer("a1", "r1", 2, native, noParent, tokens(20440, 5)),
		s.call("c1", "r1", "call1", "exec_command", 3, native, noParent),
		s.result("t1", "call1", "exec_command", 4, native, noParent),
		s.answer("a2", "r2", 6, native, noParent, tokens(22400, 2)),
	}
}

// promptMissingRoots are the invoke_agent spans marked prompt_missing.
func promptMissingRoots(spans []ptrace.Span) []ptrace.Span {
	var out []ptrace.Span
	for _, r := range roots(spans) {
		if v, ok := r.Attributes().Get(agentevent.AttrTurnPromptMissing); ok && v.Bool() {
			out = append(out, r)
		}
	}
	return out
}

// TestNativePreambleWithoutPromptIsATurn: an agent's own records that wait
// for a prompt and see none within turn_idle_timeout are a turn of their
// own, marked prompt_missing and keyed by their earliest record, with
// every model call's tokens on its chat span; records of it sent again
// after it went out add nothing.
func TestNativePreambleWithoutPromptIsATurn(t *testing.T) {
	h := newHarness(t)
	s := newSession("conv1")
	recs := codexPreamble(s)
	h.feedPartial(recs...)
	h.tick()
	assert.Empty(t, h.spans(), "the records wait turn_idle_timeout for their prompt")

	h.setNow(time.Hour)
	h.tick()
	spans := h.spans()
	rs := promptMissingRoots(spans)
	require.Len(t, rs, 1, "one turn, marked prompt_missing")
	require.Len(t, roots(spans), 1)
	id, _ := rs[0].Attributes().Get(agentevent.AttrEventID)
	assert.Equal(t, "start", id.Str(), "the turn is keyed by its earliest record")
	assert.Equal(t, map[string]int64{"r1": 20440, "r2": 22400}, chatInputs(spans), "every model call on a chat span")
	assert.Equal(t, rs[0].TraceID(), one(t, spans, "execute_tool exec_command").TraceID(), "the tool call is in the turn")

	h.feedPartial(recs...)
	h.setNow(2 * time.Hour)
	h.tick()
	assert.Len(t, h.spans(), len(spans), "the same records again: no span more")
}

// TestNativePreambleOfBookkeepingIsDropped: an agent's own records that
// hold no model or tool call and see no prompt are no turn.
func TestNativePreambleOfBookkeepingIsDropped(t *testing.T) {
	h := newHarness(t)
	s := newSession("conv1")
	h.feedPartial(s.ev(agentevent.TypeMeta, "start", 0, native, noParent))
	h.setNow(time.Hour)
	h.tick()
	assert.Empty(t, h.spans())
	for _, th := range h.c.asm.store.threads {
		assert.Empty(t, th.preamble)
	}
}

// TestNativePreambleWithoutPromptSurvivesARestart: with storage, records
// waiting for a prompt are saved; a collector stopped (killed, or shut
// down) before their wait ends and started again makes the same
// prompt-missing turn, ids and content, exactly once, as one that ran on.
func TestNativePreambleWithoutPromptSurvivesARestart(t *testing.T) {
	run := func(t *testing.T, stop func(h *harness)) []ptrace.Span {
		stateDir := t.TempDir()
		id := storagetest.NewStorageID("state")
		start := func() *harness {
			h := newHarness(t, func(c *Config) { c.Storage = &id })
			require.NoError(t, h.c.Start(t.Context(), storagetest.NewStorageHost().WithFileBackedStorageExtension("state", stateDir)))
			return h
		}
		h := start()
		h.feedPartial(codexPreamble(newSession("conv1"))...)
		var spans []ptrace.Span
		if stop != nil {
			stop(h)
			spans = append(spans, h.spans()...)
			h = start()
		}
		h.setNow(time.Hour)
		h.tick()
		require.NoError(t, h.c.Shutdown(t.Context()))
		return append(spans, h.spans()...)
	}
	want := run(t, nil)
	require.Len(t, promptMissingRoots(want), 1)
	for name, stop := range map[string]func(h *harness){
		"kill":     func(h *harness) { h.crash() },
		"shutdown": func(h *harness) { require.NoError(t, h.c.Shutdown(t.Context())) },
	} {
		t.Run(name, func(t *testing.T) {
			got := run(t, stop)
			for k, n := range spanKeys(got) {
				assert.Equal(t, 1, n, "emitted %d times: %s", n, k)
			}
			assert.Equal(t, spanKeys(want), spanKeys(got))
		})
	}
}
