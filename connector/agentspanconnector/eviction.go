// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"cmp"
	"container/heap"
	"slices"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// evict drops least recently used sessions from memory while more than
// limit are held, down to nine in ten of limit. Only sessions with nothing
// unsaved are dropped: with storage their state is there and is read back
// when the session is next needed; without, they are forgotten (what that
// costs: docs/design/memory.md, "The connector"), so only those with nothing
// left to do (not active) go.
//
// With storage, a session with open work goes too (see evictable): its open
// units' events are saved already. What stays of it in memory is one entry
// in the wake heap, the earliest deadline of its groups (and of its events
// waiting for a prompt); when that comes, the next close pass reads it back
// before it looks for what to close, so it closes exactly when it would
// have in memory. An event of it reads it back earlier.
//
// The sessions are taken from lru, oldest use first, so that an eviction
// costs what it drops and O(log n) per session it passes over, not a walk
// over every session held.
func (ev *evictor) evict(limit int) {
	if len(ev.store.sessions) <= limit {
		return
	}
	var want []sessKey
	if verifyEvict != nil {
		want = ev.evictionsByWalk(limit)
	}
	var dropped, aside []sessKey
	target := limit - limit/10
	for len(ev.store.sessions) > target && len(ev.lru) > 0 {
		e := ev.lru[0]
		idx := ev.store.sessions[e.sk]
		if idx == nil || ev.lruIdx[e.sk] != e {
			heap.Pop(&ev.lru) // left memory since
			continue
		}
		if e.used != idx.used {
			// Used since it was queued: queue it by its latest use.
			e.used = idx.used
			heap.Fix(&ev.lru, 0)
			continue
		}
		heap.Pop(&ev.lru)
		if ev.store.dirty[e.sk] {
			aside = append(aside, e.sk)
			continue
		}
		switch ok, later := ev.evictable(e.sk); {
		case later:
			aside = append(aside, e.sk)
			continue
		case !ok:
			delete(ev.lruIdx, e.sk)
			continue // queued again when next changed (touch)
		}
		delete(ev.lruIdx, e.sk)
		dropped = append(dropped, e.sk)
		ev.sleep(e.sk)
	}
	for _, sk := range aside {
		heap.Push(&ev.lru, ev.lruIdx[sk])
	}
	if verifyEvict != nil {
		verifyEvict(want, dropped)
	}
}

// evictionsByWalk is what evict drops, found by a walk over every session.
func (ev *evictor) evictionsByWalk(limit int) []sessKey {
	var cands []sessKey
	for sk := range ev.store.sessions {
		if ok, _ := ev.evictable(sk); ok && !ev.store.dirty[sk] {
			cands = append(cands, sk)
		}
	}
	slices.SortFunc(cands, func(x, y sessKey) int { return cmp.Compare(ev.store.sessions[x].used, ev.store.sessions[y].used) })
	n := len(ev.store.sessions) - (limit - limit/10)
	return cands[:min(max(n, 0), len(cands))]
}

// verifyEvict, when set (tests), is shown what a walk over every session
// would drop and what evict dropped.
var verifyEvict func(want, got []sessKey)

// evictable tells whether a session can leave memory now (ok), or may
// later without being used again (later: the next close pass is to look at
// some of its units, see schedule.go).
//
// A session with nothing left to do always can. One with open work can
// only with storage (its events are there) and only while its groups'
// outcome depends on nothing but itself, the clock and the anchors: none
// of its open units is held open by, or holds open, a unit of another
// session (a subagent linked by an anchor). A subagent thread waiting for
// an anchor does not keep it: the anchor that can resolve the link wakes
// it (see sleep and linker.addAnchor).
func (ev *evictor) evictable(sk sessKey) (ok, later bool) {
	if !ev.store.active(sk) {
		return true, false
	}
	if !ev.storage.stored() {
		return false, false
	}
	idx := ev.store.sessions[sk]
	for th := range idx.links {
		if l := ev.store.links[th]; l.Resolved && l.Parent.Thread.Sess() != sk {
			return false, false
		}
	}
	if ev.plan.toRecheck(sk) {
		return false, true
	}
	for k := range idx.units {
		if ev.plan.isFresh(k) {
			return false, true
		}
		for th := range ev.store.kids[k] {
			if th.Sess() != sk {
				return false, false
			}
		}
		if _, held := ev.store.openParent(k); !held {
			if _, ok := ev.plan.deadlineOf(k); !ok {
				return false, true // not looked at by a pass yet
			}
		}
	}
	return true, false
}

