// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package tailer

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/testfiles"
)

// memTailStore is a Store in memory.
type memTailStore struct {
	mu    sync.Mutex
	pos   map[string]Pos
	first map[string]string
	moved map[string]string // path → the path it was adopted from
}

func newMemTailStore() *memTailStore {
	return &memTailStore{pos: map[string]Pos{}, first: map[string]string{}, moved: map[string]string{}}
}

func (m *memTailStore) Position(_ context.Context, path string) (Pos, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.pos[path]
	return p, ok
}

func (m *memTailStore) FirstLineOwner(_ context.Context, sum string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.first[sum]
	return p, ok
}

func (m *memTailStore) Adopt(_ context.Context, path, from, sum string, pos Pos) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pos[path] = pos
	m.moved[path] = from
	if from != "" {
		delete(m.pos, from)
	}
	if sum != "" {
		m.first[sum] = path
	}
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// tailSeen is a line as the tailer handed it out.
type tailSeen struct {
	path   string
	line   string
	no     int64
	offset int64
}

// tailRig is a tailer over dir's *.jsonl files whose emit records every
// line and stores the position (and the first line's owner) as the source
// does.
type tailRig struct {
	t     *testing.T
	tail  *Tailer
	store *memTailStore
	mu    sync.Mutex
	got   []tailSeen
	emits int
	sizes []int // lines per batch, in order
}

// twoLinesRead writes a file of two lines at rel in a new directory and
// has a new rig read it.
func twoLinesRead(t *testing.T, rel string) (dir, path string, r *tailRig) {
	t.Helper()
	dir = t.TempDir()
	path = filepath.Join(dir, rel)
	testfiles.WriteFile(t, path, `{"r":1}`, `{"r":2}`)
	r = newTailRig(t, dir, 1<<20)
	r.poll()
	require.Len(t, r.lines(path), 2)
	return dir, path, r
}

// hardLink links link to orig, or skips the test where the file system has
// no hard links.
func hardLink(t *testing.T, orig, link string) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o755))
	if err := os.Link(orig, link); err != nil {
		t.Skipf("no hard links on this file system: %v", err)
	}
	return link
}

func newTailRig(t *testing.T, dir string, maxLogSize int) *tailRig {
	t.Helper()
	tl := testTailer(t, dir, maxLogSize)
	r := &tailRig{t: t, tail: tl, store: newMemTailStore()}
	tl.store, tl.logger = r.store, zap.NewNop()
	tl.emit = func(_ context.Context, b Batch) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.emits++
		r.sizes = append(r.sizes, len(b.Lines))
		for i, tok := range b.Lines {
			no := b.LastLine - int64(len(b.Lines)) + 1 + int64(i)
			off := LineOffset(b.Offsets, i, len(tok))
			r.got = append(r.got, tailSeen{b.Path, string(tok), no, off})
			if no == 1 {
				r.store.mu.Lock()
				r.store.first[sha256Hex(tok)] = b.Path
				r.store.mu.Unlock()
			}
		}
		r.store.mu.Lock()
		r.store.pos[b.Path] = b.After
		r.store.mu.Unlock()
		return nil
	}
	return r
}

func (r *tailRig) poll() { r.tail.pollOnce(context.Background()) }

func (r *tailRig) lines(path string) []tailSeen {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []tailSeen
	for _, s := range r.got {
		if s.path == path {
			out = append(out, s)
		}
	}
	return out
}

// moveAndAppendThird moves orig (two lines, {"r":1} and {"r":2}, read) to
// archived/r1.jsonl beside its folder, appends a third line and polls: the
// moved file must be read on from its position, that line alone.
func (r *tailRig) moveAndAppendThird(orig string) string {
	r.t.Helper()
	moved := filepath.Join(filepath.Dir(filepath.Dir(orig)), "archived", "r1.jsonl")
	require.NoError(r.t, os.MkdirAll(filepath.Dir(moved), 0o755))
	require.NoError(r.t, os.Rename(orig, moved))
	testfiles.AppendFile(r.t, moved, `{"r":3}`+"\n")
	r.poll()
	assert.Equal(r.t, []tailSeen{{moved, `{"r":3}`, 3, 16}}, r.lines(moved), "the moved file is read on from its position, not again")
	return moved
}

func (r *tailRig) emitted() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.emits
}

