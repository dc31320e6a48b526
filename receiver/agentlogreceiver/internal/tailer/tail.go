// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package tailer // import "github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/tailer"

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/finder"
)

// The tailer finds an agent's JSONL files and hands what was appended to
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
//     storage (jsonlSession), written in the same write as its parser state
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
// this poll without moving its position.

// tailBatchLines is the most lines handed to emit at once, tailBatchBytes
// about the most bytes (a batch ends after the line that reaches it): a
// batch's lines and the events made of them are in memory until the batch
// is delivered, for every file read at once.
const (
	tailBatchLines = 100
	tailBatchBytes = 256 << 10
)

// tailSlotBatches is how many batches a file read delivers under one read
// slot before it lets the other files waiting for one go first (about
// 4 MB).
const tailSlotBatches = 16

// tailReadBuffer is the read buffer of one file read. A line longer than it
// is not assembled from the buffer's chunks (append-doubling held up to five
// times the line): its end is found first, reading on without keeping
// anything, then the line is read again from its start, once, into memory
// of its exact size — or, at max_log_size or more, not at all (see
// lineBatcher.longLine).
const tailReadBuffer = 64 * 1024

// readers are the read buffers of file reads, reused.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, tailReadBuffer) }}

// Batch is a batch of complete lines of one file. offsets[0] is the
// file position before the first line, offsets[i+1] the position just
// after line i and its "\n". lastLine is the 1-based number of the batch's
// last line. The lines are the batch's own copy. tooLong, when not nil,
// marks the lines of max_log_size bytes or more: they were skipped, and
// come without their bytes (nil).
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

// filePos is a Pos as the tailer keeps it for every file it watches:
// the head's sha256 as its 32 bytes, not as 64 hex digits in a string of
// its own (an allocation per file, a seventh of what the tailer kept of
// one).
type filePos struct {
	offset, line int64
	ino          uint64
	headLen      int64 // 0: no head known
	head         [sha256.Size]byte
}

// filePosOf is a stored position as the tailer keeps it. A head that is not
// the hex of a sha256 (never written so) is taken as unknown.
func filePosOf(p Pos) filePos {
	fp := filePos{offset: p.Offset, line: p.Line, ino: p.Ino}
	if p.HeadLen > 0 && hex.DecodedLen(len(p.Head)) == sha256.Size {
		if _, err := hex.Decode(fp.head[:], []byte(p.Head)); err == nil {
			fp.headLen = p.HeadLen
		}
	}
	return fp
}

// Pos is the position as it is stored.
func (p filePos) Pos() Pos {
	tp := Pos{Offset: p.offset, Line: p.line, Ino: p.ino}
	if p.headLen > 0 {
		tp.HeadLen, tp.Head = p.headLen, hex.EncodeToString(p.head[:])
	}
	return tp
}

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
	// slots, shared by the receiver's tailers, bound the files being read
	// (their batches read and delivered) at once across agents (nil: no
	// bound beyond workers).
	slots  chan struct{}
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
	// Store is asked about files without an entry in memory.
	Store  Store
	Logger *zap.Logger
	// Slots, shared by the receiver's tailers, bound the files being read
	// at once across agents (nil: no bound beyond Workers).
	Slots chan struct{}
}

// New is a Tailer; Start starts it.
func New(c Config) *Tailer {
	logger := c.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	return &Tailer{
		match: c.Match, poll: c.Poll, workers: max(1, c.Workers), maxLogSize: c.MaxLogSize,
		headBytes: c.HeadBytes, startAtEnd: c.StartAtEnd, emit: c.Emit, store: c.Store,
		logger: logger, slots: c.Slots, files: map[string]*tailFile{},
	}
}

// Reads is the number of files opened to be read so far.
func (t *Tailer) Reads() int64 { return t.reads.Load() }

// PollOnce reads what is new in every matched file, as a poll does (tests
// read files synchronously with it).
func (t *Tailer) PollOnce(ctx context.Context) { t.pollOnce(ctx) }

