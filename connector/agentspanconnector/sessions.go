// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector // import "github.com/agentotel/agentotel/connector/agentspanconnector"

import (
	"container/heap"
	"strings"
	"time"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/state"
) // ensure makes sure the session is in memory, reading it back from storage
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
	rec, err := a.load.LoadSession(sk)
	if err == nil && rec != nil {
		err = a.apply(sk, rec)
	}
	if err != nil && a.loadErr == nil {
		a.loadErr = err
	}
	return idx
}

// apply loads a saved session into memory (its index entry exists).
func (a *assembler) apply(sk sessKey, rec *state.SessionRecord) error {
	a.sessions[sk].caughtUp = rec.CaughtUp
	for _, st := range rec.Threads {
		pre, err := state.DecodeEvents(st.Preamble)
		if err != nil {
			return err
		}
		a.threads[st.Key] = &thread{
			lastPrompt: st.LastPrompt, lastPromptSeq: st.LastPromptSeq,
			preamble: pre, preambleHost: st.PreambleHost, lastArrival: time.Unix(0, st.LastArrival),
			prompts: st.Prompts, closed: st.Closed, closedSeq: st.ClosedSeq,
		}
		if len(pre) > 0 {
			a.notePreamble(st.Key)
		}
		a.sessions[st.Key.Sess()].threads[st.Key] = struct{}{}
	}
	for _, su := range rec.Units {
		evs, err := a.load.LoadEvents(su.Key, su.Events)
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
		a.units[su.Key] = u
		a.sessions[su.Key.Thread.Sess()].units[su.Key] = struct{}{}
		a.fresh[su.Key] = true
	}
	a.linksToTry[sk] = true
	for _, sl := range rec.Links {
		old, had := a.links[sl.Thread]
		a.indexKid(sl.Thread, old, had, sl.Link, true)
		a.links[sl.Thread] = sl.Link
		a.indexLink(sl.Thread, sl.Link)
		a.sessions[sl.Thread.Sess()].links[sl.Thread] = struct{}{}
	}
	for _, sc := range rec.Calls {
		// A call and its unit are of the record's session (see MarshalJSON).
		sc.Call.Source, sc.Call.Session = sk.Source, sk.Session
		sc.Ref.Unit.Thread.Source, sc.Ref.Unit.Thread.Session = sk.Source, sk.Session
		a.calls[sc.Call] = sc.Ref
		a.sessions[sc.Call.Sess()].calls[sc.Call] = struct{}{}
	}
	for _, sl := range rec.Links {
		if sl.Link.Resolved && sl.Link.Parent.Thread.Sess() != sk {
			// A subagent linked by an anchor into another session: that
			// session's open units group with this one's.
			a.ensure(sl.Link.Parent.Thread.Sess())
		}
	}
	return nil
}

// touch loads the session and marks it changed.
func (a *assembler) touch(sk sessKey) {
	a.ensure(sk)
	a.dirty[sk] = true
	a.linksToTry[sk] = true
	a.enqueue(sk)
}

// notePreamble marks a thread as holding events that wait for a prompt.
func (a *assembler) notePreamble(th threadKey) {
	if _, ok := a.preambled[th]; ok {
		return
	}
	if t := a.threads[th]; t != nil {
		e := &preambleEntry{at: t.lastArrival.Add(a.idleTimeout), th: th}
		heap.Push(&a.preambleDue, e)
		a.preambled[th] = e
	}
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

// noteRead records whether the reader said, with this event of the
// session, that it has nothing more of the session for now. The last event
// of a session in a batch decides.
//
// The flag is per file: the receiver delivers one file at a time, and a
// session can have several (Claude Code's subagent files share the main
// file's session id), so the end of one says nothing of the others. A unit
// counts as caught up when the file its latest event came from is.
func (a *assembler) noteRead(sk sessKey, logFile string, caughtUp bool) {
	idx := a.ensure(sk)
	if idx.caughtUp[logFile] != caughtUp {
		if idx.caughtUp == nil {
			idx.caughtUp = map[string]bool{}
		}
		if caughtUp {
			idx.caughtUp[strings.Clone(logFile)] = true
		} else {
			delete(idx.caughtUp, logFile)
		}
		a.dirty[sk] = true
	}
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
	child, l = ownThread(child), ownLink(l)
	a.touch(child.Sess())
	old, had := a.links[child]
	a.indexKid(child, old, had, l, true)
	a.links[child] = l
	a.sessions[child.Sess()].links[child] = struct{}{}
	a.indexLink(child, l)
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
	c, ref = ownCall(c), ownRef(ref)
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
