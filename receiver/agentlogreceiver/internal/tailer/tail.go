// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package tailer finds an agent's JSONL files and hands what was appended to
// them, line by line, to the source. It replaces a general log tailer
// (contrib's fileconsumer) because of what agent logs are and are not:
//
//   - A session file is appended to by one writer, identified by its path,
//     and, once the session is over, never touched again. A general tailer
//     keeps a content fingerprint of every file it ever saw (fileconsumer:
//     about 3.5 KB each, and every one of them in a value rewritten to the
//     storage after each poll), and opens and reads every file at every
//     poll. Here a file whose size, modification time and inode did not
//     change since it was read to its end is not opened at all, and what is
//     remembered of it in memory is its path and a few numbers.
//   - The read position of a file lives in the file's own state in the
//     storage (jsonl.Session), written in the same write as its parser state
//     once the next consumer accepted the lines: the two cannot disagree,
//     and there is no separate position value to lose or rewrite.
//   - A file is known by its path; its first line (a sha256 of it, kept by
//     the session) tells a file moved to a new path (Codex archiving a
//     rollout) from a new one, and a copy of a file already read (a
//     rollout in both of Codex's folders) from a new file, together with
//     its first fingerprint_size bytes.
//
// What it does per poll: match the include patterns; stat every match;
// keep one path per file (device and inode); skip those unchanged since
// read to their end; for the others find where to read from (the in-memory
// entry, else the stored position, else the first-line identity, else the
// start — or the end for start_at: end),
// then read complete lines from there on up to max_concurrent_files/2
// files at a time, in batches of at most tailBatchLines lines, each handed
// to emit; emit returns once the lines are delivered and committed. A
// batch emit refuses (the receiver is stopping) ends the file's read for
// this poll without moving its position. Between polls, a watcher
// (internal/watch) wakes the tailer to read the files written to, each
// as a poll would, or to poll at once when files came or went.
package tailer

import (
	"bufio"
	"context"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/finder"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/watch"
)

// Batch is a batch of complete lines of one file. Offsets[0] is the
// file position before the first line, Offsets[i+1] the position just
// after line i and its "\n". LastLine is the 1-based number of the batch's
// last line. TooLong, when not nil, marks the lines of max_log_size bytes
// or more: they were skipped, and come without their bytes (nil).
//
// The Lines are read in place, from the read's buffer, and are valid only
// until emit returns: the next batch is read into the same memory. emit
// parses and delivers them before it returns (the events are encoded, and
// so copied, on delivery); whatever lives on past it — a parser's state,
// events a parser holds back for a later flush — keeps copies of what it
// needs, never a slice of a line nor a string that shares its memory.
type Batch struct {
	Path     string
	Lines    [][]byte
	TooLong  []bool
	Offsets  []int64
	LastLine int64
	// After is the file's position after the batch, to be stored with it.
	After Pos
}

// Pos is where reading a file goes on: offset is the position after
// the last line delivered, line the number of lines before it. ino is the
// file's inode (0 where the platform has none): a different file at the
// same path starts from its beginning.
type Pos struct {
	Offset int64  `json:"offset"`
	Line   int64  `json:"line"`
	Ino    uint64 `json:"ino,omitempty"`
	// HeadLen and Head identify the file's start: the sha256 (hex) of its
	// first HeadLen bytes (at most fingerprint_size), as first read. A file at
	// another path is this one, moved or copied, only if it starts the
	// same.
	HeadLen int64  `json:"head_len,omitempty"`
	Head    string `json:"head,omitempty"`
}

// Store is what the tailer asks the source about files it has no entry
// for in memory (at start, and for new paths).
type Store interface {
	// Position is the stored position of path, if any.
	Position(ctx context.Context, path string) (Pos, bool)
	// FirstLineOwner is the path whose file was read with this first line
	// (the hex sha256 of it), if any.
	FirstLineOwner(ctx context.Context, sum string) (string, bool)
	// Adopt starts path at pos with the state of from (a file moved from
	// there, whose first line, sum, names path from now on; "" for none: a
	// fresh state), and stores it. from keeps no position: were the file
	// moved back there, it would resume from before what path read.
	Adopt(ctx context.Context, path, from, sum string, pos Pos)
}

