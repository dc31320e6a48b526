// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package source is what every source of the agent_log receiver shares: the
// settings it is built from (Settings), the emitter it hands what it read
// to (Emitter, one Delivery at a time), the batch of several sessions per
// delivery (Batch), and the loops and file signatures of the pollers. The
// sources themselves (internal/jsonl, internal/snapshot, internal/opencode)
// are built on it; the receiver's emitter implements Emitter.
package source

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/checkpoint"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/progress"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/watch"
)

// Source is where one agent's records come from. A source finds the
// agent's data, reads what is new, maps it with the agent's parser and
// hands it, one session at a time, to the emitter; it commits its read
// positions through the checkpoint store only after the emitter returned
// nil (see Emitter). Sessions live in a checkpoint.Table.
type Source interface {
	// Start begins reading in the background.
	Start(ctx context.Context) error
	// Stop ends reading. Work under way is finished; a delivery the next
	// consumer keeps refusing is given up, uncommitted. It returns early,
	// with ctx's error, when ctx ends first.
	Stop(ctx context.Context) error
}

// ErrStopped says the receiver stopped while the next consumer kept
// refusing a delivery: it was not accepted, and the source must not commit
// the read position past it.
var ErrStopped = errors.New("the receiver stopped before the next consumer accepted the events")

// Delivery is what a source hands the emitter for one session at a time
// (or several, see Batch): the events of what it read, and whether it has,
// for now, nothing more of the session to read.
type Delivery struct {
	// Path is the file (or database) read, for the logs.
	Path   string
	Events []agentevent.Event
	// Records, when set, are the delivery's events already encoded by
	// Emitter.Encode, part by part, in the readers that read them (the
	// JSONL source); Events is then unused.
	Records *Records
	// CaughtUp: the source reached the end of the session's data (end of
	// file, snapshot fully emitted, no more rows). The last record of each
	// session in the delivery then carries agent.read.caught_up.
	CaughtUp bool
	// From and To are the byte positions in the file the delivery covers,
	// when the source reads by position (JSONL); 0 otherwise.
	From, To int64
	// Parts, when set, are the files of a delivery that holds several
	// (the JSONL source's group commit), in order: each names its share of
	// Events and its own caught-up flag and positions, and Path, CaughtUp,
	// From and To above are then the first part's.
	Parts []Part
}

// Records are events made ready to go out (Emitter.Encode): their log
// records and what the backfill's progress counts of them once accepted.
type Records struct {
	Logs plog.Logs
	// Count is the number of records in Logs.
	Count int
	Tally progress.Tally
}

// Append moves o's records after r's (agentevent.AppendLogs). Either may
// hold none, and then have no Logs (Encode of events that all drop).
func (r *Records) Append(o Records) {
	switch {
	case o.Count == 0:
	case r.Count == 0:
		r.Logs, r.Count = o.Logs, o.Count
	default:
		agentevent.AppendLogs(r.Logs, o.Logs)
		r.Count += o.Count
	}
	r.Tally.Merge(o.Tally)
}

// Part is one file's share of a Delivery of several.
type Part struct {
	Path string
	// Events is how many of the delivery's events, after those of the
	// parts before, are this file's.
	Events int
	// CaughtUp, From and To are as in Delivery, for this file: the last
	// record of each session among its events carries
	// agent.read.caught_up when CaughtUp is set.
	CaughtUp bool
	From, To int64
}

