// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver // import "github.com/agentotel/agentotel/receiver/agentlogreceiver"

import (
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/agentotel/agentotel/internal/storagecodec"
)

// checkpoints is one agent's part of the storage: every key the receiver
// writes for an agent is named here, under the agent's prefix.
//
//	<agent>.parser.<path>              parser state and read position of one JSONL file
//	<agent>.first.<sha256>             the JSONL file read with this first line (tail.go)
//	<agent>.thread.<thread>            watermark of one thread of rewritten files (Gemini CLI)
//	<agent>.tree.<storage>.<session>   watermark of one session of an OpenCode JSON tree
//	<agent>.db.<path>                  watermark of one OpenCode database
//	<agent>.db.<path>.<session>        watermark of one session of an OpenCode database
//	<agent>.sessions.<shard>           the index of the sessions above (life cycle), in
//	                                   indexShards parts (00 to 7f) by a hash of the key *
//	<agent>.pending_flush              JSONL files read to their end while being written,
//	                                   whose parser flushes once they settle *
//	<agent>.snapshot.…                 the rewritten files of an agent that has both
//	                                   kinds (Copilot CLI history JSON): thread.<id>, sessions
//
// The keys marked * are in the blobs client (see below).
//
// Without a storage extension the keys live in memory: only the state of a
// session evicted by the cap is kept there (see sessionTable), so that it
// comes back unchanged.
//
// The keys written as one value for the whole agent — sessions,
// pending_flush, which grow with the history (megabytes) and are rewritten
// whole — go to a storage client of their own (blobs; file_storage: a file
// of its own, receiver_agentlog_<name>_positions). The storage keeps a value
// with the few keys next to it in its order; a commit of one of those keys,
// a small per-session state written after every delivery, would otherwise
// rewrite megabytes each time (gigabytes written over a long history, and
// a storage file several times its content).
type checkpoints struct {
	persister operator.Persister
	// blobs holds the values written whole for the agent (see above).
	blobs   operator.Persister
	persist bool

	mu  sync.Mutex
	mem map[string][]byte // without storage: states of evicted sessions
}

func newCheckpoints(client storage.Client, agentKey string, persist bool) *checkpoints {
	p := operator.NewScopedPersister(agentKey, client)
	return &checkpoints{persister: p, blobs: p, persist: persist, mem: map[string][]byte{}}
}

// withBlobs keeps the agent's whole values in their own storage client.
func (c *checkpoints) withBlobs(client storage.Client, agentKey string) *checkpoints {
	c.blobs = operator.NewScopedPersister(agentKey, client)
	return c
}

// getBlob and setBlob are get and set of the agent's whole values.
// Without storage they are kept in memory.
func (c *checkpoints) getBlob(ctx context.Context, key string) ([]byte, error) {
	if !c.persist {
		return c.get(ctx, key)
	}
	return c.blobs.Get(ctx, key)
}

func (c *checkpoints) setBlob(ctx context.Context, key string, b []byte) error {
	if !c.persist {
		return c.set(ctx, key, b, true)
	}
	return c.blobs.Set(ctx, key, b)
}

func parserKey(path string) string              { return "parser." + path }
func threadKey(thread string) string            { return "thread." + thread }
func treeKey(storageDir, session string) string { return "tree." + storageDir + "." + session }
func dbKey(path string) string                  { return "db." + path }
func dbSessionKey(path, session string) string  { return "db." + path + "." + session }

// sessionIndexKey is the index of one session table ("sessions" for the
// agent's main table, "sessions.<name>" for another).
func sessionIndexKey(name string) string {
	if name == "" {
		return "sessions"
	}
	return "sessions." + name
}

func (c *checkpoints) get(ctx context.Context, key string) ([]byte, error) {
	if !c.persist {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.mem[key], nil
	}
	return c.persister.Get(ctx, key)
}

// set writes a key to the storage; without storage it does nothing (the
// state is in memory already) unless keep asks to keep it in memory.
func (c *checkpoints) set(ctx context.Context, key string, b []byte, keep bool) error {
	if !c.persist {
		if keep {
			c.mu.Lock()
			c.mem[key] = b
			c.mu.Unlock()
		}
		return nil
	}
	return c.persister.Set(ctx, key, b)
}

