// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package watch wakes a source of the agent_log receiver when the files it
// reads change, so that a line an agent writes is read at once rather than
// at the next poll. It watches directories, never single files (a history
// holds thousands of files in a few hundred directories): those the include
// patterns descend through, from each pattern's static base down (a
// directory below the base is watched when it matches the leading segments
// of the pattern, so that `projects/**/*.jsonl` watches every folder below
// projects/ and `tmp/*/chats/*.json` only tmp/, tmp/<x>/ and
// tmp/<x>/chats/). A directory created in a watched one, and wanted, is
// watched too; a base that does not exist yet is waited for by watching its
// nearest existing ancestor (whose other entries are ignored).
//
// A change becomes a wake: a signal on a channel of capacity 1, sent
// without blocking, so that a burst of writes while the source reads is
// one more read, not one per write. With it go the paths written to (Take),
// for a source that reads only those; a file created, moved or removed, a
// directory created, and a lost event (the kernel's queue overflowed) ask
// for a full poll instead.
//
// Watching is an addition to polling, never a replacement: the source keeps
// polling at poll_interval, which covers file systems without
// notifications, events the kernel drops, and the directories that could
// not be watched. When adding a watch fails for any reason but the
// directory being gone (the usual one: fs.inotify.max_user_watches
// reached), no more are added, those set are kept, and the limit is logged
// once per agent. Nothing is ever written into the watched folders. On
// macOS and the BSDs nothing is watched: fsnotify's kqueue backend holds a
// descriptor per file of a watched directory.
package watch

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/fsnotify/fsnotify"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/finder"
)

// maxChanged bounds the paths remembered between two reads: past it the
// reader is asked for a full poll instead (a write to that many files at
// once is a restore or a copy, not a live session).
const maxChanged = 1024

// maxDepth bounds the walk below a pattern's base, as the finder's does.
const maxDepth = 64

// Group is what the watchers of one agent share: its limit is logged once
// for all of them.
type Group struct {
	warned atomic.Bool
	// Add, when set, replaces the adding of a watch (tests inject a
	// failure with it).
	Add func(w *fsnotify.Watcher, dir string) error
}

// Config is what a Watcher watches.
type Config struct {
	// Include are the agent's file patterns (resolved, OS paths); the
	// directories they descend through are watched.
	Include []string
	// Exclude and ExcludeOlderThan are the agent's: Wanted applies them as
	// a poll does.
	Exclude          []string
	ExcludeOlderThan time.Duration
	// Paths: remember the paths written to for Take (the JSONL tailer);
	// otherwise every wake asks for a full poll.
	Paths bool
	// Group is the agent's (nil: the limit is logged by this watcher).
	Group  *Group
	Logger *zap.Logger
}

// Watcher watches one source's directories. Its methods are safe on a nil
// Watcher (watching off): Wake never fires and Take asks for a full poll.
type Watcher struct {
	cfg  Config
	pats []pattern
	fsw  *fsnotify.Watcher
	add  func(w *fsnotify.Watcher, dir string) error
	wake chan struct{}
	done chan struct{}

	mu      sync.Mutex
	changed map[string]struct{}
	full    bool

	// Touched by the goroutine of Start, then by the event loop only.
	watched map[string]struct{}
	limited bool
	closed  atomic.Bool
}

// pattern is one include pattern split where its static part ends.
type pattern struct {
	// base is the directory the pattern starts from (OS path).
	base string
	// prefixes are the pattern's leading directory segments, 1 to all
	// (slash-separated): a directory below base is wanted when its path
	// relative to base matches one of them.
	prefixes []string
}

func newPattern(include string) pattern {
	base, rest := doublestar.SplitPattern(filepath.ToSlash(include))
	p := pattern{base: filepath.Clean(filepath.FromSlash(base))}
	segs := strings.Split(rest, "/")
	for j := 1; j < len(segs); j++ {
		p.prefixes = append(p.prefixes, strings.Join(segs[:j], "/"))
	}
	return p
}

// wants says whether dir is one the pattern descends through: its base,
// an ancestor of it (watched while the base does not exist), or a
// directory below it that matches the pattern's leading segments.
func (p *pattern) wants(dir string) bool {
	if dir == p.base || within(p.base, dir) {
		return true
	}
	if !within(dir, p.base) {
		return false
	}
	rel, err := filepath.Rel(p.base, dir)
	if err != nil {
		return false
	}
	rel = filepath.ToSlash(rel)
	for _, pre := range p.prefixes {
		if ok, _ := doublestar.Match(pre, rel); ok {
			return true
		}
	}
	return false
}

