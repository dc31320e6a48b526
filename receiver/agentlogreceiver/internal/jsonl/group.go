// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package jsonl

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/checkpoint"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/source"
)

// The tailer's workers read and parse several files at once, and a
// history averages a few dozen lines per file: one delivery (a
// ConsumeLogs, which the agent_span connector makes durable) and one
// storage write per batch of one file would be paid per file. The group
// commit pays them once per group of batches instead.
//
// A batch (one file's events and the storage writes of its state) is
// submitted; when no delivery is in flight it goes out at once, alone (a
// live append waits for nothing). Batches submitted while one is in flight
// gather and go out together in the next delivery: one Deliver, then one
// storage write of all their states, then each submitter returns. The
// submitter of the first gathered batch makes that delivery; the others
// wait for its outcome. A submitter waits for its own batch's commit, so a
// file never has two batches in flight, and its batches are committed in
// order.
//
// Why a kill -9 at any point neither loses nor repeats a line beyond the
// batches in flight: a file's read position and parser state are written
// only after the next consumer accepted the delivery that holds its events,
// and the states of a group are written in one storage operation
// (file_storage: one transaction). Killed before the write, every file of
// the group is read again from its stored position, which is before its
// batch in flight, and only those batches are delivered again; killed
// after it, every file resumes after its batch. A delivery the receiver
// gave up while stopping (source.ErrStopped) commits nothing for any file
// of the group; one refused for good commits all of them.

const (
	// maxGroupBatches and maxGroupEvents bound what one delivery gathers.
	// A group holds at most one batch per file being read (a submitter
	// waits for its own), so the tailer's workers bound it already; these
	// keep one delivery within what batch.go's bounds allow.
	maxGroupBatches = source.MaxBatchSessions
	maxGroupEvents  = 4096
)

// groupBatch is one file's batch, submitted to the group.
type groupBatch struct {
	part source.Part
	// recs are the batch's events, encoded by the reader that read them
	// (source.Emitter.Encode): what a group delivers is built in parallel,
	// by the readers, and the delivery only puts the records together.
	recs source.Records
	// ops are the storage writes of the file's state (its parser state and
	// position after the batch; the first-line key of a file read from its
	// start), written once the batch's delivery is accepted.
	ops []*storage.Operation
	// sessions are the sessions (trees: a session and its subagents) of
	// the events (treeSessions); a group holds one file of each
	// (takeLocked).
	sessions []string
	// wake tells the submitter the outcome of its batch's delivery, or,
	// with lead set, that it makes the next delivery, of lead.
	wake chan groupWake
}

type groupWake struct {
	err  error
	lead []*groupBatch
}

// groupCommit gathers the batches of one source's files into deliveries.
type groupCommit struct {
	em source.Emitter
	cp *checkpoint.Store
	// onError reports a failed storage write.
	onError func(error)

	mu sync.Mutex
	// busy: a delivery is in flight; what is submitted meanwhile waits in
	// queue for the next one.
	busy  bool
	queue []*groupBatch
}

func newGroupCommit(em source.Emitter, cp *checkpoint.Store, onError func(error)) *groupCommit {
	return &groupCommit{em: em, cp: cp, onError: onError}
}

// submit delivers b's events, alone or with others, and, once the next
// consumer accepted them (or refused them for good), writes b.ops with the
// others' in one storage operation. It returns the delivery's error:
// source.ErrStopped writes nothing.
func (g *groupCommit) submit(ctx context.Context, b *groupBatch) error {
	b.wake = make(chan groupWake, 1)
	g.mu.Lock()
	if g.busy {
		g.queue = append(g.queue, b)
		g.mu.Unlock()
		w := <-b.wake
		if w.lead == nil {
			return w.err
		}
		return g.lead(ctx, b, w.lead)
	}
	g.busy = true
	g.mu.Unlock()
	return g.lead(ctx, b, []*groupBatch{b})
}

// lead makes the delivery of group (own is the caller's batch, in it),
// tells the others its outcome and hands the next delivery, of what was
// submitted meanwhile, to the first of those batches' submitters.
func (g *groupCommit) lead(ctx context.Context, own *groupBatch, group []*groupBatch) error {
	err := g.deliver(ctx, group)
	for _, b := range group {
		if b != own {
			b.wake <- groupWake{err: err}
		}
	}
	g.mu.Lock()
	next := g.takeLocked()
	if next == nil {
		g.busy = false
	}
	g.mu.Unlock()
	if next != nil {
		next[0].wake <- groupWake{lead: next}
	}
	return err
}

// treeSessions are the sessions (agentevent.TreeSession) of events, each
// once.
func treeSessions(events []agentevent.Event) []string {
	var sessions []string
	for i := range events {
		if s := agentevent.TreeSession(&events[i]); !slices.Contains(sessions, s) {
			sessions = append(sessions, s)
		}
	}
	return sessions
}

// takeLocked takes the next group off the queue, within the bounds (at
// least one batch); nil when the queue is empty.
func (g *groupCommit) takeLocked() []*groupBatch {
	if len(g.queue) == 0 {
		return nil
	}
	n, events := 0, 0
	taken := map[string]bool{}
	for n < len(g.queue) && n < maxGroupBatches && (n == 0 || events+g.queue[n].recs.Count <= maxGroupEvents) {
		b := g.queue[n]
		if slices.ContainsFunc(b.sessions, func(s string) bool { return taken[s] }) {
			// Two files of one session (its subagents' files) are
			// delivered one after the other, as the agent_span connector
			// expects: it decides on a session's turns once per
			// ConsumeLogs, by the file of its latest event.
			break
		}
		for _, s := range b.sessions {
			taken[s] = true
		}
		events += b.recs.Count
		n++
	}
	next := make([]*groupBatch, n)
	copy(next, g.queue)
	clear(g.queue[:n])
	g.queue = g.queue[n:]
	if len(g.queue) == 0 {
		g.queue = nil // its array goes
	}
	return next
}

// deliver hands the records of group to the emitter in one delivery and,
// unless it was given up, writes the states of all its batches in one
// storage operation.
func (g *groupCommit) deliver(ctx context.Context, group []*groupBatch) error {
	recs := group[0].recs
	d := source.Delivery{
		Path: group[0].part.Path, Records: &recs,
		CaughtUp: group[0].part.CaughtUp, From: group[0].part.From, To: group[0].part.To,
	}
	if len(group) > 1 {
		d.Parts = make([]source.Part, len(group))
		for i, b := range group {
			if i > 0 {
				recs.Append(b.recs)
			}
			d.Parts[i] = b.part
			d.Parts[i].Events = b.recs.Count
		}
	}
	for _, b := range group {
		b.recs = source.Records{} // the emitter owns them now
	}
	if err := g.em.Deliver(ctx, d); err != nil {
		return err
	}
	var ops []*storage.Operation
	for _, b := range group {
		ops = append(ops, b.ops...)
	}
	if len(ops) > 0 {
		// Written even when the receiver is stopping: the delivery was
		// accepted.
		if err := g.cp.Batch(context.WithoutCancel(ctx), ops...); err != nil {
			g.onError(fmt.Errorf("save the state of %d files: %w", len(group), err))
		}
	}
	return nil
}
