// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agents

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// ReaderKind is the shape of an agent's data, which decides how agent_log
// reads it.
type ReaderKind int

const (
	// AppendedJSONL: files records are appended to, one JSON object a line,
	// tailed by byte offset (Reader.NewParser maps the lines).
	AppendedJSONL ReaderKind = iota + 1
	// RewrittenFiles: whole files rewritten in place, re-read on change,
	// emitting what was not emitted before (Reader.NewSnapshot maps them).
	RewrittenFiles
	// AppendedAndRewritten: an agent with files of both kinds; its include
	// patterns of *.jsonl files are tailed, the others re-read (both
	// constructors are set).
	AppendedAndRewritten
	// OpenCodeStore: data directories in OpenCode's layout, a JSON tree
	// (storage/) or a SQLite database (Reader.Database), mapped by
	// internal/vendors/opencode for the agent's source. The include
	// patterns match data directories, not files.
	OpenCodeStore
)

func (k ReaderKind) String() string {
	switch k {
	case AppendedJSONL:
		return "appended JSONL"
	case RewrittenFiles:
		return "files rewritten in place"
	case AppendedAndRewritten:
		return "appended JSONL and files rewritten in place"
	case OpenCodeStore:
		return "OpenCode data directory (JSON tree or SQLite)"
	}
	return fmt.Sprintf("ReaderKind(%d)", int(k))
}

// Reader says how an agent's files are read.
type Reader struct {
	Kind ReaderKind
	// NewParser makes the parser of one appended JSONL file.
	NewParser func(path string, o ParseOptions) LineParser
	// NewSnapshot makes the mapping of the agent's rewritten files.
	NewSnapshot func() SnapshotMapper
	// Beside, when set, names a file next to an appended JSONL file that
	// the file's parser is given (ParseOptions.Beside): a file the agent
	// writes beside its log (Copilot CLI's workspace.yaml).
	Beside func(path string) string
	// Owner, when set, names the file an appended JSONL file belongs to (a
	// nested subagent's session transcript); its parser is told whether
	// that file is missing (ParseOptions.OwnerMissing).
	Owner func(path string) string
	// Database is the SQLite file of an OpenCodeStore data directory
	// ("opencode.db").
	Database string
}

func (r Reader) validate() error {
	var errs []error
	needParser := r.Kind == AppendedJSONL || r.Kind == AppendedAndRewritten
	needSnapshot := r.Kind == RewrittenFiles || r.Kind == AppendedAndRewritten
	switch {
	case r.Kind < AppendedJSONL || r.Kind > OpenCodeStore:
		errs = append(errs, fmt.Errorf("unknown reader kind %d", int(r.Kind)))
	case needParser && r.NewParser == nil:
		errs = append(errs, fmt.Errorf("reader %s without NewParser", r.Kind))
	case needSnapshot && r.NewSnapshot == nil:
		errs = append(errs, fmt.Errorf("reader %s without NewSnapshot", r.Kind))
	case r.Kind == OpenCodeStore && r.Database == "":
		errs = append(errs, fmt.Errorf("reader %s without Database", r.Kind))
	}
	return errors.Join(errs...)
}

// ParseOptions tell a parser what the receiver drops from every event, so
// that the parser need not build it, and hand it what the agent wrote
// beside the file.
type ParseOptions struct {
	OmitContent, OmitRaw bool
	// Beside is the content of the file Reader.Beside names for this file
	// (nil when there is none, or it cannot be read).
	Beside []byte
	// OwnerMissing: the file Reader.Owner names for this file does not
	// exist.
	OwnerMissing bool
}

// FileOptions are o completed for the file at path: what the agent wrote
// beside it (Beside) and whether the file it belongs to is missing (Owner).
// The reader's look at the file system, so that a parser needs none.
func (r Reader) FileOptions(path string, o ParseOptions) ParseOptions {
	if r.Beside != nil {
		if beside := r.Beside(path); beside != "" {
			// Absent or unreadable: the parser does without.
			o.Beside, _ = os.ReadFile(beside)
		}
	}
	if r.Owner != nil {
		if owner := r.Owner(path); owner != "" {
			_, err := os.Stat(owner)
			o.OwnerMissing = errors.Is(err, fs.ErrNotExist)
		}
	}
	return o
}

