// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector // import "github.com/agentotel/agentotel/connector/agentspanconnector"

import (
	"maps"
	"slices"
) // The assembler's state is partitioned by session: every thread, open unit,
// subagent link and tool call belongs to the session of its thread (or of
// its call). With storage, each session is one record saved as it changes
// (see saved.go and state.go), so a session can be dropped from memory and read back.

// sessionStore holds the assembler's state in memory, by session: the
// open units, the threads, the subagent links and the tool calls, each
// listed in its session's index, and which sessions changed since the
// last flush.
type sessionStore struct {
	units   map[unitKey]*unit
	threads map[threadKey]*thread
	links   map[threadKey]link
	calls   map[callKey]callRef
	// sessions indexes the maps above by session, for persistence and
	// eviction.
	sessions map[sessKey]*sessIndex
	// dirty are the sessions changed since the last flush; linksToTry
	// those changed or read back since the last resolveLinks.
	dirty      map[sessKey]bool
	linksToTry map[sessKey]bool
	// unresolved are the subagent threads whose link is not resolved yet,
	// anchorWaiting those of them waiting for an anchor: what a pass must
	// look at, so that it never walks every thread.
	unresolved    map[threadKey]bool
	anchorWaiting map[threadKey]bool
	// uses counts session accesses, for evicting the least recently used.
	uses uint64
}

func newSessionStore() sessionStore {
	return sessionStore{
		units:         map[unitKey]*unit{},
		threads:       map[threadKey]*thread{},
		links:         map[threadKey]link{},
		calls:         map[callKey]callRef{},
		sessions:      map[sessKey]*sessIndex{},
		dirty:         map[sessKey]bool{},
		linksToTry:    map[sessKey]bool{},
		unresolved:    map[threadKey]bool{},
		anchorWaiting: map[threadKey]bool{},
	}
}

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

// dirtySessions lists the changed sessions in a fixed order.
func (st *sessionStore) dirtySessions() []sessKey {
	keys := slices.Collect(maps.Keys(st.dirty))
	slices.SortFunc(keys, compareSessions)
	return keys
}

func (st *sessionStore) indexLink(child threadKey, l link) {
	if l.Resolved {
		delete(st.unresolved, child)
		delete(st.anchorWaiting, child)
		return
	}
	st.unresolved[child] = true
	if l.Turn && l.Anchor != "" {
		st.anchorWaiting[child] = true
	} else {
		delete(st.anchorWaiting, child)
	}
}

func (st *sessionStore) threadOpen(th threadKey) bool {
	if t := st.threads[th]; t != nil && len(t.preamble) > 0 {
		return true
	}
	idx := st.sessions[th.Sess()]
	if idx == nil {
		return false
	}
	for k := range idx.units {
		if k.Thread == th {
			return true
		}
	}
	return false
}

// sessionOpenCall tells whether an open unit of the session has a tool
// call without a result.
func (st *sessionStore) sessionOpenCall(sk sessKey) bool {
	idx := st.sessions[sk]
	if idx == nil {
		return false
	}
	for k := range idx.units {
		if len(st.units[k].openCalls) > 0 {
			return true
		}
	}
	return false
}

// sortedUnits lists the open units in a fixed order, so that a close pass
// emits in the same order every time.
func (st *sessionStore) sortedUnits() []unitKey {
	keys := make([]unitKey, 0, len(st.units))
	for k := range st.units {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareUnits)
	return keys
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
