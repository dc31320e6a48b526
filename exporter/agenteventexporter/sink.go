// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agenteventexporter

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"go.uber.org/zap"
)

// sink is where lines go: one file per session, or one stream.
type sink interface {
	// resume prepares a session's output the first time this process meets
	// the session: it removes what an earlier run wrote after its last
	// commit, and returns the last complete line the output holds (nil when
	// there is none or it cannot be read back) and the state committed with
	// it (nil when there is none).
	resume(key sessionKey) (last, state []byte)
	// write appends lines to the session's output.
	write(key sessionKey, lines [][]byte) error
	// commit hands the session's lines to the operating system and records,
	// as one step, how far its output now goes together with state: what a
	// later run must know of what is in it.
	commit(key sessionKey, state []byte) error
	// flush hands everything buffered to the operating system.
	flush() error
	// close flushes and releases everything; the sink is not used again.
	close() error
	// openFiles is the number of files held open.
	openFiles() int
}

const (
	// writeBufferSize is the buffer of each open session file.
	writeBufferSize = 64 << 10
	// maxLastLine bounds how far back lastLine reads for the start of the
	// last line (lines with raw records or long outputs reach megabytes).
	maxLastLine = 64 << 20
	// maxNameLength keeps file names well under every file system's limit.
	maxNameLength = 120
	// markSuffix names a session file's commit record: .<file>.mark beside
	// <file>. Session file names never start with a dot.
	markSuffix = ".mark"
	// maxMarkSize bounds what is read of a commit record.
	maxMarkSize = 64 << 20
)

// safeName matches ids that are file names as they are.
var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// fileName turns an id into a file name that stays inside its folder. Ids
// are the agents' own (session UUIDs in practice); anything else is
// replaced and suffixed with a hash of the original, so that two different
// ids never share a file.
func fileName(id, empty string) string {
	if id == "" {
		return empty
	}
	if safeName.MatchString(id) && len(id) <= maxNameLength {
		return id
	}
	b := []byte(id)
	for i, c := range b {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' && c != '_' {
			b[i] = '_'
		}
	}
	if len(b) > maxNameLength-17 {
		b = b[:maxNameLength-17]
	}
	return string(b) + "-" + hashHex(id)[:16]
}

// markPath is the commit record of the session file at path.
func markPath(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+markSuffix)
}

// fileMark is a session file's commit record: the file's length at the
// last commit and what the exporter keeps with it. Lines past size were
// written by a batch that was never acknowledged; they are removed at the
// next start, and the batch, delivered again, writes them again.
type fileMark struct {
	Size  int64           `json:"size"`
	State json.RawMessage `json:"state,omitempty"`
}

// dirSink writes <dir>/<agent>/<session>.jsonl, keeping at most max files
// open: the least recently written is flushed and closed when another must
// open, and opened again (for append) when its session writes again.
type dirSink struct {
	dir     string
	dirPerm os.FileMode
	fsync   bool
	logger  *zap.Logger
	files   *simplelru.LRU[string, *sessionFile]
	// evictErr is the first error of closing an evicted file; it is
	// returned by the next write or flush.
	evictErr error
}

type sessionFile struct {
	f *os.File
	w *bufio.Writer
	// size is the length of the file with what is buffered.
	size int64
}

func newDirSink(dir string, dirPerm os.FileMode, fsync bool, maxOpen int, logger *zap.Logger) (*dirSink, error) {
	s := &dirSink{dir: dir, dirPerm: dirPerm, fsync: fsync, logger: logger}
	files, err := simplelru.NewLRU(maxOpen, func(path string, sf *sessionFile) {
		if err := sf.close(s.fsync); err != nil {
			logger.Warn("Closing a session file failed", zap.String("path", path), zap.Error(err))
			if s.evictErr == nil {
				s.evictErr = err
			}
		}
	})
	if err != nil {
		return nil, err
	}
	s.files = files
	return s, nil
}