// tailFile is what the tailer keeps of one matched file (its path is the
// key of the tailer's table, the matcher's string).
type tailFile struct {
	pos filePos
	// size and mtime are the stat of the file when it was last read to its
	// end (its inode is pos's): unchanged, it is not opened again.
	size  int64
	mtime int64
	// readToEnd: the stat above is that of a read that reached the end.
	readToEnd bool
	// seen is the poll that last matched the file.
	seen uint64
}

// Tailer reads one agent's appended files (see the package doc).
type Tailer struct {
	match      func() ([]string, error)
	poll       time.Duration
	workers    int
	maxLogSize int
	// headBytes is how much of a file's start, at most, identifies it next
	// to its first line (fingerprint_size): a file is taken for another one
	// moved or copied only when their first line and their first headBytes
	// bytes (all of the shorter) are the same.
	headBytes  int64
	startAtEnd bool
	emit       func(ctx context.Context, b Batch) error
	poison     bool // Config.Poison
	// slots, shared by the receiver's tailers, bound the files being read
	// (their batches read and delivered) at once across agents (nil: no
	// bound beyond workers).
	slots  chan struct{}
	watch  *watch.Config
	store  Store
	logger *zap.Logger

	files map[string]*tailFile // only the poll goroutine touches it
	// matched and ids are pollOnce's and onePathPerFile's, reused poll
	// after poll (a poll of a large history matches thousands of files).
	matched []matchedFile
	ids     map[finder.FileID]int
	polls   uint64
	// reads counts the files opened to be read (tests).
	reads atomic.Int64
	// scans are the unterminated long lines found by the reads, by path
	// (few: a line longer than the read buffer still being written), so
	// that the next read goes on looking for its end from where the last
	// one stopped instead of reading it all again. Workers read and write
	// them.
	scanMu sync.Mutex
	scans  map[string]lineScan

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Config is what a Tailer is made of: one agent's matcher and the
// receiver's settings, and where its batches go.
type Config struct {
	// Match returns the files to read (finder.NewMatcher).
	Match func() ([]string, error)
	// Poll is how often the files are matched and read (poll_interval).
	Poll time.Duration
	// Workers is how many files are read at once.
	Workers int
	// MaxLogSize is max_log_size; HeadBytes fingerprint_size.
	MaxLogSize int
	HeadBytes  int64
	// StartAtEnd: a file without a stored position is read from its end
	// at the first poll (start_at: end).
	StartAtEnd bool
	// Emit is handed every batch; it returns once the batch is delivered
	// and committed (an error: not, the position stays before it).
	Emit func(ctx context.Context, b Batch) error
	// Poison (tests only) overwrites the memory of a batch's lines with
	// garbage once its emit returned, so that a test sees anything that
	// kept a line (see Batch) read garbage.
	Poison bool
	// Store is asked about files without an entry in memory.
	Store  Store
	Logger *zap.Logger
	// Slots, shared by the receiver's tailers, bound the files being read
	// at once across agents (nil: no bound beyond Workers).
	Slots chan struct{}
	// Watch, when set, is what a watcher wakes the tailer on between polls
	// (nil: poll only). Its Logger defaults to the tailer's.
	Watch *watch.Config
}

// New is a Tailer; Start starts it.
func New(c Config) *Tailer {
	logger := c.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	return &Tailer{
		match: c.Match, poll: c.Poll, workers: max(1, c.Workers), maxLogSize: c.MaxLogSize,
		headBytes: c.HeadBytes, startAtEnd: c.StartAtEnd, emit: c.Emit, poison: c.Poison, store: c.Store,
		logger: logger, slots: c.Slots, watch: c.Watch, files: map[string]*tailFile{},
	}
}

// Reads is the number of files opened to be read so far.
func (t *Tailer) Reads() int64 { return t.reads.Load() }

// PollOnce reads what is new in every matched file, as a poll does (tests
// read files synchronously with it).
func (t *Tailer) PollOnce(ctx context.Context) { t.pollOnce(ctx) }

// Start polls in the background, the first poll at once. With Watch set,
// a change the watcher reports is read between polls: the files written to
// alone, or a full poll when files came or went (see internal/watch).
func (t *Tailer) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	if t.files == nil {
		t.files = map[string]*tailFile{}
	}
	t.wg.Go(func() {
		var w *watch.Watcher
		if t.watch != nil {
			c := *t.watch
			c.Paths = true
			if c.Logger == nil {
				c.Logger = t.logger
			}
			// Watched before the first poll: a write between the poll's
			// match and the watch's start would wait for the next poll.
			w = watch.Start(c)
			defer w.Close()
		}
		tick := time.NewTicker(t.poll)
		defer tick.Stop()
		full := true
		for {
			if full {
				w.Reset() // the poll sees what changed until now
				t.pollOnce(ctx)
			} else {
				t.readChanged(ctx, w)
			}
			// A wake during the read is one more read after it (the
			// watcher's channel holds one), however many writes it covers.
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				full = true
			case <-w.Wake():
				full = false
			}
		}
	})
}

