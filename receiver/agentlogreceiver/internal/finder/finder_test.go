// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package finder

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/fileconsumer/matcher"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// matchTree is a home with the agents' layouts, files the patterns must not
// match, a symlinked directory and an excluded file.
func matchTree(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	for _, p := range []string{
		".claude/projects/-home-u-a/s1.jsonl",
		".claude/projects/-home-u-a/s1/subagents/agent-x.jsonl",
		".claude/projects/-home-u-b/s2.jsonl",
		".claude/projects/-home-u-b/notes.txt",
		".claude/projects/-home-u-b/skip.jsonl",
		".codex/sessions/2026/11/26/rollout-2026-11-26T10-00-00-abc.jsonl",
		".codex/sessions/2026/11/26/other.jsonl",
		".codex/archived_sessions/rollout-2026-01-01T00-00-00-def.jsonl",
		".copilot/session-state/0a/events.jsonl",
		".copilot/session-state/0b/deeper/events.jsonl",
		"elsewhere/linked/s3.jsonl",
	} {
		writeFile(t, filepath.Join(home, p))
	}
	require.NoError(t, os.Symlink(filepath.Join(home, "elsewhere", "linked"), filepath.Join(home, ".claude", "projects", "-home-u-c")))
	return home
}

// skipWithoutFinder skips a test of the receiver's own directory
// matcher where the tailer does not use it.
func skipWithoutFinder(tb testing.TB) {
	tb.Helper()
	if runtime.GOOS == "windows" {
		tb.Skip("the tailer uses fileconsumer's matcher on Windows")
	}
}

// TestFinderMatchesAsTheGlob: the listing cache finds exactly the files
// fileconsumer's matcher (doublestar's glob) finds, for the agents' kinds
// of patterns, excludes and a symlinked directory included.
func TestFinderMatchesAsTheGlob(t *testing.T) {
	skipWithoutFinder(t)
	home := matchTree(t)
	j := func(p string) string { return filepath.Join(home, p) }
	for _, tc := range []struct {
		name             string
		include, exclude []string
	}{
		{"claude", []string{j(".claude/projects/**/*.jsonl")}, []string{j(".claude/projects/**/skip.jsonl")}},
		{"codex", []string{j(".codex/sessions/**/rollout-*.jsonl"), j(".codex/archived_sessions/rollout-*.jsonl")}, nil},
		{"copilot", []string{j(".copilot/session-state/*/events.jsonl")}, nil},
		{"one file", []string{j(".claude/projects/-home-u-a/s1.jsonl")}, nil},
		{"overlapping", []string{j("**/*.jsonl"), j(".codex/**/*.jsonl")}, nil},
		{"nothing", []string{j("absent/**/*.jsonl")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc, err := matcher.New(matcher.Criteria{Include: tc.include, Exclude: tc.exclude})
			require.NoError(t, err)
			want, _ := fc.MatchFiles()
			match, err := NewMatcher(tc.include, tc.exclude, 0)
			require.NoError(t, err)
			for range 2 { // fresh, then from the kept listings
				got, err := match()
				require.NoError(t, err)
				if len(want) == 0 {
					assert.Empty(t, got)
					continue
				}
				assert.Equal(t, want, got)
			}
		})
	}
	_, err := NewMatcher([]string{j("[")}, nil, 0)
	assert.Error(t, err, "a bad pattern fails at build")
}

// TestFinderListsOnlyChangedDirectories: a directory whose modification
// time is as listed (and settled) is not read again; a file added to it, or
// to a new directory, is found at the next match; a listing made right after
// a change is not trusted (coarse timestamps).
func TestFinderListsOnlyChangedDirectories(t *testing.T) {
	home := matchTree(t)
	pattern := filepath.Join(home, ".claude", "projects", "**", "*.jsonl")
	skipWithoutFinder(t)
	m, err := New([]string{pattern}, nil)
	require.NoError(t, err)
	// The listings are made a minute after now: settled, though settle()
	// below moves the directories' change times to now.
	m.now = func() time.Time { return time.Now().Add(time.Minute) }
	match := m.Match
	past := time.Now().Add(-time.Hour)
	settle := func() {
		root, openErr := os.OpenRoot(home)
		require.NoError(t, openErr)
		defer root.Close()
		require.NoError(t, fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				return root.Chtimes(p, past, past)
			}
			return err
		}))
	}
	settle()
	first, err := match()
	require.NoError(t, err)
	require.Len(t, first, 5)
	m.listed = 0
	again, err := match()
	require.NoError(t, err)
	assert.Equal(t, first, again)
	assert.Zero(t, m.listed, "no unchanged directory is listed again")

	// A new file: its directory's time changes, it alone is listed again.
	added := filepath.Join(home, ".claude", "projects", "-home-u-b", "s4.jsonl")
	writeFile(t, added)
	got, err := match()
	require.NoError(t, err)
	assert.Contains(t, got, added)
	assert.Equal(t, 1, m.listed)

	// Listed within listingSettle of its change: listed again next time,
	// though nothing changed since, so that a second file in the same
	// timestamp tick (a file system with coarse timestamps, where the
	// directory's times stay as listed) is not missed.
	m.now = time.Now
	second := filepath.Join(home, ".claude", "projects", "-home-u-b", "s5.jsonl")
	writeFile(t, second)
	dir := filepath.Dir(second)
	got, err = match()
	require.NoError(t, err)
	assert.Contains(t, got, second)
	listed := m.dirs[dir]
	_, err = match()
	require.NoError(t, err)
	assert.NotSame(t, listed, m.dirs[dir], "a listing made within listingSettle of the change is not trusted")

	// A new directory.
	newDir := filepath.Join(home, ".claude", "projects", "-home-u-d", "s6.jsonl")
	writeFile(t, newDir)
	got, err = match()
	require.NoError(t, err)
	assert.Contains(t, got, newDir)

	// A directory gone: its listing is let go.
	require.NoError(t, os.RemoveAll(filepath.Join(home, ".claude", "projects", "-home-u-a")))
	got, err = match()
	require.NoError(t, err)
	assert.NotContains(t, got, filepath.Join(home, ".claude", "projects", "-home-u-a", "s1.jsonl"))
	assert.NotContains(t, m.dirs, filepath.Join(home, ".claude", "projects", "-home-u-a"))
}

