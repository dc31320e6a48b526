// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"context"
	"encoding/json"
	"strings"

	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/checkpoint"
)

// Mapper is the agent-specific part of a snapshot source: the agent's
// registered mapping (internal/agents).
type Mapper = agents.SnapshotMapper

// Watermark is the set of keys (message ids, ...) a thread has emitted.
type Watermark = agents.Watermark

// Thread is the state of one thread.
type Thread = agents.SnapshotThread

// Result is what a mapper made of one thread of a file.
type Result = agents.SnapshotResult

type mark struct {
	Emitted  json.RawMessage `json:"emitted"`
	Sequence int64           `json:"sequence"`
}

// fileRead is the source's side of one read of one file (agents.SnapshotSink).
type fileRead struct {
	path string
	skip bool
	src  *Source
	file *file
}

// Deliver maps one thread with its watermark (fn) and puts the result in
// the source's batch; the watermark moves only once the next consumer
// accepted the batch. false: the receiver is stopping, nothing was
// committed.
func (r *fileRead) Deliver(ctx context.Context, thread string, fn func(th *Thread) Result) bool {
	s := r.src
	key := checkpoint.ThreadKey(thread)
	// A thread read twice in a poll (a chat under two directories) maps
	// the second time with the first's watermark committed.
	if s.batch.Holds(key) && !s.batch.Flush(ctx) {
		return false
	}
	t := s.threads.Acquire(ctx, key, r.path)
	res := fn(t.State)
	if len(res.Emitted) == 0 && len(res.Events) == 0 {
		s.threads.Release(t)
		return true
	}
	// The keys kept in the watermark are copied: a decoded string shares
	// the memory of the whole file it was read from.
	for i, k := range res.Emitted {
		res.Emitted[i] = strings.Clone(k)
	}
	if r.skip {
		t.State.Seq += int64(len(res.Events))
		t.State.Emitted.Add(res.Emitted)
		s.threads.Commit(ctx, t)
		s.threads.Release(t)
		return true
	}
	f := r.file
	return s.batch.Add(ctx, key, r.path, res.Events, res.CaughtUp, func(accepted bool) *storage.Operation {
		if !accepted {
			f.mapped, f.refused = false, true // read again
			return nil
		}
		t.State.Seq += int64(len(res.Events))
		t.State.Emitted.Add(res.Emitted)
		return s.threads.CommitOp(t)
	}, func() { s.threads.Release(t) })
}

// Peek returns a thread's watermark, without a delivery.
func (r *fileRead) Peek(ctx context.Context, thread string) *Thread {
	key := checkpoint.ThreadKey(thread)
	if r.src.batch.Holds(key) {
		r.src.batch.Flush(ctx)
	}
	t := r.src.threads.Acquire(ctx, key)
	defer r.src.threads.Release(t)
	return t.State
}

// Bad counts and reports a record of the file that could not be decoded.
func (r *fileRead) Bad(ctx context.Context, line int64, reason string) {
	r.src.Emitter.Bad(ctx, r.path, line, reason)
}

// ReportOnce says whether a bad record (by key) with this signature is new;
// it is then remembered for as long as the file is known.
func (r *fileRead) ReportOnce(key, signature string) bool {
	if r.file.reported == nil {
		r.file.reported = map[string]string{}
	}
	if r.file.reported[key] == signature {
		return false
	}
	r.file.reported[key] = signature
	return true
}

// Records counts the file's records as read: n is how many the file holds
// now, of which those beyond the last read's count are new.
func (r *fileRead) Records(ctx context.Context, n int) {
	if d := n - r.file.records; d > 0 {
		r.src.Emitter.Read(ctx, int64(d))
	}
	r.file.records = n
}

// Skipped returns how many more records the file has that could not be
// used at all than at the last read (n is how many it has now), for the
// mapper to report each once.
func (r *fileRead) Skipped(n int) int {
	d := n - r.file.skipped
	r.file.skipped = n
	return d
}
