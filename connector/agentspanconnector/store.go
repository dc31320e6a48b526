// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"cmp"
	"slices"
	"time"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/state"
	"github.com/agentotel/agentotel/internal/agentevent"
)

// The assembler's state is partitioned by session: every thread, open unit,
// subagent link and tool call belongs to the session of its thread (or of
// its call). With storage, each session is one record saved as it changes
// (see persistence.go), so a session can be dropped from memory and read
// back.

// sessionStore holds the state of the sessions in memory: the open units,
// the threads, the subagent links and the tool calls, each listed in its
// session's index, and the indexes of the links. Every change of that
// state goes through its methods (sessions.go); what the other concerns
// keep of a change, they are told through the four interfaces below, so
// that the store depends on none of them.
type sessionStore struct {
	units   map[unitKey]*unit
	threads map[threadKey]*thread
	links   map[threadKey]link
	calls   map[callKey]callRef
	// sessions indexes the maps above by session, for persistence and
	// eviction.
	sessions map[sessKey]*sessIndex
	// dirty are the sessions changed since the last flush; linksToTry
	// those changed or read back since the last link resolution.
	dirty      map[sessKey]bool
	linksToTry map[sessKey]bool
	// unresolved are the subagent threads whose link is not resolved yet,
	// anchorWaiting those of them waiting for an anchor: what a pass must
	// look at, so that it never walks every thread. kids are the subagent
	// threads whose resolved link names each parent unit.
	unresolved    map[threadKey]bool
	anchorWaiting map[threadKey]bool
	kids          map[unitKey]map[threadKey]struct{}
	// uses counts session accesses, for evicting the least recently used.
	uses uint64

	source  sessionSource
	use     sessionUse
	groups  groupWatch
	waiting preambleWatch
}

// sessionSource reads sessions back from storage, and keeps what storage
// is to forget (the persistence).
type sessionSource interface {
	// readSession returns the saved record of a session, nil when none
	// (always, without storage).
	readSession(sk sessKey) (*state.SessionRecord, error)
	// readEvents returns the n saved events of an open unit.
	readEvents(k unitKey, n int) ([]agentevent.Event, error)
	// failed is told of an error reading a session back: the batch that
	// needed it is to fail.
	failed(err error)
	// gone is told of an emitted unit with n events in storage.
	gone(k unitKey, n int)
}

// sessionUse keeps the sessions in memory by last use, and what is left of
// the sessions out of memory (the evictor).
type sessionUse interface {
	// unsleep forgets what is kept of a session out of memory: it is
	// coming back.
	unsleep(sk sessKey)
	// enqueue tells of a use of a session in memory.
	enqueue(sk sessKey, used uint64)
	// forget tells of a session leaving memory.
	forget(sk sessKey)
}

// groupWatch keeps the open groups' deadlines and which groups the next
// close pass looks at (the scheduler).
type groupWatch interface {
	// changed: the group holding k is to be looked at (k was read back,
	// or the group lost a member).
	changed(k unitKey)
	// emitted: k went out; its session is to be looked at again.
	emitted(k unitKey)
	// left: k left memory with its session.
	left(k unitKey)
}

// preambleWatch keeps the threads holding events that wait for a prompt
// (the preambles).
type preambleWatch interface {
	note(th threadKey, lastArrival time.Time)
	unpreamble(th threadKey)
}

func newSessionStore() *sessionStore {
	return &sessionStore{
		units:         map[unitKey]*unit{},
		threads:       map[threadKey]*thread{},
		links:         map[threadKey]link{},
		calls:         map[callKey]callRef{},
		sessions:      map[sessKey]*sessIndex{},
		dirty:         map[sessKey]bool{},
		linksToTry:    map[sessKey]bool{},
		unresolved:    map[threadKey]bool{},
		anchorWaiting: map[threadKey]bool{},
		kids:          map[unitKey]map[threadKey]struct{}{},
	}
}

