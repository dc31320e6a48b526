// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
	"github.com/agentotel/agentotel/internal/agentevent"
)

// add ingests a copy of one event (ingest).
func (a *assembler) add(ev agentevent.Event, host string, now time.Time) {
	a.ingest(&ev, host, now)
}

// ingest ingests one event. Its strings may share memory with the request
// (see ownStrings): what ingest keeps of them is given memory of its own —
// the event's strings where it is kept (the unit's memory, or ownStrings
// for an event waiting for a prompt), each key and id by the store as it
// keeps it. It changes *ev (content stripped, strings owned).
func (a *assembler) ingest(ev *agentevent.Event, host string, now time.Time) addResult {
	if ev.Unparsed != "" {
		return unparsed
	}
	ev.Raw = nil // never emitted; don't hold it
	if !a.opts.IncludeContent {
		agentevent.StripContent(ev)
	}
	th := threadKey{Source: ev.Source, Session: agentevent.TreeSession(ev), Agent: ev.AgentID}
	a.store.touch(th.Sess())
	t := a.store.threads[th]
	key, inTurn := unitOf(ev)
	_, open := a.store.units[key]
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
		a.store.setThread(th, t)
	}
	t.lastArrival = now

	if ev.Type == agentevent.TypeToolCall && ev.ToolCallID != "" && inTurn {
		ck := callKey{Source: ev.Source, Session: agentevent.TreeSession(ev), CallID: ev.ToolCallID}
		ref := a.store.calls[ck]
		ref.Unit = key
		if ev.SubagentType != "" && !th.Subagent() {
			ref.SubagentType = ev.SubagentType
		}
		a.store.setCall(ck, ref)
	}
	if ev.SpawnedAgentID != "" && ev.ToolCallID != "" && inTurn {
		child := threadKey{Source: ev.Source, Session: agentevent.TreeSession(ev), Agent: ev.SpawnedAgentID}
		if child != th {
			a.store.setLink(child, link{CallID: ev.ToolCallID, Parent: key, Resolved: true})
		}
	}
	if th.Subagent() && ev.ParentToolCallID != "" {
		if l, ok := a.store.links[th]; !ok || l.Turn || (!l.Resolved && l.CallID != ev.ParentToolCallID) {
			a.store.setLink(th, link{CallID: ev.ParentToolCallID})
		}
	}
	if kind := ev.Attributes[agentevent.AttrSubagentLink]; th.Subagent() && (kind == agentevent.SubagentLinkTurn || kind == agentevent.SubagentLinkAnchor) {
		// Only a fallback: any tool link, known now or later, wins.
		if l, ok := a.store.links[th]; !ok {
			l = link{Turn: true, At: ev.Timestamp}
			if kind == agentevent.SubagentLinkAnchor {
				l.Anchor, _ = ev.Attributes[agentevent.AttrSubagentAnchor].(string)
				l.Project = ev.ProjectRoot
			}
			a.store.setLink(th, l)
		} else if l.Turn && !l.Resolved && ev.Timestamp.Before(l.At) {
			l.At = ev.Timestamp
			a.store.setLink(th, l)
		}
	}
	if kind, ok := ev.Attributes[agentevent.AttrSubagentAnchor].(string); ok && kind != "" && !th.Subagent() && inTurn {
		a.links.addAnchor(anchor{Source: ev.Source, Kind: kind, Project: ev.ProjectRoot, At: ev.Timestamp, Unit: key})
	}
	noted := "" // the prompt's id as the thread keeps it
	if !th.Subagent() && ev.Type == agentevent.TypeUserMessage && ev.EventID != "" {
		noted = t.notePrompt(ev.EventID, ev.Timestamp)
	}
	native := ev.Attributes[agentevent.AttrOrigin] == agentevent.OriginNative
	if !inTurn && native && !th.Subagent() && t.lastPrompt != "" {
		// A record of an agent's own telemetry that names no turn while one
		// is open (Claude Code's title and summary calls, a Codex record
		// whose prompt came before a restart): it is part of that turn.
		if open := (unitKey{Thread: th, Prompt: t.lastPrompt}); a.store.units[open] != nil {
			key, inTurn = open, true
			ev.ParentEventID = t.lastPrompt
		}
	}
	if !inTurn {
		ownStrings(ev)
		t.preamble = appendUnique(t.preamble, *ev)
		if t.preambleHost == "" {
			t.preambleHost = strings.Clone(host)
		}
		a.preambles.note(th, t.lastArrival)
		return added
	}

	u := a.store.units[key]
	created := u == nil
	if created {
		u = &unit{seen: map[string]struct{}{}}
		u.key = u.mem.key(key)
		a.store.setUnit(u.key, u)
	}
	u.lastArrival = now
	if u.host == "" {
		u.host = u.mem.str(host)
	}
	u.mem.own(ev, u.last(), &a.keys)
	// The turn's prompt: its user_message; for an agent's own telemetry
	// also the first record of a turn whose prompt record has not come
	// (the records name their turn: it opens all the same).
	prompt := ""
	if !th.Subagent() {
		if ev.Type == agentevent.TypeUserMessage {
			prompt = ev.EventID
		} else if created && native {
			prompt = key.Prompt
		}
	}
	if prompt != "" {
		if t.lastPrompt != prompt && (t.lastPrompt == "" || ev.Sequence >= t.lastPromptSeq) {
			if prev, onBranch := ev.Attributes[agentevent.AttrPreviousPrompt].(string); onBranch {
				u.prevPrompt = prev // a tree log: the previous turn on this branch
			} else if u.prevPrompt == "" {
				u.prevPrompt = t.lastPrompt
			}
			if noted != prompt {
				noted = strings.Clone(prompt)
			}
			t.lastPrompt, t.lastPromptSeq = noted, ev.Sequence
		}
		for i := range t.preamble {
			u.addEvent(&t.preamble[i])
		}
		t.preamble, t.preambleHost = nil, ""
		a.preambles.unpreamble(th)
	}
	u.addEvent(ev)
	return added
}

