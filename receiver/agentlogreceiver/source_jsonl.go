// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver // import "github.com/agentotel/agentotel/receiver/agentlogreceiver"

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/fileconsumer"
	fcattrs "github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/fileconsumer/attrs"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/operator"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// reasonLineTooLong is the unparsed reason of a line of max_log_size bytes or
// more; the parsers' own reasons (malformed_json, unknown_type, ...) come
// with their events.
const reasonLineTooLong = "line_too_long"

// caughtUpTail is how far past the last complete line a file may go and
// still count as read to its end: what is there is one unterminated line,
// still being written.
const caughtUpTail = 64 * 1024

// jsonlSource reads append-only JSONL files: fileconsumer finds and tails
// them (fingerprints, offsets, rotation, truncation), emit maps each batch
// of lines through the file's parser. A session is one file path; its state
// is the parser's.
type jsonlSource struct {
	sourceSettings
	manager   *fileconsumer.Manager
	positions *heldPersister
	sessions  *sessionTable[*jsonlSession]
	sweeper   *loop
	// pending are the files read to their end while still being written,
	// whose parser may hold events back until they settle (flushSettled).
	pending *pendingFlushes
	flusher *loop
}

// jsonlSession is the state of one file path.
type jsonlSession struct {
	parser parser
	// firstLine is the sha256 of line 1 once seen: a file read again from
	// offset 0 with a different first line is a new file at an old path.
	firstLine string
}

// savedState is what the storage holds per file, next to fileconsumer's
// read positions. A parser state that is JSON (every parser's) is kept as
// it is under "state"; "parser" holds any other state, base64-encoded (and
// every state written before "state" existed).
type savedState struct {
	FirstLine string          `json:"first_line_sha256,omitempty"`
	State     json.RawMessage `json:"state,omitempty"`
	Parser    []byte          `json:"parser,omitempty"`
}

// marshalSaved writes the stored state of one file.
func marshalSaved(firstLine string, ps []byte) ([]byte, error) {
	if !json.Valid(ps) {
		return json.Marshal(savedState{FirstLine: firstLine, Parser: ps})
	}
	// By hand: the state is JSON already, and the hash hex.
	b := make([]byte, 0, len(ps)+len(firstLine)+40)
	if firstLine != "" {
		b = append(b, `{"first_line_sha256":"`...)
		b = append(b, firstLine...)
		b = append(b, `","state":`...)
	} else {
		b = append(b, `{"state":`...)
	}
	b = append(b, ps...)
	return append(b, '}'), nil
}

// unmarshalSaved reads what marshalSaved wrote (or an older version).
func unmarshalSaved(b []byte) (firstLine string, ps []byte, err error) {
	var st savedState
	if err := json.Unmarshal(b, &st); err != nil {
		return "", nil, err
	}
	if len(st.State) > 0 {
		return st.FirstLine, st.State, nil
	}
	return st.FirstLine, st.Parser, nil
}

func newJSONLSource(set sourceSettings) (*jsonlSource, error) {
	s := &jsonlSource{sourceSettings: set}
	opts := parseOptionsFor(set.cfg)
	newParser := func(path string) parser { return set.agent.newParser(path, opts) }
	pathOf := func(key string) string { return strings.TrimPrefix(key, parserKey("")) }
	s.sessions = newSessionTable(set.checkpoints, "", sessionCodec[*jsonlSession]{
		fresh: func(key string) *jsonlSession { return &jsonlSession{parser: newParser(pathOf(key))} },
		marshal: func(f *jsonlSession) ([]byte, error) {
			ps, err := f.parser.MarshalState()
			if err != nil {
				return nil, err
			}
			return marshalSaved(f.firstLine, ps)
		},
		unmarshal: func(key string, b []byte) (*jsonlSession, error) {
			firstLine, ps, err := unmarshalSaved(b)
			if err != nil {
				return nil, err
			}
			f := &jsonlSession{parser: newParser(pathOf(key)), firstLine: firstLine}
			if err := f.parser.UnmarshalState(ps); err != nil {
				return nil, err
			}
			return f, nil
		},
	}, set.life, set.storageError)
	s.sessions.onForget = func(_ string, probes []string) { s.emitter.forget(probes...) }
	s.positions = &heldPersister{Persister: set.checkpoints.blobs, now: set.clock.now}
	s.pending = &pendingFlushes{cp: set.checkpoints, ends: map[string]int64{}}
	fc := tailConfig(set.cfg, set.ac, set.include, set.exclude)
	// fileconsumer logs every file it starts watching at info: thousands of
	// lines for a user's history. Its warnings and errors still show; the
	// receiver reports what it found and read (progress.go).
	tel := set.telemetry
	tel.Logger = tel.Logger.WithOptions(zap.IncreaseLevel(zap.WarnLevel))
	m, err := fc.Build(tel, s.emit, fileconsumer.WithSplitFunc(splitLines))
	if err != nil {
		return nil, fmt.Errorf("`%s`: %w", set.agent.key, err)
	}
	s.manager = m
	return s, nil
}

