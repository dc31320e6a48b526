// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agenteventexporter // import "github.com/agentotel/agentotel/exporter/agenteventexporter"

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"go.uber.org/zap"
)

// sink is where lines go: one file per session, or one stream.
type sink interface {
	// write appends lines to the session's output.
	write(key sessionKey, lines [][]byte) error
	// lastLine returns the last complete line the session's output already
	// holds (nil when there is none or the output cannot be read back).
	lastLine(key sessionKey) []byte
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
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) > maxNameLength-17 {
		b = b[:maxNameLength-17]
	}
	return string(b) + "-" + hashHex(id)[:16]
}

// dirSink writes <dir>/<agent>/<session>.jsonl, keeping at most max files
// open: the least recently written is flushed and closed when another must
// open, and opened again (for append) when its session writes again.
type dirSink struct {
	dir    string
	logger *zap.Logger
	files  *simplelru.LRU[string, *sessionFile]
	// evictErr is the first error of closing an evicted file; it is
	// returned by the next write or flush.
	evictErr error
}

type sessionFile struct {
	f *os.File
	w *bufio.Writer
}

func newDirSink(dir string, maxOpen int, logger *zap.Logger) (*dirSink, error) {
	s := &dirSink{dir: dir, logger: logger}
	files, err := simplelru.NewLRU(maxOpen, func(path string, sf *sessionFile) {
		if err := sf.close(); err != nil {
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

func (sf *sessionFile) close() error {
	return errors.Join(sf.w.Flush(), sf.f.Close())
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
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		sf = &sessionFile{f: f, w: bufio.NewWriterSize(f, writeBufferSize)}
		s.files.Add(path, sf)
	}
	for _, line := range lines {
		if _, err := sf.w.Write(line); err != nil {
			return err
		}
		if err := sf.w.WriteByte('\n'); err != nil {
			return err
		}
	}
	return s.takeEvictErr()
}

// lastLine also repairs a file whose last line was cut short (the collector
// was killed mid-write): that partial line is removed, so that the file stays
// one JSON value per line when lines are appended to it.
func (s *dirSink) lastLine(key sessionKey) []byte {
	path := s.path(key)
	if _, open := s.files.Peek(path); open {
		return nil // written by this process: the caller knows its state
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			s.logger.Warn("Cannot read back a session file; its numbering starts over", zap.String("path", path), zap.Error(err))
		}
		return nil
	}
	defer f.Close()
	line, err := readLastLine(f, s.logger, path)
	if err != nil {
		s.logger.Warn("Cannot read back a session file; its numbering starts over", zap.String("path", path), zap.Error(err))
		return nil
	}
	return line
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
		if err := f.Truncate(end); err != nil {
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
		n := int64(chunk)
		if pos < n {
			n = pos
		}
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

func (*streamSink) lastLine(sessionKey) []byte { return nil }
func (s *streamSink) flush() error             { return s.w.Flush() }
func (s *streamSink) close() error             { return s.w.Flush() }
func (*streamSink) openFiles() int             { return 0 }