// Start polls in the background, the first poll at once.
func (t *Tailer) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	if t.files == nil {
		t.files = map[string]*tailFile{}
	}
	t.wg.Go(func() {
		tick := time.NewTicker(t.poll)
		defer tick.Stop()
		for {
			t.pollOnce(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
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
		switch {
		case f.pos.ino != 0 && st.ino != 0 && f.pos.ino != st.ino, st.size < f.pos.offset:
			// Another file at this path, or this one cut shorter: read it
			// from its start (the source tells a replay of the same file,
			// whose parser drops what it emitted, from a new one).
			f.pos = filePos{ino: st.ino}
			f.readToEnd = false
			t.setScan(path, lineScan{})
		case f.readToEnd && st.size == f.size && st.mtime == f.mtime && st.ino == f.pos.ino:
			continue // unchanged since read to its end
		case st.size == f.pos.offset && f.readToEnd:
			// Touched, nothing appended.
			f.size, f.mtime = st.size, st.mtime
			continue
		}
		jobs = append(jobs, tailJob{path: path, f: f, st: st})
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

// lineScan is how far a read looked for the end of an unterminated line
// longer than the read buffer: the file (ino) has no "\n" from start, the
// line's first byte, up to end.
type lineScan struct {
	start, end int64
	ino        uint64
}

// scan returns what an earlier read found of an unterminated line of the
// file (ino, size now) past from; the zero lineScan when nothing.
func (t *Tailer) scan(path string, from int64, ino uint64, size int64) lineScan {
	t.scanMu.Lock()
	defer t.scanMu.Unlock()
	sc, ok := t.scans[path]
	if !ok || sc.start < from || sc.ino != ino || sc.end > size {
		return lineScan{ino: ino}
	}
	return sc
}

// setScan remembers a read's unterminated long line of path (zero: none).
func (t *Tailer) setScan(path string, sc lineScan) {
	t.scanMu.Lock()
	defer t.scanMu.Unlock()
	if sc.end == 0 {
		delete(t.scans, path)
		return
	}
	if t.scans == nil {
		t.scans = map[string]lineScan{}
	}
	t.scans[path] = sc
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

// seenHead is a file first seen in a poll, by its first line.
type seenHead struct {
	path string
	head fileHead
	size int64
}

// resolve finds where a file the tailer has no entry for is read from.
func (t *Tailer) resolve(ctx context.Context, path string, st fileStat, firstPoll bool, seen map[string]seenHead) *tailFile {
	f := &tailFile{}
	if pos, ok := t.store.Position(ctx, path); ok && (pos.Ino == 0 || st.ino == 0 || pos.Ino == st.ino) && pos.Offset <= st.size {
		f.pos = filePosOf(pos)
		f.pos.ino = st.ino
		return f
	}
	f.pos = filePos{ino: st.ino}
	// startAt starts a file that is not another one moved or copied here:
	// at its start, or at its end in the first poll with start_at: end.
	// sum is its first line's when no other file is known by that line.
	startAt := func(sum string) *tailFile {
		if firstPoll && t.startAtEnd {
			// Stored at once, not with the first batch: a restart before
			// anything is appended would otherwise start at the end again,
			// past what was appended while the receiver was stopped. (A
			// write per file, at the first start only, as reading every
			// file would do with start_at: beginning.) With the position
			// goes the first-line index entry, which reading from the start
			// would write: a move of the file (Codex archives its rollouts
			// so) then reads on from the position instead of reading the
			// whole file under its new path. The parser state starts fresh:
			// one stored at this path is another file's (one replaced or
			// cut while the receiver was stopped), whose last offset parsed
			// would drop this file's lines up to it.
			f.pos.offset = st.size
			t.store.Adopt(ctx, path, "", sum, f.pos.Pos())
		}
		return f
	}
	h, ok := readHead(path, t.maxLogSize, t.headBytes)
	if !ok {
		return startAt("") // no complete first line yet: a new file
	}
	f.pos.headLen, f.pos.head = h.n, h.sum
	copyOf := func(of string, line int64) *tailFile {
		// The same content under two paths (a rollout in both of Codex's
		// folders): read once. What is appended to this copy later is read
		// as its own.
		t.logger.Debug("File is a copy of another; not read again", zap.String("path", path), zap.String("of", of))
		f.pos.offset, f.pos.line = st.size, line
		t.store.Adopt(ctx, path, "", "", f.pos.Pos())
		return f
	}
	if other, dup := seen[h.first]; dup && other.path != path {
		if other.head == h && other.size == st.size {
			return copyOf(other.path, 0) // met in this same poll
		}
		return startAt("")
	}
	seen[h.first] = seenHead{path: path, head: h, size: st.size}
	owner, ok := t.store.FirstLineOwner(ctx, h.first)
	if !ok || owner == path {
		return startAt(h.first)
	}
	ownerPos, stored := t.store.Position(ctx, owner)
	if !stored || ownerPos.HeadLen == 0 || ownerPos.HeadLen > st.size {
		return startAt("")
	}
	if same, ok := readHead(path, t.maxLogSize, ownerPos.HeadLen); !ok || hex.EncodeToString(same.sum[:]) != ownerPos.Head {
		return startAt("") // another file that starts with the same line
	}
	ownerSt, ownerExists := statFile(owner)
	sameFile := ownerExists && st.ino != 0 && ownerSt.ino == st.ino && ownerSt.dev == st.dev
	if ownerExists && !sameFile && (ownerPos.Ino == 0 || ownerSt.ino == ownerPos.Ino) {
		if ownerSt.size == st.size {
			return copyOf(owner, ownerPos.Line)
		}
		return startAt("") // both are there, and differ
	}
	// The file was moved here — or it is the same file, reached now by this
	// path only (a hard link, a symlinked directory, the include patterns
	// changed): it goes on from where it was read to, with its parser state
	// (both as stored: they agree).
	pos := ownerPos
	if pos.Offset > st.size {
		pos = Pos{HeadLen: h.n, Head: hex.EncodeToString(h.sum[:])}
	}
	pos.Ino = st.ino
	t.logger.Debug("File was moved; reading on from its position", zap.String("path", path), zap.String("from", owner))
	t.store.Adopt(ctx, path, owner, h.first, pos)
	f.pos = filePosOf(pos)
	return f
}

// fileHead identifies the start of a file: the hex sha256 of its first line
// (without its "\n"; of its first max_log_size bytes when longer), and the
// sha256 of its first n bytes.
type fileHead struct {
	first string
	n     int64
	sum   [sha256.Size]byte
}

// readHead reads the head of a file: its first line, which must be
// complete, and its first min(size, limit) bytes.
func readHead(path string, maxLogSize int, limit int64) (fileHead, bool) {
	fh, err := os.Open(path)
	if err != nil {
		return fileHead{}, false
	}
	defer fh.Close()
	return headOf(fh, maxLogSize, limit)
}

// headReaders are headOf's read buffers, reused.
var headReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 16*1024) }}

// headOf is readHead of a file's content from its start.
func headOf(src io.Reader, maxLogSize int, limit int64) (fileHead, bool) {
	first := sha256.New()
	head := sha256.New()
	var n int64
	// The reader is reused: the first poll of a history reads the head of
	// every file (25k at 2 GB), each read a buffer of garbage otherwise.
	r := headReaders.Get().(*bufio.Reader)
	r.Reset(io.TeeReader(io.LimitReader(src, 1<<62), headWriter{head, &n, limit}))
	defer func() { r.Reset(nil); headReaders.Put(r) }()
	taken := 0
	for {
		chunk, err := r.ReadSlice('\n')
		line := bytes.TrimSuffix(chunk, []byte{'\n'})
		if taken < maxLogSize {
			first.Write(line[:min(len(line), maxLogSize-taken)])
		}
		taken += len(line)
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return fileHead{}, false
		}
	}
	// The head may reach past the first line.
	if n < limit {
		if _, err := io.Copy(io.Discard, io.LimitReader(r, limit-n)); err != nil {
			return fileHead{}, false
		}
	}
	h := fileHead{first: hex.EncodeToString(first.Sum(nil)), n: n}
	head.Sum(h.sum[:0])
	return h, true
}

// headWriter hashes the first limit bytes written to it, counting them.
type headWriter struct {
	h     io.Writer
	n     *int64
	limit int64
}

func (w headWriter) Write(p []byte) (int, error) {
	if room := w.limit - *w.n; room > 0 {
		k := min(int64(len(p)), room)
		w.h.Write(p[:k])
		*w.n += k
	}
	return len(p), nil
}

// read reads the complete lines of one file from its position on and hands
// them to emit in batches.
func (t *Tailer) read(ctx context.Context, j tailJob) {
	// The read slot is held for the whole read of the file, taken before
	// anything is opened or allocated: a worker waiting for a slot holds no
	// buffer. (Taken per batch, each of the up to max_concurrent_files/2
	// workers of every agent held its read-ahead — up to two batches — while
	// it waited: 8 MB of lines at the start of a 1 GB backfill, the
	// collector's peak.)
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
	b := lineBatcher{maxLogSize: t.maxLogSize, offset: f.pos.offset, start: f.pos.offset, size: j.st.size,
		src: fh, scan: t.scan(j.path, f.pos.offset, j.st.ino, j.st.size)}
	defer func() { t.setScan(j.path, b.scan) }()
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
			b = lineBatcher{maxLogSize: t.maxLogSize, offset: f.pos.offset, start: f.pos.offset, size: j.st.size,
				src: fh, scan: b.scan}
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

// lineBatcher cuts a file's bytes into complete lines.
type lineBatcher struct {
	maxLogSize int
	// offset is the file position after the last complete line read;
	// start the position the lines not yet taken begin at; size the file's
	// size when the read began (a hint for the buffer).
	offset, start, size int64
	// src is the file, read from again at the start of a line longer than
	// the read buffer, and moved in (Seek) past what scan says was looked
	// at already.
	src lineSource
	// scan is what is known of an unterminated long line (see lineScan):
	// what an earlier read found, and what this one finds. ino is the
	// file's.
	scan  lineScan
	data  []byte
	lines []heldLine
	ends  []int64 // file position after each line
	held  int     // bytes of the lines held
}

// lineSource is a file as a lineBatcher reads it.
type lineSource interface {
	io.Reader
	io.ReaderAt
	io.Seeker
}

// heldLine is a complete line the batcher holds: data[start:end], or own (a
// line longer than the read buffer, in memory of its own), or nothing (a
// line of max_log_size bytes or more: tooLong).
type heldLine struct {
	start, end int
	own        []byte
	tooLong    bool
}

func (l heldLine) size() int {
	if l.own != nil {
		return len(l.own)
	}
	return l.end - l.start
}

// fill reads complete lines until it holds two batches (2×tailBatchLines
// lines, or 2×tailBatchBytes); done reports that the file has no further
// complete line (what is left is an unterminated line still being written,
// or nothing).
func (b *lineBatcher) fill(r *bufio.Reader) (done bool, err error) {
	for len(b.lines) < 2*tailBatchLines && b.held < 2*tailBatchBytes {
		chunk, err := r.ReadSlice('\n')
		switch {
		case err == nil:
			line := heldLine{tooLong: len(chunk)-1 >= b.maxLogSize}
			if !line.tooLong {
				if b.data == nil {
					// One buffer for the file's read, as large as what the
					// file has left (up to two batches), reused batch after
					// batch.
					b.data = make([]byte, 0, min(max(b.size-b.offset, 4096), 2*tailBatchBytes+4096))
				}
				line.start = len(b.data)
				b.data = append(b.data, chunk[:len(chunk)-1]...)
				line.end = len(b.data)
			}
			b.add(line, int64(len(chunk)))
		case errors.Is(err, bufio.ErrBufferFull):
			if done, err := b.longLine(r, int64(len(chunk))); done || err != nil {
				return true, err
			}
		case errors.Is(err, io.EOF):
			// The line is not complete: it is read again, whole, once its
			// "\n" is there.
			return true, nil
		default:
			return true, err
		}
	}
	return false, nil
}

// add holds a complete line of n bytes in the file ("\n" included).
func (b *lineBatcher) add(l heldLine, n int64) {
	b.offset += n
	b.lines = append(b.lines, l)
	b.ends = append(b.ends, b.offset)
	b.held += l.size()
}

// longLine reads a line longer than the read buffer, of which r has handed
// out the first got bytes. It looks for the line's end without keeping
// what it reads (from where an earlier read stopped looking, when one
// did), then reads the line, whole, into memory of its exact size — unless
// it has max_log_size bytes or more: it is then held as too long, without
// its bytes. r is left after the line's "\n". done: the line has no "\n"
// yet; how far it was looked at is kept in scan.
func (b *lineBatcher) longLine(r *bufio.Reader, got int64) (done bool, err error) {
	start := b.offset
	pos := start + got // where r is
	if b.scan.start == start && b.scan.end > pos {
		if _, err := b.src.Seek(b.scan.end, io.SeekStart); err != nil {
			return true, err
		}
		r.Reset(b.src)
		pos = b.scan.end
	}
	for {
		chunk, err := r.ReadSlice('\n')
		pos += int64(len(chunk))
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		// No "\n" yet: the next read looks on from here.
		b.scan.start, b.scan.end = start, pos
		if errors.Is(err, io.EOF) {
			return true, nil
		}
		return true, err
	}
	if b.scan.start == start {
		b.scan.start, b.scan.end = 0, 0
	}
	line := heldLine{tooLong: pos-start-1 >= int64(b.maxLogSize)}
	if !line.tooLong {
		line.own = make([]byte, pos-start-1)
		if _, err := b.src.ReadAt(line.own, start); err != nil {
			return true, err
		}
	}
	b.add(line, pos-start)
	return false, nil
}

// batchLen is how many of the lines held make the next batch: all of them
// at the end of the file's data (done), so that the last batch of a read is
// never a short remainder — a handful of trailing records that map to no
// event would carry no caught-up flag, and the connector would keep the
// file's last turn open for turn_idle_timeout —, else one batch's worth.
func (b *lineBatcher) batchLen(done bool) int {
	if done {
		return len(b.lines)
	}
	n, bytes := 0, 0
	for n < len(b.lines) && n < tailBatchLines && bytes < tailBatchBytes {
		bytes += b.lines[n].size()
		n++
	}
	return max(n, 1)
}

// take hands out the first n lines held as a batch; pos is the file's
// position before them.
func (b *lineBatcher) take(path string, pos Pos, n int) Batch {
	batch := Batch{
		Path:     path,
		Lines:    make([][]byte, n),
		Offsets:  make([]int64, n+1),
		LastLine: pos.Line + int64(n),
		After:    pos,
	}
	batch.After.Offset, batch.After.Line = b.ends[n-1], batch.LastLine
	// Each line gets memory of its own: a string a parser keeps from a line
	// then holds that line alive, not the whole batch. (A long line has
	// its own already.)
	cut := 0 // the lines taken's bytes in data
	for i, l := range b.lines[:n] {
		switch {
		case l.tooLong:
			if batch.TooLong == nil {
				batch.TooLong = make([]bool, n)
			}
			batch.TooLong[i] = true
		case l.own != nil:
			batch.Lines[i] = l.own
		default:
			batch.Lines[i] = bytes.Clone(b.data[l.start:l.end])
			cut = l.end
		}
		b.held -= l.size()
	}
	batch.Offsets[0] = b.start
	copy(batch.Offsets[1:], b.ends[:n])
	// The lines left move to the front.
	rest := copy(b.data, b.data[cut:])
	b.data = b.data[:rest]
	clear(b.lines[:n]) // the long lines handed out are the batch's
	k := copy(b.lines, b.lines[n:])
	for i := range k {
		if b.lines[i].own == nil && !b.lines[i].tooLong {
			b.lines[i].start -= cut
			b.lines[i].end -= cut
		}
	}
	clear(b.lines[k:])
	b.lines = b.lines[:k]
	b.ends = b.ends[:copy(b.ends, b.ends[n:])]
	b.start = batch.After.Offset
	return batch
}

// LineOffset is the byte offset where line i of a batch starts. The line and
// its "\n" end at offsets[i+1]; offsets[i], the end of the previous token,
// would be off after an over-long line, whose skipped tail it does not count.
func LineOffset(offsets []int64, i, length int) int64 {
	if i+1 < len(offsets) {
		return offsets[i+1] - int64(length) - 1
	}
	return offsets[i]
}