func (s *jsonlSource) start(ctx context.Context) error {
	s.sessions.loadIndex(ctx)
	if err := s.manager.Start(s.positions); err != nil {
		return fmt.Errorf("start reading %s files: %w", s.agent.key, err)
	}
	s.sweeper = startLoop(s.sweepInterval(), func(ctx context.Context) { s.sessions.sweep(ctx, fileExists) })
	s.pending.load(ctx, s.storageError)
	s.flusher = startLoop(s.flushInterval(), s.flushSettled)
	s.logger.Info("Reading agent session files",
		zap.String("agent", s.agent.key), zap.Strings("include", s.include), zap.Strings("exclude", s.exclude))
	return nil
}

// stop stops tailing (fileconsumer saves its read positions unless a
// delivery was given up) and writes the session index.
func (s *jsonlSource) stop(ctx context.Context) error {
	err := errors.Join(s.sweeper.halt(ctx), s.flusher.halt(ctx))
	// fileconsumer is stopped in any case (in the background once ctx has
	// ended), so that nothing reads on after Shutdown.
	s.positions.final.Store(true)
	err = errors.Join(err, runUntil(ctx, s.manager.Stop))
	s.sessions.flush(context.WithoutCancel(ctx))
	return err
}

// tailConfig is the fileconsumer configuration of one agent: its files, the
// receiver's tailing settings, and what the parsers rely on, fixed.
func tailConfig(cfg *Config, ac *AgentConfig, include, exclude []string) fileconsumer.Config {
	fc := fileconsumer.NewConfig()
	fc.Include = include
	fc.Exclude = exclude
	fc.ExcludeOlderThan = ac.ExcludeOlderThan
	fc.StartAt = string(cfg.StartAt)
	fc.PollInterval = cfg.PollInterval
	fc.MaxConcurrentFiles = cfg.MaxConcurrentFiles
	fc.FingerprintSize = cfg.FingerprintSize
	fc.MaxLogSize = cfg.MaxLogSize
	// A line of max_log_size or more is cut to one token and the rest of it
	// skipped, so line numbers stay right; emit reports the token.
	fc.MaxLogSizeBehavior = fileconsumer.MaxLogSizeBehaviorTruncate
	// The read buffer must not start larger than max_log_size: truncation
	// only happens when the buffer has grown to exactly max_log_size, and a
	// bigger buffer would wedge the file on "log entry too large".
	fc.InitialBufferSize = min(fc.InitialBufferSize, cfg.MaxLogSize)
	// Bytes as written: no decoding, no whitespace trimming (nop encoding),
	// lines split on "\n" only by splitLines.
	fc.Encoding = "nop"
	// Never emit a partial last line: the agents terminate every record with
	// "\n", so an unterminated line is still being written.
	fc.FlushPeriod = 0
	fc.IncludeFileName = false
	fc.IncludeFilePath = true
	return *fc
}

// splitLines splits on "\n" only (transcripts contain raw U+2028 and
// U+0085) and never returns an unterminated last line: it is still being
// written and is read once its "\n" arrives.
func splitLines(data []byte, _ bool) (advance int, token []byte, err error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i], nil
	}
	return 0, nil, nil
}