// TestTailLinesAndOffsets checks what the parsers are handed: every
// complete line byte for byte (no decoding, no trimming, "\n" as the only
// separator), its 1-based number and the offset of its first byte — also
// after a line that exceeded max_log_size, which arrives without its bytes — and nothing
// of an unterminated last line until its "\n" is written.
func TestTailLinesAndOffsets(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	lines := []string{
		`{"a":1}`,
		strings.Repeat("z", 100_000), // over max_log_size below, and over the read buffer
		"{\"b\":\"x\u2028y\u0085z\"}",
		"",
		"  {\"c\":3}\r",
	}
	for i := range 250 { // more than a batch
		lines = append(lines, `{"n":`+strings.Repeat("1", i%7+1)+`}`)
	}
	testfiles.WriteFile(t, path, lines...)
	testfiles.AppendFile(t, path, `{"unterminated":`)

	r := newTailRig(t, dir, 4096)
	r.poll()
	got := r.lines(path)
	require.Len(t, got, len(lines), "the unterminated line is not handed out")
	var offset int64
	for i, l := range lines {
		assert.Equal(t, int64(i+1), got[i].no, "line number of line %d", i+1)
		if i == 1 {
			assert.Empty(t, got[i].line, "an over-long line arrives without its bytes (marked tooLong)")
		} else {
			assert.Equal(t, l, got[i].line, "line %d byte for byte", i+1)
			assert.Equal(t, offset, got[i].offset, "offset of line %d", i+1)
		}
		offset += int64(len(l)) + 1
	}
	// 255 lines: one batch of 100, then the remaining 155 as one (a read
	// never ends on a short remainder, see batchLen).
	assert.Equal(t, []int{tailBatchLines, len(lines) - tailBatchLines}, r.sizes)

	// The last line completed: handed out once, numbered and placed on.
	testfiles.AppendFile(t, path, `1}`+"\n")
	r.poll()
	got = r.lines(path)
	require.Len(t, got, len(lines)+1)
	last := got[len(lines)]
	assert.Equal(t, `{"unterminated":1}`, last.line)
	assert.Equal(t, int64(len(lines)+1), last.no)
	assert.Equal(t, offset, last.offset)
}

// TestTailLeavesUnchangedFilesAlone: a file read to its end is not opened
// again while its size, modification time and inode stay; a touch without
// new bytes reads nothing; an append is read from where reading stopped; a
// file gone is let go of (the table holds what exists).
func TestTailLeavesUnchangedFilesAlone(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	b := filepath.Join(dir, "b.jsonl")
	testfiles.WriteFile(t, a, `{"a":1}`)
	testfiles.WriteFile(t, b, `{"b":1}`)
	r := newTailRig(t, dir, 1<<20)
	r.poll()
	require.Equal(t, int64(2), r.tail.reads.Load())
	for range 5 {
		r.poll()
	}
	assert.Equal(t, int64(2), r.tail.reads.Load(), "unchanged files are not opened")

	later := time.Now().Add(time.Minute)
	require.NoError(t, os.Chtimes(a, later, later))
	r.poll()
	assert.Equal(t, 2, r.emitted(), "a touch reads nothing")
	assert.Equal(t, int64(2), r.tail.reads.Load(), "a touch without new bytes is not read")

	testfiles.AppendFile(t, b, `{"b":2}`+"\n")
	r.poll()
	require.Len(t, r.lines(b), 2)
	assert.Equal(t, tailSeen{b, `{"b":2}`, 2, 8}, r.lines(b)[1])

	require.NoError(t, os.Remove(a))
	r.poll()
	assert.NotContains(t, r.tail.files, a, "a file gone is let go")
	assert.Contains(t, r.tail.files, b)
}

