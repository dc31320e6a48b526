// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector // import "github.com/agentotel/agentotel/connector/agentspanconnector"

import (
	"cmp"
	"container/heap"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// The assembler's state is partitioned by session: every thread, open unit,
// subagent link and tool call belongs to the session of its thread (or of
// its call). With storage, each session is one record saved as it changes
// (see state.go), so a session can be dropped from memory and read back.

// sessIndex lists what the assembler's maps hold of one session.
type sessIndex struct {
	threads map[threadKey]struct{}
	units   map[unitKey]struct{}
	links   map[threadKey]struct{}
	calls   map[callKey]struct{}
	// caughtUp are the session's log files the reader said, with their
	// latest event, it has nothing more of for now
	// (agentevent.AttrReadCaughtUp).
	caughtUp map[string]bool
	// used is when the session was last used (assembler.uses).
	used uint64
}

func newSessIndex() *sessIndex {
	return &sessIndex{
		threads: map[threadKey]struct{}{},
		units:   map[unitKey]struct{}{},
		links:   map[threadKey]struct{}{},
		calls:   map[callKey]struct{}{},
	}
}

func (s *sessIndex) empty() bool {
	return len(s.threads) == 0 && len(s.units) == 0 && len(s.links) == 0 && len(s.calls) == 0
}

// loader reads saved sessions back (storage); nil keeps everything in memory.
type loader interface {
	// loadSession returns the saved record of a session, nil when none.
	loadSession(sk sessKey) (*sessionRecord, error)
	// loadEvents returns the n saved events of an open unit.
	loadEvents(k unitKey, n int) ([]agentevent.Event, error)
}

// ensure makes sure the session is in memory, reading it back from storage
// the first time. A read error is kept in loadErr: the caller fails the
// whole batch rather than go on with a state it does not know.
func (a *assembler) ensure(sk sessKey) *sessIndex {
	a.uses++
	if idx, ok := a.sessions[sk]; ok {
		idx.used = a.uses
		return idx
	}
	a.unsleep(sk)
	sk = ownKey(sk)
	idx := newSessIndex()
	idx.used = a.uses
	a.sessions[sk] = idx
	a.enqueue(sk)
	if a.load == nil {
		return idx
	}
	rec, err := a.load.loadSession(sk)
	if err == nil && rec != nil {
		err = a.apply(sk, rec)
	}
	if err != nil && a.loadErr == nil {
		a.loadErr = err
	}
	return idx
}

// touch loads the session and marks it changed.
func (a *assembler) touch(sk sessKey) {
	a.ensure(sk)
	a.dirty[sk] = true
	a.linksToTry[sk] = true
	a.enqueue(sk)
}

func (a *assembler) setThread(th threadKey, t *thread) {
	th = ownThread(th)
	a.touch(th.Sess())
	a.threads[th] = t
	a.sessions[th.Sess()].threads[th] = struct{}{}
}

func (a *assembler) delThread(th threadKey) {
	a.touch(th.Sess())
	delete(a.threads, th)
	delete(a.sessions[th.Sess()].threads, th)
}

func (a *assembler) setUnit(k unitKey, u *unit) {
	a.touch(k.Thread.Sess())
	if l, ok := a.links[k.Thread]; ok && l.Resolved && l.Parent.Thread.Sess() != k.Thread.Sess() {
		a.ensure(l.Parent.Thread.Sess()) // its open units group with this one
	}
	a.units[k] = u
	a.sessions[k.Thread.Sess()].units[k] = struct{}{}
}

// delUnit removes an open unit (it is being emitted); its saved events go.
func (a *assembler) delUnit(k unitKey) {
	a.touch(k.Thread.Sess())
	if u := a.units[k]; u != nil && u.saved > 0 {
		a.gone = append(a.gone, savedRange{unit: k, n: u.saved})
	}
	delete(a.units, k)
	delete(a.sessions[k.Thread.Sess()].units, k)
	a.unschedule(k)
	a.recheck[k.Thread.Sess()] = true
}

func (a *assembler) setLink(child threadKey, l link) {
	child, l = ownThread(child), l.owned()
	a.touch(child.Sess())
	old, had := a.links[child]
	a.indexKid(child, old, had, l, true)
	a.links[child] = l
	a.sessions[child.Sess()].links[child] = struct{}{}
	a.indexLink(child, l)
}

func (a *assembler) indexLink(child threadKey, l link) {
	if l.Resolved {
		delete(a.unresolved, child)
		delete(a.anchorWaiting, child)
		return
	}
	a.unresolved[child] = true
	if l.Turn && l.Anchor != "" {
		a.anchorWaiting[child] = true
	} else {
		delete(a.anchorWaiting, child)
	}
}

func (a *assembler) delLink(child threadKey) {
	a.touch(child.Sess())
	old, had := a.links[child]
	a.indexKid(child, old, had, link{}, false)
	delete(a.links, child)
	delete(a.sessions[child.Sess()].links, child)
	delete(a.unresolved, child)
	delete(a.anchorWaiting, child)
}

func (a *assembler) setCall(c callKey, ref callRef) {
	c, ref = ownCall(c), ref.owned()
	a.touch(c.Sess())
	a.calls[c] = ref
	a.sessions[c.Sess()].calls[c] = struct{}{}
}

func (a *assembler) delCall(c callKey) {
	a.touch(c.Sess())
	delete(a.calls, c)
	delete(a.sessions[c.Sess()].calls, c)
}

// drop removes a session from memory (not from storage).
func (a *assembler) drop(sk sessKey) {
	idx := a.sessions[sk]
	if idx == nil {
		return
	}
	for th := range idx.threads {
		delete(a.threads, th)
		a.unpreamble(th)
	}
	for k := range idx.units {
		delete(a.units, k)
		a.unschedule(k)
	}
	for th := range idx.links {
		old, had := a.links[th]
		a.indexKid(th, old, had, link{}, false)
		delete(a.links, th)
		delete(a.unresolved, th)
		delete(a.anchorWaiting, th)
	}
	for c := range idx.calls {
		delete(a.calls, c)
	}
	delete(a.sessions, sk)
	delete(a.dirty, sk)
	delete(a.lruIdx, sk)
}

// active tells whether a session has something still to do: an open unit,
// events waiting for a prompt, or a subagent link not yet resolved. Active
// sessions are listed in the saved index and read back at start.
func (a *assembler) active(sk sessKey) bool {
	idx := a.sessions[sk]
	if idx == nil {
		return false
	}
	if len(idx.units) > 0 {
		return true
	}
	for th := range idx.threads {
		if t := a.threads[th]; t != nil && len(t.preamble) > 0 {
			return true
		}
	}
	for th := range idx.links {
		if !a.links[th].Resolved {
			return true
		}
	}
	return false
}

// dirtySessions lists the changed sessions in a fixed order.
func (a *assembler) dirtySessions() []sessKey {
	keys := slices.Collect(maps.Keys(a.dirty))
	slices.SortFunc(keys, compareSessions)
	return keys
}

// evict drops least recently used sessions from memory while more than max
// are held, down to nine in ten of max. Only sessions with nothing unsaved
// are dropped: with storage their state is there and is read back when the
// session is next needed; without, they are forgotten (see the README), so
// only those with nothing left to do (not active) go.
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
func (a *assembler) evict(max int) {
	if len(a.sessions) <= max {
		return
	}
	var want []sessKey
	if verifyEvict != nil {
		want = a.evictionsByWalk(max)
	}
	var dropped, aside []sessKey
	target := max - max/10
	for len(a.sessions) > target && len(a.lru) > 0 {
		e := a.lru[0]
		idx := a.sessions[e.sk]
		if idx == nil || a.lruIdx[e.sk] != e {
			heap.Pop(&a.lru) // left memory since
			continue
		}
		if e.used != idx.used {
			// Used since it was queued: queue it by its latest use.
			e.used = idx.used
			heap.Fix(&a.lru, 0)
			continue
		}
		heap.Pop(&a.lru)
		if a.dirty[e.sk] {
			aside = append(aside, e.sk)
			continue
		}
		switch ok, later := a.evictable(e.sk); {
		case later:
			aside = append(aside, e.sk)
			continue
		case !ok:
			delete(a.lruIdx, e.sk)
			continue // queued again when next changed (touch)
		}
		delete(a.lruIdx, e.sk)
		dropped = append(dropped, e.sk)
		a.sleep(e.sk)
	}
	for _, sk := range aside {
		heap.Push(&a.lru, a.lruIdx[sk])
	}
	if verifyEvict != nil {
		verifyEvict(want, dropped)
	}
}

// evictionsByWalk is what evict drops, found by a walk over every session.
func (a *assembler) evictionsByWalk(limit int) []sessKey {
	var cands []sessKey
	for sk := range a.sessions {
		if ok, _ := a.evictable(sk); ok && !a.dirty[sk] {
			cands = append(cands, sk)
		}
	}
	slices.SortFunc(cands, func(x, y sessKey) int { return cmp.Compare(a.sessions[x].used, a.sessions[y].used) })
	n := len(a.sessions) - (limit - limit/10)
	return cands[:min(max(n, 0), len(cands))]
}

// verifyEvict, when set (tests), is shown what a walk over every session
// would drop and what evict dropped.
var verifyEvict func(want, got []sessKey)

// queued is a session in lru: used is its last use when queued, or older.
type queued struct {
	used uint64
	sk   sessKey
}

// lruQueue is a min-heap of sessions by last use.
type lruQueue []*queued

func (q lruQueue) Len() int           { return len(q) }
func (q lruQueue) Less(i, j int) bool { return q[i].used < q[j].used }
func (q lruQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *lruQueue) Push(x any)        { *q = append(*q, x.(*queued)) }
func (q *lruQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return e
}

// enqueue puts a session in lru unless it is there already (by an older
// use, which evict corrects when it comes to it).
func (a *assembler) enqueue(sk sessKey) {
	if _, ok := a.lruIdx[sk]; ok {
		return
	}
	e := &queued{used: a.sessions[sk].used, sk: sk}
	a.lruIdx[sk] = e
	heap.Push(&a.lru, e)
}

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
// it (see sleep and addAnchor).
func (a *assembler) evictable(sk sessKey) (ok, later bool) {
	if !a.active(sk) {
		return true, false
	}
	if a.load == nil {
		return false, false
	}
	idx := a.sessions[sk]
	for th := range idx.links {
		if l := a.links[th]; l.Resolved && l.Parent.Thread.Sess() != sk {
			return false, false
		}
	}
	if a.recheck[sk] {
		return false, true
	}
	for k := range idx.units {
		if a.fresh[k] {
			return false, true
		}
		for th := range a.kids[k] {
			if th.Sess() != sk {
				return false, false
			}
		}
		if _, held := a.openParent(k); !held {
			if _, ok := a.dueIdx[k]; !ok {
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
// anchor that would resolve one reads the session back (addAnchor) in the
// pass that resolves it in memory.
func (a *assembler) sleep(sk sessKey) {
	idx := a.sessions[sk]
	var at time.Time
	earlier := func(t time.Time) {
		if at.IsZero() || t.Before(at) {
			at = t
		}
	}
	for k := range idx.units {
		if s, ok := a.dueIdx[k]; ok {
			earlier(s.at)
		}
	}
	for th := range idx.threads {
		if t := a.threads[th]; t != nil && len(t.preamble) > 0 {
			earlier(t.lastArrival.Add(a.idleTimeout))
		}
	}
	var waits map[anchorGroup]time.Time
	for th := range idx.links {
		if l := a.links[th]; !l.Resolved && l.Turn && l.Anchor != "" {
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
	a.drop(sk)
	if at.IsZero() && units == 0 && len(waits) == 0 {
		return
	}
	sk = ownKey(sk)
	s := &sleeper{at: at, sk: sk, units: units, waits: waits, index: -1}
	if !at.IsZero() {
		heap.Push(&a.wake, s)
	}
	for g, until := range waits {
		m := a.waitingAsleep[g]
		if m == nil {
			m = map[sessKey]time.Time{}
			a.waitingAsleep[g] = m
		}
		m[sk] = until
	}
	a.asleep[sk] = s
	a.sleepingUnits += units
}

// wakeForAnchor reads back the sleeping sessions with a subagent link that
// the anchor an resolves (an anchor of its kind and project at or before
// the subagent's start plus anchorSlack, as anchorFor looks for). They
// count as changed, like those wakeDue reads back.
func (a *assembler) wakeForAnchor(an anchor) {
	var due []sessKey
	for sk, until := range a.waitingAsleep[anchorGroup{an.Source, an.Kind, an.Project}] {
		if !an.At.After(until) {
			due = append(due, sk)
		}
	}
	slices.SortFunc(due, compareSessions)
	for _, sk := range due {
		a.touch(sk) // unsleep forgets its entries
	}
}

// settle puts a session just read back at start to sleep, as evict would
// after the first close pass: each of its groups gets the deadline that
// pass would give it (now, for a group already complete, so that the first
// pass closes it), and the session leaves memory with its wake entry. A
// session whose groups can depend on another session (a subagent linked
// across sessions, a link not resolved yet) stays in memory, as in evict.
func (a *assembler) settle(sk sessKey, now time.Time) {
	idx := a.sessions[sk]
	if idx == nil || a.load == nil {
		return
	}
	for th := range idx.links {
		if l := a.links[th]; l.Resolved && l.Parent.Thread.Sess() != sk {
			return
		}
	}
	sorted := make([]unitKey, 0, len(idx.units))
	for k := range idx.units {
		for th := range a.kids[k] {
			if th.Sess() != sk {
				return
			}
		}
		sorted = append(sorted, k)
	}
	slices.SortFunc(sorted, compareUnits)
	children, tops := a.groups(sorted)
	awaiting := a.awaitingIn(sorted)
	for _, k := range tops {
		at := now
		if _, done := a.closeReason(k, children, awaiting, now, false); !done {
			at = a.deadline(k, children, awaiting, now)
		}
		a.schedule(k, at)
	}
	for _, k := range sorted {
		delete(a.fresh, k)
	}
	a.sleep(sk)
}

// unsleep forgets the wake entry of a session coming back to memory.
func (a *assembler) unsleep(sk sessKey) {
	s, ok := a.asleep[sk]
	if !ok {
		return
	}
	if s.index >= 0 {
		heap.Remove(&a.wake, s.index)
	}
	for g := range s.waits {
		if delete(a.waitingAsleep[g], sk); len(a.waitingAsleep[g]) == 0 {
			delete(a.waitingAsleep, g)
		}
	}
	delete(a.asleep, sk)
	a.sleepingUnits -= s.units
}

// wakeDue reads back the sessions whose wake time came. They count as
// changed, so that a failure to read one back rolls it back like a batch's.
func (a *assembler) wakeDue(now time.Time) {
	for len(a.wake) > 0 && !now.Before(a.wake[0].at) {
		a.touch(a.wake[0].sk) // unsleep pops it
	}
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
func (s *sleeper) setIndex(i int)   { s.index = i }

// wakeHeap is a min-heap of sleepers by wake time.
type wakeHeap = timedHeap[*sleeper]
