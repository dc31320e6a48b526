// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"testing"
	"time"

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
