// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/state"
	"github.com/agentotel/agentotel/internal/agentevent"
)

// persistence keeps the store and the anchors in step with storage (the
// `storage` setting; the records and their keys are internal/state's).
// Everything is written as it changes, in one batch per ConsumeLogs call
// or tick that changed something, after the spans it produced were handed on (see connector.go
// for the ordering rule): flush returns the batch, committed or rollback
// follow its write. It reads sessions back for the store
// (sessionSource), and the active sessions and the anchors at start.
type persistence struct {
	store *sessionStore
	book  *anchorBook
	sleep settler
	plan  replanner
	// load reads a session's saved state; nil without storage.
	load state.Loader
	// goneUnits are the saved events of units closed since the last flush.
	goneUnits []savedRange
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
	// recordSize is the length of the last session record written.
	recordSize int
}

// settler puts a session read back at start to sleep (the evictor).
type settler interface {
	settle(sk sessKey, now time.Time)
}

// replanner makes the next close pass look at every open unit (the
// scheduler).
type replanner interface {
	lookAtAll()
}

func newPersistence(store *sessionStore, book *anchorBook, sleep settler, plan replanner) *persistence {
	indexed := make([]map[sessKey]bool, state.IndexShards)
	for i := range indexed {
		indexed[i] = map[sessKey]bool{}
	}
	return &persistence{store: store, book: book, sleep: sleep, plan: plan, indexed: indexed, shardsToWrite: map[int]bool{}}
}

// savedRange is the n saved events of a unit.
type savedRange struct {
	keys state.EventKeys
	n    int
}

// indexChange is a session whose entry in the saved index flush changed.
type indexChange struct {
	sk     sessKey
	active bool
}

func (ps *persistence) readSession(sk sessKey) (*state.SessionRecord, error) {
	if ps.load == nil {
		return nil, nil
	}
	return ps.load.LoadSession(sk)
}

func (ps *persistence) readEvents(k unitKey, n int) ([]agentevent.Event, error) {
	return ps.load.LoadEvents(k, n)
}

func (ps *persistence) failed(err error) {
	if ps.loadErr == nil {
		ps.loadErr = err
	}
}

func (ps *persistence) gone(k unitKey, n int) {
	ps.goneUnits = append(ps.goneUnits, savedRange{keys: state.UnitEventKeys(k), n: n})
}

// stored tells whether there is storage to read sessions back from.
func (ps *persistence) stored() bool { return ps.load != nil }

// isIndexed tells whether the saved index lists the session as active.
func (ps *persistence) isIndexed(sk sessKey) bool { return ps.indexed[state.ShardOf(sk)][sk] }

func (ps *persistence) takeLoadErr() error {
	err := ps.loadErr
	ps.loadErr = nil
	return err
}

// dirtySessions lists the changed sessions in a fixed order.
func (ps *persistence) dirtySessions() []sessKey {
	keys := slices.Collect(maps.Keys(ps.store.dirty))
	slices.SortFunc(keys, compareSessions)
	return keys
}

// flush returns the storage operations that save every change since the
// last flush. The caller writes them, then calls committed (the changes
// count as saved) or, when the write failed, unflush and rollback.
func (ps *persistence) flush() ([]*storage.Operation, error) {
	var ops []*storage.Operation
	var enc state.EventEncoder
	for _, g := range ps.goneUnits {
		for i := 0; i < g.n; i++ {
			ops = append(ops, storage.DeleteOperation(g.keys.Key(i)))
		}
	}
	shardsChanged := ps.shardsToWrite
	ps.shardsToWrite = map[int]bool{}
	ps.store.pruneCaughtUp()
	for _, sk := range ps.dirtySessions() {
		idx := ps.store.sessions[sk]
		if idx == nil || idx.empty() {
			ops = append(ops, storage.DeleteOperation(state.SessionKey(sk)))
		} else {
			for k := range idx.units {
				u := ps.store.units[k]
				if u.saved == len(u.events) {
					continue
				}
				keys := state.UnitEventKeys(k)
				for i := u.saved; i < len(u.events); i++ {
					b, err := enc.Encode(u.events[i : i+1])
					if err != nil {
						return nil, err
					}
					ops = append(ops, storage.SetOperation(keys.Key(i), b))
				}
			}
			rec, err := ps.store.record(sk)
			if err != nil {
				return nil, err
			}
			// The size of the last record written: most are of the
			// same few kilobytes, and a buffer grown from nothing to
			// that costs twice the record.
			b, err := rec.AppendJSON(make([]byte, 0, ps.recordSize+ps.recordSize/8))
			if err != nil {
				return nil, err
			}
			ps.recordSize = len(b)
			ops = append(ops, storage.SetOperation(state.SessionKey(sk), b))
		}
		if act := ps.store.active(sk); act != ps.isIndexed(sk) {
			n := state.ShardOf(sk)
			shardsChanged[n] = true
			ps.flushedIndex = append(ps.flushedIndex, indexChange{sk, act})
			if act {
				ps.indexed[n][ownKey(sk)] = true
			} else {
				delete(ps.indexed[n], sk)
			}
		}
	}
	for n := range shardsChanged {
		ix := state.SavedIndex{Version: state.Version}
		for sk := range ps.indexed[n] {
			ix.Sessions = append(ix.Sessions, sk)
		}
		slices.SortFunc(ix.Sessions, compareSessions)
		b, err := json.Marshal(ix)
		if err != nil {
			return nil, err
		}
		ops = append(ops, storage.SetOperation(state.IndexShardKey(n), b))
	}
	ps.flushedShards = shardsChanged
	if ps.book.anchorsDirty {
		b, err := json.Marshal(ps.book.anchors)
		if err != nil {
			return nil, err
		}
		ops = append(ops, storage.SetOperation(state.KeyAnchors, b))
	}
	return ops, nil
}

