// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import "time"

// timedEntry is an element of a timedHeap: it has a time and is told its
// place in the heap (for heap.Fix and heap.Remove; -1 once popped).
type timedEntry interface {
	dueAt() time.Time
	setIndex(i int)
}

// timedHeap is a min-heap by time (container/heap's interface) of entries
// that know their place in it.
type timedHeap[E timedEntry] []E

func (h timedHeap[E]) Len() int { return len(h) }

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
