// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector // import "github.com/agentotel/agentotel/connector/agentspanconnector"

import (
	"container/heap"
	"time"
) // preambles are the threads holding events that wait for a prompt,
// queued by when their events would be dropped (see dropPreambles).
type preambles struct {
	preambled   map[threadKey]*preambleEntry
	preambleDue preambleQueue
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

// preambleEntry is a preambled thread in preambleDue: when its events are
// due to be dropped, unless more came since.
type preambleEntry struct {
	at    time.Time
	th    threadKey
	index int
}

func (e *preambleEntry) dueAt() time.Time { return e.at }

func (e *preambleEntry) setIndex(i int) { e.index = i }

// preambleQueue is a min-heap of preambled threads by due time.
type preambleQueue = timedHeap[*preambleEntry]
