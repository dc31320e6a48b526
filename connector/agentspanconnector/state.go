// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector // import "github.com/agentotel/agentotel/connector/agentspanconnector"

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/state"
) // pruneCaughtUp drops, in the sessions a pass changed, the caught-up flags
// of the files that are no open unit's last file. Only those are looked up
// (groupCaughtUp), and the next event of any other file brings its flag
// again (noteRead), so the decisions are the same with or without them;
// kept, a session of many files (Claude Code writes a file per subagent)
// would carry the path of every file it ever had, in memory and in its
// record, rewritten with each of its batches. Called at the end of a kept
// pass (by flush, before the records are built, with storage), so that a
// restart from the records starts from the state an uninterrupted run has.
func (a *assembler) pruneCaughtUp() {
	for sk := range a.dirty {
		if idx := a.sessions[sk]; idx != nil {
			pruneCaughtUp(a.units, idx)
		}
	}
}

// record builds the saved form of a session from memory.
func (a *assembler) record(sk sessKey) (*state.SessionRecord, error) {
	idx := a.sessions[sk]
	rec := &state.SessionRecord{Version: state.Version, CaughtUp: idx.caughtUp}
	for th := range idx.threads {
		t := a.threads[th]
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
		u := a.units[k]
		rec.Units = append(rec.Units, state.SavedUnit{Key: k, PrevPrompt: u.prevPrompt, Host: u.host, LastArrival: u.lastArrival.UnixNano(), Events: len(u.events)})
	}
	for th := range idx.links {
		rec.Links = append(rec.Links, state.SavedLink{Thread: th, Link: a.links[th]})
	}
	for c := range idx.calls {
		rec.Calls = append(rec.Calls, state.SavedCall{Call: c, Ref: a.calls[c]})
	}
	// Fixed order, so equal states serialize to equal bytes.
	slices.SortFunc(rec.Threads, func(x, y state.SavedThread) int { return compareThreads(x.Key, y.Key) })
	slices.SortFunc(rec.Units, func(x, y state.SavedUnit) int { return compareUnits(x.Key, y.Key) })
	slices.SortFunc(rec.Links, func(x, y state.SavedLink) int { return compareThreads(x.Thread, y.Thread) })
	slices.SortFunc(rec.Calls, func(x, y state.SavedCall) int { return cmp.Compare(x.Call.CallID, y.Call.CallID) })
	return rec, nil
}

// flush returns the storage operations that save every change since the
// last flush. The caller writes them, then calls committed (the changes
// count as saved) or, when the write failed, unflush and rollback.
func (a *assembler) flush() ([]*storage.Operation, error) {
	var ops []*storage.Operation
	for _, g := range a.gone {
		for i := 0; i < g.n; i++ {
			ops = append(ops, storage.DeleteOperation(state.EventKey(g.unit, i)))
		}
	}
	shardsChanged := a.shardsToWrite
	a.shardsToWrite = map[int]bool{}
	a.pruneCaughtUp()
	for _, sk := range a.dirtySessions() {
		idx := a.sessions[sk]
		if idx == nil || idx.empty() {
			ops = append(ops, storage.DeleteOperation(state.SessionKey(sk)))
		} else {
			for k := range idx.units {
				u := a.units[k]
				for i := u.saved; i < len(u.events); i++ {
					b, err := state.EncodeEvents(u.events[i : i+1])
					if err != nil {
						return nil, err
					}
					ops = append(ops, storage.SetOperation(state.EventKey(k, i), b))
				}
			}
			rec, err := a.record(sk)
			if err != nil {
				return nil, err
			}
			b, err := json.Marshal(rec)
			if err != nil {
				return nil, err
			}
			ops = append(ops, storage.SetOperation(state.SessionKey(sk), b))
		}
		if act := a.active(sk); act != a.isIndexed(sk) {
			n := state.ShardOf(sk)
			shardsChanged[n] = true
			a.flushedIndex = append(a.flushedIndex, indexChange{sk, act})
			if act {
				a.indexed[n][ownKey(sk)] = true
			} else {
				delete(a.indexed[n], sk)
			}
		}
	}
	for n := range shardsChanged {
		ix := state.SavedIndex{Version: state.Version}
		for sk := range a.indexed[n] {
			ix.Sessions = append(ix.Sessions, sk)
		}
		slices.SortFunc(ix.Sessions, compareSessions)
		b, err := json.Marshal(ix)
		if err != nil {
			return nil, err
		}
		ops = append(ops, storage.SetOperation(state.IndexShardKey(n), b))
	}
	a.flushedShards = shardsChanged
	if a.anchorsDirty {
		b, err := json.Marshal(a.anchors)
		if err != nil {
			return nil, err
		}
		ops = append(ops, storage.SetOperation(state.KeyAnchors, b))
	}
	return ops, nil
}

// committed forgets the changes, as saved.
func (a *assembler) committed() {
	for sk := range a.dirty {
		if idx := a.sessions[sk]; idx != nil {
			for k := range idx.units {
				a.units[k].saved = len(a.units[k].events)
			}
		}
	}
	clear(a.dirty)
	a.gone = nil
	a.anchorsDirty = false
	a.flushedIndex, a.flushedShards = nil, nil
}

// loadAll reads the active sessions and the anchors back (at start). Past
// max sessions in memory, each session read is put to sleep at once (see
// settle), so that start-up holds about max sessions however many are
// active; now is the wall clock at start.
func (a *assembler) loadAll(ctx context.Context, client storage.Client, unreadable func(key string, err error), max int, now time.Time) error {
	a.load = state.StorageLoader{Ctx: ctx, Client: client, Unreadable: unreadable}
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
			a.ensure(sk)
			n := state.ShardOf(sk)
			a.indexed[n][sk] = true
			if len(a.sessions) > max && a.loadErr == nil {
				a.settle(sk, now)
			}
		}
	}
	b, err := client.Get(ctx, state.KeyAnchors)
	if err != nil {
		return err
	}
	if b != nil {
		if err := json.Unmarshal(b, &a.anchors); err != nil {
			unreadable(state.KeyAnchors, err)
			a.anchors = nil
		}
		a.indexAnchors()
	}
	return a.takeLoadErr()
}

// rollback drops every change since the last flush from memory and reads
// the changed sessions back as saved: the spans they produced were refused
// downstream, so the input that produced them will come again.
func (a *assembler) rollback(ctx context.Context, client storage.Client) error {
	for _, sk := range a.dirtySessions() {
		a.drop(sk)
		a.ensure(sk)
	}
	clear(a.dirty)
	a.checkAll = true // groups across sessions went back in time
	a.gone = nil
	if a.anchorsDirty {
		a.anchors = nil
		b, err := client.Get(ctx, state.KeyAnchors)
		if err != nil {
			return err
		}
		if b != nil {
			if err := json.Unmarshal(b, &a.anchors); err != nil {
				return err
			}
		}
		a.indexAnchors()
		a.anchorsDirty = false
	}
	return a.takeLoadErr()
}
