// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector // import "github.com/agentotel/agentotel/connector/agentspanconnector"

import (
	"cmp"
	"container/heap"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
	"github.com/agentotel/agentotel/internal/agentevent"
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

// closedUnit is the marker an emitted unit leaves in its thread: the trace
// it went into, and the few span ids a later event of it could produce
// again (its own invoke_agent span, the tool calls still open, its last
// model response), which are therefore never emitted a second time.
type closedUnit struct {
	Prompt string           `json:"prompt,omitempty"`
	Trace  pcommon.TraceID  `json:"trace"`
	Skip   []pcommon.SpanID `json:"skip,omitempty"`
}

// maxClosed bounds the markers a thread keeps.
const maxClosed = 16

// closedFor is the marker of the emitted unit of this thread with prompt.
func (t *thread) closedFor(prompt string) (closedUnit, bool) {
	for i := len(t.closed) - 1; i >= 0; i-- {
		if t.closed[i].Prompt == prompt {
			return t.closed[i], true
		}
	}
	return closedUnit{}, false
}

// promptRef is one prompt of a main thread.
type promptRef struct {
	At time.Time `json:"at"`
	ID string    `json:"id"`
}

// maxPrompts bounds the prompts a thread remembers for turn links.
const maxPrompts = 512

// notePrompt records a main-thread prompt, keeping the list in time order.
func (t *thread) notePrompt(id string, at time.Time) {
	for _, p := range t.prompts {
		if p.ID == id {
			return
		}
	}
	i := len(t.prompts)
	for i > 0 && t.prompts[i-1].At.After(at) {
		i--
	}
	t.prompts = append(t.prompts, promptRef{})
	copy(t.prompts[i+1:], t.prompts[i:])
	t.prompts[i] = promptRef{At: at, ID: strings.Clone(id)}
	if len(t.prompts) > maxPrompts {
		t.prompts = t.prompts[len(t.prompts)-maxPrompts:]
	}
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

// link ties a subagent thread to the tool call that spawned it. Parent is
// known once the call's unit is (Resolved). A turn link (Turn) ties it to
// the main-thread turn open at At instead: its span's parent is that turn's
// root.
type link struct {
	CallID   string    `json:"call_id"`
	Parent   unitKey   `json:"parent"`
	Resolved bool      `json:"resolved"`
	Turn     bool      `json:"turn,omitempty"`
	At       time.Time `json:"at,omitzero"`
	// Anchor, on an unresolved turn link, is the anchor kind to look for
	// in another session of Project (agentevent.SubagentLinkAnchor).
	Anchor  string `json:"anchor,omitempty"`
	Project string `json:"project,omitempty"`
}

// anchor is a main-thread event other sessions' subagents can be linked
// to (agentevent.AttrSubagentAnchor): the turn it belongs to, when.
type anchor struct {
	Source  agentevent.Source `json:"source"`
	Kind    string            `json:"kind"`
	Project string            `json:"project"`
	At      time.Time         `json:"at"`
	Unit    unitKey           `json:"unit"`
}

// maxAnchors bounds the anchors remembered; anchorSlack is how far after
// the subagent's first event its anchor may be (clocks of two files).
const (
	maxAnchors  = 1024
	anchorSlack = 5 * time.Second
)

// callRef is where a tool call is, and the subagent type it asked for
// (which a subagent's own records may not repeat).
type callRef struct {
	Unit         unitKey `json:"unit"`
	SubagentType string  `json:"subagent_type,omitempty"`
}

// assembler groups agent events into turns and subagent runs, decides when
// each is complete, and hands complete groups to the pure mapping. It does
// no I/O and reads no clock: callers pass the wall-clock time.
type assembler struct {
	idleTimeout time.Duration
	// maxOpenTool replaces idleTimeout for a group with a tool call open.
	maxOpenTool time.Duration
	opts        spanmodel.MapOptions

	units   map[unitKey]*unit
	threads map[threadKey]*thread
	links   map[threadKey]link
	calls   map[callKey]callRef
	anchors []anchor
	// anchorIdx holds the anchors by what a link must match.
	anchorIdx map[anchorGroup][]anchor
	// anchorsDirty is set when anchors changed since the last flush,
	// anchorsNew since the last resolveLinks.
	anchorsDirty, anchorsNew bool
	// linksToTry are the sessions changed or read back since the last
	// resolveLinks; anchorWaiting the unresolved links waiting for an anchor.
	linksToTry    map[sessKey]bool
	anchorWaiting map[threadKey]bool

	// sessions indexes the maps above by session, for persistence and
	// eviction (see sessions.go).
	sessions map[sessKey]*sessIndex
	// load reads a session's saved state; nil without storage.
	load loader
	// dirty are the sessions changed since the last flush.
	dirty map[sessKey]bool
	// gone are the saved events of units closed since the last flush.
	gone []savedRange
	// loadErr is the first error reading a saved session back.
	loadErr error
	// indexed are the active sessions as last saved in the index, by
	// shard; shardsToWrite the shards to write at the next flush besides
	// those that change.
	indexed       []map[sessKey]bool
	shardsToWrite map[int]bool
	// flushedIndex and flushedShards are what the last flush changed of
	// the index, until its write is committed (unflush).
	flushedIndex  []indexChange
	flushedShards map[int]bool
	// unresolved are the subagent threads whose link is not resolved yet;
	// preambled the threads holding events that wait for a prompt. Both
	// index what a pass must look at, so that it never walks every thread.
	unresolved map[threadKey]bool
	preambled  map[threadKey]*preambleEntry
	// preambleDue queues the preambled threads by when their events would
	// be dropped (see dropPreambles).
	preambleDue preambleQueue
	// uses counts session accesses, for evicting the least recently used.
	uses uint64

	// What a close pass looks at (schedule.go). kids are the subagent
	// threads whose resolved link names each parent unit; due the deadlines
	// of the groups left open, dueIdx the same by top unit; fresh the units
	// to look at in the next pass (loaded, or a group that lost a member);
	// recheck the sessions a unit of which the last pass emitted; checkAll
	// makes the next pass look at every open unit (after a rollback).
	kids     map[unitKey]map[threadKey]struct{}
	due      deadlines
	dueIdx   map[unitKey]*scheduled
	fresh    map[unitKey]bool
	recheck  map[sessKey]bool
	checkAll bool
	// lru queues the sessions held by last use, for evict; lruIdx is the
	// entry of each session queued.
	lru    lruQueue
	lruIdx map[sessKey]*queued
	// wake holds the evicted sessions with open work by when something of
	// theirs is due, asleep the same by session, sleepingUnits their open
	// units (sessions.go).
	wake          wakeHeap
	asleep        map[sessKey]*sleeper
	sleepingUnits int
	// waitingAsleep are the evicted sessions whose subagent links wait
	// for an anchor, by what the anchor must match, with the latest time
	// of an anchor that resolves one of them (sessions.go).
	waitingAsleep map[anchorGroup]map[sessKey]time.Time
}

// verifyPass, when set (tests), is shown the units each close pass looks at.
var verifyPass func(a *assembler, sorted []unitKey, now time.Time, shutdown bool)

func newAssembler(idleTimeout time.Duration, opts spanmodel.MapOptions) *assembler {
	return &assembler{
		idleTimeout:   idleTimeout,
		maxOpenTool:   max(idleTimeout, defaultMaxOpenToolDuration),
		opts:          opts,
		units:         map[unitKey]*unit{},
		threads:       map[threadKey]*thread{},
		links:         map[threadKey]link{},
		calls:         map[callKey]callRef{},
		sessions:      map[sessKey]*sessIndex{},
		dirty:         map[sessKey]bool{},
		indexed:       newIndexShards(),
		shardsToWrite: map[int]bool{},
		unresolved:    map[threadKey]bool{},
		preambled:     map[threadKey]*preambleEntry{},
		kids:          map[unitKey]map[threadKey]struct{}{},
		dueIdx:        map[unitKey]*scheduled{},
		fresh:         map[unitKey]bool{},
		recheck:       map[sessKey]bool{},
		lruIdx:        map[sessKey]*queued{},
		asleep:        map[sessKey]*sleeper{},
		waitingAsleep: map[anchorGroup]map[sessKey]time.Time{},
		anchorIdx:     map[anchorGroup][]anchor{},
		linksToTry:    map[sessKey]bool{},
		anchorWaiting: map[threadKey]bool{},
	}
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

// addResult says what add did with an event.
type addResult int

const (
	added addResult = iota
	// unparsed: an unparsed record never becomes part of a trace.
	unparsed
	// replayed: the event went out before in a unit now closed (a record
	// delivered again, e.g. re-read after a crash).
	replayed
	// lateResult: the result of a tool call whose turn went out with the
	// call in_progress.
	lateResult
)

// add ingests one event.
func (a *assembler) add(ev agentevent.Event, host string, now time.Time) addResult {
	if ev.Unparsed != "" {
		return unparsed
	}
	ev.Raw = nil // never emitted; don't hold it
	if !a.opts.IncludeContent {
		agentevent.StripContent(&ev)
	}
	ownStrings(&ev)
	th := threadKey{Source: ev.Source, Session: agentevent.TreeSession(&ev), Agent: ev.AgentID}
	a.touch(th.Sess())
	t := a.threads[th]
	key, inTurn := unitOf(&ev)
	_, open := a.units[key]
	if t != nil && ev.Sequence > 0 && ev.Sequence <= t.closedSeq && (!open || !inTurn) {
		return replayed
	}
	if t != nil && inTurn && !open && ev.Type == agentevent.TypeToolResult && ev.ToolCallID != "" {
		if m, sent := t.closedFor(key.Prompt); sent && slices.Contains(m.Skip, spanmodel.ToolSpanID(th, ev.ToolCallID)) {
			// The call went out in_progress: its turn was closed before
			// the result came (max_open_tool_duration, the next prompt).
			return lateResult
		}
	}
	if t == nil {
		t = &thread{}
		a.setThread(th, t)
	}
	t.lastArrival = now

	if ev.Type == agentevent.TypeToolCall && ev.ToolCallID != "" && inTurn {
		ck := callKey{Source: ev.Source, Session: agentevent.TreeSession(&ev), CallID: ev.ToolCallID}
		ref := a.calls[ck]
		ref.Unit = key
		if ev.SubagentType != "" && !th.Subagent() {
			ref.SubagentType = ev.SubagentType
		}
		a.setCall(ck, ref)
	}
	if ev.SpawnedAgentID != "" && ev.ToolCallID != "" && inTurn {
		child := threadKey{Source: ev.Source, Session: agentevent.TreeSession(&ev), Agent: ev.SpawnedAgentID}
		if child != th {
			a.setLink(child, link{CallID: ev.ToolCallID, Parent: key, Resolved: true})
		}
	}
	if th.Subagent() && ev.ParentToolCallID != "" {
		if l, ok := a.links[th]; !ok || l.Turn || (!l.Resolved && l.CallID != ev.ParentToolCallID) {
			a.setLink(th, link{CallID: ev.ParentToolCallID})
		}
	}
	if kind := ev.Attributes[agentevent.AttrSubagentLink]; th.Subagent() && (kind == agentevent.SubagentLinkTurn || kind == agentevent.SubagentLinkAnchor) {
		// Only a fallback: any tool link, known now or later, wins.
		if l, ok := a.links[th]; !ok {
			l = link{Turn: true, At: ev.Timestamp}
			if kind == agentevent.SubagentLinkAnchor {
				l.Anchor, _ = ev.Attributes[agentevent.AttrSubagentAnchor].(string)
				l.Project = ev.ProjectRoot
			}
			a.setLink(th, l)
		} else if l.Turn && !l.Resolved && ev.Timestamp.Before(l.At) {
			l.At = ev.Timestamp
			a.setLink(th, l)
		}
	}
	if kind, ok := ev.Attributes[agentevent.AttrSubagentAnchor].(string); ok && kind != "" && !th.Subagent() && inTurn {
		a.addAnchor(anchor{Source: ev.Source, Kind: kind, Project: ev.ProjectRoot, At: ev.Timestamp, Unit: key})
	}
	if !th.Subagent() && ev.Type == agentevent.TypeUserMessage && ev.EventID != "" {
		t.notePrompt(ev.EventID, ev.Timestamp)
	}
	if !inTurn {
		t.preamble = appendUnique(t.preamble, ev)
		if t.preambleHost == "" {
			t.preambleHost = host
		}
		a.notePreamble(th)
		return added
	}

	u := a.units[key]
	if u == nil {
		u = &unit{key: key, seen: map[string]struct{}{}, host: host}
		a.setUnit(key, u)
	}
	u.lastArrival = now
	if u.host == "" {
		u.host = host
	}
	if !th.Subagent() && ev.Type == agentevent.TypeUserMessage {
		if t.lastPrompt != ev.EventID && (t.lastPrompt == "" || ev.Sequence >= t.lastPromptSeq) {
			if prev, onBranch := ev.Attributes[agentevent.AttrPreviousPrompt].(string); onBranch {
				u.prevPrompt = prev // a tree log: the previous turn on this branch
			} else if u.prevPrompt == "" {
				u.prevPrompt = t.lastPrompt
			}
			t.lastPrompt, t.lastPromptSeq = strings.Clone(ev.EventID), ev.Sequence
		}
		for _, p := range t.preamble {
			u.addEvent(p)
		}
		t.preamble, t.preambleHost = nil, ""
		a.unpreamble(th)
	}
	u.addEvent(ev)
	return added
}

func (u *unit) addEvent(ev agentevent.Event) {
	if u.see(&ev) {
		u.events = append(u.events, ev)
		u.note(&ev)
	}
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

// closed is the outcome of one close pass.
type closed struct {
	traces ptrace.Traces
	// statuses holds agent.turn.status of every root span emitted.
	statuses []string
	spans    int
	// duplicates counts spans left out because their id was emitted before.
	duplicates int
	// noTurn counts events dropped because no turn ever came for them.
	noTurn int
	// afterTurn are the late rows of turns that went out already that
	// made no span (see the README, "Late rows").
	afterTurn []afterTurn
	// units are the groups emitted, by their top unit, and why each closed
	// (the connector's debug log).
	units []closedGroup
	// replays and lateResults are what the batch's add dropped: events
	// emitted before, and tool results of calls whose turn went out
	// without them. Counted, like the others, once the pass is kept.
	replays     int
	lateResults []agentevent.Event
}

// afterTurn is what came of a turn after it went out and made no span: the
// turn, how many rows, the first row's event id.
type afterTurn struct {
	key   unitKey
	rows  int
	first string
}

// closedGroup is one group a close pass emitted.
type closedGroup struct {
	key    unitKey
	reason spanmodel.CloseReason
}

// close emits every unit that is complete at now. With shutdown set, every
// open unit is complete (flushed as in_progress).
func (a *assembler) close(now time.Time, shutdown bool) closed {
	out := closed{traces: ptrace.NewTraces()}
	a.wakeDue(now)
	a.resolveLinks()

	// The units of the groups that may be complete (schedule.go), or with
	// shutdown (and after a rollback or a load) every open unit.
	var sorted []unitKey
	if shutdown || a.checkAll {
		a.checkAll = false
		clear(a.fresh)
		clear(a.recheck)
		sorted = a.sortedUnits()
	} else {
		sorted = a.candidates(now)
	}
	if verifyPass != nil {
		verifyPass(a, sorted, now, shutdown)
	}

	// Open subagent runs whose spawning unit is still open close with it.
	children, tops := a.groups(sorted)
	awaiting := a.awaitingIn(sorted)
	for _, k := range tops {
		if _, open := a.units[k]; !open {
			continue
		}
		reason, done := a.closeReason(k, children, awaiting, now, shutdown)
		if !done {
			a.schedule(k, a.deadline(k, children, awaiting, now))
			continue
		}
		traceID, parent := a.placement(k)
		late := a.wentOut(k)
		var lateRows []agentevent.Event
		if late {
			lateRows = a.units[k].events
		}
		visited := map[unitKey]bool{}
		tree := a.collect(k, children, visited)
		td := spanmodel.MapGroup(spanmodel.Group{TraceID: traceID, ParentSpanID: parent, Root: tree, Reason: reason}, a.opts)
		skip := map[pcommon.SpanID]bool{}
		a.markClosed(tree, traceID, skip)
		before := out.spans
		keepNew(td, skip, &out)
		if late && out.spans == before && len(lateRows) > 0 {
			// Rows of a turn that went out, none of which makes a span of
			// its own (e.g. what Claude Code writes after the answer).
			out.afterTurn = append(out.afterTurn, afterTurn{key: k, rows: len(lateRows), first: lateRows[0].EventID})
		}
		out.units = append(out.units, closedGroup{key: k, reason: reason})
	}

	out.noTurn += a.dropPreambles(now, shutdown)
	a.prune()
	return out
}

// groups finds, among sorted (whole groups, in a fixed order), which open
// unit holds which open subagent runs, and the top of each group.
func (a *assembler) groups(sorted []unitKey) (children map[unitKey][]unitKey, tops []unitKey) {
	children = map[unitKey][]unitKey{}
	hasOpenParent := map[unitKey]bool{}
	for _, k := range sorted {
		if l, ok := a.links[k.Thread]; ok && l.Resolved && k.Thread.Subagent() {
			if _, open := a.units[l.Parent]; open && l.Parent != k {
				children[l.Parent] = append(children[l.Parent], k)
				hasOpenParent[k] = true
			}
		}
	}
	// A unit is a top of its group unless an open parent holds it; a cycle
	// of links (bad input) would leave no top, so break it at its first unit.
	reached := map[unitKey]bool{}
	var mark func(k unitKey)
	mark = func(k unitKey) {
		if reached[k] {
			return
		}
		reached[k] = true
		for _, c := range children[k] {
			mark(c)
		}
	}
	for _, k := range sorted {
		if !hasOpenParent[k] {
			tops = append(tops, k)
			mark(k)
		}
	}
	for _, k := range sorted {
		if !reached[k] {
			tops = append(tops, k)
			mark(k)
		}
	}
	return children, tops
}

// markClosed leaves the marker of every unit of an emitted tree in its
// thread, and adds to skip the span ids that a unit emitted before (late
// events of it) must not produce again.
func (a *assembler) markClosed(tr *spanmodel.Tree, traceID pcommon.TraceID, skip map[pcommon.SpanID]bool) {
	th := tr.Key.Thread
	t := a.threads[th]
	if t == nil {
		t = &thread{}
		a.setThread(th, t)
	}
	a.touch(th.Sess())
	prev, late := t.closedFor(tr.Key.Prompt)
	for _, id := range prev.Skip {
		skip[id] = true
	}
	m := closedUnit{Prompt: strings.Clone(tr.Key.Prompt), Trace: traceID, Skip: prev.Skip}
	add := func(id pcommon.SpanID) {
		if !slices.Contains(m.Skip, id) {
			m.Skip = append(m.Skip, id)
		}
	}
	add(spanmodel.UnitSpanID(tr.Key))
	answered := map[string]bool{}
	lastResponse := ""
	for i := range tr.Events {
		ev := &tr.Events[i]
		if ev.Sequence > t.closedSeq {
			t.closedSeq = ev.Sequence
		}
		if ev.Type == agentevent.TypeToolResult {
			answered[ev.ToolCallID] = true
		}
		if ev.ResponseID != "" {
			lastResponse = ev.ResponseID
		}
	}
	for i := range tr.Events {
		ev := &tr.Events[i]
		if ev.Type == agentevent.TypeToolCall && ev.ToolCallID != "" && !answered[ev.ToolCallID] {
			add(spanmodel.ToolSpanID(th, ev.ToolCallID)) // went out in_progress
		}
	}
	if lastResponse != "" {
		add(spanmodel.ChatSpanID(th, lastResponse))
	}
	if late {
		t.closed = slices.DeleteFunc(t.closed, func(c closedUnit) bool { return c.Prompt == tr.Key.Prompt })
	}
	t.closed = append(t.closed, m)
	if len(t.closed) > maxClosed {
		t.closed = t.closed[len(t.closed)-maxClosed:]
	}
	for _, c := range tr.Children {
		a.markClosed(c.Run, traceID, skip)
	}
}

// groupAwaits tells whether a unit of the group topped by k awaits a subagent.
func groupAwaits(k unitKey, children map[unitKey][]unitKey, awaiting map[unitKey]bool, visited map[unitKey]bool) bool {
	if visited[k] {
		return false
	}
	visited[k] = true
	if awaiting[k] {
		return true
	}
	for _, c := range children[k] {
		if groupAwaits(c, children, awaiting, visited) {
			return true
		}
	}
	return false
}

// closeReason decides whether the group topped by k is complete.
//
// A turn closes on its thread's next prompt; on the vendor's end marker
// once the reader has nothing more of the session (caught up); or when idle.
// Idle is measured two ways, never at a read-batch boundary: the reader has
// caught up with the session and the group's last event is older than the
// bound (history, and a live turn gone quiet), or nothing of the group has
// arrived for the bound of wall-clock time (a live file, or a reader that
// does not say it caught up). The bound is turn_idle_timeout, or
// max_open_tool_duration while a tool call of the group has no result.
func (a *assembler) closeReason(k unitKey, children map[unitKey][]unitKey, awaiting map[unitKey]bool, now time.Time, shutdown bool) (spanmodel.CloseReason, bool) {
	if shutdown {
		return spanmodel.ClosedByShutdown, true
	}
	if groupAwaits(k, children, awaiting, map[unitKey]bool{}) {
		// A subagent this turn spawned has not been read yet (its own file):
		// its work belongs in the turn's rollup, so the turn waits for it —
		// at most turn_idle_timeout of wall-clock time since the group's
		// last event arrived, then it goes out without it.
		if _, arrived := a.lastActivity(k, children, map[unitKey]bool{}); now.Sub(arrived) < a.idleTimeout {
			return spanmodel.ClosedByIdle, false
		}
	}
	if !k.Thread.Subagent() {
		if t := a.threads[k.Thread]; t != nil && t.lastPrompt != "" && t.lastPrompt != k.Prompt {
			return spanmodel.ClosedByNextPrompt, true
		}
	}
	last, arrived := a.lastActivity(k, children, map[unitKey]bool{})
	if a.awaitsClaim(k) {
		// Nobody has claimed this subagent yet: wait (wall clock) for the
		// spawning call to show up before emitting it as its own trace —
		// longer while a tool call of its session is still running (it
		// may be the one that spawned it, or one of its own).
		return spanmodel.ClosedByIdle, now.Sub(arrived) >= a.claimWait(k)
	}
	caughtUp := a.groupCaughtUp(k, children, map[unitKey]bool{})
	if caughtUp && (a.units[k].ended != "" || a.wentOut(k)) {
		// Ended by the vendor, or more of a unit that went out already
		// (usage written after the end): nothing to wait for.
		return spanmodel.ClosedByEnd, true
	}
	bound := a.idleTimeout
	if a.groupOpenCall(k, children, map[unitKey]bool{}) {
		bound = a.maxOpenTool
	}
	if now.Sub(arrived) >= bound {
		return spanmodel.ClosedByIdle, true
	}
	if last.IsZero() {
		last = arrived
	}
	return spanmodel.ClosedByIdle, caughtUp && now.Sub(last) >= bound
}

// awaitsClaim tells whether k is a subagent's unit that no tool call or turn
// has claimed yet, and that may still be claimed: not one whose events say
// nothing spawned it (a Claude Code warmup), which closes like a turn.
func (a *assembler) awaitsClaim(k unitKey) bool {
	if !k.Thread.Subagent() {
		return false
	}
	if l, ok := a.links[k.Thread]; ok && l.Resolved {
		return false
	}
	u := a.units[k]
	return u == nil || !u.unspawned
}

// claimWait is how long, since its last event arrived, an unclaimed
// subagent's unit waits for the call that spawned it (awaitsClaim):
// turn_idle_timeout, max_open_tool_duration while a tool call of its
// session has no result.
func (a *assembler) claimWait(k unitKey) time.Duration {
	if a.sessionOpenCall(k.Thread.Sess()) {
		return a.maxOpenTool
	}
	return a.idleTimeout
}

// wentOut tells whether the unit was emitted before (these are late events).
func (a *assembler) wentOut(k unitKey) bool {
	t := a.threads[k.Thread]
	if t == nil {
		return false
	}
	_, sent := t.closedFor(k.Prompt)
	return sent
}

// groupOpenCall tells whether a unit of the group topped by k has a tool
// call without a result.
func (a *assembler) groupOpenCall(k unitKey, children map[unitKey][]unitKey, visited map[unitKey]bool) bool {
	if visited[k] {
		return false
	}
	visited[k] = true
	if len(a.units[k].openCalls) > 0 {
		return true
	}
	for _, c := range children[k] {
		if a.groupOpenCall(c, children, visited) {
			return true
		}
	}
	return false
}

// sessionOpenCall tells whether an open unit of the session has a tool
// call without a result.
func (a *assembler) sessionOpenCall(sk sessKey) bool {
	idx := a.sessions[sk]
	if idx == nil {
		return false
	}
	for k := range idx.units {
		if len(a.units[k].openCalls) > 0 {
			return true
		}
	}
	return false
}

// noteRead records whether the reader said, with this event of the
// session, that it has nothing more of the session for now. The last event
// of a session in a batch decides.
//
// The flag is per file: the receiver delivers one file at a time, and a
// session can have several (Claude Code's subagent files share the main
// file's session id), so the end of one says nothing of the others. A unit
// counts as caught up when the file its latest event came from is.
func (a *assembler) noteRead(sk sessKey, logFile string, caughtUp bool) {
	idx := a.ensure(sk)
	if idx.caughtUp[logFile] != caughtUp {
		if idx.caughtUp == nil {
			idx.caughtUp = map[string]bool{}
		}
		if caughtUp {
			idx.caughtUp[strings.Clone(logFile)] = true
		} else {
			delete(idx.caughtUp, logFile)
		}
		a.dirty[sk] = true
	}
}

// groupCaughtUp tells whether the reader is done, for now, with the file
// of every unit of the group topped by k.
func (a *assembler) groupCaughtUp(k unitKey, children map[unitKey][]unitKey, visited map[unitKey]bool) bool {
	if visited[k] {
		return true
	}
	visited[k] = true
	idx := a.sessions[k.Thread.Sess()]
	if idx == nil || !idx.caughtUp[a.units[k].lastFile] {
		return false
	}
	for _, c := range children[k] {
		if !a.groupCaughtUp(c, children, visited) {
			return false
		}
	}
	return true
}

// lastActivity is the latest event timestamp of the group topped by k and
// the latest wall-clock arrival in it.
func (a *assembler) lastActivity(k unitKey, children map[unitKey][]unitKey, visited map[unitKey]bool) (last, arrived time.Time) {
	if visited[k] {
		return
	}
	visited[k] = true
	u := a.units[k]
	last, arrived = u.lastEvent, u.lastArrival
	for _, c := range children[k] {
		l, ar := a.lastActivity(c, children, visited)
		if l.After(last) {
			last = l
		}
		if ar.After(arrived) {
			arrived = ar
		}
	}
	return last, arrived
}

// collect removes the group topped by k from the open units and returns it
// as a tree.
func (a *assembler) collect(k unitKey, children map[unitKey][]unitKey, visited map[unitKey]bool) *spanmodel.Tree {
	visited[k] = true
	u := a.units[k]
	a.delUnit(k)
	evs := u.events
	// Sequence orders a thread's events (one thread = one file); the stable
	// sort keeps arrival order among equal (unknown) sequences.
	slices.SortStableFunc(evs, func(x, y agentevent.Event) int { return cmp.Compare(x.Sequence, y.Sequence) })
	t := &spanmodel.Tree{Key: k, Events: evs, PrevPrompt: u.prevPrompt, Host: u.host}
	t.Late = a.wentOut(k)
	if l, ok := a.links[k.Thread]; ok && k.Thread.Subagent() {
		t.NameHint = a.calls[callKey{Source: k.Thread.Source, Session: k.Thread.Session, CallID: l.CallID}].SubagentType
	}
	for _, c := range children[k] {
		if visited[c] {
			continue
		}
		t.Children = append(t.Children, spanmodel.Child{CallID: a.links[c.Thread].CallID, Run: a.collect(c, children, visited)})
	}
	return t
}

// placement returns the trace a unit's spans go into and the parent of its
// invoke_agent span.
func (a *assembler) placement(k unitKey) (pcommon.TraceID, pcommon.SpanID) {
	return a.placementOf(k, map[unitKey]bool{})
}

func (a *assembler) placementOf(k unitKey, visiting map[unitKey]bool) (pcommon.TraceID, pcommon.SpanID) {
	var parent pcommon.SpanID
	l, linked := a.links[k.Thread]
	linked = linked && l.Resolved && k.Thread.Subagent() && !visiting[l.Parent]
	switch {
	case linked && l.Turn:
		parent = spanmodel.UnitSpanID(l.Parent) // the turn's root
	case linked:
		parent = spanmodel.ToolSpanID(l.Parent.Thread, l.CallID)
	}
	if t := a.threads[k.Thread]; t != nil {
		if m, ok := t.closedFor(k.Prompt); ok {
			return m.Trace, parent
		}
	}
	switch {
	case !k.Thread.Subagent():
		return spanmodel.TurnTraceID(k.Thread, k.Prompt), parent
	case linked:
		visiting[k] = true
		id, _ := a.placementOf(l.Parent, visiting)
		return id, parent
	}
	return spanmodel.OrphanTraceID(k.Thread), parent
}

// keepNew moves the spans of td into out, except those in skip: emitted
// before by the same unit.
func keepNew(td ptrace.Traces, skip map[pcommon.SpanID]bool, out *closed) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			sss.At(j).Spans().RemoveIf(func(sp ptrace.Span) bool {
				if skip[sp.SpanID()] {
					out.duplicates++
					return true
				}
				out.spans++
				if sp.ParentSpanID().IsEmpty() {
					if st, ok := sp.Attributes().Get(spanmodel.AttrTurnStatus); ok {
						out.statuses = append(out.statuses, st.Str())
					}
				}
				return false
			})
		}
		sss.RemoveIf(func(ss ptrace.ScopeSpans) bool { return ss.Spans().Len() == 0 })
	}
	rss.RemoveIf(func(rs ptrace.ResourceSpans) bool { return rs.ScopeSpans().Len() == 0 })
	rss.MoveAndAppendTo(out.traces.ResourceSpans())
}

// resolveLinks resolves the links known only by the spawning call id (or
// by a turn or an anchor) that may have become resolvable since the last
// pass: those of the sessions changed or read back since (a call, a prompt
// or the link itself came: all of a session's own), and those waiting for
// an anchor when an anchor came; every one after a rollback.
func (a *assembler) resolveLinks() {
	var tried []threadKey
	if a.checkAll {
		for th := range a.unresolved {
			tried = append(tried, th)
		}
	} else {
		for sk := range a.linksToTry {
			if idx := a.sessions[sk]; idx != nil {
				for th := range idx.links {
					if a.unresolved[th] {
						tried = append(tried, th)
					}
				}
			}
		}
		if a.anchorsNew {
			for th := range a.anchorWaiting {
				tried = append(tried, th)
			}
		}
	}
	clear(a.linksToTry)
	a.anchorsNew = false
	for _, th := range tried {
		l, ok := a.resolution(th)
		if !ok {
			continue
		}
		if l.Parent.Thread.Sess() != th.Sess() {
			a.ensure(l.Parent.Thread.Sess()) // its open units group with this one
		}
		a.setLink(th, l)
	}
	if verifyLinks != nil {
		for th := range a.unresolved {
			if _, ok := a.resolution(th); ok {
				verifyLinks(th)
			}
		}
		// Nor may a session out of memory wait for an anchor it has.
		for g, waiting := range a.waitingAsleep {
			for sk, until := range waiting {
				for _, an := range a.anchorIdx[g] {
					if !an.At.After(until) {
						verifyLinks(threadKey{Source: sk.Source, Session: sk.Session})
					}
				}
			}
		}
	}
}

// verifyLinks, when set (tests), is told of a link resolveLinks left
// unresolved that a walk over every link would have resolved.
var verifyLinks func(th threadKey)

// resolution is the resolved link of an unresolved subagent thread, if its
// spawner is known now.
func (a *assembler) resolution(th threadKey) (link, bool) {
	l, ok := a.links[th]
	if !ok || l.Resolved {
		return link{}, false
	}
	if l.Turn && l.Anchor != "" {
		if u, ok := a.anchorFor(th.Source, l); ok {
			return link{Turn: true, At: l.At, Parent: u, Resolved: true}, true
		}
		return link{}, false
	}
	if l.Turn {
		main := threadKey{Source: th.Source, Session: th.Session}
		if t := a.threads[main]; t != nil && main != th {
			if id := t.promptAt(l.At); id != "" {
				return link{Turn: true, At: l.At, Parent: unitKey{Thread: main, Prompt: id}, Resolved: true}, true
			}
		}
		return link{}, false
	}
	if p, ok := a.calls[callKey{Source: th.Source, Session: th.Session, CallID: l.CallID}]; ok && p.Unit.Thread != th {
		return link{CallID: l.CallID, Parent: p.Unit, Resolved: true}, true
	}
	return link{}, false
}

// anchorGroup is what an anchor must match: agent, kind and project.
type anchorGroup struct {
	Source  agentevent.Source
	Kind    string
	Project string
}

// addAnchor appends an anchor, dropping the oldest past maxAnchors.
func (a *assembler) addAnchor(an anchor) {
	an = an.owned()
	a.anchors = append(a.anchors, an)
	g := anchorGroup{an.Source, an.Kind, an.Project}
	a.anchorIdx[g] = append(a.anchorIdx[g], an)
	if len(a.anchors) > maxAnchors {
		old := a.anchors[0]
		a.anchors = slices.Delete(a.anchors, 0, 1)
		og := anchorGroup{old.Source, old.Kind, old.Project}
		// The oldest anchor overall is the oldest of its group.
		if a.anchorIdx[og] = slices.Delete(a.anchorIdx[og], 0, 1); len(a.anchorIdx[og]) == 0 {
			delete(a.anchorIdx, og)
		}
	}
	a.anchorsDirty = true
	a.anchorsNew = true
	a.wakeForAnchor(an)
}

// indexAnchors rebuilds anchorIdx from anchors (read back from storage).
func (a *assembler) indexAnchors() {
	clear(a.anchorIdx)
	for _, an := range a.anchors {
		g := anchorGroup{an.Source, an.Kind, an.Project}
		a.anchorIdx[g] = append(a.anchorIdx[g], an)
	}
	a.anchorsNew = true
}

// anchorFor is the turn of the latest anchor of l's kind in l's project at
// or just before the subagent's start (the first of equal times). It looks
// only at the anchors of that agent, kind and project.
func (a *assembler) anchorFor(source agentevent.Source, l link) (unitKey, bool) {
	var best *anchor
	group := a.anchorIdx[anchorGroup{source, l.Anchor, l.Project}]
	for i := range group {
		an := &group[i]
		if an.At.After(l.At.Add(anchorSlack)) {
			continue
		}
		if best == nil || an.At.After(best.At) {
			best = an
		}
	}
	if best == nil {
		return unitKey{}, false
	}
	return best.Unit, true
}

// prune forgets the call and link entries of the sessions changed in this
// pass that can no longer matter: those of units neither open nor among
// their thread's recent markers. An entry only becomes one of those when
// its session changes (a unit of it goes out, its thread's markers move),
// so looking at the changed sessions finds them all.
func (a *assembler) prune() {
	known := func(k unitKey) bool {
		if _, open := a.units[k]; open {
			return true
		}
		t := a.threads[k.Thread]
		if t == nil {
			return false
		}
		_, sent := t.closedFor(k.Prompt)
		return sent
	}
	for sk := range a.dirty {
		idx := a.sessions[sk]
		if idx == nil {
			continue
		}
		for c := range idx.calls {
			if !known(a.calls[c].Unit) {
				a.delCall(c)
			}
		}
		for th := range idx.links {
			l := a.links[th]
			child := unitKey{Thread: th}
			if !known(child) && !(l.Resolved && known(l.Parent)) && !a.threadOpen(th) {
				a.delLink(th)
			}
		}
	}
}

func (a *assembler) threadOpen(th threadKey) bool {
	if t := a.threads[th]; t != nil && len(t.preamble) > 0 {
		return true
	}
	idx := a.sessions[th.Sess()]
	if idx == nil {
		return false
	}
	for k := range idx.units {
		if k.Thread == th {
			return true
		}
	}
	return false
}

// openUnits is the number of open turns and subagent runs.
func (a *assembler) openUnits() int { return len(a.units) + a.sleepingUnits }

// sortedUnits lists the open units in a fixed order, so that a close pass
// emits in the same order every time.
func (a *assembler) sortedUnits() []unitKey {
	keys := make([]unitKey, 0, len(a.units))
	for k := range a.units {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareUnits)
	return keys
}

// notePreamble marks a thread as holding events that wait for a prompt.
func (a *assembler) notePreamble(th threadKey) {
	if _, ok := a.preambled[th]; ok {
		return
	}
	if t := a.threads[th]; t != nil {
		e := &preambleEntry{at: t.lastArrival.Add(a.idleTimeout), th: th}
		heap.Push(&a.preambleDue, e)
		a.preambled[th] = e
	}
}

// unpreamble forgets that a thread holds events waiting for a prompt (a
// prompt came, they were dropped, or the thread leaves memory), its entry
// in preambleDue included: the queue holds only threads in memory, not
// every thread that had such events within turn_idle_timeout (in a
// backfill, nearly every Claude Code session begins with one).
func (a *assembler) unpreamble(th threadKey) {
	if e, ok := a.preambled[th]; ok {
		heap.Remove(&a.preambleDue, e.index)
		delete(a.preambled, th)
	}
}

// dropPreambles drops the events that waited for a prompt of their thread
// for turn_idle_timeout of wall clock (all of them at shutdown): no turn
// came for them. The queue is by when each thread was queued; a thread that
// got more events since moves back to its latest, so a pass costs the
// threads due, not every thread waiting.
func (a *assembler) dropPreambles(now time.Time, shutdown bool) (dropped int) {
	drop := func(th threadKey, t *thread) {
		dropped += len(t.preamble)
		t.preamble, t.preambleHost = nil, ""
		a.unpreamble(th)
		a.touch(th.Sess())
	}
	if shutdown {
		for th := range a.preambled {
			if t := a.threads[th]; t != nil && len(t.preamble) > 0 {
				drop(th, t)
			} else {
				a.unpreamble(th)
			}
		}
		return dropped
	}
	for len(a.preambleDue) > 0 && !now.Before(a.preambleDue[0].at) {
		e := a.preambleDue[0]
		t := a.threads[e.th]
		if t == nil || len(t.preamble) == 0 {
			a.unpreamble(e.th)
			continue
		}
		if at := t.lastArrival.Add(a.idleTimeout); now.Before(at) {
			e.at = at
			heap.Fix(&a.preambleDue, 0)
			continue
		}
		drop(e.th, t)
	}
	if verifyPreambles != nil {
		for th := range a.preambled {
			if t := a.threads[th]; t != nil && len(t.preamble) > 0 && now.Sub(t.lastArrival) >= a.idleTimeout {
				verifyPreambles(th)
			}
		}
	}
	return dropped
}

// verifyPreambles, when set (tests), is told of a thread whose waiting
// events dropPreambles kept though a walk over every thread drops them.
var verifyPreambles func(th threadKey)

// preambleEntry is a preambled thread in preambleDue: when its events are
// due to be dropped, unless more came since.
type preambleEntry struct {
	at    time.Time
	th    threadKey
	index int
}

func (e *preambleEntry) dueAt() time.Time { return e.at }
func (e *preambleEntry) setIndex(i int)   { e.index = i }

// preambleQueue is a min-heap of preambled threads by due time.
type preambleQueue = timedHeap[*preambleEntry]
