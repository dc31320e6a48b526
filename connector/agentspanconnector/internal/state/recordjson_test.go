// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package state

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
	"github.com/agentotel/agentotel/internal/agentevent"
)

// sampleRecord has every field of a record set (ids of a real OpenCode
// session's record, as in TestClosedMarkersRoundTrip).
func sampleRecord() *SessionRecord {
	at := time.Date(2026, 1, 8, 14, 30, 0, 123456789, time.UTC)
	th := spanmodel.ThreadKey{Source: agentevent.Source("opencode"), Session: "ses_41aa601e1ffe6z7I4ccw1eIKUYZ1i8"}
	sub := spanmodel.ThreadKey{Source: agentevent.Source("claude_code"), Session: "s2", Agent: "a1"}
	skip := make([]pcommon.SpanID, 20)
	for i := range skip {
		skip[i] = pcommon.SpanID{byte(i), 1, 2, 3, 4, 5, 6, 7}
	}
	return &SessionRecord{
		Version:  Version,
		CaughtUp: map[string]bool{"/logs/b.jsonl": true, "/logs/a.jsonl": false},
		Threads: []SavedThread{
			{
				Key: th, LastPrompt: "msg_1", LastPromptSeq: 42, Preamble: []byte{0, 1, 2, 250}, PreambleHost: "host1",
				LastArrival: at.UnixNano(),
				Prompts:     []PromptRef{{At: at, ID: "msg_1"}, {At: at.In(time.FixedZone("x", 5*3600+1800)), ID: "msg_2"}},
				Closed: []ClosedUnit{
					{Prompt: "msg_be559fe35001CfjilCeYucOsg7Z1i8", Trace: pcommon.TraceID{253, 37, 127, 135, 116, 226, 33, 66, 219, 117, 145, 94, 177, 234, 46, 137}, Skip: skip[:2]},
					{Trace: pcommon.TraceID{1}},
					{Prompt: "many", Trace: pcommon.TraceID{2}, Skip: skip},
				},
				ClosedSeq: 7,
			},
			{Key: sub, LastArrival: -1},
		},
		Units: []SavedUnit{
			{Key: spanmodel.UnitKey{Thread: th, Prompt: "msg_1"}, PrevPrompt: "msg_0", Host: "h", LastArrival: 5, Events: 3},
			{Key: spanmodel.UnitKey{Thread: sub}},
		},
		Links: []SavedLink{
			{Thread: sub, Link: Link{CallID: "toolu_1", Parent: spanmodel.UnitKey{Thread: th, Prompt: "msg_1"}, Resolved: true}},
			{Thread: sub, Link: Link{Turn: true, At: at, Anchor: "task", Project: "/p"}},
		},
		Calls: []SavedCall{
			{Call: spanmodel.CallKey{CallID: "c1"}},
			{Call: spanmodel.CallKey{CallID: "c2"}, Ref: CallRef{Unit: spanmodel.UnitKey{Thread: sub}}},
			{Call: spanmodel.CallKey{CallID: "c3"}, Ref: CallRef{Unit: spanmodel.UnitKey{Prompt: "p"}, SubagentType: "Explore"}},
			{Call: spanmodel.CallKey{CallID: "c4"}, Ref: CallRef{SubagentType: "Plan"}},
		},
	}
}

// AppendJSON writes what json.Marshal writes, so that records written
// either way read the same.
func TestAppendJSONIsMarshal(t *testing.T) {
	check := func(t *testing.T, rec *SessionRecord) {
		t.Helper()
		want, wantErr := json.Marshal(rec)
		got, err := rec.AppendJSON([]byte("prefix"))
		if wantErr != nil {
			assert.Error(t, err)
			return
		}
		require.NoError(t, err)
		assert.Equal(t, "prefix"+string(want), string(got))
	}
	check(t, &SessionRecord{Version: Version})
	check(t, sampleRecord())

	// Values left to encoding/json: strings it escapes, times it refuses.
	for _, s := range []string{`a"b`, `a\b`, "<tag>", "a&b", "tab\t", "é", "\u2028", "bad \xff"} {
		rec := sampleRecord()
		rec.Units[0].Host = s
		check(t, rec)
		rec = sampleRecord()
		rec.CaughtUp[s] = true
		check(t, rec)
	}
	for _, at := range []time.Time{
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("far", 25*3600)),
	} {
		rec := sampleRecord()
		rec.Threads[0].Prompts[0].At = at
		check(t, rec)
	}
}
