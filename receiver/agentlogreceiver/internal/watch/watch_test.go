// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package watch

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// patience bounds the wait for a wake: no measure of speed.
const patience = 5 * time.Second

func mkdirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
}

func write(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString(s)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func start(t *testing.T, c Config) *Watcher {
	t.Helper()
	if !Supported {
		t.Skip("nothing is watched on this platform")
	}
	w := Start(c)
	t.Cleanup(w.Close)
	return w
}

func watchedDirs(w *Watcher) []string {
	var out []string
	for d := range w.watched {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// waitTake waits for a wake and takes what changed.
func waitTake(t *testing.T, w *Watcher) ([]string, bool) {
	t.Helper()
	select {
	case <-w.Wake():
	case <-time.After(patience):
		require.FailNow(t, "no wake")
	}
	return w.Take()
}

func TestPatternWants(t *testing.T) {
	root := filepath.FromSlash("/r")
	j := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
	deep := newPattern(j("projects/**/*.jsonl"))
	fixed := newPattern(j("tmp/*/chats/*.json"))
	for _, c := range []struct {
		p    pattern
		dir  string
		want bool
	}{
		{deep, j("projects"), true},
		{deep, j("projects/a/b/c"), true},
		{deep, root, true},        // an ancestor of the base
		{deep, j("other"), false}, // beside it
		{deep, j("projectsX"), false},
		{fixed, j("tmp"), true},
		{fixed, j("tmp/x"), true},
		{fixed, j("tmp/x/chats"), true},
		{fixed, j("tmp/x/other"), false},
		{fixed, j("tmp/x/chats/deeper"), false},
	} {
		assert.Equal(t, c.want, c.p.wants(c.dir), "%s", c.dir)
	}
}

// TestWatchesTheDirectoriesPatternsDescendThrough: the base and the
// directories below it that the pattern's leading segments match; nothing
// else.
func TestWatchesTheDirectoriesPatternsDescendThrough(t *testing.T) {
	dir := t.TempDir()
	mkdirs(t,
		filepath.Join(dir, "projects", "a", "sess", "subagents"),
		filepath.Join(dir, "gemini", "tmp", "h1", "chats"),
		filepath.Join(dir, "gemini", "tmp", "h1", "other"),
		filepath.Join(dir, "unrelated"),
	)
	w := start(t, Config{Include: []string{
		filepath.Join(dir, "projects", "**", "*.jsonl"),
		filepath.Join(dir, "gemini", "tmp", "*", "chats", "*.json"),
	}})
	assert.Equal(t, []string{
		filepath.Join(dir, "gemini", "tmp"),
		filepath.Join(dir, "gemini", "tmp", "h1"),
		filepath.Join(dir, "gemini", "tmp", "h1", "chats"),
		filepath.Join(dir, "projects"),
		filepath.Join(dir, "projects", "a"),
		filepath.Join(dir, "projects", "a", "sess"),
		filepath.Join(dir, "projects", "a", "sess", "subagents"),
	}, watchedDirs(w))
}

// TestWriteWakesWithItsPath: a write to a matched file wakes with its path;
// one to a file no pattern matches, or one excluded, does not.
func TestWriteWakesWithItsPath(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	mkdirs(t, proj)
	a, b := filepath.Join(proj, "a.jsonl"), filepath.Join(proj, "b.jsonl")
	other, excluded := filepath.Join(proj, "notes.txt"), filepath.Join(proj, "x.skip.jsonl")
	for _, p := range []string{a, b, other, excluded} {
		write(t, p, "")
	}
	w := start(t, Config{
		Include: []string{filepath.Join(dir, "**", "*.jsonl")},
		Exclude: []string{filepath.Join(dir, "**", "*.skip.jsonl")},
		Paths:   true,
	})
	write(t, other, "x\n")
	write(t, excluded, "x\n")
	write(t, a, "{}\n")
	write(t, b, "{}\n")
	write(t, a, "{}\n")
	var got []string
	for !slices.Contains(got, b) {
		paths, full := waitTake(t, w)
		require.False(t, full)
		got = append(got, paths...)
	}
	slices.Sort(got)
	assert.Equal(t, []string{a, b}, slices.Compact(got))
	assert.True(t, w.Wanted(a, time.Now()))
	assert.False(t, w.Wanted(excluded, time.Now()))
}

// TestBurstIsOneWake: many writes before the reader looks are one pending
// wake and one path.
func TestBurstIsOneWake(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.jsonl")
	write(t, a, "")
	w := start(t, Config{Include: []string{filepath.Join(dir, "*.jsonl")}, Paths: true})
	for range 100 {
		write(t, a, "{}\n")
	}
	paths, full := waitTake(t, w)
	assert.False(t, full)
	assert.Equal(t, []string{a}, paths)
	assert.LessOrEqual(t, len(w.Wake()), 1)
}

// TestCreatedDirectoryIsWatched: a folder created below the base is
// watched, and asks for a full poll (files may be in it already); a file
// created in it asks for one too.
func TestCreatedDirectoryIsWatched(t *testing.T) {
	dir := t.TempDir()
	w := start(t, Config{Include: []string{filepath.Join(dir, "**", "*.jsonl")}, Paths: true})
	proj := filepath.Join(dir, "new-proj")
	mkdirs(t, proj)
	_, full := waitTake(t, w)
	assert.True(t, full)
	wakesFor(t, w, filepath.Join(proj, "s.jsonl"))
	assert.Contains(t, watchedDirsOf(w), proj)
}

// TestBaseCreatedLater: a base that does not exist yet is waited for, and
// watched once created.
func TestBaseCreatedLater(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, ".codex", "sessions")
	w := start(t, Config{Include: []string{filepath.Join(base, "**", "*.jsonl")}, Paths: true})
	assert.Equal(t, []string{dir}, watchedDirs(w), "the nearest existing ancestor")
	// Unrelated entries of the ancestor wake nothing.
	write(t, filepath.Join(dir, "history"), "x\n")

	day := filepath.Join(base, "2025", "06", "01")
	mkdirs(t, day)
	path := filepath.Join(day, "rollout.jsonl")
	write(t, path, "{}\n")
	_, full := waitTake(t, w)
	assert.True(t, full)
	wakesFor(t, w, path)
	assert.Contains(t, watchedDirsOf(w), day)
}

// wakesFor writes to path until a wake names it: the watches of new folders are set by the event loop, a moment
// after the folder's creation.
func wakesFor(t *testing.T, w *Watcher, path string) {
	t.Helper()
	require.Eventually(t, func() bool {
		write(t, path, "{}\n")
		select {
		case <-w.Wake():
		case <-time.After(100 * time.Millisecond):
			return false
		}
		paths, full := w.Take()
		return !full && slices.Contains(paths, path)
	}, patience, time.Millisecond)
}

// watchedDirsOf reads the watched set from the event loop's side: it is
// the loop's, so the test waits for the loop to be idle by closing it.
func watchedDirsOf(w *Watcher) []string {
	w.Close()
	return watchedDirs(w)
}

// TestLimit: a failing add stops the adding, keeps the watches set (they
// still wake), and is logged once for an agent's watchers.
func TestLimit(t *testing.T) {
	dir := t.TempDir()
	mkdirs(t, filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c"))
	core, logs := observer.New(zapcore.InfoLevel)
	logger := zap.New(core)
	adds := 0
	g := &Group{Add: func(w *fsnotify.Watcher, d string) error {
		adds++
		if adds > 2 {
			return syscall.ENOSPC
		}
		return w.Add(d)
	}}
	include := []string{filepath.Join(dir, "**", "*.jsonl")}
	w := start(t, Config{Include: include, Group: g, Logger: logger, Paths: true})
	require.Len(t, w.watched, 2)
	assert.True(t, w.limited)
	start(t, Config{Include: include, Group: g, Logger: logger}) // another source of the agent

	entries := logs.FilterLevelExact(zapcore.WarnLevel).All()
	require.Len(t, entries, 1, "once per agent")
	assert.Contains(t, entries[0].Message, "fs.inotify.max_user_watches")

	path := filepath.Join(watchedDirs(w)[1], "s.jsonl")
	write(t, path, "")
	_, full := waitTake(t, w)
	assert.True(t, full, "a watched folder still wakes")
}

// TestNilWatcher: watching off never wakes, and asks for full polls.
func TestNilWatcher(t *testing.T) {
	var w *Watcher
	assert.Nil(t, w.Wake())
	_, full := w.Take()
	assert.True(t, full)
	w.Reset()
	w.Close()
}