// promptless makes the events of th that waited for a prompt until they
// expired a turn of their own, when they are an agent's own telemetry and
// hold a model or tool call: the prompt record was sent before the
// collector listened, or lost on the way, and no later turn of the thread
// came to take them (a conversation whose prompts all went missing). The
// turn is keyed by its earliest event, so a restart makes the same one
// (and more records of it after it went out join it, as late events do),
// and goes out marked prompt_missing (spanmodel). Waiting events of the
// agents' files, and bookkeeping alone, are dropped: a leading summary or
// snapshot is no turn.
func (a *assembler) promptless(th threadKey, t *thread) bool {
	if th.Subagent() || len(t.preamble) == 0 {
		return false
	}
	first, calls := 0, false
	for i := range t.preamble {
		ev := &t.preamble[i]
		if ev.Attributes[agentevent.AttrOrigin] != agentevent.OriginNative {
			return false
		}
		switch ev.Type {
		case agentevent.TypeAssistantMessage, agentevent.TypeToolCall, agentevent.TypeToolResult:
			calls = true
		}
		if p := &t.preamble[first]; ev.Sequence < p.Sequence || (ev.Sequence == p.Sequence && ev.EventID < p.EventID) {
			first = i
		}
	}
	lead := &t.preamble[first]
	if !calls || lead.EventID == "" {
		return false
	}
	key := unitKey{Thread: th, Prompt: lead.EventID}
	u := a.store.units[key]
	if u == nil {
		u = &unit{seen: map[string]struct{}{}, lastArrival: t.lastArrival}
		u.key = u.mem.key(key)
		u.host = u.mem.str(t.preambleHost)
		noted := t.notePrompt(lead.EventID, lead.Timestamp)
		if t.lastPrompt != noted && (t.lastPrompt == "" || lead.Sequence >= t.lastPromptSeq) {
			u.prevPrompt = t.lastPrompt
			t.lastPrompt, t.lastPromptSeq = noted, lead.Sequence
		}
	}
	a.store.setUnit(u.key, u)
	for i := range t.preamble {
		u.addEvent(&t.preamble[i])
	}
	t.preamble, t.preambleHost = nil, ""
	return true
}

