// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package checkpoint is what the agent_log receiver keeps of what it read:
// one agent's part of the storage (Store: every key the receiver writes is
// named here) and the sessions a source reads (Table), with their life
// cycle — created on first sight, evicted from memory past a cap, and
// forgotten once their data is gone. It knows nothing of agents, files or
// events: a source gives a Table a Codec for its session state.
package checkpoint

import (
	"context"
	"sync"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// Store is one agent's part of the storage: every key the receiver
// writes for an agent is named here, under the agent's prefix.
//
//	<agent>.parser.<path>              parser state and read position of one JSONL file
//	<agent>.first.<sha256>             the JSONL file read with this first line (internal/tailer)
//	<agent>.thread.<thread>            watermark of one thread of rewritten files (Gemini CLI)
//	<agent>.tree.<storage>.<session>   watermark of one session of an OpenCode JSON tree
//	<agent>.db.<path>                  watermark of one OpenCode database
//	<agent>.db.<path>.<session>        watermark of one session of an OpenCode database
//	<agent>.sessions.<shard>           the index of the sessions above (life cycle), in
//	                                   IndexShards parts (00 to 7f) by a hash of the key *
//	<agent>.pending_flush              JSONL files read to their end while being written,
//	                                   whose parser flushes once they settle *
//	<agent>.snapshot.…                 the rewritten files of an agent that has both
//	                                   kinds (Copilot CLI history JSON): thread.<id>, sessions
//
// The keys marked * are in the blobs client (see below).
//
// Without a storage extension the keys live in memory: only the state of a
// session evicted by the cap is kept there (see Table), so that it
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
type Store struct {
	persister operator.Persister
	// blobs holds the values written whole for the agent (see above).
	blobs   operator.Persister
	persist bool

	mu  sync.Mutex
	mem map[string][]byte // without storage: states of evicted sessions
}

// New is the part of client under agentKey; persist says whether client
// is a storage extension's (false: the keys live in memory).
func New(client storage.Client, agentKey string, persist bool) *Store {
	p := operator.NewScopedPersister(agentKey, client)
	return &Store{persister: p, blobs: p, persist: persist, mem: map[string][]byte{}}
}

// WithBlobs keeps the agent's whole values in their own storage client.
func (c *Store) WithBlobs(client storage.Client, agentKey string) *Store {
	c.blobs = operator.NewScopedPersister(agentKey, client)
	return c
}

// Persistent says whether the keys go to a storage extension.
func (c *Store) Persistent() bool { return c.persist }

// GetBlob and SetBlob are get and set of the agent's whole values.
// Without storage they are kept in memory.
func (c *Store) GetBlob(ctx context.Context, key string) ([]byte, error) {
	if !c.persist {
		return c.Get(ctx, key)
	}
	return c.blobs.Get(ctx, key)
}

// SetBlob: see GetBlob.
func (c *Store) SetBlob(ctx context.Context, key string, b []byte) error {
	if !c.persist {
		return c.Set(ctx, key, b, true)
	}
	return c.blobs.Set(ctx, key, b)
}

// ParserKey is the key of one JSONL file's parser state and read position.
func ParserKey(path string) string { return "parser." + path }

// FirstLineKey is the key naming the JSONL file read with a first line (its
// hex sha256).
func FirstLineKey(sum string) string { return "first." + sum }

// ThreadKey is the key of one thread's watermark (files rewritten in place).
func ThreadKey(thread string) string { return "thread." + thread }

// TreeKey is the key of one session's watermark in an OpenCode JSON tree.
func TreeKey(storageDir, session string) string { return "tree." + storageDir + "." + session }

// DBKey is the key of an OpenCode database's own watermark.
func DBKey(path string) string { return "db." + path }

// DBSessionKey is the key of one session's watermark in an OpenCode database.
func DBSessionKey(path, session string) string { return "db." + path + "." + session }

// PendingFlushKey is the key (a blob) of the JSONL files waiting to settle:
// a restart flushes them once they have (their parser state is in storage,
// and no new line may ever come to trigger a read).
const PendingFlushKey = "pending_flush"

// sessionIndexKey is the index of one session table ("sessions" for the
// agent's main table, "sessions.<name>" for another).
func sessionIndexKey(name string) string {
	if name == "" {
		return "sessions"
	}
	return "sessions." + name
}

// Get reads a key; without storage, what Set kept in memory.
func (c *Store) Get(ctx context.Context, key string) ([]byte, error) {
	if !c.persist {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.mem[key], nil
	}
	return c.persister.Get(ctx, key)
}

// Set writes a key to the storage; without storage it does nothing (the
// state is in memory already) unless keep asks to keep it in memory.
func (c *Store) Set(ctx context.Context, key string, b []byte, keep bool) error {
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

// Delete removes a key, from the storage and from memory.
func (c *Store) Delete(ctx context.Context, key string) error {
	c.mu.Lock()
	delete(c.mem, key)
	c.mu.Unlock()
	if !c.persist {
		return nil
	}
	return c.persister.Delete(ctx, key)
}

// Batch applies ops (sets and deletes) to the storage in one call, which
// file_storage makes one transaction: a crash leaves all of them or none.
// Without storage they apply to the keys kept in memory.
func (c *Store) Batch(ctx context.Context, ops ...*storage.Operation) error {
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
