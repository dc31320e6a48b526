// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
	"github.com/agentotel/agentotel/internal/agentevent"
)

// usageTotals is what a set of events or of chat spans carries of model
// usage: per usage key (isUsageAttr, the connector's one definition of which
// keys are usage), the sum of its integer values and of its double values
// (costs). Events are read as the connector reads them, encoded: typed
// fields and attributes alike.
type usageTotals struct {
	ints   map[string]int64
	floats map[string]float64
}

func newUsageTotals() usageTotals {
	return usageTotals{ints: map[string]int64{}, floats: map[string]float64{}}
}

func (u usageTotals) addAttrs(a pcommon.Map) {
	for k, v := range a.All() {
		if !spanmodel.IsUsageAttr(k) {
			continue
		}
		switch v.Type() {
		case pcommon.ValueTypeInt:
			u.ints[k] += v.Int()
		case pcommon.ValueTypeDouble:
			u.floats[k] += v.Double()
		}
	}
}

// eventUsage sums the usage of events; unparsed ones never reach a span.
func eventUsage(evs []agentevent.Event) usageTotals {
	u := newUsageTotals()
	lr := plog.NewLogRecord()
	for i := range evs {
		if evs[i].Unparsed != "" {
			continue
		}
		lr.Attributes().Clear()
		agentevent.Encode(evs[i], lr)
		u.addAttrs(lr.Attributes())
	}
	return u
}

// chatUsage sums the usage of the chat spans among spans.
func chatUsage(spans []ptrace.Span) usageTotals {
	u := newUsageTotals()
	for _, sp := range spans {
		if op, _ := sp.Attributes().Get(agentevent.AttrOperationName); op.Str() == spanmodel.OpChat {
			u.addAttrs(sp.Attributes())
		}
	}
	return u
}

// assertSameUsage: every usage key sums to the same on both sides, costs
// to within rounding.
func assertSameUsage(t *testing.T, want, got usageTotals, msgAndArgs ...any) {
	t.Helper()
	assert.Equal(t, want.ints, got.ints, msgAndArgs...)
	assert.Equal(t, slices.Sorted(maps.Keys(want.floats)), slices.Sorted(maps.Keys(got.floats)), msgAndArgs...)
	for k, w := range want.floats {
		assert.InDelta(t, w, got.floats[k], 1e-9*max(1, w), append([]any{k}, msgAndArgs...)...)
	}
}

// assertUsageOnlyOnChats: no span but a chat span carries a usage attribute,
// and no span event does but a reasoning block its own reasoning tokens.
func assertUsageOnlyOnChats(t *testing.T, spans []ptrace.Span) {
	t.Helper()
	for _, sp := range spans {
		if op, _ := sp.Attributes().Get(agentevent.AttrOperationName); op.Str() != spanmodel.OpChat {
			for k := range sp.Attributes().All() {
				assert.False(t, spanmodel.IsUsageAttr(k), "%s carries usage attribute %s", sp.Name(), k)
			}
		}
		for i := 0; i < sp.Events().Len(); i++ {
			e := sp.Events().At(i)
			for k := range e.Attributes().All() {
				if e.Name() == agentevent.SpanEventReasoning && k == agentevent.AttrTokensThinking {
					continue
				}
				assert.False(t, spanmodel.IsUsageAttr(k), "span event %s of %s carries usage attribute %s", e.Name(), sp.Name(), k)
			}
		}
	}
}

// TestEveryTokenLandsOnOneChatSpan: over every golden case (real sessions),
// read whole or in reads of three records, the chat spans carry exactly the
// usage the events carry — every usage key, none dropped as late, none
// counted twice — and no other span carries any.
func TestEveryTokenLandsOnOneChatSpan(t *testing.T) {
	for _, dir := range goldenCases(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			logs, err := golden.ReadLogs(filepath.Join(dir, "events.yaml"))
			require.NoError(t, err)
			evs, _ := agentevent.DecodeLogs(logs)
			want := eventUsage(evs)
			for _, size := range []int{1 << 20, 3} {
				h := newHarness(t)
				h.history()
				for _, b := range splitLogs(markCaughtUp(logs), size) {
					require.NoError(t, h.c.ConsumeLogs(t.Context(), b))
				}
				h.setNow(2 * 365 * 24 * time.Hour)
				h.tick()
				require.NoError(t, h.c.Shutdown(t.Context()))
				assertSameUsage(t, want, chatUsage(h.spans()), "reads of %d records", size)
				assertUsageOnlyOnChats(t, h.spans())
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
	assert.Equal(t, map[string]int64{agentevent.AttrTokensInput: 107, agentevent.AttrTokensOutput: 13}, chatUsage(spans).ints, "the late usage is on a chat span")
	ids := map[string]bool{}
	for _, sp := range spans {
		assert.Equal(t, root.TraceID(), sp.TraceID())
		assert.False(t, ids[sp.SpanID().String()], "span id %s emitted twice", sp.SpanID())
		ids[sp.SpanID().String()] = true
	}
}
