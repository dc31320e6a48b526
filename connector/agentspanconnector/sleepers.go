// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"container/heap"
	"slices"
	"time"
)

// evictor keeps memory under max_cached_sessions (eviction.go): it holds
// the sessions in memory by last use, and what is left in memory of the
// evicted sessions with open work (sleepers), so that they are read back
// when something of theirs is due or an anchor comes for them. The store
// tells it of every use and of every session coming back (sessionUse).
type evictor struct {
	idleTimeout time.Duration
	store       *sessionStore
	plan        sleepPlan
	storage     interface{ stored() bool }
	// lru queues the sessions held by last use, for evict; lruIdx is the
	// entry of each session queued.
	lru    lruQueue
	lruIdx map[sessKey]*queued
	// wake holds the evicted sessions with open work by when something of
	// theirs is due, asleep the same by session, sleepingUnits their open
	// units.
	wake          wakeHeap
	asleep        map[sessKey]*sleeper
	sleepingUnits int
	// waitingAsleep are the evicted sessions whose subagent links wait
	// for an anchor, by what the anchor must match, with the latest time
	// of an anchor that resolves one of them.
	waitingAsleep map[anchorGroup]map[sessKey]time.Time
}

// sleepPlan is what eviction asks of the scheduler: whether a session's
// groups are settled (the next pass is not to look at them whatever their
// deadlines), their deadlines, and settling a session read back at start.
type sleepPlan interface {
	toRecheck(sk sessKey) bool
	isFresh(k unitKey) bool
	deadlineOf(k unitKey) (time.Time, bool)
	settle(sorted []unitKey, now time.Time)
}

func newEvictor(idleTimeout time.Duration, store *sessionStore) *evictor {
	return &evictor{
		idleTimeout:   idleTimeout,
		store:         store,
		lruIdx:        map[sessKey]*queued{},
		asleep:        map[sessKey]*sleeper{},
		waitingAsleep: map[anchorGroup]map[sessKey]time.Time{},
	}
}

// queued is a session in lru: used is its last use when queued, or older.
type queued struct {
	used uint64
	sk   sessKey
}

// lruQueue is a min-heap of sessions by last use.
type lruQueue []*queued

func (q lruQueue) Len() int { return len(q) }

func (q lruQueue) Less(i, j int) bool { return q[i].used < q[j].used }

func (q lruQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }

func (q *lruQueue) Push(x any) { *q = append(*q, x.(*queued)) }

func (q *lruQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return e
}

// sleeper is an evicted session with open work: when it is due (zero
// when nothing of it is due by time alone), and the anchors its subagent
// links wait for (the latest time of an anchor that resolves one, by
// anchor kind and project). index is its place in wake, -1 when not there.
type sleeper struct {
	at    time.Time
	sk    sessKey
	units int
	waits map[anchorGroup]time.Time
	index int
}

func (s *sleeper) dueAt() time.Time { return s.at }

func (s *sleeper) setIndex(i int) { s.index = i }

// wakeHeap is a min-heap of sleepers by wake time.
type wakeHeap = timedHeap[*sleeper]

// enqueue puts a session in lru unless it is there already (by an older
// use, which evict corrects when it comes to it).
func (ev *evictor) enqueue(sk sessKey, used uint64) {
	if _, ok := ev.lruIdx[sk]; ok {
		return
	}
	e := &queued{used: used, sk: sk}
	ev.lruIdx[sk] = e
	heap.Push(&ev.lru, e)
}

// forget takes a session leaving memory out of lru (evict pops its entry
// when it comes to it).
func (ev *evictor) forget(sk sessKey) { delete(ev.lruIdx, sk) }

// unsleep forgets the wake entry of a session coming back to memory.
func (ev *evictor) unsleep(sk sessKey) {
	s, ok := ev.asleep[sk]
	if !ok {
		return
	}
	if s.index >= 0 {
		heap.Remove(&ev.wake, s.index)
	}
	for g := range s.waits {
		delete(ev.waitingAsleep[g], sk)
		if len(ev.waitingAsleep[g]) == 0 {
			delete(ev.waitingAsleep, g)
		}
	}
	delete(ev.asleep, sk)
	ev.sleepingUnits -= s.units
}

// wakeDue reads back the sessions whose wake time came. They count as
// changed, so that a failure to read one back rolls it back like a batch's.
func (ev *evictor) wakeDue(now time.Time) {
	for len(ev.wake) > 0 && !now.Before(ev.wake[0].at) {
		ev.store.touch(ev.wake[0].sk) // unsleep pops it
	}
}

// wokenBy lists, in a fixed order, the sleeping sessions with a subagent
// link that the anchor an resolves (an anchor of its kind and project at
// or before the subagent's start plus anchorSlack, as anchorFor looks
// for): the anchor is to read them back.
func (ev *evictor) wokenBy(an anchor) []sessKey {
	var due []sessKey
	for sk, until := range ev.waitingAsleep[anchorGroup{an.Source, an.Kind, an.Project}] {
		if !an.At.After(until) {
			due = append(due, sk)
		}
	}
	slices.SortFunc(due, compareSessions)
	return due
}