// close emits every unit that is complete at now. With shutdown set, every
// open unit is complete (flushed as in_progress).
func (a *assembler) close(now time.Time, shutdown bool) closed {
	out := closed{traces: ptrace.NewTraces()}
	a.evictor.wakeDue(now)
	a.links.resolve(a.sched.checkAll)
	// Before the pass, so that a turn made of expired waiting events goes
	// out in it.
	out.noTurn += a.preambles.expire(now, shutdown, a.promptless)

	// The units of the groups that may be complete (schedule.go), or with
	// shutdown (and after a rollback or a load) every open unit.
	sorted := a.sched.pass(now, shutdown)
	if verifyPass != nil {
		verifyPass(a.sched, sorted, now, shutdown)
	}

	// Open subagent runs whose spawning unit is still open close with it.
	children, tops := a.rules.groups(sorted)
	awaiting := a.rules.awaitingIn(sorted)
	for _, k := range tops {
		if _, open := a.store.units[k]; !open {
			continue
		}
		reason, done := a.rules.closeReason(k, children, awaiting, now, shutdown)
		if !done {
			a.sched.schedule(k, a.rules.deadline(k, children, awaiting, now))
			continue
		}
		traceID, parent := a.placement(k)
		late := a.store.wentOut(k)
		var lateRows []agentevent.Event
		if late {
			lateRows = a.store.units[k].events
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

	a.prune()
	return out
}

// markClosed leaves the marker of every unit of an emitted tree in its
// thread, and adds to skip the span ids that a unit emitted before (late
// events of it) must not produce again.
func (a *assembler) markClosed(tr *spanmodel.Tree, traceID pcommon.TraceID, skip map[pcommon.SpanID]bool) {
	th := tr.Key.Thread
	t := a.store.threads[th]
	if t == nil {
		t = &thread{}
		a.store.setThread(th, t)
	}
	a.store.touch(th.Sess())
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

// collect removes the group topped by k from the open units and returns it
// as a tree.
func (a *assembler) collect(k unitKey, children map[unitKey][]unitKey, visited map[unitKey]bool) *spanmodel.Tree {
	visited[k] = true
	u := a.store.units[k]
	a.store.delUnit(k)
	evs := u.events
	// Sequence orders a thread's events (one thread = one file); the stable
	// sort keeps arrival order among equal (unknown) sequences.
	slices.SortStableFunc(evs, func(x, y agentevent.Event) int { return cmp.Compare(x.Sequence, y.Sequence) })
	t := &spanmodel.Tree{Key: k, Events: evs, PrevPrompt: u.prevPrompt, Host: u.host}
	t.Late = a.store.wentOut(k)
	if l, ok := a.store.links[k.Thread]; ok && k.Thread.Subagent() {
		t.NameHint = a.store.calls[callKey{Source: k.Thread.Source, Session: k.Thread.Session, CallID: l.CallID}].SubagentType
	}
	for _, c := range children[k] {
		if visited[c] {
			continue
		}
		t.Children = append(t.Children, spanmodel.Child{CallID: a.store.links[c.Thread].CallID, Run: a.collect(c, children, visited)})
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
	l, linked := a.store.links[k.Thread]
	linked = linked && l.Resolved && k.Thread.Subagent() && !visiting[l.Parent]
	switch {
	case linked && l.Turn:
		parent = spanmodel.UnitSpanID(l.Parent) // the turn's root
	case linked:
		parent = spanmodel.ToolSpanID(l.Parent.Thread, l.CallID)
	}
	if t := a.store.threads[k.Thread]; t != nil {
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
					if st, ok := sp.Attributes().Get(agentevent.AttrTurnStatus); ok {
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

// prune forgets the call and link entries of the sessions changed in this
// pass that can no longer matter: those of units neither open nor among
// their thread's recent markers. An entry only becomes one of those when
// its session changes (a unit of it goes out, its thread's markers move),
// so looking at the changed sessions finds them all.
func (a *assembler) prune() {
	known := func(k unitKey) bool {
		if _, open := a.store.units[k]; open {
			return true
		}
		t := a.store.threads[k.Thread]
		if t == nil {
			return false
		}
		_, sent := t.closedFor(k.Prompt)
		return sent
	}
	for sk := range a.store.dirty {
		idx := a.store.sessions[sk]
		if idx == nil {
			continue
		}
		for c := range idx.calls {
			if !known(a.store.calls[c].Unit) {
				a.store.delCall(c)
			}
		}
		for th := range idx.links {
			l := a.store.links[th]
			child := unitKey{Thread: th}
			if !known(child) && (!l.Resolved || !known(l.Parent)) && !a.threadOpen(th) {
				a.store.delLink(th)
			}
		}
	}
}

// threadOpen tells whether a thread has an open unit or events waiting for
// a prompt.
func (a *assembler) threadOpen(th threadKey) bool {
	if t := a.store.threads[th]; t != nil && len(t.preamble) > 0 {
		return true
	}
	idx := a.store.sessions[th.Sess()]
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

// verifyPass, when set (tests), is shown the units each close pass looks at.
var verifyPass func(sc *scheduler, sorted []unitKey, now time.Time, shutdown bool)
