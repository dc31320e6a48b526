// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package amp

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
)

func TestDecodeErrors(t *testing.T) {
	for data, reason := range map[string]string{
		`{"id":"T-1","messages":[`:  ReasonMalformedJSON,
		`[]`:                        ReasonUnexpectedShape,
		`{"messages":[]}`:           ReasonUnexpectedShape,
		`{"id":"T-1","messages":7}`: ReasonUnexpectedShape,
	} {
		_, err := DecodeThread([]byte(data))
		var de *DecodeError
		require.ErrorAs(t, err, &de, data)
		assert.Equal(t, reason, de.Reason, data)
	}
}

// TestBadMessageCostsOnlyItself: a message of the wrong shape becomes one
// unparsed event; the rest of the thread maps.
func TestBadMessageCostsOnlyItself(t *testing.T) {
	th, err := DecodeThread([]byte(`{"id":"T-1","messages":[
		{"role":"user","messageId":0,"content":[{"type":"text","text":"hi"}],"meta":{"sentAt":1}},
		{"role":"assistant","messageId":1,"content":"not a list"},
		{"role":"assistant","messageId":2,"content":[{"type":"text","text":"hello"},{"type":"hologram"}],"state":{"type":"complete"}}]}`))
	require.NoError(t, err)
	r := MapThread(Context{LogFile: "t"}, th, nil, true)
	var reasons []string
	for _, ev := range r.Events {
		reasons = append(reasons, ev.Unparsed)
	}
	assert.Equal(t, []string{"", ReasonUnexpectedShape, "", ReasonUnknownType}, reasons)
	assert.Empty(t, agentevent.Validate(r.Events).Violations)
}

// TestRewrites: the golden case's snapshots, read one by one, hold back a
// streaming answer and a running tool, then emit each once; a restart with
// the stored watermark emits nothing more; and the final file mapped at once
// gives the same events.
func TestRewrites(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "testdata", "amp", "rewrite_in_place", "snapshots", "*.json"))
	require.NoError(t, err)
	require.Len(t, files, 3)
	w := Watermark{}
	r1 := MapThread(Context{LogFile: "t"}, decodeFile(t, files[0]), w, false)
	assert.Equal(t, int64(1), r1.Held, "the streaming answer waits")
	require.Len(t, r1.Events, 1)
	w.Add(r1.Emitted)

	r2 := MapThread(Context{LogFile: "t", Sequence: 1}, decodeFile(t, files[1]), w, false)
	assert.Equal(t, int64(-1), r2.Held)
	open := agentevent.Validate(append(r1.Events, r2.Events...)).OpenToolCalls
	require.Len(t, open, 1, "the glob still runs: its call is out, its result waits")
	w.Add(r2.Emitted)

	// A restart between two rewrites: the watermark comes back from storage.
	st, err := w.MarshalState()
	require.NoError(t, err)
	w, err = UnmarshalState(st)
	require.NoError(t, err)
	assert.Empty(t, MapThread(Context{LogFile: "t"}, decodeFile(t, files[1]), w, true).Events, "nothing twice")

	r3 := MapThread(Context{LogFile: "t", Sequence: int64(len(r1.Events) + len(r2.Events))}, decodeFile(t, files[2]), w, true)
	w.Add(r3.Emitted)
	all := append(append(r1.Events, r2.Events...), r3.Events...)
	rep := agentevent.Validate(all)
	assert.Empty(t, rep.Violations)
	assert.Empty(t, rep.OpenToolCalls)
	for i, ev := range all {
		assert.Equal(t, int64(i+1), ev.Sequence)
	}
	whole := MapThread(Context{LogFile: "t"}, decodeFile(t, files[2]), nil, true)
	assert.ElementsMatch(t, eventIDs(whole.Events), eventIDs(all))
	assert.Empty(t, MapThread(Context{LogFile: "t"}, decodeFile(t, files[2]), w, true).Events)

	_, err = UnmarshalState([]byte("{"))
	require.Error(t, err)
	empty, err := UnmarshalState(nil)
	require.NoError(t, err)
	assert.Empty(t, empty)
}

