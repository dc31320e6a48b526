// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentevent

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCursorAdmitsEachRecordOnce(t *testing.T) {
	c := NewCursor()
	assert.True(t, c.Admit(0))
	assert.True(t, c.Admit(10))
	assert.False(t, c.Admit(10), "a replay")
	assert.False(t, c.Admit(0), "a replay")
	assert.True(t, c.Admit(25))
}

func TestCursorChainsTurns(t *testing.T) {
	c := NewCursor()
	evs := []Event{
		{EventID: "a0", Type: TypeAssistantMessage}, // before any prompt
		{EventID: "u1", Type: TypeUserMessage, ParentEventID: "stale"},
		{EventID: "a1", Type: TypeAssistantMessage},
		{EventID: "t1", Type: TypeToolCall},
		{EventID: "u2", Type: TypeUserMessage},
		{EventID: "a2", Type: TypeAssistantMessage},
	}
	for i := range evs {
		c.Chain(&evs[i])
	}
	var parents []string
	var seqs []int64
	for _, ev := range evs {
		parents = append(parents, ev.ParentEventID)
		seqs = append(seqs, ev.Sequence)
	}
	assert.Equal(t, []string{"", "", "u1", "u1", "", "u2"}, parents)
	assert.Equal(t, []int64{1, 2, 3, 4, 5, 6}, seqs)
	assert.Equal(t, "u2", c.Prompt)
}

// TestCursorKeepsTheStateLayout: embedded in a parser's state, the cursor
// serializes as the fields the parsers stored before it existed, so saved
// states stay readable.
func TestCursorKeepsTheStateLayout(t *testing.T) {
	type state struct {
		Version int `json:"v"`
		Cursor
		Other string `json:"other"`
	}
	b, err := json.Marshal(state{Version: 1, Cursor: Cursor{LastOffset: 42, Sequence: 7, Prompt: "u1"}, Other: "x"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"v":1,"last_offset":42,"sequence":7,"prompt":"u1","other":"x"}`, string(b))
	var back state
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, Cursor{LastOffset: 42, Sequence: 7, Prompt: "u1"}, back.Cursor)
}

type openCallT struct{ seq int64 }

func (c *openCallT) Order() int64 { return c.seq }

func TestAddOpenCallForgetsTheOldest(t *testing.T) {
	calls := map[string]*openCallT{}
	assert.Empty(t, AddOpenCall(calls, "b", &openCallT{seq: 2}, 2))
	assert.Empty(t, AddOpenCall(calls, "a", &openCallT{seq: 1}, 2))
	assert.Equal(t, "a", AddOpenCall(calls, "c", &openCallT{seq: 3}, 2), "the call opened first goes")
	assert.Len(t, calls, 2)
	assert.Contains(t, calls, "b")
	assert.Contains(t, calls, "c")
}

// TestAddOpenCallWithAnEmptyID: a call recorded with the empty id (a vendor
// record without one) is a call like any other — the oldest goes, whatever
// its id, and among calls opened at once the smaller id goes first.
func TestAddOpenCallWithAnEmptyID(t *testing.T) {
	for range 20 { // map iteration order varies from run to run
		calls := map[string]*openCallT{}
		AddOpenCall(calls, "x", &openCallT{seq: 1}, 2)
		AddOpenCall(calls, "", &openCallT{seq: 2}, 2)
		assert.Equal(t, "x", AddOpenCall(calls, "y", &openCallT{seq: 3}, 2), "the oldest goes, not the empty id")
		assert.Contains(t, calls, "")
		assert.Empty(t, AddOpenCall(calls, "z", &openCallT{seq: 4}, 2), "then the empty id, now the oldest")

		tied := map[string]*openCallT{}
		AddOpenCall(tied, "b", &openCallT{seq: 1}, 2)
		AddOpenCall(tied, "a", &openCallT{seq: 1}, 2)
		assert.Equal(t, "a", AddOpenCall(tied, "c", &openCallT{seq: 2}, 2), "a tie goes to the smaller id")
	}
}

func TestDecodeFailureReasons(t *testing.T) {
	var v struct{ N int }
	bad := []byte(`{"N":`)
	reason, _ := DecodeFailure(bad, json.Unmarshal(bad, &v))
	assert.Equal(t, ReasonMalformedJSON, reason)
	shape := []byte(`{"N":"one"}`)
	reason, detail := DecodeFailure(shape, json.Unmarshal(shape, &v))
	assert.Equal(t, ReasonUnexpectedShape, reason)
	assert.NotEmpty(t, detail)
	reason, _ = NotAnObject([]byte(`[1]`))
	assert.Equal(t, ReasonUnexpectedShape, reason)
	reason, _ = NotAnObject([]byte(`nope`))
	assert.Equal(t, ReasonMalformedJSON, reason)
}

func TestRecoverRecordKeepsTheRecord(t *testing.T) {
	parse := func() (events []Event) {
		defer RecoverRecord(&events, func(reason, detail string) []Event {
			return []Event{{Unparsed: reason, Attributes: map[string]any{AttrUnparsedDetail: detail}}}
		})
		m := nilMap()
		m["x"] = 1 // panics
		return nil
	}
	evs := parse()
	require.Len(t, evs, 1)
	assert.Equal(t, ReasonParserError, evs[0].Unparsed)
	assert.Contains(t, evs[0].Attributes[AttrUnparsedDetail], "nil map")
}

func TestCheckStateVersion(t *testing.T) {
	require.NoError(t, CheckStateVersion("pi", 1, 1))
	assert.EqualError(t, CheckStateVersion("pi", 2, 1), "pi parser state: version 2, want 1")
}

func TestCursorChainsThreadsApart(t *testing.T) {
	c := NewCursor()
	prompts := map[string]string{}
	evs := []Event{
		{EventID: "u1", Type: TypeUserMessage},
		{EventID: "s1", Type: TypeUserMessage}, // the subagent's prompt
		{EventID: "sa", Type: TypeAssistantMessage},
		{EventID: "a1", Type: TypeAssistantMessage},
	}
	threads := []string{"main", "sub", "sub", "main"}
	for i := range evs {
		c.ChainIn(&evs[i], prompts, threads[i])
	}
	assert.Equal(t, "s1", evs[2].ParentEventID)
	assert.Equal(t, "u1", evs[3].ParentEventID)
	assert.Equal(t, int64(4), evs[3].Sequence, "one sequence per file")
}

// nilMap is a nil map the compiler and vet do not see as nil where it is written to.
func nilMap() map[string]int { return nil }
