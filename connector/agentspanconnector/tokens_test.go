// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/internal/agentevent"
)

var tokenKeys = [...]string{
	agentevent.AttrTokensInput, agentevent.AttrTokensOutput, agentevent.AttrTokensCached,
	agentevent.AttrTokensCacheCreation, agentevent.AttrTokensThinking,
}

func eventTokens(evs []agentevent.Event) [5]int64 {
	var out [5]int64
	for _, ev := range evs {
		if ev.Unparsed != "" {
			continue
		}
		for i, p := range []*int64{ev.TokensInput, ev.TokensOutput, ev.TokensCached, ev.TokensCacheCreation, ev.TokensThinking} {
			if p != nil {
				out[i] += *p
			}
		}
	}
	return out
}

func chatTokens(spans []ptrace.Span) [5]int64 {
	var out [5]int64
	for _, sp := range spans {
		if op, _ := sp.Attributes().Get(attrOperationName); op.Str() != opChat {
			continue
		}
		for i, k := range tokenKeys {
			if v, ok := sp.Attributes().Get(k); ok {
				out[i] += v.Int()
			}
		}
	}
	return out
}

// TestEveryTokenLandsOnOneChatSpan: over every golden case (real sessions),
// read whole or in reads of three records, the chat spans carry exactly the
// tokens the events carry — none dropped as late, none counted twice.
func TestEveryTokenLandsOnOneChatSpan(t *testing.T) {
	for _, dir := range goldenCases(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			logs, err := golden.ReadLogs(filepath.Join(dir, "events.yaml"))
			require.NoError(t, err)
			evs, _ := agentevent.DecodeLogs(logs)
			want := eventTokens(evs)
			for _, size := range []int{1 << 20, 3} {
				h := newHarness(t)
				h.history()
				for _, b := range splitLogs(markCaughtUp(logs), size) {
					require.NoError(t, h.c.ConsumeLogs(context.Background(), b))
				}
				h.setNow(2 * 365 * 24 * time.Hour)
				h.tick()
				require.NoError(t, h.c.Shutdown(context.Background()))
				assert.Equal(t, want, chatTokens(h.spans()), "reads of %d records", size)
			}
		})
	}
}

// TestUsageAfterTheTurnClosedIsNotLost: usage of the turn's last response
// written after the turn went out (closed on its end marker) lands on a
// chat span of its own in the same trace, under the same root.
func TestUsageAfterTheTurnClosedIsNotLost(t *testing.T) {
	h := newHarness(t)
	h.setNow(10 * time.Second)
	s := newSession("s1")
	h.feed(s.prompt("p1", 0), s.answer("a1", "m1", 1), s.ev(agentevent.TypeMeta, "end", 2, endMarker(agentevent.TurnEndCompleted)))
	require.Len(t, roots(h.spans()), 1, "closed on its end marker")
	root := roots(h.spans())[0]
	h.feed(s.ev(agentevent.TypeMeta, "usage", 3, response("m1"), tokens(7, 3)))
	spans := h.spans()
	assert.Len(t, roots(spans), 1, "never a second root")
	assert.Equal(t, [5]int64{107, 13}, chatTokens(spans), "the late usage is on a chat span")
	ids := map[string]bool{}
	for _, sp := range spans {
		assert.Equal(t, root.TraceID(), sp.TraceID())
		assert.False(t, ids[sp.SpanID().String()], "span id %s emitted twice", sp.SpanID())
		ids[sp.SpanID().String()] = true
	}
}
