// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector // import "github.com/agentotel/agentotel/connector/agentspanconnector"

import (
	"container/heap"
	"time"
) // evictor holds what eviction needs besides the sessions: the sessions in
// memory by last use, and the evicted sessions with open work.
type evictor struct {
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
		if delete(ev.waitingAsleep[g], sk); len(ev.waitingAsleep[g]) == 0 {
			delete(ev.waitingAsleep, g)
		}
	}
	delete(ev.asleep, sk)
	ev.sleepingUnits -= s.units
}
