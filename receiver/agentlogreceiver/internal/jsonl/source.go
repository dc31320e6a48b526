// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package jsonl is the source of the agent_log receiver for appended JSONL
// files (Claude Code, Codex, Pi, Copilot CLI's events.jsonl): the tailer
// (internal/tailer) finds them and reads what was appended, and the source
// maps each batch of lines through the file's Parser, hands the events to
// the emitter and stores the parser's state with the read position after
// them in one write. The batches of the files read at once share their
// delivery and that write (the group commit, group.go).
package jsonl

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/checkpoint"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/finder"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/source"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/tailer"
)

// ReasonLineTooLong is the unparsed reason of a line of max_log_size bytes or
// more; the parsers' own reasons (malformed_json, unknown_type, ...) come
// with their events.
const ReasonLineTooLong = "line_too_long"

// caughtUpTail is how far past the last complete line a file may go and
// still count as read to its end: what is there is one unterminated line,
// still being written.
const caughtUpTail = 64 * 1024

// Source reads append-only JSONL files: the tailer finds them and reads
// what was appended (internal/tailer), Emit maps each batch of lines through
// the file's parser. A session is one file path; its state is the parser's
// and the file's read position, stored together.
type Source struct {
	source.Settings
	newParser  func(path string) Parser
	maxLogSize int
	tail       *tailer.Tailer
	codec      checkpoint.Codec[*Session]
	sessions   *checkpoint.Table[*Session]
	sweeper    *source.Loop
	// pending are the files read to their end while still being written,
	// whose parser may hold events back until they settle (flushSettled).
	pending *pendingFlushes
	flusher *source.Loop
	// group gathers the files' batches into deliveries (group.go).
	group *groupCommit
	// events are the slices a batch's events are mapped into, reused from
	// batch to batch once encoded (getEvents, putEvents).
	events sync.Pool
}

// maxPooledEvents bounds the slices kept for reuse: a batch of more events
// (a file of many short lines) gets its own.
const maxPooledEvents = 2048

// getEvents is an empty slice to map a batch of n lines into.
func (s *Source) getEvents(n int) []agentevent.Event {
	if p, ok := s.events.Get().(*[]agentevent.Event); ok && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]agentevent.Event, 0, max(n, 64))
}

// putEvents keeps events for the next batch, emptied: nothing of this batch
// (its lines, its strings) is kept alive by the array.
func (s *Source) putEvents(events []agentevent.Event) {
	if cap(events) > maxPooledEvents {
		return
	}
	clear(events) // beyond its length, a pooled array is already zero
	events = events[:0]
	s.events.Put(&events)
}

// Config is what a JSONL source needs besides the Settings.
type Config struct {
	// NewParser makes the parser of one file.
	NewParser func(path string) Parser
	// Tail is the tailer's configuration; New sets its Match, Emit, Store
	// and Logger.
	Tail tailer.Config
}

// Session is the state of one file path.
type Session struct {
	parser Parser
	// firstLine is the sha256 of line 1 once seen: a file read again from
	// offset 0 with a different first line is a new file at an old path.
	firstLine string
	// pos is where reading the file goes on (nil: not read yet, or the
	// position was lost: the file is read again from its start and the
	// parser drops what it emitted).
	pos *tailer.Pos
}

// savedState is what the storage holds per file. A parser state that is
// JSON (every parser's) is kept as it is under "state"; "parser" holds any
// other state, base64-encoded.
type savedState struct {
	FirstLine string          `json:"first_line_sha256,omitempty"`
	Pos       *tailer.Pos     `json:"pos,omitempty"`
	State     json.RawMessage `json:"state,omitempty"`
	Parser    []byte          `json:"parser,omitempty"`
}

// marshalSaved writes the stored state of one file.
func marshalSaved(firstLine string, pos *tailer.Pos, ps []byte) ([]byte, error) {
	if !json.Valid(ps) {
		return json.Marshal(savedState{FirstLine: firstLine, Pos: pos, Parser: ps})
	}
	// By hand: the state is JSON already, the hash hex.
	b := make([]byte, 0, len(ps)+len(firstLine)+96)
	b = append(b, '{')
	if firstLine != "" {
		b = append(b, `"first_line_sha256":"`...)
		b = append(b, firstLine...)
		b = append(b, `",`...)
	}
	if pos != nil {
		pb, err := json.Marshal(pos)
		if err != nil {
			return nil, err
		}
		b = append(b, `"pos":`...)
		b = append(b, pb...)
		b = append(b, ',')
	}
	b = append(b, `"state":`...)
	b = append(b, ps...)
	return append(b, '}'), nil
}