func (sf *sessionFile) close(fsync bool) error {
	err := sf.w.Flush()
	if err == nil && fsync {
		err = sf.f.Sync()
	}
	return errors.Join(err, sf.f.Close())
}

// File names for an empty agent or session id.
const (
	unknownAgent = "unknown-agent"
	noSession    = "no-session"
)

func (s *dirSink) path(key sessionKey) string {
	return filepath.Join(s.dir, fileName(key.agent, unknownAgent), fileName(key.session, noSession)+".jsonl")
}

func (s *dirSink) takeEvictErr() error {
	err := s.evictErr
	s.evictErr = nil
	return err
}

func (s *dirSink) write(key sessionKey, lines [][]byte) error {
	path := s.path(key)
	sf, ok := s.files.Get(path)
	if !ok {
		if err := os.MkdirAll(filepath.Dir(path), s.dirPerm); err != nil {
			return err
		}
		if err := s.markNew(path); err != nil {
			return err
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		info, err := f.Stat()
		if err != nil {
			f.Close()
			return err
		}
		sf = &sessionFile{f: f, w: bufio.NewWriterSize(f, writeBufferSize), size: info.Size()}
		s.files.Add(path, sf)
	}
	for _, line := range lines {
		if _, err := sf.w.Write(line); err != nil {
			return err
		}
		if err := sf.w.WriteByte('\n'); err != nil {
			return err
		}
		sf.size += int64(len(line)) + 1
	}
	return s.takeEvictErr()
}

// markNew gives a session file about to be created a commit record of
// length 0 first, unless it has one already: a file without a record is
// then one written before records existed, never a new file whose first
// batch was cut short by a crash before its first commit (whose lines must
// go, as any uncommitted lines).
func (s *dirSink) markNew(path string) error {
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		return err // exists (nil), or cannot be told
	}
	mark, err := readMark(markPath(path))
	if err != nil {
		return err
	}
	if mark != nil && mark.Size == 0 {
		return nil // a session with events held and no line yet
	}
	m := fileMark{}
	if mark != nil {
		m.State = mark.State // the file was removed by hand: it starts again
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return writeAtomic(markPath(path), b, s.fsync)
}

// commit flushes the session's file and then replaces its commit record
// (write to a temporary file, rename over the record: the record is the old
// one or the new one, never a mix). The data reaches the file before the
// record that counts it, so a record never claims lines that are not there;
// with fsync both are on disk first.
func (s *dirSink) commit(key sessionKey, state []byte) error {
	path := s.path(key)
	var size int64
	if sf, ok := s.files.Peek(path); ok {
		if err := sf.w.Flush(); err != nil {
			return err
		}
		if s.fsync {
			if err := sf.f.Sync(); err != nil {
				return err
			}
		}
		size = sf.size
	} else {
		// Closed since it was written (flushed, and synced with fsync, then).
		info, err := os.Stat(path)
		switch {
		case err == nil:
			size = info.Size()
		case !errors.Is(err, os.ErrNotExist):
			return err
		}
	}
	if err := s.takeEvictErr(); err != nil {
		return err
	}
	b, err := json.Marshal(fileMark{Size: size, State: state})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), s.dirPerm); err != nil {
		return err
	}
	return writeAtomic(markPath(path), b, s.fsync)
}

