// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"time"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
)

// closeRules decide, from the store alone, whether the group a unit tops
// (a turn and the open subagent runs it holds open) is complete, and if
// not, the earliest wall-clock time at which it can become complete with
// nothing else changed (its deadline). They change nothing.
type closeRules struct {
	idleTimeout time.Duration
	// maxOpenTool replaces idleTimeout for a group with a tool call open.
	maxOpenTool time.Duration
	store       *sessionStore
}

// closeReason decides whether the group topped by k is complete.
// A turn closes on its thread's next prompt; on the vendor's end marker
// once the reader has nothing more of the session (caught up); or when idle.
// Idle is measured two ways, never at a read-batch boundary: the reader has
// caught up with the session and the group's last event is older than the
// bound (history, and a live turn gone quiet), or nothing of the group has
// arrived for the bound of wall-clock time (a live file, or a reader that
// does not say it caught up). The bound is turn_idle_timeout, or
// max_open_tool_duration while a tool call of the group has no result.
func (r *closeRules) closeReason(k unitKey, children map[unitKey][]unitKey, awaiting map[unitKey]bool, now time.Time, shutdown bool) (spanmodel.CloseReason, bool) {
	if shutdown {
		return spanmodel.ClosedByShutdown, true
	}
	if groupAwaits(k, children, awaiting, map[unitKey]bool{}) {
		// A subagent this turn spawned has not been read yet (its own file):
		// its work belongs in the turn's rollup, so the turn waits for it —
		// at most turn_idle_timeout of wall-clock time since the group's
		// last event arrived, then it goes out without it.
		if _, arrived := r.lastActivity(k, children, map[unitKey]bool{}); now.Sub(arrived) < r.idleTimeout {
			return spanmodel.ClosedByIdle, false
		}
	}
	if !k.Thread.Subagent() {
		if t := r.store.threads[k.Thread]; t != nil && t.lastPrompt != "" && t.lastPrompt != k.Prompt {
			return spanmodel.ClosedByNextPrompt, true
		}
	}
	last, arrived := r.lastActivity(k, children, map[unitKey]bool{})
	if r.awaitsClaim(k) {
		// Nobody has claimed this subagent yet: wait (wall clock) for the
		// spawning call to show up before emitting it as its own trace —
		// longer while a tool call of its session is still running (it
		// may be the one that spawned it, or one of its own).
		return spanmodel.ClosedByIdle, now.Sub(arrived) >= r.claimWait(k)
	}
	caughtUp := r.groupCaughtUp(k, children, map[unitKey]bool{})
	if caughtUp && (r.store.units[k].ended != "" || r.store.wentOut(k)) {
		// Ended by the vendor, or more of a unit that went out already
		// (usage written after the end): nothing to wait for.
		return spanmodel.ClosedByEnd, true
	}
	bound := r.idleTimeout
	if r.groupOpenCall(k, children, map[unitKey]bool{}) {
		bound = r.maxOpenTool
	}
	if now.Sub(arrived) >= bound {
		return spanmodel.ClosedByIdle, true
	}
	if last.IsZero() {
		last = arrived
	}
	return spanmodel.ClosedByIdle, caughtUp && now.Sub(last) >= bound
}