// TestTailMovedCopiedReplaced: a file moved to a new path goes on from its
// position (adopting the old path's state); a copy of a file read before is
// not read again; a new file at an old path, or the old file cut shorter,
// is read from its start; a restart resumes every file at its stored
// position, reading nothing twice.
func TestTailMovedCopiedReplaced(t *testing.T) {
	dir, orig, r := twoLinesRead(t, filepath.Join("sessions", "r1.jsonl"))

	// Moved (Codex archiving a rollout), then appended to.
	moved := r.moveAndAppendThird(orig)
	assert.Equal(t, orig, r.store.moved[moved], "with the state of the path it came from")

	// Copied: the same content at another path is read once.
	b, err := os.ReadFile(moved)
	require.NoError(t, err)
	cp := filepath.Join(dir, "sessions", "copy.jsonl")
	require.NoError(t, os.WriteFile(cp, b, 0o600)) //nolint:gosec // G703: the data written was read from a file; the path is the test's own
	r.poll()
	assert.Empty(t, r.lines(cp), "a copy is not read again")
	// ... until something is appended to it, which is its own.
	testfiles.AppendFile(t, cp, `{"c":1}`+"\n")
	r.poll()
	assert.Equal(t, []tailSeen{{cp, `{"c":1}`, 4, int64(len(b))}}, r.lines(cp), "numbered on as the file it copies")

	// The same first line, another file: read whole, whether the file of
	// that first line is still there or gone.
	b, err = os.ReadFile(moved)
	require.NoError(t, err)
	firstLine := string(b[:bytes.IndexByte(b, '\n')])
	other := filepath.Join(dir, "sessions", "other.jsonl")
	testfiles.WriteFile(t, other, firstLine, `{"o":1}`)
	r.poll()
	assert.Len(t, r.lines(other), 2, "same first line, other content: a file of its own")
	require.NoError(t, os.Rename(cp, cp+".gone"))
	r.poll()
	resumed := filepath.Join(dir, "sessions", "resumed.jsonl")
	testfiles.WriteFile(t, resumed, firstLine, `{"x":1}`, `{"x":2}`, `{"x":3}`)
	r.poll()
	assert.Len(t, r.lines(resumed), 4, "same first line as a file gone, other content: read whole")

	// Two copies met in one poll: read once.
	two := []string{filepath.Join(dir, "x", "t1.jsonl"), filepath.Join(dir, "y", "t1.jsonl")}
	for _, p := range two {
		testfiles.WriteFile(t, p, `{"t":1}`)
	}
	r.poll()
	assert.Len(t, append(r.lines(two[0]), r.lines(two[1])...), 1, "copies in one poll are read once")

	// Replaced at the same path (a new inode), and cut shorter: from the start.
	repl := filepath.Join(dir, "sessions", "n.jsonl")
	testfiles.WriteFile(t, repl, `{"n":1}`, `{"n":2}`)
	r.poll()
	tmp := repl + ".tmp"
	testfiles.WriteFile(t, tmp, `{"m":1}`, `{"m":2}`, `{"m":3}`)
	require.NoError(t, os.Rename(tmp, repl))
	r.poll()
	got := r.lines(repl)
	require.Len(t, got, 5)
	assert.Equal(t, tailSeen{repl, `{"m":1}`, 1, 0}, got[2], "a new file at the path is read from its start")
	require.NoError(t, os.Truncate(repl, 0))
	testfiles.AppendFile(t, repl, `{"k":1}`+"\n")
	r.poll()
	got = r.lines(repl)
	require.Len(t, got, 6)
	assert.Equal(t, tailSeen{repl, `{"k":1}`, 1, 0}, got[5], "a file cut shorter is read from its start")

	// A restart: a new tailer on the same store reads only what is new.
	before := len(r.got)
	testfiles.AppendFile(t, moved, `{"r":4}`+"\n")
	r2 := newTailRig(t, dir, 1<<20)
	r2.store = r.store
	r2.tail.store = r.store
	r2.got = nil
	r2.poll()
	assert.Equal(t, []tailSeen{{moved, `{"r":4}`, 4, 24}}, r2.got, "a restart reads only what was appended")
	assert.Len(t, r.got, before)
}

// TestTailFileEmptyAtFirstSightThenMoved: a file first seen before its
// first line was complete gets its head when it is read, so that moving it
// later reads on from its position instead of reading it again.
func TestTailFileEmptyAtFirstSightThenMoved(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "sessions", "r1.jsonl")
	testfiles.WriteFile(t, orig)
	testfiles.AppendFile(t, orig, `{"r":`)
	r := newTailRig(t, dir, 1<<20)
	r.poll()
	testfiles.AppendFile(t, orig, `1}`+"\n"+`{"r":2}`+"\n")
	r.poll()
	require.Len(t, r.lines(orig), 2)
	assert.NotZero(t, r.store.pos[orig].HeadLen, "the head is stored once the file has a first line")
	r.moveAndAppendThird(orig)
}

