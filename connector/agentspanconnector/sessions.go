// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"strings"
	"time"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/state"
)

// ensure makes sure the session is in memory, reading it back from storage
// the first time. A read error goes to the source (failed): the caller
// fails the whole batch rather than go on with a state it does not know.
func (st *sessionStore) ensure(sk sessKey) *sessIndex {
	st.uses++
	if idx, ok := st.sessions[sk]; ok {
		idx.used = st.uses
		return idx
	}
	st.use.unsleep(sk)
	sk = ownKey(sk)
	idx := newSessIndex()
	idx.key = sk
	idx.used = st.uses
	st.sessions[sk] = idx
	st.use.enqueue(sk, idx.used)
	rec, err := st.source.readSession(sk)
	if err == nil && rec != nil {
		err = st.restore(sk, rec)
	}
	if err != nil {
		st.source.failed(err)
	}
	return idx
}

// restore loads a saved session into memory (its index entry exists).
func (st *sessionStore) restore(sk sessKey, rec *state.SessionRecord) error {
	st.sessions[sk].caughtUp = rec.CaughtUp
	for i := range rec.Threads {
		s := &rec.Threads[i]
		pre, err := state.DecodeEvents(s.Preamble)
		if err != nil {
			return err
		}
		st.threads[s.Key] = &thread{
			lastPrompt: s.LastPrompt, lastPromptSeq: s.LastPromptSeq,
			preamble: pre, preambleHost: s.PreambleHost, lastArrival: time.Unix(0, s.LastArrival),
			prompts: s.Prompts, closed: s.Closed, closedSeq: s.ClosedSeq,
		}
		if len(pre) > 0 {
			st.waiting.note(s.Key, st.threads[s.Key].lastArrival)
		}
		st.sessions[s.Key.Sess()].threads[s.Key] = struct{}{}
	}
	for _, su := range rec.Units {
		evs, err := st.source.readEvents(su.Key, su.Events)
		if err != nil {
			return err
		}
		u := &unit{key: su.Key, prevPrompt: su.PrevPrompt, host: su.Host, lastArrival: time.Unix(0, su.LastArrival), seen: map[string]struct{}{}}
		for i := range evs {
			if u.see(&evs[i]) {
				u.note(&evs[i])
			}
		}
		u.events = evs // exactly as saved, even if one repeats an id (not copied again)
		u.saved = len(evs)
		st.units[su.Key] = u
		st.sessions[su.Key.Thread.Sess()].units[su.Key] = struct{}{}
		st.groups.changed(su.Key)
	}
	st.linksToTry[sk] = true
	for i := range rec.Links {
		sl := &rec.Links[i]
		old, had := st.links[sl.Thread]
		st.links[sl.Thread] = sl.Link
		st.relink(sl.Thread, old, had, sl.Link, true)
		st.sessions[sl.Thread.Sess()].links[sl.Thread] = struct{}{}
	}
	for i := range rec.Calls {
		// A call and its unit are of the record's session (see
		// state.SavedCall).
		call, ref := rec.Calls[i].Call, rec.Calls[i].Ref
		call.Source, call.Session = sk.Source, sk.Session
		ref.Unit.Thread.Source, ref.Unit.Thread.Session = sk.Source, sk.Session
		st.calls[call] = ref
		st.sessions[call.Sess()].calls[call] = struct{}{}
	}
	for i := range rec.Links {
		sl := &rec.Links[i]
		if sl.Link.Resolved && sl.Link.Parent.Thread.Sess() != sk {
			// A subagent linked by an anchor into another session: that
			// session's open units group with this one's.
			st.ensure(sl.Link.Parent.Thread.Sess())
		}
	}
	return nil
}

// touch loads the session and marks it changed.
func (st *sessionStore) touch(sk sessKey) {
	idx := st.ensure(sk)
	if idx.key != (sessKey{}) {
		sk = idx.key // the session's own copy, not the caller's (an event's)
	}
	if !st.dirty[sk] {
		st.dirty[sk] = true
	}
	if !st.linksToTry[sk] {
		st.linksToTry[sk] = true
	}
	st.use.enqueue(sk, idx.used)
}

