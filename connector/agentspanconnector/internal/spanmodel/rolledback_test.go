// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package spanmodel

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// A turn an event says was rolled back says so on its root; any other turn
// has no such attribute.
func TestRolledBackTurnIsMarkedOnItsRoot(t *testing.T) {
	t0 := time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)
	rootOf := func(spans []ptrace.Span) ptrace.Span {
		for _, sp := range spans {
			if sp.ParentSpanID().IsEmpty() {
				return sp
			}
		}
		require.FailNow(t, "no root")
		return ptrace.Span{}
	}

	root := rootOf(mapTurn(nativeTurn(t0)))
	_, ok := root.Attributes().Get(agentevent.AttrTurnRolledBack)
	assert.False(t, ok)

	evs := nativeTurn(t0)
	rb := agentevent.Event{
		SchemaVersion: agentevent.SchemaVersion, Source: agentevent.Source("claude_code"), SessionID: "s1",
		EventID: "rb", ParentEventID: "p1", Type: agentevent.TypeMeta, Timestamp: t0.Add(13 * time.Second),
		Attributes: map[string]any{agentevent.AttrTurnRolledBack: true},
	}
	agentevent.Normalize(&rb)
	rb.Sequence = int64(len(evs))
	root = rootOf(mapTurn(append(evs, rb)))
	v, ok := root.Attributes().Get(agentevent.AttrTurnRolledBack)
	require.True(t, ok)
	assert.True(t, v.Bool())
}
