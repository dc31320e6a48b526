// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package checkpoint

import (
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/agentotel/agentotel/internal/storagecodec"
)

// Codec makes, saves and restores the state S of one session.
type Codec[S any] struct {
	Fresh     func(key string) S
	Marshal   func(S) ([]byte, error)
	Unmarshal func(key string, b []byte) (S, error)
}

// LifeCycle are the settings of the session life cycle, shared by all
// sources.
type LifeCycle struct {
	// MaxSessions caps the sessions held in memory; the least recently
	// active is evicted (its state is in the storage) and reloaded when it
	// comes back.
	MaxSessions int
	// ForgetAfter: a session whose files (rows) are gone and that has been
	// idle this long is forgotten, its stored state deleted.
	ForgetAfter time.Duration
	Now         func() time.Time
}

// Session is one session: created on first sight, active while read, idle
// after, evicted from memory by the cap (its state still stored), forgotten
// once its data is gone and it has been idle for forget_after.
type Session[S any] struct {
	// Key is the session's storage key; State is its state, the holder's
	// to read and change.
	Key    string
	State  S
	mu     sync.Mutex // held by the one reader of the session
	loaded bool
	inUse  int // under the table's mutex
	elem   *list.Element
}

// indexEntry is what the index keeps of a session, resident or not.
type indexEntry struct {
	// Probes are the files (or rows) the session's data is in: it is gone
	// when none of them exists any more.
	Probes []string `json:"probes"`
	// Active is when the session was last read (Unix ms).
	Active int64 `json:"active_ms"`
	// dirty: changed since it was last written to its shard.
	dirty bool
}

// IndexShards is the number of parts the index of a table is kept in, by a
// hash of the session key (storagecodec.Shard): a write rewrites the part
// of the sessions it changes, not the whole index.
const IndexShards = storagecodec.IndexShards

// maxIndexPending is how many index entries of sessions not in memory the
// table holds before it writes them to their shards and lets them go.
const maxIndexPending = 4096

// Table holds the sessions of one source: at most MaxSessions in
// memory, and an index of every session that has state (its probes and when
// it was last read) in the storage, in IndexShards parts under
// <agent>.sessions.<shard> (see Store), forgetting the sessions whose
// data is gone. In memory the index holds the entries of the sessions in
// memory and at most maxIndexPending more, not yet written: its memory does
// not grow with the history.
type Table[S any] struct {
	cp       *Store
	indexKey string
	codec    Codec[S]
	life     LifeCycle
	onError  func(error)
	// OnForget is told the probes of a forgotten session (the emitter drops
	// what it remembers of those files).
	OnForget func(key string, probes []string)
	// maxPending overrides maxIndexPending (tests).
	maxPending int

	// ioMu serializes the reads and writes of the index shards.
	ioMu sync.Mutex

	mu       sync.Mutex
	resident map[string]*Session[S]
	lru      *list.List // of *Session[S], most recently active first
	index    map[string]*indexEntry
}

// NewTable is the table of one source's sessions, its index kept under
// the index key of name ("" for the agent's main table); onError reports a
// failed read or write of the storage.
func NewTable[S any](cp *Store, name string, codec Codec[S], life LifeCycle, onError func(error)) *Table[S] {
	return &Table[S]{
		cp: cp, indexKey: sessionIndexKey(name), codec: codec, life: life, onError: onError,
		maxPending: maxIndexPending,
		resident:   map[string]*Session[S]{},
		lru:        list.New(),
		index:      map[string]*indexEntry{},
	}
}

// shardOf is the index shard of a session key.
func shardOf(key string) int { return storagecodec.Shard(key) }

func (t *Table[S]) shardKey(shard int) string {
	return fmt.Sprintf("%s.%02x", t.indexKey, shard)
}

// readShard returns the entries stored in one shard.
func (t *Table[S]) readShard(ctx context.Context, shard int) map[string]*indexEntry {
	out := map[string]*indexEntry{}
	b, err := t.cp.GetBlob(ctx, t.shardKey(shard))
	if err != nil {
		t.onError(fmt.Errorf("read the session index: %w", err))
		return out
	}
	if b == nil {
		return out
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.onError(fmt.Errorf("decode the session index: %w", err))
	}
	return out
}