// noteRead records whether the reader said, with this event of the
// session, that it has nothing more of the session for now. The last event
// of a session in a batch decides.
//
// The flag is per file: the receiver delivers one file at a time, and a
// session can have several (Claude Code's subagent files share the main
// file's session id), so the end of one says nothing of the others. A unit
// counts as caught up when the file its latest event came from is.
func (st *sessionStore) noteRead(sk sessKey, logFile string, caughtUp bool) {
	idx := st.ensure(sk)
	if idx.caughtUp[logFile] != caughtUp {
		if idx.caughtUp == nil {
			idx.caughtUp = map[string]bool{}
		}
		if caughtUp {
			idx.caughtUp[strings.Clone(logFile)] = true
		} else {
			delete(idx.caughtUp, logFile)
		}
		st.dirty[sk] = true
	}
}

func (st *sessionStore) setThread(th threadKey, t *thread) {
	th = ownThread(th)
	st.touch(th.Sess())
	st.threads[th] = t
	st.sessions[th.Sess()].threads[th] = struct{}{}
}

func (st *sessionStore) setUnit(k unitKey, u *unit) {
	st.touch(k.Thread.Sess())
	if l, ok := st.links[k.Thread]; ok && l.Resolved && l.Parent.Thread.Sess() != k.Thread.Sess() {
		st.ensure(l.Parent.Thread.Sess()) // its open units group with this one
	}
	st.units[k] = u
	st.sessions[k.Thread.Sess()].units[k] = struct{}{}
}

// delUnit removes an open unit (it is being emitted); its saved events go.
func (st *sessionStore) delUnit(k unitKey) {
	st.touch(k.Thread.Sess())
	if u := st.units[k]; u != nil && u.saved > 0 {
		st.source.gone(k, u.saved)
	}
	delete(st.units, k)
	delete(st.sessions[k.Thread.Sess()].units, k)
	st.groups.emitted(k)
}

func (st *sessionStore) setLink(child threadKey, l link) {
	child, l = ownThread(child), ownLink(l)
	st.touch(child.Sess())
	old, had := st.links[child]
	st.links[child] = l
	st.sessions[child.Sess()].links[child] = struct{}{}
	st.relink(child, old, had, l, true)
}

func (st *sessionStore) delLink(child threadKey) {
	st.touch(child.Sess())
	old, had := st.links[child]
	delete(st.links, child)
	delete(st.sessions[child.Sess()].links, child)
	st.relink(child, old, had, link{}, false)
}

func (st *sessionStore) setCall(c callKey, ref callRef) {
	// Memory of their own, in one allocation: the session's strings are
	// those of the session's own key (ensure) when it has one.
	if sk := st.ensure(c.Sess()).key; sk != (sessKey{}) {
		c.Source, c.Session = sk.Source, sk.Session
		if ref.Unit.Thread.Sess() == sk {
			ref.Unit.Thread.Source, ref.Unit.Thread.Session = sk.Source, sk.Session
		} else {
			ownAll((*string)(&ref.Unit.Thread.Source), &ref.Unit.Thread.Session)
		}
		ownAll(&c.CallID, &ref.Unit.Thread.Agent, &ref.Unit.Prompt, &ref.SubagentType)
	} else {
		c, ref = ownCall(c), ownRef(ref)
	}
	st.touch(c.Sess())
	st.calls[c] = ref
	st.sessions[c.Sess()].calls[c] = struct{}{}
}

func (st *sessionStore) delCall(c callKey) {
	st.touch(c.Sess())
	delete(st.calls, c)
	delete(st.sessions[c.Sess()].calls, c)
}

// drop removes a session from memory (not from storage).
func (st *sessionStore) drop(sk sessKey) {
	idx := st.sessions[sk]
	if idx == nil {
		return
	}
	for th := range idx.threads {
		delete(st.threads, th)
		st.waiting.unpreamble(th)
	}
	for k := range idx.units {
		delete(st.units, k)
		st.groups.left(k)
	}
	for th := range idx.links {
		old, had := st.links[th]
		delete(st.links, th)
		st.relink(th, old, had, link{}, false)
	}
	for c := range idx.calls {
		delete(st.calls, c)
	}
	delete(st.sessions, sk)
	delete(st.dirty, sk)
	st.use.forget(sk)
}
