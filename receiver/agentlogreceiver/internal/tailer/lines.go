// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package tailer

import (
	"bufio"
	"errors"
	"io"
	"sync"
)

// Reading a file is cutting what was appended into complete lines, in
// batches, with lines longer than the read buffer read once into memory of
// their own.

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

// lineBufferSize is the size of the memory a file read holds its lines in
// (lineBatcher.data): two batches, the last line of which may begin just
// short of their end and be as long as the read buffer.
const lineBufferSize = 2*tailBatchBytes + tailReadBuffer

// lineBuffers are the line memories of file reads, reused from read to read
// (a backfill would otherwise allocate, and the collector collect, its whole
// size once over): nothing keeps a line past its batch's emit (see take),
// so a read's memory is free for the next once every batch it handed out
// was released.
var lineBuffers = sync.Pool{New: func() any { b := make([]byte, 0, lineBufferSize); return &b }}

// getLineBuffer is an empty line memory.
func getLineBuffer() []byte { return (*lineBuffers.Get().(*[]byte))[:0] }

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

// lineBatcher cuts a file's bytes into complete lines.
type lineBatcher struct {
	maxLogSize int
	// offset is the file position after the last complete line read;
	// start the position the lines not yet taken begin at.
	offset, start int64
	// src is the file, read from again at the start of a line longer than
	// the read buffer, and moved in (Seek) past what scan says was looked
	// at already.
	src lineSource
	// scan is what is known of an unterminated long line (see lineScan):
	// what an earlier read found, and what this one finds. ino is the
	// file's.
	scan lineScan
	// data holds the lines read from the read buffer, back to back; cut is
	// how many of its bytes are lines handed out and not yet released.
	data  []byte
	cut   int
	lines []heldLine
	ends  []int64 // file position after each line
	held  int     // bytes of the lines held
	// poison: release overwrites what it frees (Config.Poison).
	poison bool
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

// putLineBuffer gives back the line memory of a read whose batches were
// all released.
func (b *lineBatcher) putLineBuffer() {
	if b.cut != 0 || cap(b.data) != lineBufferSize {
		return // a batch still out (a read given up while stopping)
	}
	data := b.data[:0]
	b.data = nil
	lineBuffers.Put(&data)
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
			n := len(chunk) - 1 // the line without its "\n"
			line := heldLine{tooLong: n >= b.maxLogSize}
			if !line.tooLong {
				if b.data == nil {
					// One memory for the file's read, reused batch after
					// batch, then by the next read.
					b.data = getLineBuffer()
				}
				line.start = len(b.data)
				b.data = append(b.data, chunk[:n]...)
				line.end = len(b.data)
			}
			b.add(line, int64(len(chunk)))
		case errors.Is(err, bufio.ErrBufferFull):
			if unfinished, longErr := b.longLine(r, int64(len(chunk))); unfinished || longErr != nil {
				return true, longErr
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
	n := pos - start - 1 // the line without its "\n"
	line := heldLine{tooLong: n >= int64(b.maxLogSize)}
	if !line.tooLong {
		line.own = make([]byte, n)
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
// position before them. The lines are read in place: those of the read
// buffer are slices of data (capped at their end, so that an append to one
// cannot write into the next), a long line is its own memory. They stay
// as they are until release, which the read calls once the batch's emit
// returned (see Batch).
func (b *lineBatcher) take(path string, pos Pos, n int) Batch {
	batch := Batch{
		Path:     path,
		Lines:    make([][]byte, n),
		Offsets:  make([]int64, n+1),
		LastLine: pos.Line + int64(n),
		After:    pos,
	}
	batch.After.Offset, batch.After.Line = b.ends[n-1], batch.LastLine
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
			batch.Lines[i] = b.data[l.start:l.end:l.end]
			b.cut = l.end
		}
		b.held -= l.size()
	}
	batch.Offsets[0] = b.start
	copy(batch.Offsets[1:], b.ends[:n])
	clear(b.lines[:n]) // the long lines handed out are the batch's
	k := copy(b.lines, b.lines[n:])
	clear(b.lines[k:])
	b.lines = b.lines[:k]
	b.ends = b.ends[:copy(b.ends, b.ends[n:])]
	b.start = batch.After.Offset
	return batch
}

// release is called once the emit of the batch take handed out last has
// returned: nothing reads its lines any more, and the lines left move to
// the front of data, over them, making room for the next fill. With
// poison set, the memory of the batch's lines (long ones too) and the rest
// of data are overwritten with garbage, so that a test sees whatever kept
// a line past its emit read garbage.
func (b *lineBatcher) release(batch Batch) {
	if b.poison {
		for _, l := range batch.Lines {
			poison(l)
		}
	}
	if cut := b.cut; cut > 0 {
		rest := copy(b.data, b.data[cut:])
		b.data = b.data[:rest]
		for i := range b.lines {
			if b.lines[i].own == nil && !b.lines[i].tooLong {
				b.lines[i].start -= cut
				b.lines[i].end -= cut
			}
		}
		b.cut = 0
	}
	if b.poison {
		poison(b.data[len(b.data):cap(b.data)])
	}
}

// poison overwrites p with bytes that are no JSON (and no UTF-8).
func poison(p []byte) {
	for i := range p {
		p[i] = 0xff
	}
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
