// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector // import "github.com/agentotel/agentotel/connector/agentspanconnector"

import (
	"container/heap"
	"slices"
	"time"
)

// A close pass looks only at the groups (a turn and the subagent runs it
// holds open) that may have become complete since the previous pass:
//
//   - those with a unit in a session changed since the last flush (events
//     added, a caught-up flag changed, a link resolved), or in a session a
//     unit of which the previous pass emitted (an open tool call of it no
//     longer counts, its thread's markers moved), or loaded from storage;
//   - those whose deadline has come: the earliest wall-clock time at which,
//     with nothing changed, the group would become complete by time alone
//     (turn_idle_timeout, max_open_tool_duration, the wait for a subagent).
//
// A group left alone is one whose completeness inputs did not change and
// whose deadline is still ahead, so a full pass would not have closed it
// either: the outcome and the order of emission are those of a pass over
// every open unit, while a pass costs what the batch touched plus
// O(log n) per group whose deadline came.

// scheduled is one group's deadline, keyed by the group's top unit.
type scheduled struct {
	at    time.Time
	key   unitKey
	index int
}

func (s *scheduled) dueAt() time.Time { return s.at }
func (s *scheduled) setIndex(i int)   { s.index = i }

// deadlines is a min-heap of group deadlines.
type deadlines = timedHeap[*scheduled]

// timedEntry is an element of a timedHeap: it has a time and is told its
// place in the heap (for heap.Fix and heap.Remove; -1 once popped).
type timedEntry interface {
	dueAt() time.Time
	setIndex(i int)
}

// timedHeap is a min-heap by time (container/heap's interface) of entries
// that know their place in it.
type timedHeap[E timedEntry] []E

func (h timedHeap[E]) Len() int           { return len(h) }
func (h timedHeap[E]) Less(i, j int) bool { return h[i].dueAt().Before(h[j].dueAt()) }
func (h timedHeap[E]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].setIndex(i)
	h[j].setIndex(j)
}

func (h *timedHeap[E]) Push(x any) {
	e := x.(E)
	e.setIndex(len(*h))
	*h = append(*h, e)
}

func (h *timedHeap[E]) Pop() any {
	old := *h
	e := old[len(old)-1]
	var zero E
	old[len(old)-1] = zero
	*h = old[:len(old)-1]
	e.setIndex(-1)
	return e
}

// schedule sets the deadline of the group topped by k.
func (a *assembler) schedule(k unitKey, at time.Time) {
	if s, ok := a.dueIdx[k]; ok {
		if !s.at.Equal(at) {
			s.at = at
			heap.Fix(&a.due, s.index)
		}
		return
	}
	s := &scheduled{at: at, key: k}
	heap.Push(&a.due, s)
	a.dueIdx[k] = s
}

// unschedule forgets the deadline of k (the unit left memory).
func (a *assembler) unschedule(k unitKey) {
	if s, ok := a.dueIdx[k]; ok {
		heap.Remove(&a.due, s.index)
		delete(a.dueIdx, k)
	}
}

// indexKid keeps kids in step with a change of child's link from old to l.
func (a *assembler) indexKid(child threadKey, old link, hadOld bool, l link, hasNew bool) {
	if hadOld && old.Resolved {
		if m := a.kids[old.Parent]; m != nil {
			delete(m, child)
			if len(m) == 0 {
				delete(a.kids, old.Parent)
			}
		}
		if !hasNew || !l.Resolved || l.Parent != old.Parent {
			// The old parent's group lost a member: look at it again.
			a.fresh[old.Parent] = true
		}
	}
	if hasNew && l.Resolved {
		m := a.kids[l.Parent]
		if m == nil {
			m = map[threadKey]struct{}{}
			a.kids[l.Parent] = m
		}
		m[child] = struct{}{}
	}
}

