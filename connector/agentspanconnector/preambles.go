// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"container/heap"
	"time"
)

// preambles are the threads in memory holding events that wait for a
// prompt, queued by when they expire: no turn came for them within
// turn_idle_timeout of wall clock.
type preambles struct {
	idleTimeout time.Duration
	store       *sessionStore
	preambled   map[threadKey]*preambleEntry
	preambleDue preambleQueue
}

func newPreambles(idleTimeout time.Duration, store *sessionStore) *preambles {
	return &preambles{idleTimeout: idleTimeout, store: store, preambled: map[threadKey]*preambleEntry{}}
}

// preambleEntry is a preambled thread in preambleDue: when its events
// expire, unless more came since.
type preambleEntry struct {
	at    time.Time
	th    threadKey
	index int
}

func (e *preambleEntry) dueAt() time.Time { return e.at }

func (e *preambleEntry) setIndex(i int) { e.index = i }

// preambleQueue is a min-heap of preambled threads by due time.
type preambleQueue = timedHeap[*preambleEntry]

// note marks a thread as holding events that wait for a prompt, the latest
// of which arrived at lastArrival.
func (pq *preambles) note(th threadKey, lastArrival time.Time) {
	if _, ok := pq.preambled[th]; ok {
		return
	}
	e := &preambleEntry{at: lastArrival.Add(pq.idleTimeout), th: th}
	heap.Push(&pq.preambleDue, e)
	pq.preambled[th] = e
}

// unpreamble forgets that a thread holds events waiting for a prompt (a
// prompt came, they were dropped, or the thread leaves memory), its entry
// in preambleDue included: the queue holds only threads in memory, not
// every thread that had such events within turn_idle_timeout (in a
// backfill, nearly every Claude Code session begins with one).
func (pq *preambles) unpreamble(th threadKey) {
	if e, ok := pq.preambled[th]; ok {
		heap.Remove(&pq.preambleDue, e.index)
		delete(pq.preambled, th)
	}
}

// expire ends the wait of the events that waited for a prompt of their
// thread for turn_idle_timeout of wall clock (all of them at shutdown): no
// turn came for them. claim may take them as a turn of their own (it then
// empties the preamble); the others are dropped, and counted. The queue is
// by when each thread was queued; a thread that got more events since
// moves back to its latest, so a pass costs the threads due, not every
// thread waiting.
func (pq *preambles) expire(now time.Time, shutdown bool, claim func(th threadKey, t *thread) bool) (dropped int) {
	drop := func(th threadKey, t *thread) {
		if claim(th, t) {
			pq.unpreamble(th)
			return
		}
		dropped += len(t.preamble)
		t.preamble, t.preambleHost = nil, ""
		pq.unpreamble(th)
		pq.store.touch(th.Sess())
	}
	if shutdown {
		for th := range pq.preambled {
			if t := pq.store.threads[th]; t != nil && len(t.preamble) > 0 {
				drop(th, t)
			} else {
				pq.unpreamble(th)
			}
		}
		return dropped
	}
	for len(pq.preambleDue) > 0 && !now.Before(pq.preambleDue[0].at) {
		e := pq.preambleDue[0]
		t := pq.store.threads[e.th]
		if t == nil || len(t.preamble) == 0 {
			pq.unpreamble(e.th)
			continue
		}
		if at := t.lastArrival.Add(pq.idleTimeout); now.Before(at) {
			e.at = at
			heap.Fix(&pq.preambleDue, 0)
			continue
		}
		drop(e.th, t)
	}
	if verifyPreambles != nil {
		for th := range pq.preambled {
			if t := pq.store.threads[th]; t != nil && len(t.preamble) > 0 && now.Sub(t.lastArrival) >= pq.idleTimeout {
				verifyPreambles(th)
			}
		}
	}
	return dropped
}

// verifyPreambles, when set (tests), is told of a thread whose waiting
// events expire kept though a walk over every thread expires them.
var verifyPreambles func(th threadKey)