func (t *Table[S]) writeShard(ctx context.Context, shard int, entries map[string]*indexEntry) {
	b, err := json.Marshal(entries)
	if err == nil {
		err = t.cp.SetBlob(ctx, t.shardKey(shard), b)
	}
	if err != nil {
		t.onError(fmt.Errorf("save the session index: %w", err))
	}
}

// Acquire returns the session of key, its state restored from the storage
// the first time (or after eviction), locked for the caller, who releases
// it. probes are the files its data is in now (nil: unchanged).
func (t *Table[S]) Acquire(ctx context.Context, key string, probes ...string) *Session[S] {
	t.mu.Lock()
	s := t.resident[key]
	if s == nil {
		s = &Session[S]{Key: key}
		t.resident[key] = s
		s.elem = t.lru.PushFront(s)
	} else {
		t.lru.MoveToFront(s.elem)
	}
	s.inUse++
	// Only a session whose data is known (probes) is indexed: one looked up
	// without (a watermark peeked at) is never taken for gone.
	e := t.index[key]
	if e == nil && len(probes) > 0 {
		e = &indexEntry{} // merged with what its shard holds when written
		t.index[key] = e
	}
	if e != nil {
		for _, p := range probes {
			if !slices.Contains(e.Probes, p) {
				e.Probes = append(e.Probes, p)
			}
		}
		e.Active = t.life.Now().UnixMilli()
		e.dirty = true
	}
	t.evictLocked(ctx)
	t.mu.Unlock()

	s.mu.Lock()
	if !s.loaded {
		s.loaded = true
		s.State = t.load(ctx, key)
	}
	return s
}

func (t *Table[S]) load(ctx context.Context, key string) S {
	b, err := t.cp.Get(ctx, key)
	if err != nil {
		t.onError(fmt.Errorf("read the state of %s: %w", key, err))
		return t.codec.Fresh(key)
	}
	if b == nil {
		return t.codec.Fresh(key)
	}
	st, err := t.codec.Unmarshal(key, b)
	if err != nil {
		t.onError(fmt.Errorf("decode the state of %s (read afresh): %w", key, err))
		return t.codec.Fresh(key)
	}
	return st
}

// Release unlocks a session acquired before.
func (t *Table[S]) Release(s *Session[S]) {
	s.mu.Unlock()
	t.mu.Lock()
	s.inUse--
	if e := t.index[s.Key]; e != nil {
		e.Active = t.life.Now().UnixMilli()
		e.dirty = true
	}
	// Sessions read at once may outnumber the cap; the excess goes as
	// they are released.
	t.evictLocked(context.Background())
	over := len(t.index) > len(t.resident)+t.maxPending
	t.mu.Unlock()
	if over {
		t.writeOut(context.Background())
	}
}

// Commit stores the state of a session (held by the caller) after the next
// consumer accepted what it emitted. Without storage the state stays in
// memory.
func (t *Table[S]) Commit(ctx context.Context, s *Session[S]) {
	if !t.cp.persist {
		return
	}
	b, err := t.codec.Marshal(s.State)
	if err == nil {
		err = t.cp.Set(ctx, s.Key, b, false)
	}
	if err != nil {
		t.onError(fmt.Errorf("save the state of %s: %w", s.Key, err))
	}
}

// evictLocked drops the least recently active sessions nobody is reading
// while more than MaxSessions are in memory. Their state is in the storage
// (committed after every read), or kept in memory without storage.
func (t *Table[S]) evictLocked(ctx context.Context) {
	for el := t.lru.Back(); el != nil && t.life.MaxSessions > 0 && len(t.resident) > t.life.MaxSessions; {
		s := el.Value.(*Session[S])
		prev := el.Prev()
		if s.inUse == 0 {
			if !t.cp.persist && s.loaded {
				if b, err := t.codec.Marshal(s.State); err == nil {
					_ = t.cp.Set(ctx, s.Key, b, true)
				}
			}
			t.lru.Remove(el)
			delete(t.resident, s.Key)
		}
		el = prev
	}
}

// ResidentCount is the number of sessions in memory.
func (t *Table[S]) ResidentCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.resident)
}

