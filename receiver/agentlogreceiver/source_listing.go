// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver // import "github.com/agentotel/agentotel/receiver/agentlogreceiver"

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"
)

// dirCache matches include patterns against the file tree, poll after poll,
// listing a directory again only when its modification time moved (a file
// was created, removed or renamed in it; see stamp): an unchanged tree costs
// one stat per directory the patterns walk, not a listing of each and a
// stat of every entry. Patterns with `**` (or escapes) are left to
// doublestar.
type dirCache struct {
	dirs map[string]*cachedDir
	// seen are the directories looked at in this poll; the others are
	// dropped at its end.
	seen map[string]bool
	now  func() time.Time
}

type cachedDir struct {
	stamp   stamp
	entries []cachedEntry
	// missing: the path was not a directory when looked at (a pattern's
	// fixed segment below a wildcard one).
	missing bool
}

type cachedEntry struct {
	name string
	dir  bool
}

func newDirCache() *dirCache {
	return &dirCache{dirs: map[string]*cachedDir{}, seen: map[string]bool{}, now: time.Now}
}

// begin and end frame one poll's matching.
func (c *dirCache) begin() { clear(c.seen) }

func (c *dirCache) end() {
	for d := range c.dirs {
		if !c.seen[d] {
			delete(c.dirs, d)
		}
	}
}

// list returns a directory's entries, listed again when it changed.
func (c *dirCache) list(dir string) []cachedEntry {
	d := c.dirs[dir]
	if c.seen[dir] {
		if d == nil {
			return nil
		}
		return d.entries
	}
	c.seen[dir] = true
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		c.dirs[dir] = &cachedDir{missing: true}
		return nil
	}
	if d != nil && d.stamp.unchanged(fi.ModTime()) {
		return d.entries
	}
	// The time is taken before the listing: an entry created after it
	// changes it again.
	st := stampOf(fi.ModTime(), c.now())
	es, err := os.ReadDir(dir)
	if err != nil {
		c.dirs[dir] = &cachedDir{missing: true}
		return nil
	}
	entries := make([]cachedEntry, 0, len(es))
	for _, e := range es {
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			if fi, err := os.Stat(filepath.Join(dir, e.Name())); err == nil {
				isDir = fi.IsDir()
			}
		}
		entries = append(entries, cachedEntry{name: e.Name(), dir: isDir})
	}
	c.dirs[dir] = &cachedDir{stamp: st, entries: entries}
	return entries
}

// fresh reports whether every directory the last poll's matching looked at
// is as it was then (and marks them looked at): the matches are then the
// same. Call it between begin and end, before glob.
func (c *dirCache) fresh() bool {
	if len(c.dirs) == 0 {
		return false
	}
	for dir, d := range c.dirs {
		fi, err := os.Stat(dir)
		if d.missing {
			if err == nil {
				return false
			}
			continue
		}
		if err != nil || !fi.IsDir() || !d.stamp.unchanged(fi.ModTime()) {
			return false
		}
	}
	for dir := range c.dirs {
		c.seen[dir] = true
	}
	return true
}

// hasMeta reports whether a path segment holds glob syntax.
func hasMeta(seg string) bool { return strings.ContainsAny(seg, `*?[{\`) }

// globbable reports whether glob handles pattern.
func globbable(pattern string) bool {
	return !strings.Contains(pattern, "**") && !strings.Contains(pattern, `\`)
}

// glob returns the paths pattern matches: every directory level with
// wildcards is listed (cached); a last segment without wildcards is
// returned as a candidate, unchecked. ok false: the pattern is not one
// glob handles (`**`, escapes), for doublestar to match.
func (c *dirCache) glob(pattern string) (matches []string, ok bool) {
	if !globbable(pattern) {
		return nil, false
	}
	pattern = filepath.Clean(pattern)
	segs := strings.Split(pattern, string(filepath.Separator))
	i := 0
	for i < len(segs) && !hasMeta(segs[i]) {
		i++
	}
	if i == len(segs) {
		return []string{pattern}, true
	}
	base := strings.Join(segs[:i], string(filepath.Separator))
	if base == "" && filepath.IsAbs(pattern) {
		base = string(filepath.Separator)
	} else if base == "" {
		base = "."
	}
	cur := []string{base}
	for j := i; j < len(segs) && len(cur) > 0; j++ {
		last := j == len(segs)-1
		var next []string
		for _, dir := range cur {
			if !hasMeta(segs[j]) {
				next = append(next, filepath.Join(dir, segs[j]))
				continue
			}
			for _, e := range c.list(dir) {
				if !last && !e.dir {
					continue
				}
				if m, err := doublestar.Match(segs[j], e.name); err == nil && m {
					next = append(next, filepath.Join(dir, e.name))
				}
			}
		}
		cur = next
	}
	return cur, true
}