// LineParser maps the lines of one appended JSONL file to events. It keeps
// per-file state that survives restarts through MarshalState and
// UnmarshalState.
type LineParser interface {
	// Parse maps one line (without its "\n"); lineNo is 1-based, offset is
	// the byte offset of the line's start. Records at or before the last
	// offset parsed (after UnmarshalState) yield nothing. The line is the
	// reader's buffer, valid until the batch is delivered: the events
	// returned may share its memory, but what the parser keeps past the
	// call (its state, events held back for Flush) is copied.
	Parse(line []byte, lineNo, offset int64) []agentevent.Event
	MarshalState() ([]byte, error)
	UnmarshalState(b []byte) error
}

// LineFlusher is a LineParser that holds some events back until the end of
// the file's data (Claude Code: the usage of a response whose last row has
// no stop_reason). The reader calls Flush when a batch ends where the file
// ends and the file has not changed for the settle delay, so what comes
// out depends on the file's content, never on when the reader caught up.
type LineFlusher interface {
	Flush() []agentevent.Event
	// HeldAt tells whether anything is held and the time of the newest
	// record it comes from (zero when unknown).
	HeldAt() (at time.Time, holding bool)
}

// SnapshotMapper is the agent-specific part of reading files rewritten in
// place: it maps a whole file, each thread of it (a session, a subagent's
// chat) against the watermark of what that thread emitted before.
type SnapshotMapper interface {
	// Sort puts the matched files in the order they are read.
	Sort(paths []string)
	// Read maps one file. It hands each thread's new events to r.Deliver
	// and reports records that could not be decoded to r.Bad. An error says
	// the file does not decode as a whole (it may have been caught
	// mid-rewrite; it is reported if it stays so); reason is the unparsed
	// reason then.
	Read(ctx context.Context, r *SnapshotRead) (reason string, err error)
	// NewWatermark returns an empty watermark; UnmarshalWatermark restores
	// one.
	NewWatermark() Watermark
	UnmarshalWatermark(b []byte) (Watermark, error)
}

// Watermark is the set of keys (message ids, ...) a thread has emitted.
type Watermark interface {
	Add(keys []string)
	MarshalState() ([]byte, error)
}

// SnapshotThread is the state of one thread.
type SnapshotThread struct {
	Emitted Watermark
	Seq     int64 // the last agent.event.sequence used
}

// SnapshotResult is what a mapper made of one thread of a file.
type SnapshotResult struct {
	Events []agentevent.Event
	// Emitted are the keys of the events, added to the watermark once the
	// next consumer accepted them.
	Emitted []string
	// CaughtUp: nothing of the thread is held back.
	CaughtUp bool
}

// SnapshotRead is one read of one file, as its mapper sees it: the file,
// and the reader's side (SnapshotSink) that takes what the mapper makes of
// it.
type SnapshotRead struct {
	Path    string
	Data    []byte
	ModTime time.Time // the file's modification time when it was read
	Settled bool      // unchanged for the settle delay (or shutting down)
	Skip    bool      // history under start_at: end: recorded as emitted, not sent
	Now     time.Time
	// ExcludeOlderThan is the agent's exclude_older_than (0: off), for
	// the records of a file that carry their own times.
	ExcludeOlderThan time.Duration

	SnapshotSink
}

// SnapshotSink is the reader's side of a SnapshotRead.
type SnapshotSink interface {
	// Deliver maps one thread with its watermark (fn) and hands the result
	// on; the watermark moves only once the next consumer accepted it.
	// false: the receiver is stopping, nothing was committed.
	Deliver(ctx context.Context, thread string, fn func(th *SnapshotThread) SnapshotResult) bool
	// Peek returns a thread's watermark, without a delivery.
	Peek(ctx context.Context, thread string) *SnapshotThread
	// Bad counts and reports a record of the file that could not be
	// decoded.
	Bad(ctx context.Context, line int64, reason string)
	// ReportOnce says whether a bad record (by key) with this signature is
	// new; it is then remembered for as long as the file is known.
	ReportOnce(key, signature string) bool
	// Records counts the file's records as read: n is how many the file
	// holds now.
	Records(ctx context.Context, n int)
	// Skipped returns how many more records the file has that could not be
	// used at all than at the last read (n is how many it has now), for the
	// mapper to report each once.
	Skipped(n int) int
}
