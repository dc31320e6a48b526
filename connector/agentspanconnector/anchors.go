// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"slices"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// anchorBook holds the anchors (bounded, oldest dropped first), indexed
// by what a link must match.
type anchorBook struct {
	anchors []anchor
	// anchorIdx holds the anchors by what a link must match.
	anchorIdx map[anchorGroup][]anchor
	// anchorsDirty is set when anchors changed since the last flush,
	// anchorsNew since the last link resolution.
	anchorsDirty, anchorsNew bool
}

func newAnchorBook() *anchorBook {
	return &anchorBook{anchorIdx: map[anchorGroup][]anchor{}}
}

// remember appends an anchor, dropping the oldest past maxAnchors, and
// returns it as kept.
func (ab *anchorBook) remember(an anchor) anchor {
	an = ownAnchor(an)
	ab.anchors = append(ab.anchors, an)
	g := anchorGroup{an.Source, an.Kind, an.Project}
	ab.anchorIdx[g] = append(ab.anchorIdx[g], an)
	if len(ab.anchors) > maxAnchors {
		old := ab.anchors[0]
		ab.anchors = slices.Delete(ab.anchors, 0, 1)
		og := anchorGroup{old.Source, old.Kind, old.Project}
		// The oldest anchor overall is the oldest of its group.
		if ab.anchorIdx[og] = slices.Delete(ab.anchorIdx[og], 0, 1); len(ab.anchorIdx[og]) == 0 {
			delete(ab.anchorIdx, og)
		}
	}
	ab.anchorsDirty = true
	ab.anchorsNew = true
	return an
}

// indexAnchors rebuilds anchorIdx from anchors (read back from storage).
func (ab *anchorBook) indexAnchors() {
	clear(ab.anchorIdx)
	for i := range ab.anchors {
		an := &ab.anchors[i]
		g := anchorGroup{an.Source, an.Kind, an.Project}
		ab.anchorIdx[g] = append(ab.anchorIdx[g], *an)
	}
	ab.anchorsNew = true
}

// anchorFor is the turn of the latest anchor of l's kind in l's project at
// or just before the subagent's start (the first of equal times). It looks
// only at the anchors of that agent, kind and project.
func (ab *anchorBook) anchorFor(source agentevent.Source, l link) (unitKey, bool) {
	var best *anchor
	group := ab.anchorIdx[anchorGroup{source, l.Anchor, l.Project}]
	for i := range group {
		an := &group[i]
		if an.At.After(l.At.Add(anchorSlack)) {
			continue
		}
		if best == nil || an.At.After(best.At) {
			best = an
		}
	}
	if best == nil {
		return unitKey{}, false
	}
	return best.Unit, true
}