// Stop ends polling once the reads under way are over (emit returns at
// once when the receiver is stopping).
func (t *Tailer) Stop() {
	if t.cancel != nil {
		t.cancel()
	}
	t.wg.Wait()
}

// fileStat is what a poll knows of a file before reading it.
type fileStat struct {
	size  int64
	mtime int64
	ino   uint64
	dev   uint64
}

func statFile(path string) (fileStat, bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return fileStat{}, false
	}
	id := finder.IDOf(fi)
	return fileStat{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ino: id.Ino, dev: id.Dev}, true
}

// matchedFile is a matched path and its stat.
type matchedFile struct {
	path string
	st   fileStat
}

// onePathPerFile keeps one path of each file the matches reach under
// several (hard links, a directory reached through a symlink, which
// fileconsumer told apart by their fingerprint): read under each, every
// append would be emitted once per path. The path kept is the one the file
// is read under already, else one with a stored position for it (after a
// restart), else the first in sorted order; the others are not tracked,
// and should the path kept go, the next poll finds the file under another
// as a moved file (resolve). matches are sorted by path (the first of a
// file's paths wins a tie).
func (t *Tailer) onePathPerFile(ctx context.Context, matches []matchedFile) []matchedFile {
	if t.ids == nil {
		t.ids = map[finder.FileID]int{}
	}
	ids := t.ids
	clear(ids)
	// rank: 2 read under it now, 1 stored position of this file, 0 neither.
	rank := func(m matchedFile) int {
		if f := t.files[m.path]; f != nil && f.pos.ino == m.st.ino {
			return 2
		}
		if pos, ok := t.store.Position(ctx, m.path); ok && pos.Ino == m.st.ino {
			return 1
		}
		return 0
	}
	out := matches[:0]
	for _, m := range matches {
		id := finder.FileID{Dev: m.st.dev, Ino: m.st.ino}
		if id.Ino == 0 {
			out = append(out, m)
			continue
		}
		i, dup := ids[id]
		if !dup {
			ids[id] = len(out)
			out = append(out, m)
			continue
		}
		// (A path read already ranks highest: no storage look-up then.)
		if r := rank(out[i]); r < 2 && rank(m) > r {
			out[i] = m
		}
	}
	return out
}

// tailJob is one file to read in a poll.
type tailJob struct {
	path string
	f    *tailFile
	st   fileStat
}

