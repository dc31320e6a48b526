// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package source

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/checkpoint"
)

// Sources that read many small sessions per poll (OpenCode's JSON tree, the
// snapshot sources) hand them to the next consumer several at a time: the
// consumer's cost per ConsumeLogs (the agent_span connector makes its state
// durable once per call) and the storage's per write are then paid once
// per batch, not once per session.
//
// The ordering rule holds for a batch as for one session: a session's
// watermark is committed only once the next consumer accepted the delivery
// that holds its events; the watermarks of a batch are then written to the
// storage in one operation.
// The caught-up flag stays per session: a batch holds sessions of one value
// of it only (the last record of each session carries it). Sessions keep
// the order in which they were read.

const (
	// MaxBatchSessions and maxBatchEvents bound a batch (and the sessions
	// held, locked, until it is delivered). A whole-file session holds the
	// decoder's copy of its file until delivered, so a batch of many
	// sessions is many files in memory at the start of a backfill, the
	// collector's memory peak; a ConsumeLogs per 16 sessions still pays the
	// connector's durable write rarely.
	MaxBatchSessions = 16
	maxBatchEvents   = 1024
)

// Batch gathers the deliveries of several sessions of one source.
type Batch struct {
	em Emitter
	cp *checkpoint.Store
	// onError reports a failed storage write.
	onError func(error)

	paths    []string // files read, in order (the first names the delivery)
	events   []agentevent.Event
	caughtUp bool
	// commit are told, in order, whether the next consumer accepted the
	// batch; each returns the storage write of its watermark (nil: none).
	// release run once the watermarks are written (they unlock the
	// sessions).
	commit  []func(accepted bool) *storage.Operation
	release []func()
	// keys are the sessions in the batch (a session read twice in one
	// poll — a Gemini chat under two directories — must see the first
	// read's watermark committed: the batch is delivered first).
	keys map[string]bool
}

// NewBatch is a batch of deliveries to em whose session states are written
// to cp; onError reports a failed write.
func NewBatch(em Emitter, cp *checkpoint.Store, onError func(error)) *Batch {
	return &Batch{em: em, cp: cp, onError: onError, keys: map[string]bool{}}
}

// Holds reports whether the session key is in the batch.
func (b *Batch) Holds(key string) bool { return b.keys[key] }

// Add puts one session's delivery in the batch; commit is called once the
// batch has been delivered (or refused), release after its watermark was
// written. It delivers the batch first when
// the caught-up flag differs, and after, when the batch is full. false: a
// delivery was refused (the receiver is stopping).
func (b *Batch) Add(ctx context.Context, key, path string, events []agentevent.Event, caughtUp bool,
	commit func(accepted bool) *storage.Operation, release func(),
) bool {
	ok := true
	if len(b.commit) > 0 && (b.caughtUp != caughtUp || b.keys[key]) {
		ok = b.Flush(ctx)
	}
	b.caughtUp = caughtUp
	if len(b.paths) == 0 || b.paths[len(b.paths)-1] != path {
		b.paths = append(b.paths, path)
	}
	b.events = append(b.events, events...)
	b.commit = append(b.commit, commit)
	b.release = append(b.release, release)
	b.keys[key] = true
	if len(b.commit) >= MaxBatchSessions || len(b.events) >= maxBatchEvents {
		ok = b.Flush(ctx) && ok
	}
	return ok
}

// Flush delivers the batch, then commits (or rolls back) its sessions and
// writes their watermarks in one storage operation. false: refused.
func (b *Batch) Flush(ctx context.Context) bool {
	if len(b.commit) == 0 {
		return true
	}
	err := b.em.Deliver(ctx, Delivery{Path: b.paths[0], Events: b.events, CaughtUp: b.caughtUp})
	accepted := err == nil
	if accepted {
		// The delivery names the first file only.
		for _, p := range b.paths[1:] {
			b.em.FileRead(ctx, p, b.caughtUp)
		}
	}
	wctx := context.WithoutCancel(ctx)
	var ops []*storage.Operation
	for _, fn := range b.commit {
		if op := fn(accepted); op != nil {
			ops = append(ops, op)
		}
	}
	if len(ops) > 0 && b.cp.Persistent() {
		if err := b.cp.Batch(wctx, ops...); err != nil {
			b.onError(fmt.Errorf("save the state of %d sessions: %w", len(ops), err))
		}
	}
	for _, fn := range b.release {
		fn()
	}
	b.events = nil // the events' memory goes with them
	clear(b.commit)
	clear(b.release)
	b.paths, b.commit, b.release = b.paths[:0], b.commit[:0], b.release[:0]
	clear(b.keys)
	return accepted
}