// Emitter is what a source hands what it read to. The ordering rule: a
// source commits a read position, watermark or parser state only after
// Deliver returned nil — the next consumer accepted the events (or refused
// them permanently, or there was nothing to send).
type Emitter interface {
	// Read counts n records read from the agent's data.
	Read(ctx context.Context, n int64)
	// Bad counts and reports a record that could not be mapped.
	Bad(ctx context.Context, path string, line int64, reason string)
	// Forget drops what is remembered of files that are gone.
	Forget(paths ...string)
	// Encode makes one file's events ready to go out: the records a
	// Delivery of them would send, flagged as part says. It may change
	// events, which are the caller's again (to reuse) once it returns, and
	// may be called from several goroutines at once. The source hands what
	// it returns to Deliver (Delivery.Records).
	Encode(ctx context.Context, part Part, events []agentevent.Event) Records
	// Deliver hands d's events to the next consumer; it owns d.Events. nil:
	// accepted, refused for good, or nothing to send — the source commits.
	// ErrStopped: the receiver stopped while retrying — it commits nothing.
	Deliver(ctx context.Context, d Delivery) error
	// FileRead tells the backfill's progress that a file no delivery names
	// has been read (to its end when caughtUp).
	FileRead(ctx context.Context, path string, caughtUp bool)
}

// Settings is what every source is built from.
type Settings struct {
	// Agent is the agent's key (logs, storage); Source its events' source.
	Agent  string
	Source agentevent.Source
	// Include and Exclude are the agent's patterns, resolved.
	Include, Exclude []string
	// ExcludeOlderThan leaves out data not modified within it (0: off).
	ExcludeOlderThan time.Duration
	// PollInterval is how often a poller looks for changes.
	PollInterval time.Duration
	// Watch, when set, wakes the source between polls when its files
	// change (the receiver's watch; one Group per agent). nil: poll only.
	Watch *watch.Group
	// StartAtEnd: the history found at start is recorded as read, not sent.
	StartAtEnd  bool
	Emitter     Emitter
	Checkpoints *checkpoint.Store
	Life        checkpoint.LifeCycle
	// Now is the receiver's clock.
	Now    func() time.Time
	Logger *zap.Logger
	// Host is told of storage failures.
	Host component.Host
	// SettleDelay is how long a rewritten file must stay unchanged before
	// its last record is taken as final (Gemini CLI).
	SettleDelay time.Duration
	// SweepEvery overrides SweepInterval when set.
	SweepEvery time.Duration
	// StartedAt divides history from new data for start_at: end.
	StartedAt time.Time
}

// Watcher is the start of the watcher of the files patterns match, for
// StartWatchLoop (nil when watching is off).
func (s *Settings) Watcher(patterns []string) func() *watch.Watcher {
	if s.Watch == nil {
		return nil
	}
	return func() *watch.Watcher {
		return watch.Start(watch.Config{
			Include: patterns, Exclude: s.Exclude, ExcludeOlderThan: s.ExcludeOlderThan,
			Group: s.Watch, Logger: s.Logger.With(zap.String("agent", s.Agent)),
		})
	}
}

// StorageError reports a failed read or write of the storage.
func (s *Settings) StorageError(err error) {
	s.Logger.Error("Agent log state storage failed", zap.String("agent", s.Agent), zap.Error(err))
	componentstatus.ReportStatus(s.Host, componentstatus.NewRecoverableErrorEvent(err))
}

// SweepInterval is how often sessions are checked for being gone.
func (s *Settings) SweepInterval() time.Duration {
	if s.SweepEvery > 0 {
		return s.SweepEvery
	}
	return max(s.PollInterval, min(s.Life.ForgetAfter/2, time.Minute))
}

// Group runs several sources as one (an agent whose data comes in two
// shapes).
type Group []Source

// Start starts every source; when one fails, those started are stopped.
func (ss Group) Start(ctx context.Context) error {
	for i, s := range ss {
		if err := s.Start(ctx); err != nil {
			return errors.Join(err, ss[:i].Stop(ctx))
		}
	}
	return nil
}

// Stop stops every source.
func (ss Group) Stop(ctx context.Context) error {
	var errs []error
	for _, s := range ss {
		errs = append(errs, s.Stop(ctx))
	}
	return errors.Join(errs...)
}

// Nop reads nothing: an optional agent whose location is unknown.
type Nop struct{}

// Start does nothing.
func (Nop) Start(context.Context) error { return nil }

// Stop does nothing.
func (Nop) Stop(context.Context) error { return nil }