// writeAtomic replaces path with b: written to path.tmp, then renamed.
func writeAtomic(path string, b []byte, fsync bool) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil && fsync {
		err = f.Sync()
	}
	err = errors.Join(err, f.Close())
	if err != nil {
		return err
	}
	err = os.Rename(tmp, path)
	if err != nil {
		return err
	}
	if !fsync {
		return nil
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// resume brings a session file back to its last commit: lines past the
// committed size (a batch the collector stopped in, never acknowledged, so
// delivered again) are removed. A file without a commit record (an
// exporter that kept none, or a record deleted) only loses a last line cut
// short, so that it stays one JSON value per line when lines are appended.
func (s *dirSink) resume(key sessionKey) (last, state []byte) {
	path := s.path(key)
	mark, err := readMark(markPath(path))
	if err != nil {
		s.logger.Warn("Cannot read a session file's commit record; lines repeated after a crash are not recognized in it",
			zap.String("path", markPath(path)), zap.Error(err))
	}
	if _, open := s.files.Peek(path); open {
		// Written by this process, which committed it before it let go of
		// the state.
		if mark != nil {
			return nil, mark.State
		}
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			s.logger.Warn("Cannot read back a session file; its numbering starts over", zap.String("path", path), zap.Error(err))
		} else if mark != nil && mark.Size > 0 {
			s.logger.Warn("A session file is gone though its commit record counts lines in it", zap.String("path", path))
		}
		if mark != nil {
			return nil, mark.State
		}
		return nil, nil
	}
	defer f.Close()
	if mark != nil {
		if err = truncateToMark(f, mark.Size, s.logger, path); err != nil {
			s.logger.Warn("Cannot bring a session file back to its last commit", zap.String("path", path), zap.Error(err))
		}
	}
	line, err := readLastLine(f, s.logger, path)
	if err != nil {
		s.logger.Warn("Cannot read back a session file; its numbering starts over", zap.String("path", path), zap.Error(err))
		line = nil
	}
	if mark != nil {
		return line, mark.State
	}
	return line, nil
}

// repair brings every session file of the directory back to its last
// commit (see resume) when the exporter starts, also those no session will
// write again, and removes the temporary files of commit records never
// renamed into place.
func (s *dirSink) repair() {
	agents, err := os.ReadDir(s.dir)
	if err != nil {
		s.logger.Warn("Cannot list the output directory; files a previous run stopped in are repaired when they are written again",
			zap.String("directory", s.dir), zap.Error(err))
		return
	}
	for _, a := range agents {
		if !a.IsDir() {
			continue
		}
		folder := filepath.Join(s.dir, a.Name())
		files, err := os.ReadDir(folder)
		if err != nil {
			s.logger.Warn("Cannot list an output folder; files a previous run stopped in are repaired when they are written again",
				zap.String("folder", folder), zap.Error(err))
			continue
		}
		for _, f := range files {
			name := f.Name()
			switch {
			case f.IsDir():
			case strings.HasPrefix(name, ".") && strings.HasSuffix(name, markSuffix+".tmp"):
				if err := os.Remove(filepath.Join(folder, name)); err != nil {
					s.logger.Warn("Cannot remove an unused temporary file", zap.String("path", filepath.Join(folder, name)), zap.Error(err))
				}
			case !strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".jsonl"):
				path := filepath.Join(folder, name)
				mark, err := readMark(markPath(path))
				if err != nil {
					s.logger.Warn("Cannot read a session file's commit record; lines repeated after a crash are not recognized in it",
						zap.String("path", markPath(path)), zap.Error(err))
				}
				if err := repairFile(path, mark, s.logger); err != nil {
					s.logger.Warn("Cannot bring a session file back to its last commit", zap.String("path", path), zap.Error(err))
				}
			}
		}
	}
}

// repairFile truncates a session file to its committed size, and removes a
// last line cut short (a file without a commit record).
func repairFile(path string, mark *fileMark, logger *zap.Logger) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if mark != nil {
		err = truncateToMark(f, mark.Size, logger, path)
		if err != nil {
			return err
		}
	}
	info, err := f.Stat()
	if err != nil || info.Size() == 0 {
		return err
	}
	last := []byte{0}
	_, err = f.ReadAt(last, info.Size()-1)
	if err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	_, err = readLastLine(f, logger, path) // truncates the cut line
	return err
}

// readMark reads a commit record; nil without one.
func readMark(path string) (*fileMark, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxMarkSize))
	if err != nil {
		return nil, err
	}
	var m fileMark
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("not a commit record: %w", err)
	}
	if m.Size < 0 {
		return nil, fmt.Errorf("negative size %d", m.Size)
	}
	return &m, nil
}