// TestTailStartAtEnd: with start_at: end, files found at the first poll
// without a stored position are read from their end; a file that appears
// later is read whole.
func TestTailStartAtEnd(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.jsonl")
	testfiles.WriteFile(t, old, `{"o":1}`)
	r := newTailRig(t, dir, 1<<20)
	r.tail.startAtEnd = true
	r.poll()
	assert.Empty(t, r.lines(old))
	testfiles.AppendFile(t, old, `{"o":2}`+"\n")
	fresh := filepath.Join(dir, "new.jsonl")
	testfiles.WriteFile(t, fresh, `{"f":1}`)
	r.poll()
	assert.Equal(t, []tailSeen{{old, `{"o":2}`, 1, 8}}, r.lines(old), "numbered from where reading started")
	assert.Equal(t, []tailSeen{{fresh, `{"f":1}`, 1, 0}}, r.lines(fresh))
}

// TestTailOneFileUnderTwoPaths: a file reached under several paths — a hard
// link, a symlinked directory — is one file, read once, under the first of
// its paths in sorted order, or the one it is read under already (also
// after a restart); when that path goes, reading goes on under another.
func TestTailOneFileUnderTwoPaths(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "a", "s.jsonl")
	testfiles.WriteFile(t, orig, `{"r":1}`, `{"r":2}`)
	link := hardLink(t, orig, filepath.Join(dir, "b", "s.jsonl"))
	require.NoError(t, os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "c")))
	r := newTailRig(t, dir, 1<<20)
	all := func() []string {
		r.mu.Lock()
		defer r.mu.Unlock()
		var out []string
		for _, s := range r.got {
			out = append(out, s.path+" "+s.line)
		}
		return out
	}
	r.poll()
	assert.Equal(t, []string{orig + ` {"r":1}`, orig + ` {"r":2}`}, all(), "read once, under the first path")

	// A link that sorts first, made after: the file stays read where it is.
	first := filepath.Join(dir, "0.jsonl")
	require.NoError(t, os.Link(orig, first))
	testfiles.AppendFile(t, link, `{"r":3}`+"\n")
	r.poll()
	assert.Equal(t, []string{orig + ` {"r":3}`}, all()[2:], "an append is read once")

	// A restart: still under the path with the stored position.
	testfiles.AppendFile(t, orig, `{"r":4}`+"\n")
	r2 := newTailRig(t, dir, 1<<20)
	r2.store = r.store
	r2.tail.store = r.store
	r2.poll()
	assert.Equal(t, []tailSeen{{orig, `{"r":4}`, 4, 24}}, r2.got, "after a restart")

	// The path read goes (and the symlinked one with it): read on under
	// another, from the position.
	require.NoError(t, os.Remove(orig))
	testfiles.AppendFile(t, link, `{"r":5}`+"\n")
	r2.poll()
	require.Len(t, r2.got, 2)
	assert.Equal(t, tailSeen{first, `{"r":5}`, 5, 32}, r2.got[1], "read on under the path left")
}

// TestTailFileSwappedBetweenStatAndOpen: a file replaced at its path after
// the poll's stat and before its read (a new inode) is not read from the
// old file's position: the next poll reads the new file from its start.
func TestTailFileSwappedBetweenStatAndOpen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	testfiles.WriteFile(t, path, `{"o":1}`, `{"o":2}`)
	r := newTailRig(t, dir, 1<<20)
	r.poll()
	require.Len(t, r.lines(path), 2)

	// The poll's view: the old file, appended to.
	testfiles.AppendFile(t, path, `{"o":3}`+"\n")
	st, ok := statFile(path)
	require.True(t, ok)
	// Replaced before the read opens it.
	tmp := path + ".tmp"
	testfiles.WriteFile(t, tmp, `{"new":1}`, `{"new":2}`, `{"new":3}`, `{"new":4}`)
	require.NoError(t, os.Rename(tmp, path))
	r.tail.read(t.Context(), tailJob{path: path, f: r.tail.files[path], st: st})
	r.poll()
	assert.Equal(t, []tailSeen{
		{path, `{"new":1}`, 1, 0}, {path, `{"new":2}`, 2, 10}, {path, `{"new":3}`, 3, 20}, {path, `{"new":4}`, 4, 30},
	}, r.lines(path)[2:], "the new file, from its start, once")
}