// committed forgets the changes, as saved.
func (ps *persistence) committed() {
	for sk := range ps.store.dirty {
		if idx := ps.store.sessions[sk]; idx != nil {
			for k := range idx.units {
				ps.store.units[k].saved = len(ps.store.units[k].events)
			}
		}
	}
	clear(ps.store.dirty)
	ps.goneUnits = nil
	ps.book.anchorsDirty = false
	ps.flushedIndex, ps.flushedShards = nil, nil
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

// loadAll reads the active sessions and the anchors back (at start). Past
// limit sessions in memory, each session read is put to sleep at once (see
// evictor.settle), so that start-up holds about limit sessions however many
// are active; now is the wall clock at start.
func (ps *persistence) loadAll(ctx context.Context, client storage.Client, unreadable func(key string, err error), limit int, now time.Time) error {
	ps.load = state.StorageLoader{Ctx: ctx, Client: client, Unreadable: unreadable}
	ops := make([]*storage.Operation, 0, state.IndexShards)
	for n := range state.IndexShards {
		ops = append(ops, storage.GetOperation(state.IndexShardKey(n)))
	}
	if err := client.Batch(ctx, ops...); err != nil {
		return err
	}
	for _, op := range ops {
		if op.Value == nil {
			continue
		}
		var ix state.SavedIndex
		if err := json.Unmarshal(op.Value, &ix); err != nil {
			unreadable(op.Key, err)
			continue
		}
		if ix.Version != state.Version {
			unreadable(op.Key, fmt.Errorf("version %d, this connector reads version %d", ix.Version, state.Version))
			continue
		}
		for _, sk := range ix.Sessions {
			ps.store.ensure(sk)
			n := state.ShardOf(sk)
			ps.indexed[n][sk] = true
			if len(ps.store.sessions) > limit && ps.loadErr == nil {
				ps.sleep.settle(sk, now)
			}
		}
	}
	b, err := client.Get(ctx, state.KeyAnchors)
	if err != nil {
		return err
	}
	if b != nil {
		if err := json.Unmarshal(b, &ps.book.anchors); err != nil {
			unreadable(state.KeyAnchors, err)
			ps.book.anchors = nil
		}
		ps.book.indexAnchors()
	}
	return ps.takeLoadErr()
}

// rollback drops every change since the last flush from memory and reads
// the changed sessions back as saved: the spans they produced were refused
// downstream, so the input that produced them will come again.
func (ps *persistence) rollback(ctx context.Context, client storage.Client) error {
	for _, sk := range ps.dirtySessions() {
		ps.store.drop(sk)
		ps.store.ensure(sk)
	}
	clear(ps.store.dirty)
	ps.plan.lookAtAll() // groups across sessions went back in time
	ps.goneUnits = nil
	if ps.book.anchorsDirty {
		ps.book.anchors = nil
		b, err := client.Get(ctx, state.KeyAnchors)
		if err != nil {
			return err
		}
		if b != nil {
			if err := json.Unmarshal(b, &ps.book.anchors); err != nil {
				return err
			}
		}
		ps.book.indexAnchors()
		ps.book.anchorsDirty = false
	}
	return ps.takeLoadErr()
}