// sessIndex lists what the store's maps hold of one session.
type sessIndex struct {
	threads map[threadKey]struct{}
	units   map[unitKey]struct{}
	links   map[threadKey]struct{}
	calls   map[callKey]struct{}
	// caughtUp are the session's log files the reader said, with their
	// latest event, it has nothing more of for now
	// (agentevent.AttrReadCaughtUp).
	caughtUp map[string]bool
	// used is when the session was last used (sessionStore.uses).
	used uint64
	// key is the session's key, with memory of its own (ensure).
	key sessKey
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

// active tells whether a session has something still to do: an open unit,
// events waiting for a prompt, or a subagent link not yet resolved. Active
// sessions are listed in the saved index and read back at start.
func (st *sessionStore) active(sk sessKey) bool {
	idx := st.sessions[sk]
	if idx == nil {
		return false
	}
	if len(idx.units) > 0 {
		return true
	}
	for th := range idx.threads {
		if t := st.threads[th]; t != nil && len(t.preamble) > 0 {
			return true
		}
	}
	for th := range idx.links {
		if !st.links[th].Resolved {
			return true
		}
	}
	return false
}

// openParent is the open unit holding k open (its resolved spawner), if any.
func (st *sessionStore) openParent(k unitKey) (unitKey, bool) {
	l, ok := st.links[k.Thread]
	if !ok || !l.Resolved || !k.Thread.Subagent() || l.Parent == k {
		return unitKey{}, false
	}
	_, open := st.units[l.Parent]
	return l.Parent, open
}

// wentOut tells whether the unit was emitted before (its events now are
// late ones).
func (st *sessionStore) wentOut(k unitKey) bool {
	t := st.threads[k.Thread]
	if t == nil {
		return false
	}
	_, sent := t.closedFor(k.Prompt)
	return sent
}

// relink keeps the indexes of the links (unresolved, anchorWaiting, kids)
// in step with a change of child's link from old (had) to l (has).
func (st *sessionStore) relink(child threadKey, old link, had bool, l link, has bool) {
	if had && old.Resolved {
		if m := st.kids[old.Parent]; m != nil {
			delete(m, child)
			if len(m) == 0 {
				delete(st.kids, old.Parent)
			}
		}
		if !has || !l.Resolved || l.Parent != old.Parent {
			// The old parent's group lost a member: look at it again.
			st.groups.changed(old.Parent)
		}
	}
	if has && l.Resolved {
		m := st.kids[l.Parent]
		if m == nil {
			m = map[threadKey]struct{}{}
			st.kids[l.Parent] = m
		}
		m[child] = struct{}{}
	}
	switch {
	case !has || l.Resolved:
		delete(st.unresolved, child)
		delete(st.anchorWaiting, child)
	case l.Turn && l.Anchor != "":
		st.unresolved[child] = true
		st.anchorWaiting[child] = true
	default:
		st.unresolved[child] = true
		delete(st.anchorWaiting, child)
	}
}

// pruneCaughtUp drops, in the changed sessions, the caught-up flags of the
// files that are no open unit's last file. Only those are looked up
// (closeRules.groupCaughtUp), and the next event of any other file brings
// its flag again (noteRead), so the decisions are the same with or without
// them; kept, a session of many files (Claude Code writes a file per
// subagent) would carry the path of every file it ever had, in memory and
// in its record, rewritten with each of its batches. Called at the end of
// a kept pass (by flush, before the records are built, with storage), so
// that a restart from the records starts from the state an uninterrupted
// run has.
func (st *sessionStore) pruneCaughtUp() {
	for sk := range st.dirty {
		idx := st.sessions[sk]
		if idx == nil {
			continue
		}
		for f := range idx.caughtUp {
			open := false
			for k := range idx.units {
				if st.units[k].lastFile == f {
					open = true
					break
				}
			}
			if !open {
				delete(idx.caughtUp, f)
			}
		}
		if len(idx.caughtUp) == 0 {
			idx.caughtUp = nil
		}
	}
}

// record builds the saved form of a session in memory (restore reads it
// back).
func (st *sessionStore) record(sk sessKey) (*state.SessionRecord, error) {
	idx := st.sessions[sk]
	rec := &state.SessionRecord{Version: state.Version, CaughtUp: idx.caughtUp}
	for th := range idx.threads {
		t := st.threads[th]
		var pre []byte
		if len(t.preamble) > 0 {
			var err error
			if pre, err = state.EncodeEvents(t.preamble); err != nil {
				return nil, err
			}
		}
		rec.Threads = append(rec.Threads, state.SavedThread{
			Key: th, LastPrompt: t.lastPrompt, LastPromptSeq: t.lastPromptSeq,
			Preamble: pre, PreambleHost: t.preambleHost, LastArrival: t.lastArrival.UnixNano(),
			Prompts: t.prompts, Closed: t.closed, ClosedSeq: t.closedSeq,
		})
	}
	for k := range idx.units {
		u := st.units[k]
		rec.Units = append(rec.Units, state.SavedUnit{Key: k, PrevPrompt: u.prevPrompt, Host: u.host, LastArrival: u.lastArrival.UnixNano(), Events: len(u.events)})
	}
	for th := range idx.links {
		rec.Links = append(rec.Links, state.SavedLink{Thread: th, Link: st.links[th]})
	}
	for c := range idx.calls {
		rec.Calls = append(rec.Calls, state.SavedCall{Call: c, Ref: st.calls[c]})
	}
	// Fixed order, so equal states serialize to equal bytes.
	slices.SortFunc(rec.Threads, func(x, y state.SavedThread) int { return compareThreads(x.Key, y.Key) })
	slices.SortFunc(rec.Units, func(x, y state.SavedUnit) int { return compareUnits(x.Key, y.Key) })
	slices.SortFunc(rec.Links, func(x, y state.SavedLink) int { return compareThreads(x.Thread, y.Thread) })
	slices.SortFunc(rec.Calls, func(x, y state.SavedCall) int { return cmp.Compare(x.Call.CallID, y.Call.CallID) })
	return rec, nil
}