// TestTailReadSlotHeldPerFile: a read slot is held for the whole read of a
// file, so that the workers waiting for one hold no read-ahead. With one
// slot and many workers, the batches of several large files come out file
// after file, never interleaved.
func TestTailReadSlotHeldPerFile(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i := range 6 {
		var data strings.Builder // different files: none is taken for a copy of another
		for n := range 350 {
			fmt.Fprintf(&data, `{"file":%d,"n":%d,"pad":"%s"}`+"\n", i, n, strings.Repeat("x", 64))
		}
		p := filepath.Join(dir, "p", fmt.Sprintf("s%d.jsonl", i))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data.String()), 0o600))
		paths = append(paths, p)
	}
	r := newTailRig(t, dir, 1<<20)
	require.Greater(t, r.tail.workers, 1, "several workers compete for the slot")
	r.tail.slots = make(chan struct{}, 1)
	r.poll()

	r.mu.Lock()
	defer r.mu.Unlock()
	require.Len(t, r.got, 6*350, "every line of every file")
	var order []string // the file of each run of batches, in order
	for _, s := range r.got {
		if len(order) == 0 || order[len(order)-1] != s.path {
			order = append(order, s.path)
		}
	}
	assert.ElementsMatch(t, paths, order, "each file's batches are one run: no other file was read while one held the slot")
	assert.Greater(t, r.emits, 6, "the files are read in several batches each")
}

// TestHeadReadAllocatesLittle: the first poll of a history reads the head
// of every file; each read reuses its read buffer (a 16 KB buffer per file
// otherwise, over every file of the history). What is left per read are
// the two hashes and the hex of the first line's: a handful of small
// allocations, never the buffer's.
func TestHeadReadAllocatesLittle(t *testing.T) {
	data := []byte(`{"type":"user","message":{"content":"hello"}}` + "\n" + strings.Repeat(`{"n":1}`+"\n", 200))
	headOf(bytes.NewReader(data), 1<<20, 1000) // the pool's first buffer
	allocs := testing.AllocsPerRun(200, func() {
		if _, ok := headOf(bytes.NewReader(data), 1<<20, 1000); !ok {
			t.Fatal("no head")
		}
	})
	assert.LessOrEqual(t, allocs, 9.0, "allocations per head read")
}

// TestTailLongReadLetsOthersGo: a file read in more than tailSlotBatches
// batches gives its slot up after as many, so that the files waiting for
// one are read in between; it then reads on from its position (what it had
// read ahead is read again), every line once and in order.
func TestTailLongReadLetsOthersGo(t *testing.T) {
	dir := t.TempDir()
	const files, lines = 3, 25 * tailBatchLines
	for i := range files {
		var data strings.Builder
		for n := range lines {
			fmt.Fprintf(&data, `{"file":%d,"n":%d}`+"\n", i, n)
		}
		p := filepath.Join(dir, "p", fmt.Sprintf("s%d.jsonl", i))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data.String()), 0o600))
	}
	r := newTailRig(t, dir, 1<<20)
	r.tail.slots = make(chan struct{}, 1)
	// The first batch waits a little: the other files' workers are then
	// waiting for the slot when the first read gives it up.
	emit, once := r.tail.emit, sync.Once{}
	r.tail.emit = func(ctx context.Context, b Batch) error {
		once.Do(func() { time.Sleep(100 * time.Millisecond) })
		return emit(ctx, b)
	}
	r.poll()

	r.mu.Lock()
	defer r.mu.Unlock()
	require.Len(t, r.got, files*lines, "every line of every file, once")
	next := map[string]int64{}
	runs := 0
	for i, s := range r.got {
		next[s.path]++
		require.Equal(t, next[s.path], s.no, "%s: lines in order, none twice", s.path)
		var v struct{ N int64 }
		require.NoError(t, json.Unmarshal([]byte(s.line), &v))
		require.Equal(t, s.no-1, v.N, "%s: line %d is the file's line %d", s.path, s.no, s.no)
		if i == 0 || r.got[i-1].path != s.path {
			runs++
		}
	}
	assert.Greater(t, runs, files, "a long read let the files waiting for the slot go in between")
}

