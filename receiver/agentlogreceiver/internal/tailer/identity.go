// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package tailer

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"os"
	"sync"

	"go.uber.org/zap"
)

// A file is known by its path, and, to tell a file moved or copied to
// another path from a new one, by its first line and first bytes (its
// head).

// filePos is a Pos as the tailer keeps it for every file it watches:
// the head's sha256 as its 32 bytes, not as 64 hex digits in a string of
// its own (an allocation per file).
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
	// every file, each read a buffer of garbage otherwise.
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
	h     hash.Hash
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