// TestResultWithoutCall: a tool_result whose tool_use is not in the thread
// is kept without a pairing.
func TestResultWithoutCall(t *testing.T) {
	th, err := DecodeThread([]byte(`{"id":"T-1","messages":[
		{"role":"user","messageId":0,"content":[{"type":"text","text":"hi"}]},
		{"role":"user","messageId":1,"content":[{"type":"tool_result","toolUseID":"ghost","run":{"status":"done","result":"x"}}]}]}`))
	require.NoError(t, err)
	r := MapThread(Context{LogFile: "t"}, th, nil, true)
	require.Len(t, r.Events, 2)
	assert.Empty(t, r.Events[1].ToolCallID)
	assert.Equal(t, "ghost", r.Events[1].Attributes["agent.tool.late_call_id"])
	assert.Empty(t, agentevent.Validate(r.Events).Violations)
}

func TestProvider(t *testing.T) {
	assert.Equal(t, "anthropic", Provider("claude-sonnet-4-5-20250929"))
	assert.Equal(t, "openai", Provider("gpt-5"))
	assert.Equal(t, "gcp.gemini", Provider("gemini-2.5-pro"))
	assert.Empty(t, Provider("unknown"))
}

// FuzzDecodeAndMap: any bytes either fail to decode with a *DecodeError or
// map (settled or not) to events with valid roles; never a panic.
func FuzzDecodeAndMap(f *testing.F) {
	files, err := filepath.Glob(filepath.Join(repoRoot(f), "testdata", "amp", "*", "*", "T-*.json"))
	require.NoError(f, err)
	for _, p := range files {
		data, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(data, true)
	}
	f.Add([]byte(`{"id":"T","messages":[{"role":"user","content":[{"type":"tool_result","toolUseID":"x","run":{"status":"done","result":{"exitCode":"x"}}}]}]}`), false)
	f.Fuzz(func(t *testing.T, data []byte, settled bool) {
		th, err := DecodeThread(data)
		if err != nil {
			var de *DecodeError
			require.ErrorAs(t, err, &de)
			return
		}
		r := MapThread(Context{LogFile: "t"}, th, nil, settled)
		for i := range r.Events {
			ev := &r.Events[i]
			require.Contains(t, agentevent.AllowedRoles(ev.Type), ev.Role)
			require.NotEmpty(t, ev.EventID)
		}
	})
}

// TestPanicCostsOnlyItsMessage: a panic while mapping one message rolls
// back what that message emitted and becomes one parser_error event under
// its own key, reported once; the next message maps as usual.
func TestPanicCostsOnlyItsMessage(t *testing.T) {
	th := Thread{ID: "T-1", Messages: []Message{
		{MessageID: 0, Role: "user", Content: []Block{{Type: "text", Text: "hi"}}, Raw: []byte(`{"messageId":0}`)},
		{MessageID: 1, Role: "assistant", Content: []Block{{Type: "text", Text: "hello"}}},
	}}
	m := mapper{th: th, seq: 4, emitted: map[string]bool{}}
	m.prepare()
	m.guard(th.Messages[0], "p0", func() {
		m.message(th.Messages[0], "p0") // emits, then fails
		calls := nilMap[*Block]()
		calls["x"] = nil
	})
	require.Len(t, m.events, 1, "the message's own events are rolled back")
	ev := m.events[0]
	assert.Equal(t, agentevent.ReasonParserError, ev.Unparsed)
	assert.Equal(t, "T-1:0:error", ev.EventID)
	assert.Equal(t, "p0", ev.ParentEventID)
	assert.Equal(t, int64(5), ev.Sequence, "numbered after the caller's sequence, as if the rolled-back events never were")
	assert.Contains(t, ev.Attributes[agentevent.AttrUnparsedDetail], "nil map")
	assert.Equal(t, []byte(`{"messageId":0}`), ev.Raw)
	assert.Equal(t, []string{"error:0"}, m.keys)

	m.guard(th.Messages[1], "p0", func() { m.message(th.Messages[1], "p0") })
	require.Len(t, m.events, 2)
	assert.Equal(t, int64(6), m.events[1].Sequence)
	assert.Equal(t, []string{"error:0", "m1"}, m.keys)

	// Read again with what was sent: the failure is not reported twice.
	m2 := mapper{th: th, emitted: map[string]bool{"error:0": true}}
	m2.prepare()
	m2.guard(th.Messages[0], "", func() { panic("again") })
	assert.Empty(t, m2.events)
	assert.Empty(t, m2.keys)
}

// nilMap is a nil map that vet does not see as nil where it is written to.
func nilMap[V any]() map[string]V { return nil }