// TestTailSameFileNoLongerMatchedUnderItsPath: a file read under one path
// and then matched only under another path to it (a hard link, a symlinked
// directory; the include patterns changed, its first path still there) is
// the same file, not a copy: it reads on from its position, and what was
// appended since is read once.
func TestTailSameFileNoLongerMatchedUnderItsPath(t *testing.T) {
	dir, orig, r := twoLinesRead(t, filepath.Join("a", "s.jsonl"))

	link := hardLink(t, orig, filepath.Join(dir, "b", "s.jsonl"))
	testfiles.AppendFile(t, orig, `{"r":3}`+"\n")
	r2 := newTailRig(t, dir, 1<<20) // a restart with other include patterns
	r2.store = r.store
	r2.tail.store = r.store
	r2.tail.match = func() ([]string, error) { return []string{link}, nil }
	r2.poll()
	assert.Equal(t, []tailSeen{{link, `{"r":3}`, 3, 16}}, r2.got, "the line appended since, once")
}

// TestTailStartAtEndThenMoved: a file begun at its end (start_at: end) is
// known by its first line from then on, as one read from its start is: when
// it is moved (Codex archives a rollout so), it reads on from its position
// under the new path, not the whole file again.
func TestTailStartAtEndThenMoved(t *testing.T) {
	dir := t.TempDir()
	orig := filepath.Join(dir, "sessions", "r1.jsonl")
	testfiles.WriteFile(t, orig, `{"r":1}`, `{"r":2}`)
	r := newTailRig(t, dir, 1<<20)
	r.tail.startAtEnd = true
	r.poll()
	assert.Empty(t, r.lines(orig), "start_at: end")
	testfiles.AppendFile(t, orig, `{"r":3}`+"\n")
	r.poll()
	require.Equal(t, []tailSeen{{orig, `{"r":3}`, 1, 16}}, r.lines(orig))

	moved := filepath.Join(dir, "archived", "r1.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(moved), 0o755))
	require.NoError(t, os.Rename(orig, moved))
	testfiles.AppendFile(t, moved, `{"r":4}`+"\n")
	r.poll()
	assert.Equal(t, []tailSeen{{moved, `{"r":4}`, 2, 24}}, r.lines(moved), "read on from the position, not again")
}

func TestSplitLines(t *testing.T) {
	// U+2028, U+0085 and a bare "\r" are inside a record, not line ends.
	data := "{\"t\":\"a\u2028b\u0085c\rd\"}\n{\"t\":2}\r\n{\"partial\""
	b := lineBatcher{maxLogSize: 1 << 20}
	done, err := b.fill(bufio.NewReader(strings.NewReader(data)))
	require.NoError(t, err)
	assert.True(t, done)
	batch := b.take("p", Pos{}, b.batchLen(done))
	var tokens []string
	for _, l := range batch.Lines {
		tokens = append(tokens, string(l))
	}
	assert.Equal(t, []string{"{\"t\":\"a\u2028b\u0085c\rd\"}", "{\"t\":2}\r"}, tokens)
	assert.Equal(t, int64(len(data)-len(`{"partial"`)), batch.Offsets[2], "an unterminated line is never a line, even at EOF")
}

// TestBatchLinesInPlace: a batch's lines are slices of the batcher's buffer
// that nothing touches until release (the lines read ahead move to the
// front only then), an append to one cannot write into the next, and
// release frees (here: poisons) exactly what the batch handed out.
func TestBatchLinesInPlace(t *testing.T) {
	var data strings.Builder
	var want []string
	for i := range 3*tailBatchLines + 7 {
		want = append(want, fmt.Sprintf(`{"n":%d,"pad":%q}`, i, strings.Repeat("p", i%13)))
		data.WriteString(want[i] + "\n")
	}
	b := lineBatcher{maxLogSize: 1 << 20, poison: true}
	r := bufio.NewReader(strings.NewReader(data.String()))
	var got []string
	pos := Pos{}
	for {
		done, err := b.fill(r)
		require.NoError(t, err)
		if len(b.lines) > 0 {
			batch := b.take("p", pos, b.batchLen(done))
			first := string(batch.Lines[0])
			if len(batch.Lines) > 1 {
				second := string(batch.Lines[1])
				_ = append(batch.Lines[0], "garbage"...)
				assert.Equal(t, second, string(batch.Lines[1]), "an append to a line wrote into the next")
			}
			for _, l := range batch.Lines {
				got = append(got, string(l))
			}
			b.release(batch)
			assert.NotEqual(t, first, string(batch.Lines[0]), "release poisons what the batch handed out")
			pos = batch.After
		}
		if done && len(b.lines) == 0 {
			break
		}
	}
	assert.Equal(t, want, got)
}