// openParent is the open unit holding k open (its resolved spawner), if any.
func (a *assembler) openParent(k unitKey) (unitKey, bool) {
	l, ok := a.links[k.Thread]
	if !ok || !l.Resolved || !k.Thread.Subagent() || l.Parent == k {
		return unitKey{}, false
	}
	_, open := a.units[l.Parent]
	return l.Parent, open
}

// openChildren are the open units k holds open, in a fixed order.
func (a *assembler) openChildren(k unitKey) []unitKey {
	var out []unitKey
	for th := range a.kids[k] {
		c := unitKey{Thread: th}
		if _, open := a.units[c]; !open {
			continue
		}
		if p, ok := a.openParent(c); ok && p == k {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, compareUnits)
	return out
}

// candidates lists, in a fixed order, every open unit of every group that
// may have become complete since the previous pass (see above).
func (a *assembler) candidates(now time.Time) []unitKey {
	seeds := make([]unitKey, 0, len(a.fresh))
	for k := range a.fresh {
		seeds = append(seeds, k)
	}
	clear(a.fresh)
	addSession := func(sk sessKey) {
		if idx := a.sessions[sk]; idx != nil {
			for k := range idx.units {
				seeds = append(seeds, k)
			}
		}
	}
	for sk := range a.dirty {
		addSession(sk)
	}
	for sk := range a.recheck {
		addSession(sk)
	}
	clear(a.recheck)
	for len(a.due) > 0 && !now.Before(a.due[0].at) {
		s := heap.Pop(&a.due).(*scheduled)
		delete(a.dueIdx, s.key)
		seeds = append(seeds, s.key)
	}

	set := map[unitKey]bool{}
	var addGroup func(k unitKey)
	addGroup = func(k unitKey) {
		if set[k] {
			return
		}
		set[k] = true
		for _, c := range a.openChildren(k) {
			addGroup(c)
		}
	}
	for _, k := range seeds {
		if _, open := a.units[k]; !open || set[k] {
			continue
		}
		// Up to the top of k's group; on a cycle of links (bad input), any
		// unit of the cycle reaches the whole group.
		seen := map[unitKey]bool{k: true}
		top := k
		for {
			p, ok := a.openParent(top)
			if !ok || seen[p] {
				break
			}
			seen[p] = true
			top = p
		}
		addGroup(top)
	}
	keys := make([]unitKey, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareUnits)
	return keys
}

// awaitingIn marks the units of sorted with a tool call that spawned a
// subagent none of whose events has arrived yet (its file not read yet).
func (a *assembler) awaitingIn(sorted []unitKey) map[unitKey]bool {
	out := map[unitKey]bool{}
	for _, k := range sorted {
		for child := range a.kids[k] {
			l, ok := a.links[child]
			if !ok || !l.Resolved || l.Parent != k {
				continue
			}
			if idx := a.sessions[child.Sess()]; idx == nil || len(idx.units) == 0 {
				continue // as a pass over the sessions with an open unit
			}
			if _, seen := a.threads[child]; !seen {
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
func (a *assembler) deadline(k unitKey, children map[unitKey][]unitKey, awaiting map[unitKey]bool, now time.Time) time.Time {
	last, arrived := a.lastActivity(k, children, map[unitKey]bool{})
	if groupAwaits(k, children, awaiting, map[unitKey]bool{}) && now.Sub(arrived) < a.idleTimeout {
		return arrived.Add(a.idleTimeout)
	}
	if a.awaitsClaim(k) {
		return arrived.Add(a.claimWait(k))
	}
	bound := a.idleTimeout
	if a.groupOpenCall(k, children, map[unitKey]bool{}) {
		bound = a.maxOpenTool
	}
	at := arrived.Add(bound)
	if a.groupCaughtUp(k, children, map[unitKey]bool{}) {
		if last.IsZero() {
			last = arrived
		}
		if byEvents := last.Add(bound); byEvents.Before(at) {
			at = byEvents
		}
	}
	return at
}