// pollOnce reads what is new in every matched file.
func (t *Tailer) pollOnce(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	t.polls++
	paths, _ := t.match() // no match is an error to the matcher, nothing to read to us
	first := t.polls == 1
	matches := t.matched[:0]
	for _, path := range paths {
		if ctx.Err() != nil {
			return
		}
		if st, ok := statFile(path); ok {
			matches = append(matches, matchedFile{path, st})
		}
	}
	matches = t.onePathPerFile(ctx, matches)
	t.matched = matches
	var jobs []tailJob
	// seen are the files first seen in this poll, by their first line: a
	// copy met in the same poll is not read twice.
	seen := map[string]seenHead{}
	for _, m := range matches {
		if ctx.Err() != nil {
			return
		}
		path, st := m.path, m.st
		f := t.files[path]
		if f == nil {
			f = t.resolve(ctx, path, st, first, seen)
			t.files[path] = f
		}
		f.seen = t.polls
		if j, ok := t.job(path, f, st); ok {
			jobs = append(jobs, j)
		}
	}
	// Files no longer matched (deleted, moved away, excluded) are let go:
	// the table holds the files that exist.
	for path, f := range t.files {
		if f.seen != t.polls {
			delete(t.files, path)
			t.setScan(path, lineScan{})
		}
	}
	t.run(ctx, jobs)
}

// job is the read of f, stat'ed as st, if it changed since it was read.
func (t *Tailer) job(path string, f *tailFile, st fileStat) (tailJob, bool) {
	switch {
	case f.pos.ino != 0 && st.ino != 0 && f.pos.ino != st.ino, st.size < f.pos.offset:
		// Another file at this path, or this one cut shorter: read it
		// from its start (the source tells a replay of the same file,
		// whose parser drops what it emitted, from a new one).
		f.pos = filePos{ino: st.ino}
		f.readToEnd = false
		t.setScan(path, lineScan{})
	case f.readToEnd && st.size == f.size && st.mtime == f.mtime && st.ino == f.pos.ino:
		return tailJob{}, false // unchanged since read to its end
	case st.size == f.pos.offset && f.readToEnd:
		// Touched, nothing appended.
		f.size, f.mtime = st.size, st.mtime
		return tailJob{}, false
	}
	return tailJob{path: path, f: f, st: st}, true
}

// readChanged reads the files the watcher saw written to, each as a poll
// would, without matching and stating every file of the history. A path
// the tailer does not read already, or one gone, replaced or no longer
// matched (include, exclude, exclude_older_than), and any file created,
// moved or removed, make it a full poll instead: only a poll decides which
// path of a file is read and where a new one starts.
func (t *Tailer) readChanged(ctx context.Context, w *watch.Watcher) {
	paths, full := w.Take()
	if full {
		t.pollOnce(ctx)
		return
	}
	var jobs []tailJob
	for _, path := range paths {
		f := t.files[path]
		st, ok := statFile(path)
		if f == nil || !ok || (st.ino != 0 && f.pos.ino != 0 && st.ino != f.pos.ino) ||
			!w.Wanted(path, time.Unix(0, st.mtime)) {
			t.pollOnce(ctx)
			return
		}
		if j, ok := t.job(path, f, st); ok {
			jobs = append(jobs, j)
		}
	}
	t.run(ctx, jobs)
}

// run reads the jobs, up to t.workers at a time.
func (t *Tailer) run(ctx context.Context, jobs []tailJob) {
	if len(jobs) == 0 {
		return
	}
	next := make(chan tailJob)
	var wg sync.WaitGroup
	for range min(t.workers, len(jobs)) {
		wg.Go(func() {
			for j := range next {
				t.read(ctx, j)
			}
		})
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		next <- j
	}
	close(next)
	wg.Wait()
}

