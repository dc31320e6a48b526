// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

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

// scheduler chooses the units a close pass looks at: it holds the
// deadlines of the groups left open, the units and sessions to look at
// again, and whether the next pass is to look at every open unit. The
// store tells it what changed (groupWatch); the close rules give the
// deadlines.
type scheduler struct {
	store *sessionStore
	rules *closeRules
	// due are the deadlines of the groups left open, dueIdx the same by
	// top unit; fresh the units to look at in the next pass (loaded, or a
	// group that lost a member); recheck the sessions a unit of which the
	// last pass emitted; checkAll makes the next pass look at every open
	// unit (after a rollback).
	due      deadlines
	dueIdx   map[unitKey]*scheduled
	fresh    map[unitKey]bool
	recheck  map[sessKey]bool
	checkAll bool
}

func newScheduler(store *sessionStore, rules *closeRules) *scheduler {
	return &scheduler{
		store:   store,
		rules:   rules,
		dueIdx:  map[unitKey]*scheduled{},
		fresh:   map[unitKey]bool{},
		recheck: map[sessKey]bool{},
	}
}

// scheduled is one group's deadline, keyed by the group's top unit.
type scheduled struct {
	at    time.Time
	key   unitKey
	index int
}

func (s *scheduled) dueAt() time.Time { return s.at }

func (s *scheduled) setIndex(i int) { s.index = i }

// deadlines is a min-heap of group deadlines.
type deadlines = timedHeap[*scheduled]

// schedule sets the deadline of the group topped by k.
func (sc *scheduler) schedule(k unitKey, at time.Time) {
	if s, ok := sc.dueIdx[k]; ok {
		if !s.at.Equal(at) {
			s.at = at
			heap.Fix(&sc.due, s.index)
		}
		return
	}
	s := &scheduled{at: at, key: k}
	heap.Push(&sc.due, s)
	sc.dueIdx[k] = s
}

// left forgets the deadline of k (the unit left memory).
func (sc *scheduler) left(k unitKey) {
	if s, ok := sc.dueIdx[k]; ok {
		heap.Remove(&sc.due, s.index)
		delete(sc.dueIdx, k)
	}
}

// emitted forgets the deadline of k, which went out, and looks at its
// session again in the next pass.
func (sc *scheduler) emitted(k unitKey) {
	sc.left(k)
	sc.recheck[k.Thread.Sess()] = true
}

// changed makes the next pass look at the group holding k.
func (sc *scheduler) changed(k unitKey) { sc.fresh[k] = true }

// lookAtAll makes the next pass look at every open unit: groups across
// sessions went back in time (a rollback).
func (sc *scheduler) lookAtAll() { sc.checkAll = true }

// deadlineOf is the deadline of the group topped by k, if it has one.
func (sc *scheduler) deadlineOf(k unitKey) (time.Time, bool) {
	if s, ok := sc.dueIdx[k]; ok {
		return s.at, true
	}
	return time.Time{}, false
}

// toRecheck tells whether the next pass is to look at every unit of sk.
func (sc *scheduler) toRecheck(sk sessKey) bool { return sc.recheck[sk] }

// isFresh tells whether the next pass is to look at the group holding k.
func (sc *scheduler) isFresh(k unitKey) bool { return sc.fresh[k] }

// pass lists, in a fixed order, the units the close pass at now looks at:
// with shutdown, and after a rollback, every open unit; else those of
// every group that may have become complete since the previous pass.
func (sc *scheduler) pass(now time.Time, shutdown bool) []unitKey {
	if shutdown || sc.checkAll {
		sc.checkAll = false
		clear(sc.fresh)
		clear(sc.recheck)
		return sc.sortedUnits()
	}
	return sc.candidates(now)
}

// sortedUnits lists the open units in a fixed order, so that a close pass
// emits in the same order every time.
func (sc *scheduler) sortedUnits() []unitKey {
	keys := make([]unitKey, 0, len(sc.store.units))
	for k := range sc.store.units {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareUnits)
	return keys
}

// candidates lists, in a fixed order, every open unit of every group that
// may have become complete since the previous pass (see above).
func (sc *scheduler) candidates(now time.Time) []unitKey {
	seeds := make([]unitKey, 0, len(sc.fresh))
	for k := range sc.fresh {
		seeds = append(seeds, k)
	}
	clear(sc.fresh)
	addSession := func(sk sessKey) {
		if idx := sc.store.sessions[sk]; idx != nil {
			for k := range idx.units {
				seeds = append(seeds, k)
			}
		}
	}
	for sk := range sc.store.dirty {
		addSession(sk)
	}
	for sk := range sc.recheck {
		addSession(sk)
	}
	clear(sc.recheck)
	for len(sc.due) > 0 && !now.Before(sc.due[0].at) {
		s := heap.Pop(&sc.due).(*scheduled)
		delete(sc.dueIdx, s.key)
		seeds = append(seeds, s.key)
	}

	set := map[unitKey]bool{}
	var addGroup func(k unitKey)
	addGroup = func(k unitKey) {
		if set[k] {
			return
		}
		set[k] = true
		for _, c := range sc.openChildren(k) {
			addGroup(c)
		}
	}
	for _, k := range seeds {
		if _, open := sc.store.units[k]; !open || set[k] {
			continue
		}
		// Up to the top of k's group; on a cycle of links (bad input), any
		// unit of the cycle reaches the whole group.
		seen := map[unitKey]bool{k: true}
		top := k
		for {
			p, ok := sc.store.openParent(top)
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

// openChildren are the open units k holds open, in a fixed order.
func (sc *scheduler) openChildren(k unitKey) []unitKey {
	var out []unitKey
	for th := range sc.store.kids[k] {
		c := unitKey{Thread: th}
		if _, open := sc.store.units[c]; !open {
			continue
		}
		if p, ok := sc.store.openParent(c); ok && p == k {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, compareUnits)
	return out
}

// settle gives each group of sorted (the open units of a session read
// back at start, in a fixed order) the deadline the first close pass would
// give it: now, for a group already complete, so that the first pass
// closes it.
func (sc *scheduler) settle(sorted []unitKey, now time.Time) {
	children, tops := sc.rules.groups(sorted)
	awaiting := sc.rules.awaitingIn(sorted)
	for _, k := range tops {
		at := now
		if _, done := sc.rules.closeReason(k, children, awaiting, now, false); !done {
			at = sc.rules.deadline(k, children, awaiting, now)
		}
		sc.schedule(k, at)
	}
	for _, k := range sorted {
		delete(sc.fresh, k)
	}
}
