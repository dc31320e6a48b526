// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package snapshot

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/source"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/testfiles"
)

// sorted reads files in path order and maps nothing.
type sorted struct{}

func (sorted) Sort(paths []string)                                        { slices.Sort(paths) }
func (sorted) Read(context.Context, *agents.SnapshotRead) (string, error) { return "", nil }
func (sorted) NewWatermark() Watermark                                    { return nil }
func (sorted) UnmarshalWatermark([]byte) (Watermark, error)               { return nil, nil }

// touch sets the modification time of paths.
func touch(t *testing.T, at time.Time, paths ...string) {
	t.Helper()
	for _, p := range paths {
		require.NoError(t, os.Chtimes(p, at, at))
	}
}

// TestSnapshotMatchesFollowTheTree: the snapshot sources' matching (finder), which
// lists a directory again only when its time moved, finds what doublestar
// finds, poll after poll, through the changes directory times can hide: an
// entry created within the clock tick of the listing that last saw the
// directory, and a fixed segment below a wildcard one appearing in an old
// directory.
func TestSnapshotMatchesFollowTheTree(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, ".gemini")
	write := func(rel string) {
		p := filepath.Join(home, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("{}"), 0o600))
	}
	write("tmp/a/chats/session-1.json")
	write("tmp/a/chats/session-2.jsonl")
	write("tmp/a/chats/sub/session-3.json")
	write("tmp/a/logs.json")
	write("tmp/b/chats/session-4.json")
	require.NoError(t, os.MkdirAll(filepath.Join(home, "tmp", "c"), 0o755))
	write("tmp/notes.txt")

	// The patterns of a Gemini CLI home and of an Amp data directory.
	tmp := filepath.Join(home, "tmp", "*")
	patterns := []string{
		filepath.Join(tmp, "chats", "*.json"),
		filepath.Join(tmp, "chats", "*.jsonl"),
		filepath.Join(tmp, "chats", "*", "*.json"),
		filepath.Join(tmp, "chats", "*", "*.jsonl"),
		filepath.Join(tmp, "logs.json"),
		filepath.Join(root, "amp", "threads", "T-*.json"),
	}
	s, err := New(source.Settings{Include: patterns}, sorted{})
	require.NoError(t, err)
	find := s.find
	check := func(step string) {
		t.Helper()
		var want []string
		for _, p := range patterns {
			ms, err := doublestar.FilepathGlob(p)
			require.NoError(t, err)
			want = append(want, ms...)
		}
		slices.Sort(want)
		var got []string
		for _, m := range s.matches() {
			if _, err := os.Stat(m); err == nil {
				got = append(got, m) // candidates of fixed last segments are checked by the caller
			}
		}
		slices.Sort(got)
		require.Equal(t, want, got, step)
	}
	old := time.Now().Add(-time.Hour)
	testfiles.TouchTree(t, root, old)
	// Listings taken as made long after the directories' last change (their
	// change times are those of the touch, now), as on an idle tree.
	find.WithClock(func() time.Time { return time.Now().Add(time.Minute) })
	check("first")
	listed := find.Listed()
	check("unchanged")
	assert.Equal(t, listed, find.Listed(), "an unchanged tree is not listed again")
	find.WithClock(time.Now)

	// A directory seen at a fresh time, then a chat created in it within
	// the same tick (its time put back).
	chats := filepath.Join(home, "tmp", "a", "chats")
	tick := time.Now()
	touch(t, tick, chats)
	check("fresh directory")
	write("tmp/a/chats/session-5.json")
	touch(t, tick, chats)
	check("a chat created within the tick")

	// Everything old again; a chats directory appears in an old project
	// directory whose time is put back: the fixed segment is looked for.
	testfiles.TouchTree(t, root, old)
	check("old")
	write("tmp/c/chats/session-6.json")
	touch(t, old, filepath.Join(home, "tmp", "c"), filepath.Join(home, "tmp"))
	check("a chats directory in an old project directory")

	// A project and a file removed; a thread directory created.
	require.NoError(t, os.RemoveAll(filepath.Join(home, "tmp", "b")))
	require.NoError(t, os.Remove(filepath.Join(home, "tmp", "a", "chats", "session-1.json")))
	require.NoError(t, os.MkdirAll(filepath.Join(root, "amp", "threads"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "amp", "threads", "T-1.json"), []byte("{}"), 0o600))
	check("removed and created")
	check("unchanged again")
}