// groupAwaits tells whether a unit of the group topped by k awaits a subagent.
func groupAwaits(k unitKey, children map[unitKey][]unitKey, awaiting, visited map[unitKey]bool) bool {
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

// awaitsClaim tells whether k is a subagent's unit that no tool call or turn
// has claimed yet, and that may still be claimed: not one whose events say
// nothing spawned it (a Claude Code warmup), which closes like a turn.
func (r *closeRules) awaitsClaim(k unitKey) bool {
	if !k.Thread.Subagent() {
		return false
	}
	if l, ok := r.store.links[k.Thread]; ok && l.Resolved {
		return false
	}
	u := r.store.units[k]
	return u == nil || !u.unspawned
}

// claimWait is how long, since its last event arrived, an unclaimed
// subagent's unit waits for the call that spawned it (awaitsClaim):
// turn_idle_timeout, max_open_tool_duration while a tool call of its
// session has no result.
func (r *closeRules) claimWait(k unitKey) time.Duration {
	if r.sessionOpenCall(k.Thread.Sess()) {
		return r.maxOpenTool
	}
	return r.idleTimeout
}

// groupOpenCall tells whether a unit of the group topped by k has a tool
// call without a result.
func (r *closeRules) groupOpenCall(k unitKey, children map[unitKey][]unitKey, visited map[unitKey]bool) bool {
	if visited[k] {
		return false
	}
	visited[k] = true
	if len(r.store.units[k].openCalls) > 0 {
		return true
	}
	for _, c := range children[k] {
		if r.groupOpenCall(c, children, visited) {
			return true
		}
	}
	return false
}

// groupCaughtUp tells whether the reader is done, for now, with the file
// of every unit of the group topped by k.
func (r *closeRules) groupCaughtUp(k unitKey, children map[unitKey][]unitKey, visited map[unitKey]bool) bool {
	if visited[k] {
		return true
	}
	visited[k] = true
	idx := r.store.sessions[k.Thread.Sess()]
	if idx == nil || !idx.caughtUp[r.store.units[k].lastFile] {
		return false
	}
	for _, c := range children[k] {
		if !r.groupCaughtUp(c, children, visited) {
			return false
		}
	}
	return true
}

// lastActivity is the latest event timestamp of the group topped by k and
// the latest wall-clock arrival in it.
func (r *closeRules) lastActivity(k unitKey, children map[unitKey][]unitKey, visited map[unitKey]bool) (last, arrived time.Time) {
	if visited[k] {
		return last, arrived
	}
	visited[k] = true
	u := r.store.units[k]
	last, arrived = u.lastEvent, u.lastArrival
	for _, c := range children[k] {
		l, ar := r.lastActivity(c, children, visited)
		if l.After(last) {
			last = l
		}
		if ar.After(arrived) {
			arrived = ar
		}
	}
	return last, arrived
}

// groups finds, among sorted (whole groups, in a fixed order), which open
// unit holds which open subagent runs, and the top of each group.
func (r *closeRules) groups(sorted []unitKey) (children map[unitKey][]unitKey, tops []unitKey) {
	children = map[unitKey][]unitKey{}
	hasOpenParent := map[unitKey]bool{}
	for _, k := range sorted {
		if l, ok := r.store.links[k.Thread]; ok && l.Resolved && k.Thread.Subagent() {
			if _, open := r.store.units[l.Parent]; open && l.Parent != k {
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

// awaitingIn marks the units of sorted with a tool call that spawned a
// subagent none of whose events has arrived yet (its file not read yet).
func (r *closeRules) awaitingIn(sorted []unitKey) map[unitKey]bool {
	out := map[unitKey]bool{}
	for _, k := range sorted {
		for child := range r.store.kids[k] {
			l, ok := r.store.links[child]
			if !ok || !l.Resolved || l.Parent != k {
				continue
			}
			if idx := r.store.sessions[child.Sess()]; idx == nil || len(idx.units) == 0 {
				continue // as a pass over the sessions with an open unit
			}
			if _, seen := r.store.threads[child]; !seen {
				out[k] = true
				break
			}
		}
	}
	return out
}

// deadline is the earliest wall-clock time at which the group topped by k,
// found not complete at now, can become complete with nothing else
// changed: the time checks of closeReason, in its order.
func (r *closeRules) deadline(k unitKey, children map[unitKey][]unitKey, awaiting map[unitKey]bool, now time.Time) time.Time {
	last, arrived := r.lastActivity(k, children, map[unitKey]bool{})
	if groupAwaits(k, children, awaiting, map[unitKey]bool{}) && now.Sub(arrived) < r.idleTimeout {
		return arrived.Add(r.idleTimeout)
	}
	if r.awaitsClaim(k) {
		return arrived.Add(r.claimWait(k))
	}
	bound := r.idleTimeout
	if r.groupOpenCall(k, children, map[unitKey]bool{}) {
		bound = r.maxOpenTool
	}
	at := arrived.Add(bound)
	if r.groupCaughtUp(k, children, map[unitKey]bool{}) {
		if last.IsZero() {
			last = arrived
		}
		if byEvents := last.Add(bound); byEvents.Before(at) {
			at = byEvents
		}
	}
	return at
}

// sessionOpenCall tells whether an open unit of the session has a tool
// call without a result.
func (r *closeRules) sessionOpenCall(sk sessKey) bool {
	idx := r.store.sessions[sk]
	if idx == nil {
		return false
	}
	for k := range idx.units {
		if len(r.store.units[k].openCalls) > 0 {
			return true
		}
	}
	return false
}