// unmarshalSaved reads what marshalSaved wrote.
func unmarshalSaved(b []byte) (firstLine string, pos *tailer.Pos, ps []byte, err error) {
	var st savedState
	if err := json.Unmarshal(b, &st); err != nil {
		return "", nil, nil, err
	}
	if len(st.State) > 0 {
		return st.FirstLine, st.Pos, st.State, nil
	}
	return st.FirstLine, st.Pos, st.Parser, nil
}

// New is the source of one agent's JSONL files.
func New(set source.Settings, c Config) (*Source, error) {
	s := &Source{Settings: set, newParser: c.NewParser, maxLogSize: c.Tail.MaxLogSize}
	newParser := c.NewParser
	pathOf := func(key string) string { return strings.TrimPrefix(key, checkpoint.ParserKey("")) }
	s.codec = checkpoint.Codec[*Session]{
		Fresh: func(key string) *Session { return &Session{parser: newParser(pathOf(key))} },
		Marshal: func(f *Session) ([]byte, error) {
			ps, err := f.parser.MarshalState()
			if err != nil {
				return nil, err
			}
			return marshalSaved(f.firstLine, f.pos, ps)
		},
		Unmarshal: func(key string, b []byte) (*Session, error) {
			firstLine, pos, ps, err := unmarshalSaved(b)
			if err != nil {
				return nil, err
			}
			f := &Session{parser: newParser(pathOf(key)), firstLine: firstLine, pos: pos}
			if err := f.parser.UnmarshalState(ps); err != nil {
				return nil, err
			}
			return f, nil
		},
	}
	s.sessions = checkpoint.NewTable(set.Checkpoints, "", s.codec, set.Life, s.StorageError)
	s.sessions.OnForget = func(_ string, probes []string) { s.Emitter.Forget(probes...) }
	s.pending = &pendingFlushes{cp: set.Checkpoints, ends: map[string]int64{}}
	s.group = newGroupCommit(set.Emitter, set.Checkpoints, s.StorageError)
	match, err := finder.NewMatcher(set.Include, set.Exclude, set.ExcludeOlderThan)
	if err != nil {
		return nil, fmt.Errorf("`%s`: %w", set.Agent, err)
	}
	tc := c.Tail
	tc.Match, tc.Emit, tc.Store, tc.Logger = match, s.Emit, s, set.Logger.With(zap.String("agent", set.Agent))
	s.tail = tailer.New(tc)
	return s, nil
}

// Start starts tailing, the sweeps of gone files, and the flushes of files
// that settle.
func (s *Source) Start(ctx context.Context) error {
	s.tail.Start()
	s.sweeper = source.StartLoop(s.SweepInterval(), func(ctx context.Context) { s.sessions.Sweep(ctx, source.FileExists) })
	s.pending.load(ctx, s.StorageError)
	s.flusher = source.StartLoop(s.flushInterval(), s.flushSettled)
	s.Logger.Info("Reading agent session files",
		zap.String("agent", s.Agent), zap.Strings("include", s.Include), zap.Strings("exclude", s.Exclude))
	return nil
}

// Stop stops tailing (every position delivered is stored already, with its
// file's parser state) and writes the session index.
func (s *Source) Stop(ctx context.Context) error {
	err := errors.Join(s.sweeper.Halt(ctx), s.flusher.Halt(ctx))
	// The tailer is stopped in any case (in the background once ctx has
	// ended), so that nothing reads on after Shutdown.
	err = errors.Join(err, source.RunUntil(ctx, func() error { s.tail.Stop(); return nil }))
	s.sessions.Flush(context.WithoutCancel(ctx))
	return err
}

// Tailer is the source's tailer.
func (s *Source) Tailer() *tailer.Tailer { return s.tail }

// Sessions is the source's table of files.
func (s *Source) Sessions() *checkpoint.Table[*Session] { return s.sessions }

// Pending says whether path was read to its end while being written and
// its parser waits for it to settle before it is flushed.
func (s *Source) Pending(path string) bool {
	_, ok := s.pending.get(path)
	return ok
}