// within says whether path lies strictly below dir.
func within(path, dir string) bool {
	if dir == string(filepath.Separator) {
		return len(path) > 1 && strings.HasPrefix(path, dir)
	}
	return strings.HasPrefix(path, dir+string(filepath.Separator))
}

// Start watches the directories of c's patterns as they are now, then
// follows them in the background until Close. It does not fail: what
// cannot be watched is polled (the first failure is logged).
func Start(c Config) *Watcher {
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	w := &Watcher{
		cfg: c, wake: make(chan struct{}, 1), done: make(chan struct{}),
		changed: map[string]struct{}{}, watched: map[string]struct{}{},
		add: func(w *fsnotify.Watcher, dir string) error { return w.Add(dir) },
	}
	if c.Group != nil && c.Group.Add != nil {
		w.add = c.Group.Add
	}
	for _, inc := range c.Include {
		w.pats = append(w.pats, newPattern(inc))
	}
	if !Supported {
		close(w.done)
		return w // never wakes: polling alone
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		close(w.done)
		w.limited = true
		w.warnLimit("", err)
		return w
	}
	w.fsw = fsw
	w.sync()
	go w.loop()
	return w
}

// Wake is signaled when something changed since the last Take.
func (w *Watcher) Wake() <-chan struct{} {
	if w == nil {
		return nil
	}
	return w.wake
}

// Take returns the paths written to since the last Take, sorted, or full
// when a full poll is needed (a file created, moved or removed, a
// directory created, events lost, or paths not kept). Nothing changed:
// no paths and not full.
func (w *Watcher) Take() (paths []string, full bool) {
	if w == nil {
		return nil, true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.full {
		w.full = false
		clear(w.changed)
		return nil, true
	}
	for p := range w.changed {
		paths = append(paths, p)
	}
	clear(w.changed)
	slices.Sort(paths)
	return paths, false
}

// Reset forgets what changed: a full poll is about to look at everything.
func (w *Watcher) Reset() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.full = false
	clear(w.changed)
}

// Wanted says whether a poll would read path, modified at mtime: an include
// pattern matches it, no exclude pattern does, and it is not older than
// exclude_older_than. On Windows, whose matching is case-insensitive, it
// says no (the reader then polls).
func (w *Watcher) Wanted(path string, mtime time.Time) bool {
	if w == nil || runtime.GOOS == "windows" || !w.matches(path) {
		return false
	}
	return w.cfg.ExcludeOlderThan <= 0 || time.Since(mtime) <= w.cfg.ExcludeOlderThan
}

// Close stops watching; the event loop has ended when it returns.
func (w *Watcher) Close() {
	if w == nil || w.fsw == nil || w.closed.Swap(true) {
		return
	}
	_ = w.fsw.Close()
	<-w.done
}

// matches says whether an include pattern matches path and no exclude
// pattern does (as the finder matches).
func (w *Watcher) matches(path string) bool {
	in := false
	for _, p := range w.cfg.Include {
		if ok, _ := doublestar.PathMatch(p, path); ok {
			in = true
			break
		}
	}
	if !in {
		return false
	}
	for _, e := range w.cfg.Exclude {
		if ok, _ := doublestar.PathMatch(e, path); ok {
			return false
		}
	}
	return true
}

// wants says whether a pattern descends through dir.
func (w *Watcher) wants(dir string) bool {
	for i := range w.pats {
		if w.pats[i].wants(dir) {
			return true
		}
	}
	return false
}

// sync watches, for every pattern, its base and what it descends through
// below, or, while the base does not exist, its nearest existing ancestor.
func (w *Watcher) sync() {
	for _, p := range w.pats {
		d := p.base
		for {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() {
				break
			}
			parent := filepath.Dir(d)
			if parent == d {
				d = ""
				break
			}
			d = parent
		}
		if d != "" {
			w.addTree(d, 0, map[finder.FileID]bool{})
		}
	}
}

