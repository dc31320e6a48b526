// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package source

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/progress"
)

// TestRecordsAppend: records put together in order, with parts that hold
// none (a batch whose events all drop encodes to the zero Records) before,
// between and after them, and their tallies summed.
func TestRecordsAppend(t *testing.T) {
	enc := func(ids ...string) Records {
		evs := make([]agentevent.Event, len(ids))
		for i, id := range ids {
			evs[i] = agentevent.Event{Type: agentevent.TypeUserMessage, SessionID: "s", EventID: id}
		}
		return Records{Logs: agentevent.EncodeLogs(evs, ""), Count: len(ids), Tally: progress.Tally{Turns: int64(len(ids))}}
	}
	var r Records
	for _, o := range []Records{{}, enc("a", "b"), {}, {Tally: progress.Tally{ToolCalls: 1}}, enc("c"), {}} {
		r.Append(o)
	}
	require.Equal(t, 3, r.Count)
	evs, skipped := agentevent.DecodeLogs(r.Logs)
	require.Zero(t, skipped)
	var ids []string
	for i := range evs {
		ids = append(ids, evs[i].EventID)
	}
	assert.Equal(t, []string{"a", "b", "c"}, ids)
	assert.Equal(t, progress.Tally{Turns: 3, ToolCalls: 1}, r.Tally)

	var none Records
	none.Append(Records{})
	assert.Zero(t, none.Count)
}