// sleep drops a session from memory, leaving an entry in the wake heap
// when something of it is due at a time: the earliest deadline of its open
// groups, or when its events waiting for a prompt are dropped. A session
// whose subagent threads wait for an anchor also leaves what each waits
// for (anchor kind, project, latest time) in waitingAsleep, so that the
// anchor that would resolve one reads the session back (linker.addAnchor)
// in the pass that resolves it in memory.
func (ev *evictor) sleep(sk sessKey) {
	idx := ev.store.sessions[sk]
	var at time.Time
	earlier := func(t time.Time) {
		if at.IsZero() || t.Before(at) {
			at = t
		}
	}
	for k := range idx.units {
		if due, ok := ev.plan.deadlineOf(k); ok {
			earlier(due)
		}
	}
	for th := range idx.threads {
		if t := ev.store.threads[th]; t != nil && len(t.preamble) > 0 {
			earlier(t.lastArrival.Add(ev.idleTimeout))
		}
	}
	var waits map[anchorGroup]time.Time
	for th := range idx.links {
		if l := ev.store.links[th]; !l.Resolved && l.Turn && l.Anchor != "" {
			if waits == nil {
				waits = map[anchorGroup]time.Time{}
			}
			// Copies, like sk below: the link's strings are an event's.
			g := anchorGroup{agentevent.Source(strings.Clone(string(th.Source))), strings.Clone(l.Anchor), strings.Clone(l.Project)}
			if until := l.At.Add(anchorSlack); until.After(waits[g]) {
				waits[g] = until
			}
		}
	}
	units := len(idx.units)
	ev.store.drop(sk)
	if at.IsZero() && units == 0 && len(waits) == 0 {
		return
	}
	sk = ownKey(sk)
	s := &sleeper{at: at, sk: sk, units: units, waits: waits, index: -1}
	if !at.IsZero() {
		heap.Push(&ev.wake, s)
	}
	for g, until := range waits {
		m := ev.waitingAsleep[g]
		if m == nil {
			m = map[sessKey]time.Time{}
			ev.waitingAsleep[g] = m
		}
		m[sk] = until
	}
	ev.asleep[sk] = s
	ev.sleepingUnits += units
}

// settle puts a session just read back at start to sleep, as evict would
// after the first close pass: each of its groups gets the deadline that
// pass would give it (now, for a group already complete, so that the first
// pass closes it), and the session leaves memory with its wake entry. A
// session whose groups can depend on another session (a subagent linked
// across sessions, a link not resolved yet) stays in memory, as in evict.
func (ev *evictor) settle(sk sessKey, now time.Time) {
	idx := ev.store.sessions[sk]
	if idx == nil || !ev.storage.stored() {
		return
	}
	for th := range idx.links {
		if l := ev.store.links[th]; l.Resolved && l.Parent.Thread.Sess() != sk {
			return
		}
	}
	sorted := make([]unitKey, 0, len(idx.units))
	for k := range idx.units {
		for th := range ev.store.kids[k] {
			if th.Sess() != sk {
				return
			}
		}
		sorted = append(sorted, k)
	}
	slices.SortFunc(sorted, compareUnits)
	ev.plan.settle(sorted, now)
	ev.sleep(sk)
}
