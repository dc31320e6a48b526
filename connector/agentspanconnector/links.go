// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

// linker resolves subagent links: a subagent thread known only by the id
// of the tool call that spawned it, by the turn open when it started, or
// by an anchor in another session, gets its parent unit once that is
// known. It keeps the anchors in the book, and reads back the sleeping
// sessions an anchor resolves a link of.
type linker struct {
	store    *sessionStore
	book     *anchorBook
	sleepers anchorSleepers
}

// anchorSleepers are the sessions out of memory whose links wait for an
// anchor (the evictor).
type anchorSleepers interface {
	// wokenBy lists, in a fixed order, those with a link an resolves.
	wokenBy(an anchor) []sessKey
}

// resolve resolves the links known only by the spawning call id (or by a
// turn or an anchor) that may have become resolvable since the last pass:
// those of the sessions changed or read back since (a call, a prompt or
// the link itself came: all of a session's own), and those waiting for an
// anchor when an anchor came; with all (after a rollback), every one.
func (lk *linker) resolve(all bool) {
	var tried []threadKey
	if all {
		for th := range lk.store.unresolved {
			tried = append(tried, th)
		}
	} else {
		for sk := range lk.store.linksToTry {
			if idx := lk.store.sessions[sk]; idx != nil {
				for th := range idx.links {
					if lk.store.unresolved[th] {
						tried = append(tried, th)
					}
				}
			}
		}
		if lk.book.anchorsNew {
			for th := range lk.store.anchorWaiting {
				tried = append(tried, th)
			}
		}
	}
	clear(lk.store.linksToTry)
	lk.book.anchorsNew = false
	for _, th := range tried {
		l, ok := lk.resolution(th)
		if !ok {
			continue
		}
		if l.Parent.Thread.Sess() != th.Sess() {
			lk.store.ensure(l.Parent.Thread.Sess()) // its open units group with this one
		}
		lk.store.setLink(th, l)
	}
	if verifyLinks != nil {
		for th := range lk.store.unresolved {
			if _, ok := lk.resolution(th); ok {
				verifyLinks(th)
			}
		}
		// Nor may a session out of memory wait for an anchor it has.
		for i := range lk.book.anchors {
			for _, sk := range lk.sleepers.wokenBy(lk.book.anchors[i]) {
				verifyLinks(threadKey{Source: sk.Source, Session: sk.Session})
			}
		}
	}
}

// verifyLinks, when set (tests), is told of a link resolve left
// unresolved that a walk over every link would have resolved.
var verifyLinks func(th threadKey)

// resolution is the resolved link of an unresolved subagent thread, if its
// spawner is known now.
func (lk *linker) resolution(th threadKey) (link, bool) {
	l, ok := lk.store.links[th]
	if !ok || l.Resolved {
		return link{}, false
	}
	if l.Turn && l.Anchor != "" {
		if u, ok := lk.book.anchorFor(th.Source, l); ok {
			return link{Turn: true, At: l.At, Parent: u, Resolved: true}, true
		}
		return link{}, false
	}
	if l.Turn {
		main := threadKey{Source: th.Source, Session: th.Session}
		if t := lk.store.threads[main]; t != nil && main != th {
			if id := t.promptAt(l.At); id != "" {
				return link{Turn: true, At: l.At, Parent: unitKey{Thread: main, Prompt: id}, Resolved: true}, true
			}
		}
		return link{}, false
	}
	if p, ok := lk.store.calls[callKey{Source: th.Source, Session: th.Session, CallID: l.CallID}]; ok && p.Unit.Thread != th {
		return link{CallID: l.CallID, Parent: p.Unit, Resolved: true}, true
	}
	return link{}, false
}

// addAnchor remembers an anchor and reads back the sleeping sessions it
// resolves a link of. They count as changed, like those the evictor reads
// back when due.
func (lk *linker) addAnchor(an anchor) {
	an = lk.book.remember(an)
	for _, sk := range lk.sleepers.wokenBy(an) {
		lk.store.touch(sk) // unsleep forgets its entries
	}
}