// addTree watches dir and the wanted directories below it (symlinked
// directories followed, as the finder follows them).
func (w *Watcher) addTree(dir string, depth int, above map[finder.FileID]bool) {
	if w.limited || depth > maxDepth || !w.addDir(dir) {
		return
	}
	// A symlinked directory is walked under each of its paths, but not
	// below itself.
	if fi, err := os.Stat(dir); err == nil && finder.IDOf(fi) != (finder.FileID{}) {
		k := finder.IDOf(fi)
		if above[k] {
			return
		}
		above[k] = true
		defer delete(above, k)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		sub := filepath.Join(dir, e.Name())
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			if fi, err := os.Stat(sub); err == nil {
				isDir = fi.IsDir()
			}
		}
		if isDir && w.wants(sub) {
			w.addTree(sub, depth+1, above)
		}
	}
}

// addDir watches one directory; false when it is not watched.
func (w *Watcher) addDir(dir string) bool {
	if _, ok := w.watched[dir]; ok {
		return true
	}
	if w.limited || w.closed.Load() {
		return false
	}
	if err := w.add(w.fsw, dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fsnotify.ErrClosed) {
			return false // gone since it was listed, or stopping
		}
		w.limited = true
		w.warnLimit(dir, err)
		return false
	}
	w.watched[dir] = struct{}{}
	return true
}

// warnLimit logs, once per agent, that no more directories are watched.
func (w *Watcher) warnLimit(dir string, err error) {
	if w.cfg.Group != nil && w.cfg.Group.warned.Swap(true) {
		return
	}
	limit := "the file system's notification limit"
	switch {
	case errors.Is(err, syscall.ENOSPC):
		limit = "the inotify watch limit (fs.inotify.max_user_watches)"
	case errors.Is(err, syscall.EMFILE):
		limit = "the inotify instance limit (fs.inotify.max_user_instances) or the open files limit"
	}
	w.cfg.Logger.Warn("Cannot watch more directories for changes: "+limit+" reached; "+
		"the directories not watched are read at every poll_interval",
		zap.Int("watched", len(w.watched)), zap.String("directory", dir), zap.Error(err))
}

// loop turns the events into wakes until Close.
func (w *Watcher) loop() {
	defer close(w.done)
	for {
		select {
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			w.handle(ev)
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were lost, directories created among them: look
				// again at every tree, and read everything.
				w.sync()
				w.signal("", true)
			}
		}
	}
}

// handle turns one event into a wake, or nothing when it concerns no file
// or directory of the patterns.
func (w *Watcher) handle(ev fsnotify.Event) {
	path := ev.Name
	switch {
	case ev.Has(fsnotify.Create):
		if w.wants(path) {
			if fi, err := os.Stat(path); err == nil && fi.IsDir() {
				// Files may be in it already: watched first, then read.
				w.addTree(path, 0, map[finder.FileID]bool{})
				w.signal("", true)
				return
			}
		}
		if w.matches(path) {
			w.signal("", true)
		}
	case ev.Has(fsnotify.Remove), ev.Has(fsnotify.Rename):
		if _, ok := w.watched[path]; ok {
			w.forget(path)
			if w.onChain(path) {
				// A base (or an ancestor of one) gone: wait for it again.
				w.sync()
			}
			w.signal("", true)
			return
		}
		if w.matches(path) {
			w.signal("", true)
		}
	case ev.Has(fsnotify.Write):
		if w.matches(path) {
			w.signal(path, false)
		}
	}
}

// onChain says whether dir is a pattern's base or an ancestor of one.
func (w *Watcher) onChain(dir string) bool {
	for _, p := range w.pats {
		if dir == p.base || within(p.base, dir) {
			return true
		}
	}
	return false
}

// forget drops the watches of dir and of the directories below it (a
// directory moved away keeps its watches, under paths no longer its own).
func (w *Watcher) forget(dir string) {
	for d := range w.watched {
		if d == dir || within(d, dir) {
			delete(w.watched, d)
			_ = w.fsw.Remove(d)
		}
	}
}

// signal records a change (a path written to, or full) and wakes the
// reader without blocking: a wake pending already covers this one.
func (w *Watcher) signal(path string, full bool) {
	w.mu.Lock()
	switch {
	case full || !w.cfg.Paths || len(w.changed) >= maxChanged:
		w.full = true
		clear(w.changed)
	case !w.full:
		w.changed[path] = struct{}{}
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}
