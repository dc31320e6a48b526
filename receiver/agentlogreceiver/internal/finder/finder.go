// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package finder

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/fileconsumer/matcher"
)

// Package finder finds the files (or directories) an agent's include
// patterns match, poll after poll, for every source of the agent_log
// receiver: the tailer's JSONL files, the snapshot sources' rewritten files
// and OpenCode's data directories.
//
// A glob walks every directory below a pattern's static part and lists it;
// a user's history holds thousands of files in hundreds of directories,
// matched every poll_interval. A Finder keeps each directory's listing
// between polls and lists a directory again only when its modification
// time changed (an entry was added, removed or renamed), or its change
// time or inode: a modification time can be set back (tar -p, rsync -a
// restore it after adding files), a change time cannot, and setting either
// moves it; a directory replaced by another has another inode. A poll
// costs a stat per directory and none per unchanged listing. What it finds
// is what the glob finds (doublestar's PathMatch on the same patterns,
// symlinked directories followed), sorted.
//
// A listing is trusted only when it was made at least listingSettle after
// the directory's modification and change times: on a file system with
// coarse timestamps, a change within the same tick as the one listed
// leaves the time as it was, and a listing made that close to the change
// could miss it.
const listingSettle = 2 * time.Second

// maxWalkDepth bounds the walk below a pattern's base. A loop of symlinked
// directories ends sooner: the walk does not enter a directory (device and
// inode) it is already inside — without that, two loops below a `**` double
// the paths at every level, 2^64 walks. A directory linked in elsewhere,
// not above itself, is walked under each of its paths, as the glob does;
// its files are then one file under two paths, which the tailer reads once
// (onePathPerFile).
const maxWalkDepth = 64

// Finder is the listing cache over one agent's patterns. It is not safe for
// concurrent use: one poll goroutine owns it.
type Finder struct {
	include, exclude []string
	// dirs: the patterns match directories (OpenCode's data directories),
	// not files.
	wantDirs bool
	now      func() time.Time
	dirs     map[string]*dirListing
	walks    uint64
	// found is the number of files the last walk matched.
	found int
	// listed counts the directories read (tests).
	listed int
}

// dirListing is one directory as last listed. Its entries are kept as
// paths (the directory joined with the name), each made once, when the
// directory is listed: a file's path is then one string, shared by the
// listing, every poll's matches and the tailer's entry of the file (a
// string assigned shares its bytes; one joined again, per pattern or per
// poll, would be another copy of every path of the history).
type dirListing struct {
	id       FileID // the directory's device and inode
	mtime    int64
	ctime    int64 // 0 where the platform has none
	listedAt int64
	files    []string // paths of the entries that are not directories
	subdirs  []string // paths of the directories (symlinks to one included)
	walk     uint64   // the last walk that visited it
	// matched are, per pattern, the indexes in files (subdirs for a Finder
	// of directories) of those it matches, kept with the listing: matching
	// every name again at every poll would cost more than the stats.
	matched []patternMatches
}

// candidates are the entries a Finder matches: the files, or the
// directories.
func (l *dirListing) candidates(dirs bool) []string {
	if dirs {
		return l.subdirs
	}
	return l.files
}

// patternMatches are the files of a listing one pattern matches.
type patternMatches struct {
	pattern string
	files   []int32
}

// NewMatcher is the tailer's matcher of one agent's files: a Finder, or
// fileconsumer's matcher on Windows (its globs are case-insensitive there,
// which doublestar's PathMatch is not) and with exclude_older_than (which
// needs every match's modification time, which that matcher reads; it is
// also the setting that makes a walk cheap: a user who sets it has few
// files).
func NewMatcher(include, exclude []string, excludeOlderThan time.Duration) (func() ([]string, error), error) {
	if runtime.GOOS == "windows" || excludeOlderThan > 0 {
		m, err := matcher.New(matcher.Criteria{Include: include, Exclude: exclude, ExcludeOlderThan: excludeOlderThan})
		if err != nil {
			return nil, err
		}
		return m.MatchFiles, nil
	}
	m, err := New(include, exclude)
	if err != nil {
		return nil, err
	}
	return m.Match, nil
}

// New is a Finder of the files the patterns match.
func New(include, exclude []string) (*Finder, error) {
	for _, p := range append(slices.Clone(include), exclude...) {
		if !doublestar.ValidatePathPattern(p) {
			return nil, &patternError{p}
		}
	}
	return &Finder{include: include, exclude: exclude, now: time.Now, dirs: map[string]*dirListing{}}, nil
}

// WithClock sets the clock listings are timed by (a benchmark takes them as
// made long after the directories' last change).
func (m *Finder) WithClock(now func() time.Time) *Finder {
	m.now = now
	return m
}

// Listed is the number of directory listings made so far.
func (m *Finder) Listed() int { return m.listed }