// Position is the stored read position of path (Store).
func (s *Source) Position(ctx context.Context, path string) (tailer.Pos, bool) {
	sess := s.sessions.Acquire(ctx, checkpoint.ParserKey(path))
	defer s.sessions.Release(sess)
	if p := sess.State.pos; p != nil {
		return *p, true
	}
	return tailer.Pos{}, false
}

// FirstLineOwner is the path read with this first line (Store).
func (s *Source) FirstLineOwner(ctx context.Context, sum string) (string, bool) {
	b, err := s.Checkpoints.Get(ctx, checkpoint.FirstLineKey(sum))
	if err != nil {
		s.StorageError(fmt.Errorf("read %s: %w", checkpoint.FirstLineKey(sum), err))
		return "", false
	}
	return string(b), len(b) > 0
}

// Adopt starts path at pos, with the parser state of from (a file moved
// from there) or a fresh one (Store). A move also takes from's state
// away from it: the file is no longer there, and should it come back (moved
// back: the same inode), a position left at from would be older than what
// was read at path since, and the lines in between would be read twice.
//
// The writes of a move, and why a crash between any two of them neither
// loses nor repeats a line:
//
//  1. pending_flush gets path (if from waits for its parser to be flushed;
//     its own client, so not in the batch below). A crash here: from still
//     has its state; the tailer adopts it again at the restart. path's
//     entry waits (flushOne) until path has a position, then flushes what
//     path's parser holds; from's entry flushes from's state if it runs
//     before the adoption (the state is then adopted flushed), nothing
//     after (the state went to path): the held events go out once.
//  2. One batch: path's state and position, first.<sum> → path, from's
//     state deleted. file_storage writes it in one transaction: before it,
//     the move is simply redone at the restart; after it, path reads on and
//     from has no position to resume from. (A storage that applied the ops
//     one by one, in this order: a crash after the first leaves both
//     states; path resumes from its own, the only one read on unless the
//     file is moved back while stopped — deleting from's first instead
//     would instead read path again from its start.)
//  3. pending_flush loses from (a crash before: its flush finds from's
//     state gone, flushes nothing, and drops it).
//
// The two sessions are held across the three (from, then path; adopt is
// the only holder of two), so that the flusher sees either side of it.
func (s *Source) Adopt(ctx context.Context, path, from, sum string, pos tailer.Pos) {
	var old *checkpoint.Session[*Session]
	var moved []byte
	if from != "" {
		old = s.sessions.Acquire(ctx, checkpoint.ParserKey(from))
		defer s.sessions.Release(old)
		b, err := s.codec.Marshal(old.State)
		if err != nil {
			s.StorageError(fmt.Errorf("read the state of %s: %w", from, err))
		} else {
			moved = b
		}
	}
	sess := s.sessions.Acquire(ctx, checkpoint.ParserKey(path), path)
	defer s.sessions.Release(sess)
	if moved != nil {
		if st, err := s.codec.Unmarshal(checkpoint.ParserKey(path), moved); err == nil {
			sess.State = st
		}
	} else {
		sess.State = s.codec.Fresh(checkpoint.ParserKey(path))
	}
	sess.State.pos = &pos
	var ops []*storage.Operation
	if s.Checkpoints.Persistent() {
		// Without storage the state is the session's, in memory.
		b, err := s.codec.Marshal(sess.State)
		if err != nil {
			s.StorageError(fmt.Errorf("save the state of %s: %w", path, err))
			return
		}
		ops = append(ops, storage.SetOperation(checkpoint.ParserKey(path), b))
	}
	if sum != "" {
		// The file is named by its new path from now on.
		ops = append(ops, storage.SetOperation(checkpoint.FirstLineKey(sum), []byte(path)))
	}
	pending := false
	if old != nil {
		ops = append(ops, storage.DeleteOperation(checkpoint.ParserKey(from)))
		old.State = s.codec.Fresh(checkpoint.ParserKey(from))
		var end int64
		if end, pending = s.pending.get(from); pending {
			s.pending.put(ctx, path, end, s.StorageError)
		}
	}
	if len(ops) > 0 {
		if err := s.Checkpoints.Batch(ctx, ops...); err != nil {
			s.StorageError(fmt.Errorf("store the state of %s: %w", path, err))
			return
		}
	}
	if pending {
		s.pending.remove(ctx, from, s.StorageError)
	}
}

