// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package owners holds the one-session-one-source table of agent_native:
// for each session (agent, session id), which origin owns it (the agent's
// own telemetry or its session files), bounded in memory and, with a
// storage extension, durable.
//
// A batch's decisions are taken in a Txn and written with one storage
// Batch by Commit, before the processor hands the batch on: a kill between
// the two can only make the replayed batch take the same decisions again.
package owners

import (
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// Origin is where an event or span came from.
type Origin uint8

const (
	// None: the session has no owner yet.
	None Origin = iota
	// Native: the agent's own telemetry (agent.origin = otlp).
	Native
	// Files: the agent's session files (no agent.origin).
	Files
)

func (o Origin) String() string {
	switch o {
	case Native:
		return "native"
	case Files:
		return "files"
	}
	return "none"
}

// Policy says who owns a session both sources speak for.
type Policy int

const (
	// FirstSeen: the first origin seen for a session owns it for good.
	FirstSeen Policy = iota
	// FilesWin: the files own a session from its first file event on; what
	// the agent sent natively before stays, and file events at or before
	// the last native event accepted are dropped (those turns went out
	// natively).
	FilesWin
)

// Key is a session: the agent's source and the session id.
type Key struct {
	Source  string
	Session string
}

// storageKey is where the entry of k is stored.
func (k Key) storageKey() string { return KeyPrefix + k.Source + "/" + k.Session }

// KeyPrefix prefixes every key the table writes.
const KeyPrefix = "agent_native/owner/"

// Entry is what the table remembers of a session.
type Entry struct {
	Owner Origin `json:"o"`
	// LastNative is the time (Unix ns) of the latest native event or span
	// end accepted for the session; kept under FilesWin only.
	LastNative int64 `json:"t,omitempty"`
	// Spans is true once a native span of the session was accepted.
	Spans bool `json:"s,omitempty"`
}

// Table is the owner table.
type Table struct {
	policy Policy
	client storage.Client // nil: memory only
	max    int
	lru    *list.List // of *cached, most recently used first
	byKey  map[Key]*list.Element
}

type cached struct {
	key   Key
	entry Entry
}

// New returns a table that keeps at most maxCached sessions in memory;
// client (may be nil) holds every session's entry.
func New(policy Policy, client storage.Client, maxCached int) *Table {
	return &Table{policy: policy, client: client, max: max(maxCached, 1), lru: list.New(), byKey: map[Key]*list.Element{}}
}

// Len is the number of sessions held in memory.
func (t *Table) Len() int { return t.lru.Len() }

// Begin starts the decisions of one batch. The caller serializes batches.
func (t *Table) Begin() *Txn {
	return &Txn{t: t, touched: map[Key]*Entry{}, dirty: map[Key]bool{}}
}

func (t *Table) cachedEntry(k Key) (Entry, bool) {
	el, ok := t.byKey[k]
	if !ok {
		return Entry{}, false
	}
	t.lru.MoveToFront(el)
	return el.Value.(*cached).entry, true
}

func (t *Table) put(k Key, e Entry) {
	if el, ok := t.byKey[k]; ok {
		el.Value.(*cached).entry = e
		t.lru.MoveToFront(el)
		return
	}
	t.byKey[k] = t.lru.PushFront(&cached{key: k, entry: e})
	for t.lru.Len() > t.max {
		old := t.lru.Back()
		t.lru.Remove(old)
		delete(t.byKey, old.Value.(*cached).key)
	}
}

// Txn holds one batch's view of the table: the entries it read and the
// ones it changed, written by Commit.
type Txn struct {
	t       *Table
	touched map[Key]*Entry
	dirty   map[Key]bool
}

func (x *Txn) entry(ctx context.Context, k Key) (*Entry, error) {
	if e, ok := x.touched[k]; ok {
		return e, nil
	}
	e, ok := x.t.cachedEntry(k)
	if !ok && x.t.client != nil {
		b, err := x.t.client.Get(ctx, k.storageKey())
		if err != nil {
			return nil, fmt.Errorf("read the owner of session %s/%s: %w", k.Source, k.Session, err)
		}
		if len(b) > 0 {
			// An entry this version cannot read counts as no entry: the
			// session is owned anew.
			_ = json.Unmarshal(b, &e)
		}
	}
	x.touched[k] = &e
	return &e, nil
}

// Admit decides whether an event or span of session k from origin o, at
// time ts, goes on.
func (x *Txn) Admit(ctx context.Context, k Key, o Origin, ts time.Time) (bool, error) {
	e, err := x.entry(ctx, k)
	if err != nil {
		return false, err
	}
	ns := int64(0)
	if !ts.IsZero() {
		ns = ts.UnixNano()
	}
	switch x.t.policy {
	case FilesWin:
		switch {
		case o == Native && e.Owner == Files:
			return false, nil
		case o == Native:
			if e.Owner == None {
				e.Owner = Native
				x.dirty[k] = true
			}
			if ns > e.LastNative {
				e.LastNative = ns
				x.dirty[k] = true
			}
			return true, nil
		default: // Files
			if e.Owner != Files {
				e.Owner = Files
				x.dirty[k] = true
			}
			return ns > e.LastNative, nil
		}
	default: // FirstSeen
		if e.Owner == None {
			e.Owner = o
			x.dirty[k] = true
		}
		return e.Owner == o, nil
	}
}

// MarkSpans records that session k has native spans.
func (x *Txn) MarkSpans(ctx context.Context, k Key) error {
	e, err := x.entry(ctx, k)
	if err != nil {
		return err
	}
	if !e.Spans {
		e.Spans = true
		x.dirty[k] = true
	}
	return nil
}

// HasSpans tells whether session k has had native spans.
func (x *Txn) HasSpans(ctx context.Context, k Key) (bool, error) {
	e, err := x.entry(ctx, k)
	if err != nil {
		return false, err
	}
	return e.Spans, nil
}

// Commit writes the entries the batch changed with one storage Batch and
// keeps every entry it read in memory. On error nothing is kept: the
// batch is refused and, delivered again, decided again.
func (x *Txn) Commit(ctx context.Context) error {
	if x.t.client != nil && len(x.dirty) > 0 {
		ops := make([]*storage.Operation, 0, len(x.dirty))
		for k := range x.dirty {
			b, err := json.Marshal(x.touched[k])
			if err != nil {
				return err
			}
			ops = append(ops, storage.SetOperation(k.storageKey(), b))
		}
		if err := x.t.client.Batch(ctx, ops...); err != nil {
			return fmt.Errorf("save the owners of %d sessions: %w", len(ops), err)
		}
	}
	for k, e := range x.touched {
		x.t.put(k, *e)
	}
	return nil
}
