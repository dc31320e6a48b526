// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// TestPerRecordAllocations pins the allocations of the work ConsumeLogs does
// per log record that closes no turn: decodeRecord (the record into the
// connector's event) and addRecord (the store's lookups, the event added to
// its open turn, with its strings given memory of the turn's, and the
// reader's flag noted). The events are real rows of a Claude Code session
// (the golden case v2.0.28_agtrace_with_agent_files), each kind fed as a run
// of fresh records — new event, call and response ids, sequence numbers
// going up — into a session whose turn is open and has seen the kind once.
//
// Counted: every allocation of those two calls, averaged over the run and
// rounded down (testing.AllocsPerRun), so the growth of the turn's event
// slice, of its id set and of its string memory (a chunk per many events)
// counts as the amortized zero it is. Not counted: what is done once per
// ConsumeLogs call (the close pass, the spans, the storage batch) or once
// per turn beyond the prompt (its spans when it closes).
//
// What is left is Decode's own (internal/agentevent, shared with the other
// components): the map of an event that has vendor attributes, a boxed
// string attribute value, the one array of an event's usage numbers; and,
// for a tool call, the call's entry in the call index (its ids copied, as
// they outlive the event); for a prompt, the turn it opens.
func TestPerRecordAllocations(t *testing.T) {
	logs, err := golden.ReadLogs(filepath.Join("..", "..", "testdata", "claude_code", "v2.0.28_agtrace_with_agent_files", "events.yaml"))
	require.NoError(t, err)
	evs, _ := agentevent.DecodeLogs(logs)
	pick := func(ok func(ev *agentevent.Event) bool) agentevent.Event {
		for i := range evs {
			if ok(&evs[i]) {
				return evs[i]
			}
		}
		t.Fatal("no such event in the golden case")
		return agentevent.Event{}
	}
	prompt := pick(func(ev *agentevent.Event) bool { return ev.Type == agentevent.TypeUserMessage })
	usage := pick(func(ev *agentevent.Event) bool {
		return ev.Type == agentevent.TypeAssistantMessage && ev.TokensInput != nil && len(ev.Attributes) > 0
	})
	call := pick(func(ev *agentevent.Event) bool {
		return ev.Type == agentevent.TypeToolCall && ev.Attributes[agentevent.AttrToolCommand] != nil
	})
	result := pick(func(ev *agentevent.Event) bool {
		return ev.Type == agentevent.TypeToolResult && len(ev.Attributes) == 0
	})
	fileResult := pick(func(ev *agentevent.Event) bool {
		return ev.Type == agentevent.TypeToolResult && ev.Attributes["agent.file.change_type"] != nil
	})

	const runs = 50
	seq := int64(1000)
	// variants makes runs+2 fresh copies of ev in the open turn (one to
	// warm the kind up, one AllocsPerRun's own warm-up, runs measured).
	variants := func(ev agentevent.Event) []agentevent.Event {
		out := make([]agentevent.Event, runs+2)
		for i := range out {
			v := ev
			sfx := fmt.Sprintf("-%03d", i)
			v.EventID += sfx
			if v.ToolCallID != "" {
				v.ToolCallID += sfx
			}
			if v.ResponseID != "" {
				v.ResponseID += sfx
			}
			if v.Type != agentevent.TypeUserMessage {
				v.ParentEventID = prompt.EventID
			}
			seq++
			v.Sequence = seq
			out[i] = v
		}
		return out
	}

	h := newHarness(t)
	h.history()
	now := h.clock()
	buf := make([]hosted, 0, 8*(runs+2))
	feed := func(lr plog.LogRecord) {
		buf = append(buf, hosted{})
		covered, err := decodeRecord(lr, "host1", &buf[len(buf)-1])
		if err != nil || covered {
			t.Fatal("not an event to add", err)
		}
		if res := h.c.addRecord(&buf[len(buf)-1], now); res != added {
			t.Fatal("not added", res)
		}
	}
	records := func(evs []agentevent.Event) []plog.LogRecord {
		ld := agentevent.EncodeLogs(evs, "host1")
		lrs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
		out := make([]plog.LogRecord, lrs.Len())
		for i := range out {
			out[i] = lrs.At(i)
		}
		return out
	}
	// The session and its turn.
	for _, lr := range records([]agentevent.Event{prompt}) {
		feed(lr)
	}
	turn := unitKey{Thread: threadKey{Source: prompt.Source, Session: prompt.SessionID}, Prompt: prompt.EventID}
	require.Contains(t, h.c.asm.store.units, turn)

	for _, c := range []struct {
		name string
		ev   agentevent.Event
		want float64
	}{
		// Decode: the attribute map (2), the carrier's value boxed (1), the
		// usage numbers (1).
		{"model call with usage", usage, 4},
		// Decode: the attribute map (2), the command boxed (1); the call's
		// entry in the call index (1). A command the turn has not seen
		// before costs one more (its box in the turn's memory).
		{"tool call", call, 4},
		// Decode: the latency's number (1).
		{"tool result", result, 1},
		// Decode: the attribute map (2), the change type boxed (1), the
		// latency's number (1).
		{"tool result of a file", fileResult, 4},
		// The turn it opens: the unit (1), its id set (2), its event slice
		// (1), its memory's first chunk (1); the prompt's id kept by its
		// thread (1).
		{"prompt that opens a turn", prompt, 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			lrs := records(variants(c.ev))
			before := len(h.c.asm.store.units[turn].events)
			feed(lrs[0])
			next := 1
			got := testing.AllocsPerRun(runs, func() {
				feed(lrs[next])
				next++
			})
			if c.ev.Type != agentevent.TypeUserMessage {
				assert.Len(t, h.c.asm.store.units[turn].events, before+runs+2, "every record added to the open turn")
			}
			assert.Equal(t, c.want, got, "allocations per record")
		})
	}
}
