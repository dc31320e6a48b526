// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector // import "github.com/agentotel/agentotel/connector/agentspanconnector"

// resolveLinks resolves the links known only by the spawning call id (or
// by a turn or an anchor) that may have become resolvable since the last
// pass: those of the sessions changed or read back since (a call, a prompt
// or the link itself came: all of a session's own), and those waiting for
// an anchor when an anchor came; every one after a rollback.
func (a *assembler) resolveLinks() {
	var tried []threadKey
	if a.checkAll {
		for th := range a.unresolved {
			tried = append(tried, th)
		}
	} else {
		for sk := range a.linksToTry {
			if idx := a.sessions[sk]; idx != nil {
				for th := range idx.links {
					if a.unresolved[th] {
						tried = append(tried, th)
					}
				}
			}
		}
		if a.anchorsNew {
			for th := range a.anchorWaiting {
				tried = append(tried, th)
			}
		}
	}
	clear(a.linksToTry)
	a.anchorsNew = false
	for _, th := range tried {
		l, ok := a.resolution(th)
		if !ok {
			continue
		}
		if l.Parent.Thread.Sess() != th.Sess() {
			a.ensure(l.Parent.Thread.Sess()) // its open units group with this one
		}
		a.setLink(th, l)
	}
	if verifyLinks != nil {
		for th := range a.unresolved {
			if _, ok := a.resolution(th); ok {
				verifyLinks(th)
			}
		}
		// Nor may a session out of memory wait for an anchor it has.
		for g, waiting := range a.waitingAsleep {
			for sk, until := range waiting {
				for _, an := range a.anchorIdx[g] {
					if !an.At.After(until) {
						verifyLinks(threadKey{Source: sk.Source, Session: sk.Session})
					}
				}
			}
		}
	}
}

// verifyLinks, when set (tests), is told of a link resolveLinks left
// unresolved that a walk over every link would have resolved.
var verifyLinks func(th threadKey)

// resolution is the resolved link of an unresolved subagent thread, if its
// spawner is known now.
func (a *assembler) resolution(th threadKey) (link, bool) {
	l, ok := a.links[th]
	if !ok || l.Resolved {
		return link{}, false
	}
	if l.Turn && l.Anchor != "" {
		if u, ok := a.anchorFor(th.Source, l); ok {
			return link{Turn: true, At: l.At, Parent: u, Resolved: true}, true
		}
		return link{}, false
	}
	if l.Turn {
		main := threadKey{Source: th.Source, Session: th.Session}
		if t := a.threads[main]; t != nil && main != th {
			if id := t.promptAt(l.At); id != "" {
				return link{Turn: true, At: l.At, Parent: unitKey{Thread: main, Prompt: id}, Resolved: true}, true
			}
		}
		return link{}, false
	}
	if p, ok := a.calls[callKey{Source: th.Source, Session: th.Session, CallID: l.CallID}]; ok && p.Unit.Thread != th {
		return link{CallID: l.CallID, Parent: p.Unit, Resolved: true}, true
	}
	return link{}, false
}

// addAnchor remembers an anchor and reads back the sleeping sessions it
// resolves a link of.
func (a *assembler) addAnchor(an anchor) {
	a.wakeForAnchor(a.remember(an))
}