// Emit is the tailer's callback for a batch of complete lines of one file
// (tailer.Batch). It parses the lines (in the tailer's worker: files are
// parsed in parallel) and hands the events to the group commit (group.go),
// with the storage write of the file's parser state and the position after
// the batch. It returns once the next consumer accepted the events (see
// source.Emitter) and that write is done; an error (the receiver stopped
// first) stores nothing, and the tailer does not move past the batch.
func (s *Source) Emit(ctx context.Context, b tailer.Batch) error {
	path, lines, lastRecordNumber, offsets := b.Path, b.Lines, b.LastLine, b.Offsets
	sess := s.sessions.Acquire(ctx, checkpoint.ParserKey(path), path)
	defer s.sessions.Release(sess)
	f := sess.State

	var ops []*storage.Operation
	firstLineNo := lastRecordNumber - int64(len(lines)) + 1
	events := s.getEvents(len(lines))
	for i, line := range lines {
		lineNo := firstLineNo + int64(i)
		if i < len(b.TooLong) && b.TooLong[i] {
			// The tailer skipped the line, of max_log_size bytes or more.
			events = append(events, s.unparsedEvent(path, lineNo, offsets[i], ReasonLineTooLong))
			continue
		}
		offset := tailer.LineOffset(offsets, i, len(line))
		if offset == 0 {
			if op := s.checkIdentity(path, f, line); op != nil {
				ops = append(ops, op)
			}
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue // blank line: nothing to map, nothing wrong
		}
		events = append(events, f.parser.Parse(line, lineNo, offset)...)
	}
	s.Emitter.Read(ctx, int64(len(lines)))
	end := offsets[0]
	if len(lines) < len(offsets) {
		end = offsets[len(lines)]
	}
	caughtUp, modified := readToEnd(path, end)
	deferred := false
	if fl, ok := f.parser.(Flusher); ok && caughtUp {
		if s.flushable(fl, modified) {
			// The end of the file's data: what the parser held back goes out.
			events = append(events, fl.Flush()...)
		} else {
			// A file still being written: what is held goes out once it
			// settles (flushSettled), so that what comes out depends on the
			// file's content, not on when the reader caught up with the
			// writer. Recorded before the delivery, so that a crash after it
			// cannot lose the flush.
			deferred = true
			s.pending.put(ctx, path, end, s.StorageError)
		}
	}
	// The state to store once the events are accepted: the parser's, and
	// the position after the batch. A copy: a pointer into b would keep the
	// whole batch, every line of it, alive for as long as the session is
	// tracked.
	before, after := f.pos, b.After
	f.pos = &after
	if op := s.sessions.CommitOp(sess); op != nil {
		ops = append(ops, op)
	}
	part := source.Part{Path: path, CaughtUp: caughtUp, From: offsets[0], To: end}
	sessions := treeSessions(events)
	recs := s.Emitter.Encode(ctx, part, events)
	s.putEvents(events)
	err := s.group.submit(ctx, &groupBatch{part: part, recs: recs, ops: ops, sessions: sessions})
	if err != nil {
		// Stopping: nothing is committed; the next run reads these lines
		// again from the stored position.
		f.pos = before
		return err
	}
	if !deferred {
		s.pending.remove(ctx, path, s.StorageError)
	}
	return nil
}

// historyAge is how old the newest held record must be for a file that
// looks freshly written (copied into place) to count as history: far longer
// than a live writer takes between two rows of one response, so that a live
// file, however late the reader is, is never taken for history.
const historyAge = 10 * time.Minute

// flushable tells whether a parser's held-back events may go out at the end
// of a file's data: nothing is held, or the file has settled, or the newest
// held record is older than historyAge (history that was copied, so the file
// looks freshly written, is not being completed by its writer).
func (s *Source) flushable(fl Flusher, modified time.Time) bool {
	at, holding := fl.HeldAt()
	return !holding || s.settled(modified) || (!at.IsZero() && !s.Now().Before(at.Add(historyAge)))
}

// settled reports whether a file last modified at modified has stayed
// unchanged for the settle delay: its writer is done for now.
func (s *Source) settled(modified time.Time) bool {
	return !s.Now().Before(modified.Add(s.SettleDelay))
}

// flushInterval is how often files waiting to settle are looked at.
func (s *Source) flushInterval() time.Duration {
	return min(max(s.SettleDelay/4, 100*time.Millisecond), time.Second)
}