// NewDirs is a Finder of the directories the patterns match.
func NewDirs(include, exclude []string) (*Finder, error) {
	f, err := New(include, exclude)
	if err != nil {
		return nil, err
	}
	f.wantDirs = true
	return f, nil
}

type patternError struct{ pattern string }

func (e *patternError) Error() string { return "parse glob: bad pattern " + e.pattern }

// Match returns the files (directories) the patterns match now, sorted.
func (m *Finder) Match() ([]string, error) {
	m.walks++
	// Sized as the last poll's: the walk appends every match (the same file
	// once per pattern that matches it), then sorts and drops the repeats
	// (cheaper than a set of every path, which a poll built and dropped).
	out := make([]string, 0, m.found)
	for _, pattern := range m.include {
		base, rest := doublestar.SplitPattern(filepath.ToSlash(pattern))
		if rest == "" {
			// No meta character: the pattern names one file.
			if fi, err := os.Stat(pattern); err == nil && fi.IsDir() == m.wantDirs && !m.excluded(pattern) {
				out = append(out, pattern)
			}
			continue
		}
		depth := maxWalkDepth
		if !strings.Contains(rest, "**") {
			depth = strings.Count(rest, "/")
		}
		out = m.walk(filepath.FromSlash(base), pattern, depth, out, map[FileID]struct{}{})
	}
	for dir, l := range m.dirs {
		if l.walk != m.walks {
			delete(m.dirs, dir) // gone, or no longer below a pattern
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	m.found = len(out)
	return out, nil
}

// walk appends to out the files below dir that pattern matches, depth
// levels down at most; above are the directories the walk is inside (dir's
// ancestors).
func (m *Finder) walk(dir, pattern string, depth int, out []string, above map[FileID]struct{}) []string {
	l := m.list(dir)
	if l == nil {
		return out
	}
	if l.id != (FileID{}) {
		if _, loop := above[l.id]; loop {
			return out // a symlink back to a directory above: walked already
		}
		above[l.id] = struct{}{}
		defer delete(above, l.id)
	}
	i := slices.IndexFunc(l.matched, func(pm patternMatches) bool { return pm.pattern == pattern })
	if i < 0 {
		pm := patternMatches{pattern: pattern}
		for k, p := range l.candidates(m.wantDirs) {
			if ok, _ := doublestar.PathMatch(pattern, p); ok && !m.excluded(p) {
				pm.files = append(pm.files, int32(k))
			}
		}
		i = len(l.matched)
		l.matched = append(l.matched, pm)
	}
	candidates := l.candidates(m.wantDirs)
	for _, k := range l.matched[i].files {
		out = append(out, candidates[k])
	}
	if depth <= 0 {
		return out
	}
	for _, sub := range l.subdirs {
		out = m.walk(sub, pattern, depth-1, out, above)
	}
	return out
}

func (m *Finder) excluded(p string) bool {
	for _, e := range m.exclude {
		if ok, _ := doublestar.PathMatch(e, p); ok {
			return true
		}
	}
	return false
}

// list returns dir's listing: the kept one while the directory's
// modification time, change time and inode are the ones listed (and the
// listing settled), else a fresh one. nil: not a directory (any more).
func (m *Finder) list(dir string) *dirListing {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		delete(m.dirs, dir)
		return nil
	}
	mtime, ctime, id := fi.ModTime().UnixNano(), ctimeOf(fi), IDOf(fi)
	if l := m.dirs[dir]; l != nil && l.id == id && l.mtime == mtime && l.ctime == ctime &&
		l.listedAt-max(l.mtime, l.ctime) >= int64(listingSettle) {
		l.walk = m.walks
		return l
	}
	now := m.now().UnixNano()
	entries, err := os.ReadDir(dir)
	if err != nil {
		delete(m.dirs, dir)
		return nil
	}
	m.listed++
	old := m.dirs[dir]
	l := &dirListing{id: id, mtime: mtime, ctime: ctime, listedAt: now, walk: m.walks}
	isDir := make([]bool, len(entries))
	nfiles := 0
	for i, e := range entries {
		isDir[i] = e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			if fi, err := os.Stat(filepath.Join(dir, e.Name())); err == nil {
				isDir[i] = fi.IsDir()
			}
		}
		if !isDir[i] {
			nfiles++
		}
	}
	l.files = make([]string, 0, nfiles)
	// A path listed before is kept, not joined again: the tailer holds the
	// one it was given (both listings are sorted by name).
	var kept []string
	if old != nil {
		kept = old.files
	}
	for i, e := range entries {
		if isDir[i] {
			l.subdirs = append(l.subdirs, filepath.Join(dir, e.Name()))
			continue
		}
		p := filepath.Join(dir, e.Name())
		for len(kept) > 0 && kept[0] < p {
			kept = kept[1:]
		}
		if len(kept) > 0 && kept[0] == p {
			p = kept[0]
		}
		l.files = append(l.files, p)
	}
	m.dirs[dir] = l
	return l
}