// Known reports whether a session is in the index.
func (t *Table[S]) Known(key string) bool {
	t.mu.Lock()
	e := t.index[key]
	t.mu.Unlock()
	if e != nil {
		return true
	}
	t.ioMu.Lock()
	defer t.ioMu.Unlock()
	return t.readShard(context.Background(), shardOf(key))[key] != nil
}

// indexed is the number of index entries in memory.
func (t *Table[S]) indexed() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.index)
}

// writeOut writes the changed index entries to their shards, merged with
// what the shards hold, and lets go of the entries of sessions not in
// memory.
func (t *Table[S]) writeOut(ctx context.Context) {
	t.ioMu.Lock()
	defer t.ioMu.Unlock()
	t.mu.Lock()
	byShard := map[int]map[string]indexEntry{}
	for k, e := range t.index {
		if !e.dirty {
			continue
		}
		shard := shardOf(k)
		if byShard[shard] == nil {
			byShard[shard] = map[string]indexEntry{}
		}
		byShard[shard][k] = indexEntry{Probes: slices.Clone(e.Probes), Active: e.Active}
		e.dirty = false
	}
	t.mu.Unlock()
	for shard, changed := range byShard {
		stored := t.readShard(ctx, shard)
		for k, e := range changed {
			if old := stored[k]; old != nil {
				for _, p := range old.Probes {
					if !slices.Contains(e.Probes, p) {
						e.Probes = append(e.Probes, p)
					}
				}
				e.Active = max(e.Active, old.Active)
			}
			stored[k] = &e
		}
		t.writeShard(ctx, shard, stored)
	}
	t.mu.Lock()
	for k, e := range t.index {
		if !e.dirty && t.resident[k] == nil {
			delete(t.index, k)
		}
	}
	t.mu.Unlock()
}

// Sweep forgets the sessions idle for ForgetAfter whose probes are all
// gone (exists says whether one still is): it writes the index out, then
// goes through it shard by shard.
func (t *Table[S]) Sweep(ctx context.Context, exists func(probe string) bool) {
	t.writeOut(ctx)
	cutoff := t.life.Now().Add(-t.life.ForgetAfter).UnixMilli()
	for shard := range IndexShards {
		if ctx.Err() != nil {
			return
		}
		t.sweepShard(ctx, shard, cutoff, exists)
	}
}

func (t *Table[S]) sweepShard(ctx context.Context, shard int, cutoff int64, exists func(probe string) bool) {
	t.ioMu.Lock()
	defer t.ioMu.Unlock()
	stored := t.readShard(ctx, shard)
	// busy tells whether a session was read since cutoff, or is being read.
	busy := func(k string) bool {
		if e := t.index[k]; e != nil && e.Active > cutoff {
			return true
		}
		s := t.resident[k]
		return s != nil && s.inUse > 0
	}
	changed := false
	for k, e := range stored {
		if e.Active > cutoff || len(e.Probes) == 0 {
			continue
		}
		t.mu.Lock()
		skip := busy(k)
		t.mu.Unlock()
		if skip || slices.ContainsFunc(e.Probes, exists) {
			continue
		}
		t.mu.Lock()
		if busy(k) {
			t.mu.Unlock()
			continue // read again meanwhile
		}
		delete(t.index, k)
		if s := t.resident[k]; s != nil {
			t.lru.Remove(s.elem)
			delete(t.resident, k)
		}
		t.mu.Unlock()
		delete(stored, k)
		changed = true
		if err := t.cp.Delete(ctx, k); err != nil {
			t.onError(fmt.Errorf("delete the state of %s: %w", k, err))
		}
		if t.OnForget != nil {
			t.OnForget(k, e.Probes)
		}
	}
	if changed {
		t.writeShard(ctx, shard, stored)
	}
}

// Flush writes the changed index entries.
func (t *Table[S]) Flush(ctx context.Context) {
	t.writeOut(ctx)
}

// CommitOp is the storage write of a session's state (held by the caller),
// for a batch of several sessions' writes; nil without storage (the state
// stays in memory).
func (t *Table[S]) CommitOp(s *Session[S]) *storage.Operation {
	if !t.cp.persist {
		return nil
	}
	b, err := t.codec.Marshal(s.State)
	if err != nil {
		t.onError(fmt.Errorf("save the state of %s: %w", s.Key, err))
		return nil
	}
	return storage.SetOperation(s.Key, b)
}
