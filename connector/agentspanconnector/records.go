// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"slices"
	"strings"
	"time"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/state"
	"github.com/agentotel/agentotel/internal/agentevent"
)

// What the assembler remembers of a session: its open units, its threads
// (with the markers of their emitted units), its subagent links and tool
// calls, and the anchors of its main thread. The links, tool calls,
// markers and anchors are saved as they are held (internal/state).
type (
	link       = state.Link
	callRef    = state.CallRef
	anchor     = state.Anchor
	closedUnit = state.ClosedUnit
	promptRef  = state.PromptRef
)

// unit holds the events of one open turn or subagent run.
type unit struct {
	key         unitKey
	events      []agentevent.Event
	seen        map[string]struct{} // event ids, to drop a record delivered twice
	prevPrompt  string              // the thread's previous prompt, for the span link
	host        string
	lastArrival time.Time // wall clock
	lastEvent   time.Time // latest event timestamp, kept as events arrive
	saved       int       // events[:saved] are in storage
	// openCalls are the tool call ids with a call and no result yet;
	// answered those with a result (which may come first).
	openCalls, answered map[string]bool
	// ended is the vendor's end-of-turn marker (agentevent.AttrTurnEnd) of
	// the latest event that carried one, "" while none did.
	ended string
	// lastFile is the log file of the latest event added.
	lastFile string
	// unspawned: an event of the unit said that no tool call spawned this
	// subagent (agentevent.SubagentLinkNone), so no claim is waited for.
	unspawned bool
	// mem holds the strings of the events added to the unit (ingest).
	mem unitMemory
}

func (u *unit) addEvent(ev *agentevent.Event) {
	if u.see(ev) {
		u.events = append(u.events, *ev)
		u.note(ev)
	}
}

// last is the unit's latest event, nil when it has none.
func (u *unit) last() *agentevent.Event {
	if len(u.events) == 0 {
		return nil
	}
	return &u.events[len(u.events)-1]
}

// see records an event's id, false when the unit has it already (the same
// record delivered twice).
func (u *unit) see(ev *agentevent.Event) bool {
	if ev.EventID != "" {
		if _, dup := u.seen[ev.EventID]; dup {
			return false
		}
		u.seen[ev.EventID] = struct{}{}
	}
	return true
}

// note keeps what the close rules ask of an event added to the unit: its
// file and time, its tool call or result, its end marker.
func (u *unit) note(ev *agentevent.Event) {
	u.lastFile = ev.LogFile
	if ev.Timestamp.After(u.lastEvent) {
		u.lastEvent = ev.Timestamp
	}
	if ev.ToolCallID != "" {
		switch ev.Type {
		case agentevent.TypeToolCall:
			if !u.answered[ev.ToolCallID] {
				if u.openCalls == nil {
					u.openCalls = map[string]bool{}
				}
				u.openCalls[ev.ToolCallID] = true
			}
		case agentevent.TypeToolResult:
			delete(u.openCalls, ev.ToolCallID)
			if u.answered == nil {
				u.answered = map[string]bool{}
			}
			u.answered[ev.ToolCallID] = true
		}
	}
	if end, ok := ev.Attributes[agentevent.AttrTurnEnd].(string); ok && end != "" {
		u.ended = end
	}
	if ev.Attributes[agentevent.AttrSubagentLink] == agentevent.SubagentLinkNone {
		u.unspawned = true
	}
}

func appendUnique(evs []agentevent.Event, ev agentevent.Event) []agentevent.Event {
	for i := range evs {
		if ev.EventID != "" && evs[i].EventID == ev.EventID {
			return evs
		}
	}
	return append(evs, ev)
}

// unitOf is the unit an event belongs to. ok is false for a main-thread
// event that came before any prompt.
func unitOf(ev *agentevent.Event) (k unitKey, ok bool) {
	th := threadKey{Source: ev.Source, Session: agentevent.TreeSession(ev), Agent: ev.AgentID}
	switch {
	case th.Subagent():
		return unitKey{Thread: th}, true
	case ev.Type == agentevent.TypeUserMessage:
		return unitKey{Thread: th, Prompt: ev.EventID}, true
	case ev.ParentEventID != "":
		return unitKey{Thread: th, Prompt: ev.ParentEventID}, true
	}
	return unitKey{Thread: th}, false
}

// thread is what the connector remembers of a conversation thread.
type thread struct {
	lastPrompt    string
	lastPromptSeq int64
	// preamble holds events that came before the thread's first prompt
	// (a leading summary or file snapshot); they become span events of the
	// next turn's root.
	preamble     []agentevent.Event
	preambleHost string
	lastArrival  time.Time
	// prompts are the main thread's recent prompts in time order, to place
	// subagents linked to "the turn open when they started".
	prompts []promptRef
	// closed is what the thread's recently emitted units leave behind (most
	// recent last, at most maxClosed), and closedSeq the highest Sequence of
	// any event that went out in one of them: an event at or below it that
	// belongs to no open unit was emitted already (a re-delivery).
	closed    []closedUnit
	closedSeq int64
}

// maxClosed bounds the markers a thread keeps.
const maxClosed = 16

// closedFor is the marker of the emitted unit of this thread with prompt.
func (t *thread) closedFor(prompt string) (closedUnit, bool) {
	for _, c := range slices.Backward(t.closed) {
		if c.Prompt == prompt {
			return c, true
		}
	}
	return closedUnit{}, false
}

// maxPrompts bounds the prompts a thread remembers for turn links.
const maxPrompts = 512

// notePrompt records a main-thread prompt, keeping the list in time order,
// and returns the id as kept (memory of its own).
func (t *thread) notePrompt(id string, at time.Time) string {
	for _, p := range t.prompts {
		if p.ID == id {
			return p.ID
		}
	}
	i := len(t.prompts)
	for i > 0 && t.prompts[i-1].At.After(at) {
		i--
	}
	t.prompts = append(t.prompts, promptRef{})
	copy(t.prompts[i+1:], t.prompts[i:])
	id = strings.Clone(id)
	t.prompts[i] = promptRef{At: at, ID: id}
	if len(t.prompts) > maxPrompts {
		t.prompts = t.prompts[len(t.prompts)-maxPrompts:]
	}
	return id
}

// promptAt is the latest prompt at or before at ("" when none is).
func (t *thread) promptAt(at time.Time) string {
	id := ""
	for _, p := range t.prompts {
		if p.At.After(at) {
			break
		}
		id = p.ID
	}
	return id
}

// anchorGroup is what an anchor must match: agent, kind and project.
type anchorGroup struct {
	Source  agentevent.Source
	Kind    string
	Project string
}

// maxAnchors bounds the anchors remembered; anchorSlack is how far after
// the subagent's first event its anchor may be (clocks of two files).
const (
	maxAnchors  = 1024
	anchorSlack = 5 * time.Second
)

// key gives a unit key memory of the unit's.
func (m *unitMemory) key(k unitKey) unitKey {
	k.Thread.Source = agentevent.Source(m.str(string(k.Thread.Source)))
	k.Thread.Session = m.str(k.Thread.Session)
	k.Thread.Agent = m.str(k.Thread.Agent)
	k.Prompt = m.str(k.Prompt)
	return k
}