func (c *checkpoints) delete(ctx context.Context, key string) error {
	c.mu.Lock()
	delete(c.mem, key)
	c.mu.Unlock()
	if !c.persist {
		return nil
	}
	return c.persister.Delete(ctx, key)
}

// batch applies ops (sets and deletes) to the storage in one call, which
// file_storage makes one transaction: a crash leaves all of them or none.
// Without storage they apply to the keys kept in memory.
func (c *checkpoints) batch(ctx context.Context, ops ...*storage.Operation) error {
	if !c.persist {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, op := range ops {
			switch op.Type {
			case storage.Set:
				c.mem[op.Key] = op.Value
			case storage.Delete:
				delete(c.mem, op.Key)
			}
		}
		return nil
	}
	return c.persister.Batch(ctx, ops...)
}

// sessionCodec makes, saves and restores the state S of one session.
type sessionCodec[S any] struct {
	fresh     func(key string) S
	marshal   func(S) ([]byte, error)
	unmarshal func(key string, b []byte) (S, error)
}

// lifeCycle are the settings of the session life cycle, shared by all
// sources.
type lifeCycle struct {
	// maxSessions caps the sessions held in memory; the least recently
	// active is evicted (its state is in the storage) and reloaded when it
	// comes back.
	maxSessions int
	// forgetAfter: a session whose files (rows) are gone and that has been
	// idle this long is forgotten, its stored state deleted.
	forgetAfter time.Duration
	now         func() time.Time
}