// flushSettled flushes the parser of every file read to its end while it was
// being written, once the file has settled (or is gone), and delivers what
// the parser held back, as Emit does at the end of a file that is not
// being written.
func (s *Source) flushSettled(ctx context.Context) {
	for path, end := range s.pending.snapshot() {
		if ctx.Err() != nil {
			return
		}
		caughtUp, modified := readToEnd(path, end)
		// readToEnd found the file when it says caught up: only otherwise
		// may it be gone.
		gone := !caughtUp && !source.FileExists(path)
		if !gone && (!caughtUp || !s.settled(modified)) {
			continue // more to read (Emit takes over) or still being written
		}
		s.flushOne(ctx, path, end, gone)
	}
}

func (s *Source) flushOne(ctx context.Context, path string, end int64, gone bool) {
	sess := s.sessions.Acquire(ctx, checkpoint.ParserKey(path), path)
	defer s.sessions.Release(sess)
	if e, ok := s.pending.get(path); !ok || e != end {
		return // Emit read more of the file meanwhile
	}
	if sess.State.pos == nil && !gone {
		// Not read yet in this state (a move whose adoption a crash cut
		// short, see Adopt): the tailer reads it, or adopts it, first.
		return
	}
	var events []agentevent.Event
	if fl, ok := sess.State.parser.(Flusher); ok {
		events = fl.Flush()
	}
	if len(events) > 0 {
		if err := s.Emitter.Deliver(ctx, source.Delivery{Path: path, Events: events, CaughtUp: true, From: end, To: end}); err != nil {
			return // stopping: the stored parser state still holds them
		}
		s.sessions.Commit(ctx, sess)
	}
	s.pending.remove(ctx, path, s.StorageError)
}

// readToEnd reports whether a file holds nothing to read past end but,
// perhaps, an unterminated line still being written. The tailer emits a
// batch every 100 lines and at the end of the file, and a batch that ends
// on a multiple of 100 lines at the end of the file does not say so: the
// file's size does.
//
// The file is opened only when there is a short tail to look at.
func readToEnd(path string, end int64) (caughtUp bool, modified time.Time) {
	fi, err := os.Stat(path)
	if err != nil || fi.Size() < end {
		return false, time.Time{}
	}
	modified = fi.ModTime()
	rest := fi.Size() - end
	if rest == 0 {
		return true, modified
	}
	if rest > caughtUpTail {
		return false, modified
	}
	f, err := os.Open(path)
	if err != nil {
		return false, time.Time{}
	}
	defer f.Close()
	tail := make([]byte, rest)
	if _, err := f.ReadAt(tail, end); err != nil && err != io.EOF {
		return false, modified
	}
	return bytes.IndexByte(tail, '\n') < 0, modified
}

// unparsedEvent stands for a line the parser never saw (cut at
// max_log_size). Its time is when it was read.
func (s *Source) unparsedEvent(path string, lineNo, offset int64, reason string) agentevent.Event {
	ev := agentevent.Event{
		Source:    s.Source,
		EventID:   agentevent.StableID(path, offset, 0),
		Timestamp: s.Now(),
		Type:      agentevent.TypeLog,
		Role:      agentevent.RoleSystem,
		Channel:   agentevent.ChannelSystem,
		LogFile:   path,
		LogLine:   lineNo,
		Unparsed:  reason,
	}
	agentevent.Normalize(&ev)
	return ev
}

// checkIdentity starts a fresh parser when a path is read from offset 0 with
// a different first line than before: the file was replaced. The same first
// line means a replay of the same file, which the parser drops itself.
//
// A new first line names the file from now on (the tailer tells it, moved
// or copied to another path, from a new file): the write of that is
// returned, to go with the file's position in the group's storage write. In
// one transaction with the position, it is durable no later than the
// position that follows it, and the first line of a file whose first batch
// was never committed names nothing: the file is read again from its start
// as the new file it is.
func (s *Source) checkIdentity(path string, f *Session, line []byte) *storage.Operation {
	sum := sha256.Sum256(line[:min(len(line), s.maxLogSize)])
	h := hex.EncodeToString(sum[:])
	if f.firstLine == h {
		return nil
	}
	if f.firstLine != "" {
		s.Logger.Info("Session file was replaced; reading it as a new file",
			zap.String("agent", s.Agent), zap.String("path", path))
		f.parser = s.newParser(path)
	}
	f.firstLine = h
	return storage.SetOperation(checkpoint.FirstLineKey(h), []byte(path))
}