// emit is fileconsumer's callback for a batch of complete lines of one file.
// lastRecordNumber is the 1-based number of the batch's last line; offsets[i+1]
// is the file position just after line i. fileconsumer moves its read
// position past the batch once emit returns, whatever it returns: emit
// therefore returns only once the next consumer accepted the events (see
// emitter), and when the receiver stops first, holds every read position
// of this run back (heldPersister).
func (s *jsonlSource) emit(ctx context.Context, lines [][]byte, attrs map[string]any, lastRecordNumber int64, offsets []int64) error {
	path, _ := attrs[fcattrs.LogFilePath].(string)
	sess := s.sessions.acquire(ctx, parserKey(path), path)
	defer s.sessions.release(sess)
	f := sess.state

	maxLen := int(s.cfg.MaxLogSize)
	firstLineNo := lastRecordNumber - int64(len(lines)) + 1
	events := make([]agentevent.Event, 0, len(lines))
	for i, line := range lines {
		lineNo := firstLineNo + int64(i)
		offset := lineOffset(offsets, i, len(line))
		if len(line) >= maxLen {
			// fileconsumer cut the line at max_log_size and skips the rest.
			events = append(events, s.unparsedEvent(path, lineNo, offset, reasonLineTooLong))
			continue
		}
		if offset == 0 {
			s.checkIdentity(path, f, line)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue // blank line: nothing to map, nothing wrong
		}
		events = append(events, f.parser.Parse(line, lineNo, offset)...)
	}
	s.emitter.read(ctx, int64(len(lines)))
	s.positions.read.Store(true)
	end := offsets[0]
	if len(lines) < len(offsets) {
		end = offsets[len(lines)]
	}
	caughtUp, modified := readToEnd(path, end)
	deferred := false
	if fl, ok := f.parser.(flusher); ok && caughtUp {
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
			s.pending.put(ctx, path, end, s.storageError)
		}
	}
	err := s.emitter.deliver(ctx, delivery{path: path, events: events, caughtUp: caughtUp, from: offsets[0], to: end})
	if err != nil {
		s.positions.hold()
		return err
	}
	s.sessions.commit(ctx, sess)
	if !deferred {
		s.pending.remove(ctx, path, s.storageError)
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
func (s *jsonlSource) flushable(fl flusher, modified time.Time) bool {
	at, holding := fl.HeldAt()
	return !holding || s.settled(modified) || (!at.IsZero() && !s.clock.now().Before(at.Add(historyAge)))
}

// settled reports whether a file last modified at modified has stayed
// unchanged for the settle delay: its writer is done for now.
func (s *jsonlSource) settled(modified time.Time) bool {
	return !s.clock.now().Before(modified.Add(s.settleDelay))
}

// flushInterval is how often files waiting to settle are looked at.
func (s *jsonlSource) flushInterval() time.Duration {
	return min(max(s.settleDelay/4, 100*time.Millisecond), time.Second)
}

// flushSettled flushes the parser of every file read to its end while it was
// being written, once the file has settled (or is gone), and delivers what
// the parser held back, as emit does at the end of a file that is not
// being written.
func (s *jsonlSource) flushSettled(ctx context.Context) {
	for path, end := range s.pending.snapshot() {
		if ctx.Err() != nil {
			return
		}
		caughtUp, modified := readToEnd(path, end)
		// readToEnd found the file when it says caught up: only otherwise
		// may it be gone.
		gone := !caughtUp && !fileExists(path)
		if !gone && (!caughtUp || !s.settled(modified)) {
			continue // more to read (emit takes over) or still being written
		}
		s.flushOne(ctx, path, end)
	}
}

func (s *jsonlSource) flushOne(ctx context.Context, path string, end int64) {
	sess := s.sessions.acquire(ctx, parserKey(path), path)
	defer s.sessions.release(sess)
	if e, ok := s.pending.get(path); !ok || e != end {
		return // emit read more of the file meanwhile
	}
	var events []agentevent.Event
	if fl, ok := sess.state.parser.(flusher); ok {
		events = fl.Flush()
	}
	if len(events) > 0 {
		if err := s.emitter.deliver(ctx, delivery{path: path, events: events, caughtUp: true, from: end, to: end}); err != nil {
			return // stopping: the stored parser state still holds them
		}
		s.sessions.commit(ctx, sess)
	}
	s.pending.remove(ctx, path, s.storageError)
}

// pendingFlushKey is the storage key of the files waiting to settle: a
// restart flushes them once they have (their parser state is in storage,
// and no new line may ever come to trigger emit).
const pendingFlushKey = "pending_flush"

// pendingFlushes are the files whose parser may hold events back until the
// file settles, with the end of the data read. Only files read to their end
// while being written are here, so it stays as small as the set of live
// sessions.
type pendingFlushes struct {
	cp   *checkpoints
	mu   sync.Mutex
	ends map[string]int64
}

func (p *pendingFlushes) load(ctx context.Context, onError func(error)) {
	b, err := p.cp.getBlob(ctx, pendingFlushKey)
	if err != nil {
		onError(fmt.Errorf("read %s: %w", pendingFlushKey, err))
		return
	}
	if len(b) == 0 {
		return
	}
	ends := map[string]int64{}
	if err := json.Unmarshal(b, &ends); err != nil {
		onError(fmt.Errorf("decode %s: %w", pendingFlushKey, err))
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, v := range ends {
		p.ends[k] = v
	}
}

func (p *pendingFlushes) get(path string) (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	end, ok := p.ends[path]
	return end, ok
}

func (p *pendingFlushes) snapshot() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.ends)
}