// read reads the complete lines of one file from its position on and hands
// them to emit in batches.
func (t *Tailer) read(ctx context.Context, j tailJob) {
	// The read slot is held for the whole read of the file, taken before
	// anything is opened or allocated: a worker waiting for a slot holds no
	// buffer (taken per batch, every waiting worker of every agent would
	// hold its read-ahead, up to two batches).
	if !t.acquire(ctx) {
		return
	}
	held := true
	defer func() {
		if held {
			t.release()
		}
	}()
	f := j.f
	t.reads.Add(1)
	fh, err := os.Open(j.path)
	if err != nil {
		return // gone since the stat: the next poll lets it go
	}
	defer fh.Close()
	if fi, err := fh.Stat(); err != nil || (j.st.ino != 0 && finder.IDOf(fi).Ino != j.st.ino) {
		// Another file was put at the path since the stat: the position is
		// the old file's. The next poll's stat sees the new inode and reads
		// it from its start.
		return
	}
	if _, err := fh.Seek(f.pos.offset, io.SeekStart); err != nil {
		return
	}
	r := readers.Get().(*bufio.Reader)
	r.Reset(fh)
	defer func() { r.Reset(nil); readers.Put(r) }()
	b := lineBatcher{
		maxLogSize: t.maxLogSize, offset: f.pos.offset, start: f.pos.offset,
		src: fh, scan: t.scan(j.path, f.pos.offset, j.st.ino, j.st.size), poison: t.poison,
	}
	defer func() { t.setScan(j.path, b.scan); b.putLineBuffer() }()
	batches := 0
	for {
		if ctx.Err() != nil {
			return
		}
		done, err := b.fill(r)
		if err != nil {
			t.logger.Warn("Reading a session file failed; retried at the next poll", zap.String("path", j.path), zap.Error(err))
			return
		}
		if len(b.lines) > 0 {
			if f.pos.offset == 0 && f.pos.headLen == 0 {
				// A file first seen empty, or before its first line was
				// complete, or read again from its start: its head is known
				// now that it has a first line, and goes into the position
				// stored with the first batch (a later move or copy of it is
				// told by it). Read from the file opened, which is the one
				// the poll's stat saw. (Not before the first line is
				// complete: a long first line still being written would be
				// read through at every poll.)
				if h, ok := headOf(io.NewSectionReader(fh, 0, 1<<62), t.maxLogSize, t.headBytes); ok {
					f.pos.headLen, f.pos.head = h.n, h.sum
				}
			}
			batch := b.take(j.path, f.pos.Pos(), b.batchLen(done))
			if err := t.emit(ctx, batch); err != nil {
				return // stopping: the position stays before the batch
			}
			b.release(batch) // emit is done with the lines
			f.pos.offset, f.pos.line = batch.After.Offset, batch.After.Line
			batches++
		}
		if done && len(b.lines) == 0 {
			break
		}
		if batches >= tailSlotBatches && t.slots != nil {
			// A long read lets the other files have the slot (a live
			// session of another agent waits behind a large backfill
			// file, or one written faster than it is read), and holds no
			// lines while it waits: those read ahead are dropped and read
			// again from the position.
			batches = 0
			b.putLineBuffer()
			b = lineBatcher{
				maxLogSize: t.maxLogSize, offset: f.pos.offset, start: f.pos.offset,
				src: fh, scan: b.scan, poison: t.poison,
			}
			r.Reset(nil)
			held = false
			t.release()
			if !t.acquire(ctx) {
				return
			}
			held = true
			if _, err := fh.Seek(f.pos.offset, io.SeekStart); err != nil {
				return
			}
			r.Reset(fh)
		}
	}
	f.size, f.mtime, f.readToEnd = j.st.size, j.st.mtime, true
	f.pos.ino = j.st.ino
}

// acquire takes a read slot; false when ctx ended first.
func (t *Tailer) acquire(ctx context.Context) bool {
	if t.slots == nil {
		return true
	}
	select {
	case t.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (t *Tailer) release() {
	if t.slots != nil {
		<-t.slots
	}
}