// tracked is one session: created on first sight, active while read, idle
// after, evicted from memory by the cap (its state still stored), forgotten
// once its data is gone and it has been idle for forget_after.
type tracked[S any] struct {
	key    string
	mu     sync.Mutex // held by the one reader of the session
	loaded bool
	state  S
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

// indexShards is the number of parts the index of a table is kept in, by a
// hash of the session key (storagecodec.Shard): a write rewrites the part
// of the sessions it changes, not the whole index.
const indexShards = storagecodec.IndexShards

// maxIndexPending is how many index entries of sessions not in memory the
// table holds before it writes them to their shards and lets them go.
const maxIndexPending = 4096

// sessionTable holds the sessions of one source: at most maxSessions in
// memory, and an index of every session that has state (its probes and when
// it was last read) in the storage, in indexShards parts under
// <agent>.sessions.<shard> (see checkpoints), forgetting the sessions whose
// data is gone. In memory the index holds the entries of the sessions in
// memory and at most maxIndexPending more, not yet written: its memory does
// not grow with the history.
type sessionTable[S any] struct {
	cp       *checkpoints
	indexKey string
	codec    sessionCodec[S]
	life     lifeCycle
	onError  func(error)
	// onForget is told the probes of a forgotten session (the emitter drops
	// what it remembers of those files).
	onForget func(key string, probes []string)
	// maxPending overrides maxIndexPending (tests).
	maxPending int

	// ioMu serializes the reads and writes of the index shards.
	ioMu sync.Mutex

	mu       sync.Mutex
	resident map[string]*tracked[S]
	lru      *list.List // of *tracked[S], most recently active first
	index    map[string]*indexEntry
}

func newSessionTable[S any](cp *checkpoints, name string, codec sessionCodec[S], life lifeCycle, onError func(error)) *sessionTable[S] {
	return &sessionTable[S]{
		cp: cp, indexKey: sessionIndexKey(name), codec: codec, life: life, onError: onError,
		maxPending: maxIndexPending,
		resident:   map[string]*tracked[S]{},
		lru:        list.New(),
		index:      map[string]*indexEntry{},
	}
}

// shardOf is the index shard of a session key.
func shardOf(key string) int { return storagecodec.Shard(key) }

func (t *sessionTable[S]) shardKey(shard int) string {
	return fmt.Sprintf("%s.%02x", t.indexKey, shard)
}

// readShard returns the entries stored in one shard.
func (t *sessionTable[S]) readShard(ctx context.Context, shard int) map[string]*indexEntry {
	out := map[string]*indexEntry{}
	b, err := t.cp.getBlob(ctx, t.shardKey(shard))
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

func (t *sessionTable[S]) writeShard(ctx context.Context, shard int, entries map[string]*indexEntry) {
	b, err := json.Marshal(entries)
	if err == nil {
		err = t.cp.setBlob(ctx, t.shardKey(shard), b)
	}
	if err != nil {
		t.onError(fmt.Errorf("save the session index: %w", err))
	}
}

// acquire returns the session of key, its state restored from the storage
// the first time (or after eviction), locked for the caller, who releases
// it. probes are the files its data is in now (nil: unchanged).
func (t *sessionTable[S]) acquire(ctx context.Context, key string, probes ...string) *tracked[S] {
	t.mu.Lock()
	s := t.resident[key]
	if s == nil {
		s = &tracked[S]{key: key}
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
		e.Active = t.life.now().UnixMilli()
		e.dirty = true
	}
	t.evictLocked(ctx)
	t.mu.Unlock()

	s.mu.Lock()
	if !s.loaded {
		s.loaded = true
		s.state = t.load(ctx, key)
	}
	return s
}

func (t *sessionTable[S]) load(ctx context.Context, key string) S {
	b, err := t.cp.get(ctx, key)
	if err != nil {
		t.onError(fmt.Errorf("read the state of %s: %w", key, err))
		return t.codec.fresh(key)
	}
	if b == nil {
		return t.codec.fresh(key)
	}
	st, err := t.codec.unmarshal(key, b)
	if err != nil {
		t.onError(fmt.Errorf("decode the state of %s (read afresh): %w", key, err))
		return t.codec.fresh(key)
	}
	return st
}

// release unlocks a session acquired before.
func (t *sessionTable[S]) release(s *tracked[S]) {
	s.mu.Unlock()
	t.mu.Lock()
	s.inUse--
	if e := t.index[s.key]; e != nil {
		e.Active = t.life.now().UnixMilli()
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

// commit stores the state of a session (held by the caller) after the next
// consumer accepted what it emitted. Without storage the state stays in
// memory.
func (t *sessionTable[S]) commit(ctx context.Context, s *tracked[S]) {
	if !t.cp.persist {
		return
	}
	b, err := t.codec.marshal(s.state)
	if err == nil {
		err = t.cp.set(ctx, s.key, b, false)
	}
	if err != nil {
		t.onError(fmt.Errorf("save the state of %s: %w", s.key, err))
	}
}

// evictLocked drops the least recently active sessions nobody is reading
// while more than maxSessions are in memory. Their state is in the storage
// (committed after every read), or kept in memory without storage.
func (t *sessionTable[S]) evictLocked(ctx context.Context) {
	for el := t.lru.Back(); el != nil && t.life.maxSessions > 0 && len(t.resident) > t.life.maxSessions; {
		s := el.Value.(*tracked[S])
		prev := el.Prev()
		if s.inUse == 0 {
			if !t.cp.persist && s.loaded {
				if b, err := t.codec.marshal(s.state); err == nil {
					_ = t.cp.set(ctx, s.key, b, true)
				}
			}
			t.lru.Remove(el)
			delete(t.resident, s.key)
		}
		el = prev
	}
}

// residentCount is the number of sessions in memory.
func (t *sessionTable[S]) residentCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.resident)
}

// known reports whether a session is in the index.
func (t *sessionTable[S]) known(key string) bool {
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
func (t *sessionTable[S]) indexed() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.index)
}

// writeOut writes the changed index entries to their shards, merged with
// what the shards hold, and lets go of the entries of sessions not in
// memory.
func (t *sessionTable[S]) writeOut(ctx context.Context) {
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

// sweep forgets the sessions idle for forgetAfter whose probes are all
// gone (exists says whether one still is): it writes the index out, then
// goes through it shard by shard.
func (t *sessionTable[S]) sweep(ctx context.Context, exists func(probe string) bool) {
	t.writeOut(ctx)
	cutoff := t.life.now().Add(-t.life.forgetAfter).UnixMilli()
	for shard := range indexShards {
		if ctx.Err() != nil {
			return
		}
		t.sweepShard(ctx, shard, cutoff, exists)
	}
}

func (t *sessionTable[S]) sweepShard(ctx context.Context, shard int, cutoff int64, exists func(probe string) bool) {
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
		if err := t.cp.delete(ctx, k); err != nil {
			t.onError(fmt.Errorf("delete the state of %s: %w", k, err))
		}
		if t.onForget != nil {
			t.onForget(k, e.Probes)
		}
	}
	if changed {
		t.writeShard(ctx, shard, stored)
	}
}

// flush writes the changed index entries.
func (t *sessionTable[S]) flush(ctx context.Context) {
	t.writeOut(ctx)
}