func (p *pendingFlushes) put(ctx context.Context, path string, end int64, onError func(error)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e, ok := p.ends[path]; ok && e == end {
		return
	}
	p.ends[path] = end
	p.saveLocked(ctx, onError)
}

func (p *pendingFlushes) remove(ctx context.Context, path string, onError func(error)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.ends[path]; !ok {
		return
	}
	delete(p.ends, path)
	p.saveLocked(ctx, onError)
}

func (p *pendingFlushes) saveLocked(ctx context.Context, onError func(error)) {
	b, err := json.Marshal(p.ends)
	if err == nil {
		err = p.cp.setBlob(ctx, pendingFlushKey, b)
	}
	if err != nil {
		onError(fmt.Errorf("write %s: %w", pendingFlushKey, err))
	}
}

// readToEnd reports whether a file holds nothing to read past end but,
// perhaps, an unterminated line still being written. fileconsumer emits a
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
func (s *jsonlSource) unparsedEvent(path string, lineNo, offset int64, reason string) agentevent.Event {
	ev := agentevent.Event{
		Source:    s.agent.source,
		EventID:   agentevent.StableID(path, offset, 0),
		Timestamp: s.clock.now(),
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

// lineOffset is the byte offset where line i of a batch starts. The line and
// its "\n" end at offsets[i+1]; offsets[i], the end of the previous token,
// would be off after an over-long line, whose skipped tail it does not count.
func lineOffset(offsets []int64, i, length int) int64 {
	if i+1 < len(offsets) {
		return offsets[i+1] - int64(length) - 1
	}
	return offsets[i]
}

// checkIdentity starts a fresh parser when a path is read from offset 0 with
// a different first line than before: the file was replaced. The same first
// line means a replay of the same file, which the parser drops itself.
func (s *jsonlSource) checkIdentity(path string, f *jsonlSession, line []byte) {
	sum := sha256.Sum256(line)
	h := hex.EncodeToString(sum[:])
	if f.firstLine != "" && f.firstLine != h {
		s.logger.Info("Session file was replaced; reading it as a new file",
			zap.String("agent", s.agent.key), zap.String("path", path))
		f.parser = s.agent.newParser(path, parseOptionsFor(s.cfg))
	}
	f.firstLine = h
}

// heldPersister is fileconsumer's view of the storage.
//
// Once a delivery was given up (the receiver stopped while the next
// consumer refused it), fileconsumer's read positions are no longer
// written: it has moved past the refused lines in memory, and the next run
// must read them again from the positions saved before (the parsers drop
// what they already emitted).
//
// fileconsumer writes its read positions (knownFiles: every file it knows,
// with a fingerprint of up to fingerprint_size bytes each — megabytes for
// a long history) after every poll, whether it read anything or not. A
// poll that read nothing changed no read position, so its write is skipped
// unless the last one is knownFilesRefresh old (what changes without a
// line being read, a new empty file, a rename, is then saved soon after).
// The positions are where reading resumes, not what decides exactly once:
// a file's parser state, committed after each delivery, drops what was
// emitted before, so positions that lag only cost reading some bytes again.
type heldPersister struct {
	operator.Persister
	held atomic.Bool
	// read: a batch was read since the positions were last written.
	read atomic.Bool
	// final: the source is stopping; the positions are always written.
	final atomic.Bool
	now   func() time.Time

	mu        sync.Mutex
	lastWrite time.Time
	lastLen   int
}

const knownFilesKey = "knownFiles" // fileconsumer's key for its read positions

// knownFilesRefresh is how old the stored read positions may get while
// polls read nothing.
const knownFilesRefresh = 30 * time.Second

func (p *heldPersister) hold() { p.held.Store(true) }

// skip tells whether a write of the read positions (value) is left out.
func (p *heldPersister) skip(value []byte) bool {
	if p.held.Load() {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if !p.final.Load() && !p.read.Load() && !p.lastWrite.IsZero() &&
		len(value) == p.lastLen && now.Sub(p.lastWrite) < knownFilesRefresh {
		return true
	}
	p.read.Store(false)
	p.lastWrite = now
	p.lastLen = len(value)
	return false
}

func (p *heldPersister) Set(ctx context.Context, key string, value []byte) error {
	if key == knownFilesKey && p.skip(value) {
		return nil
	}
	return p.Persister.Set(ctx, key, value)
}

func (p *heldPersister) Batch(ctx context.Context, ops ...*storage.Operation) error {
	kept := ops[:0:0]
	for _, op := range ops {
		if op.Key != knownFilesKey || !p.skip(op.Value) {
			kept = append(kept, op)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return p.Persister.Batch(ctx, kept...)
}