// TestFinderSymlinkLoops: directories linked into themselves below a
// `**` (two loops, each doubling the paths at every level down to the
// depth bound) are walked once: the walk does not enter a directory it is
// already inside.
func TestFinderSymlinkLoops(t *testing.T) {
	skipWithoutFinder(t)
	home := t.TempDir()
	a := filepath.Join(home, "a")
	writeFile(t, filepath.Join(a, "s.jsonl"))
	writeFile(t, filepath.Join(a, "b", "t.jsonl"))
	require.NoError(t, os.Symlink(a, filepath.Join(a, "l1")))
	require.NoError(t, os.Symlink(a, filepath.Join(a, "b", "l2")))
	require.NoError(t, os.Symlink(home, filepath.Join(a, "b", "up")))
	m, err := New([]string{filepath.Join(home, "**", "*.jsonl")}, nil)
	require.NoError(t, err)
	done := make(chan []string, 1)
	go func() {
		got, _ := m.Match()
		done <- got
	}()
	select {
	case got := <-done:
		assert.Equal(t, []string{filepath.Join(a, "b", "t.jsonl"), filepath.Join(a, "s.jsonl")}, got)
	case <-time.After(10 * time.Second):
		t.Fatal("the walk did not end: symlink loops are walked down to the depth bound")
	}
}

// TestFinderSeesRestoredModificationTime: a directory whose
// modification time was set back to the one listed after a file was added
// (tar -p, rsync -a, cp -p) is listed again: its change time, which nobody
// can set, moved.
func TestFinderSeesRestoredModificationTime(t *testing.T) {
	skipWithoutFinder(t)
	home := t.TempDir()
	dir := filepath.Join(home, "p")
	writeFile(t, filepath.Join(dir, "s1.jsonl"))
	past := time.Now().Add(-time.Hour).Truncate(time.Second)
	require.NoError(t, os.Chtimes(dir, past, past))
	m, err := New([]string{filepath.Join(home, "**", "*.jsonl")}, nil)
	require.NoError(t, err)
	// Listed more than listingSettle after the directory's times: trusted.
	m.now = func() time.Time { return time.Now().Add(time.Minute) }
	got, err := m.Match()
	require.NoError(t, err)
	require.Len(t, got, 1)

	added := filepath.Join(dir, "s2.jsonl")
	writeFile(t, added)
	require.NoError(t, os.Chtimes(dir, past, past))
	got, err = m.Match()
	require.NoError(t, err)
	assert.Contains(t, got, added, "the file added under a restored modification time is found")
}

// writeFile writes a one-line JSONL file, making its directory.
func writeFile(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(`{"x":1}`+"\n"), 0o600))
}

// TestFinderOfDirectories: a Finder of directories finds the directories
// the patterns match (OpenCode's data directories), not the files.
func TestFinderOfDirectories(t *testing.T) {
	home := matchTree(t)
	m, err := NewDirs([]string{
		filepath.Join(home, ".claude", "projects", "*"),
		filepath.Join(home, ".codex"),
		filepath.Join(home, "absent"),
	}, []string{filepath.Join(home, ".claude", "projects", "-home-u-b")})
	require.NoError(t, err)
	got, err := m.Match()
	require.NoError(t, err)
	assert.Equal(t, []string{
		filepath.Join(home, ".claude", "projects", "-home-u-a"),
		filepath.Join(home, ".claude", "projects", "-home-u-c"),
		filepath.Join(home, ".codex"),
	}, got)
}
