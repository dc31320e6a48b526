// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector // import "github.com/agentotel/agentotel/connector/agentspanconnector"

import (
	"container/heap"
	"time"
) // A close pass looks only at the groups (a turn and the subagent runs it
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

// scheduler holds what a close pass looks at besides the changed
// sessions: the deadlines of the groups left open, the subagent threads
// each resolved link makes a child of a unit, the units to look at again.
type scheduler struct {
	// kids are the subagent threads whose resolved link names each parent
	// unit; due the deadlines of the groups left open, dueIdx the same by
	// top unit; fresh the units to look at in the next pass (loaded, or a
	// group that lost a member); recheck the sessions a unit of which the
	// last pass emitted; checkAll makes the next pass look at every open
	// unit (after a rollback).
	kids     map[unitKey]map[threadKey]struct{}
	due      deadlines
	dueIdx   map[unitKey]*scheduled
	fresh    map[unitKey]bool
	recheck  map[sessKey]bool
	checkAll bool
}

func newScheduler() scheduler {
	return scheduler{
		kids:    map[unitKey]map[threadKey]struct{}{},
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

// unschedule forgets the deadline of k (the unit left memory).
func (sc *scheduler) unschedule(k unitKey) {
	if s, ok := sc.dueIdx[k]; ok {
		heap.Remove(&sc.due, s.index)
		delete(sc.dueIdx, k)
	}
}

// indexKid keeps kids in step with a change of child's link from old to l.
func (sc *scheduler) indexKid(child threadKey, old link, hadOld bool, l link, hasNew bool) {
	if hadOld && old.Resolved {
		if m := sc.kids[old.Parent]; m != nil {
			delete(m, child)
			if len(m) == 0 {
				delete(sc.kids, old.Parent)
			}
		}
		if !hasNew || !l.Resolved || l.Parent != old.Parent {
			// The old parent's group lost a member: look at it again.
			sc.fresh[old.Parent] = true
		}
	}
	if hasNew && l.Resolved {
		m := sc.kids[l.Parent]
		if m == nil {
			m = map[threadKey]struct{}{}
			sc.kids[l.Parent] = m
		}
		m[child] = struct{}{}
	}
}