// truncateToMark removes what lies past the committed size.
func truncateToMark(f *os.File, size int64, logger *zap.Logger, path string) error {
	info, err := f.Stat()
	if err != nil {
		return err
	}
	switch {
	case info.Size() > size:
		logger.Info("Removing lines an earlier run wrote after its last commit (it stopped mid-batch; the batch is delivered again)",
			zap.String("path", path), zap.Int64("bytes", info.Size()-size))
		return f.Truncate(size)
	case info.Size() < size:
		logger.Warn("A session file is shorter than its commit record says (lost by the file system, or cut by hand)",
			zap.String("path", path), zap.Int64("size", info.Size()), zap.Int64("committed", size))
	}
	return nil
}

// readLastLine returns the last '\n'-terminated line of f, truncating an
// unterminated tail first.
func readLastLine(f *os.File, logger *zap.Logger, path string) ([]byte, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := info.Size()
	if size == 0 {
		return nil, nil
	}
	// end is where the last complete line ends (after its '\n').
	end, err := lastIndexByte(f, size, size-maxLastLine, '\n')
	if err != nil {
		return nil, err
	}
	end++ // past the '\n'; 0 when there is none
	if end < size {
		logger.Warn("Removing a partial last line from a session file (an earlier run stopped mid-write)",
			zap.String("path", path), zap.Int64("bytes", size-end))
		err = f.Truncate(end)
		if err != nil {
			return nil, err
		}
	}
	if end == 0 {
		return nil, nil
	}
	start, err := lastIndexByte(f, end-1, end-1-maxLastLine, '\n')
	if err != nil {
		return nil, err
	}
	start++
	line := make([]byte, end-1-start)
	if _, err := f.ReadAt(line, start); err != nil {
		return nil, err
	}
	return line, nil
}

// lastIndexByte finds the last c in f[:before], reading backwards; it
// returns -1 when there is none. It gives up (error) at limit, a position
// maxLastLine bytes before where it started.
func lastIndexByte(f *os.File, before, limit int64, c byte) (int64, error) {
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	for pos := before; pos > 0; {
		if pos <= limit {
			return 0, fmt.Errorf("last line longer than %d bytes", maxLastLine)
		}
		n := min(pos, int64(chunk))
		pos -= n
		if _, err := f.ReadAt(buf[:n], pos); err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], c); i >= 0 {
			return pos + int64(i), nil
		}
	}
	return -1, nil
}

func (s *dirSink) flush() error {
	var errs []error
	for _, sf := range s.files.Values() {
		errs = append(errs, sf.w.Flush())
	}
	errs = append(errs, s.takeEvictErr())
	return errors.Join(errs...)
}

func (s *dirSink) close() error {
	s.files.Purge() // closes every file through the eviction callback
	return s.takeEvictErr()
}

func (s *dirSink) openFiles() int { return s.files.Len() }

// streamSink writes every session's lines to one stream (stdout).
type streamSink struct {
	w *bufio.Writer
}

func newStreamSink(w io.Writer) *streamSink {
	return &streamSink{w: bufio.NewWriterSize(w, writeBufferSize)}
}

func (s *streamSink) write(_ sessionKey, lines [][]byte) error {
	for _, line := range lines {
		if _, err := s.w.Write(line); err != nil {
			return err
		}
		if err := s.w.WriteByte('\n'); err != nil {
			return err
		}
	}
	return nil
}

func (*streamSink) resume(sessionKey) (last, state []byte) { return nil, nil }

// commit only flushes: a stream cannot be read back, so nothing of it is
// recognized after a restart.
func (s *streamSink) commit(sessionKey, []byte) error { return s.w.Flush() }
func (s *streamSink) flush() error                    { return s.w.Flush() }
func (s *streamSink) close() error                    { return s.w.Flush() }
func (*streamSink) openFiles() int                    { return 0 }
