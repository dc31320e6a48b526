// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector // import "github.com/agentotel/agentotel/connector/agentspanconnector"

import (
	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/state"
)

// savedRange is the n saved events of a unit.
type savedRange struct {
	unit unitKey
	n    int
}

// indexChange is a session whose entry in the saved index flush changed.
type indexChange struct {
	sk     sessKey
	active bool
}

func newIndexShards() []map[sessKey]bool {
	out := make([]map[sessKey]bool, state.IndexShards)
	for i := range out {
		out[i] = map[sessKey]bool{}
	}
	return out
}

func pruneCaughtUp(units map[unitKey]*unit, idx *sessIndex) {
	for f := range idx.caughtUp {
		open := false
		for k := range idx.units {
			if units[k].lastFile == f {
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

// persistence is what the assembler keeps of its storage: how to read a
// session back, what the last flush wrote of the index, and what is left
// to write or delete.
type persistence struct {
	// load reads a session's saved state; nil without storage.
	load state.Loader
	// gone are the saved events of units closed since the last flush.
	gone []savedRange
	// loadErr is the first error reading a saved session back.
	loadErr error
	// indexed are the active sessions as last saved in the index, by
	// shard; shardsToWrite the shards to write at the next flush besides
	// those that change.
	indexed       []map[sessKey]bool
	shardsToWrite map[int]bool
	// flushedIndex and flushedShards are what the last flush changed of
	// the index, until its write is committed (unflush).
	flushedIndex  []indexChange
	flushedShards map[int]bool
}

// isIndexed tells whether the saved index lists the session as active.
func (ps *persistence) isIndexed(sk sessKey) bool { return ps.indexed[state.ShardOf(sk)][sk] }

func (ps *persistence) takeLoadErr() error {
	err := ps.loadErr
	ps.loadErr = nil
	return err
}

// unflush undoes what flush did to the index in memory, when writing its
// operations failed: the sessions' entries and the parts to write are as
// before, and rollback reads the changed sessions back as saved.
func (ps *persistence) unflush() {
	for _, ch := range ps.flushedIndex {
		n := state.ShardOf(ch.sk)
		if ch.active {
			delete(ps.indexed[n], ch.sk)
		} else {
			ps.indexed[n][ch.sk] = true
		}
	}
	for n := range ps.flushedShards {
		ps.shardsToWrite[n] = true
	}
	ps.flushedIndex, ps.flushedShards = nil, nil
}
