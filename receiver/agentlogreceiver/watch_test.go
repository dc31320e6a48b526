// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap/zapcore"

	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/testfiles"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/watch"
)

// The watch tests poll once an hour: what arrives after the first poll was
// read on a wake. Their bound (watchPatience) is no measure of speed, only
// far below the poll.
const watchPatience = 5 * time.Second

// watchConfig reads Claude Code files below dir, polling once an hour.
func watchConfig(t *testing.T, dir string) *Config {
	t.Helper()
	if !watch.Supported {
		t.Skip("nothing is watched on this platform")
	}
	cfg := testConfig(dir)
	cfg.PollInterval = time.Hour
	return cfg
}

// TestWatchReadsAppend: a line appended to a session file is read on the
// wake its write causes, not at the next poll.
func TestWatchReadsAppend(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "proj", "s1.jsonl")
	testfiles.WriteFile(t, path, userLine("u1", "s1", "one"))
	h := newHarness(t, watchConfig(t, dir), nil)
	h.patience = watchPatience
	h.start()
	h.waitEvents(path, 1)

	testfiles.AppendFile(t, path, testfiles.JoinLines(assistantLine("a1", "u1", "s1", "msg_1", "one!")))
	evs := h.waitEvents(path, 2)
	assert.Equal(t, []string{"u1", "a1"}, eventIDs(evs))
}

// TestWatchFindsNewProjectFolder: a session file in a project folder
// created after the start is found without a poll (the new folder is
// watched, and a created file asks for a full poll).
func TestWatchFindsNewProjectFolder(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "proj", "s1.jsonl")
	testfiles.WriteFile(t, first, userLine("u1", "s1", "one"))
	h := newHarness(t, watchConfig(t, dir), nil)
	h.patience = watchPatience
	h.start()
	h.waitEvents(first, 1)

	path := filepath.Join(dir, "new-proj", "s2.jsonl")
	testfiles.WriteFile(t, path, userLine("u2", "s2", "two"))
	h.waitEvents(path, 1)
	// A file created in the folder once it is watched, then appended to.
	later := filepath.Join(dir, "new-proj", "sub", "s3.jsonl")
	testfiles.WriteFile(t, later, userLine("u3", "s3", "three"))
	h.waitEvents(later, 1)
	testfiles.AppendFile(t, later, testfiles.JoinLines(assistantLine("a3", "u3", "s3", "msg_3", "three!")))
	assert.Equal(t, []string{"u3", "a3"}, eventIDs(h.waitEvents(later, 2)))
}

// gated holds the deliveries while armed, until released.
type gated struct {
	*consumertest.LogsSink
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (g *gated) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	if g.armed.CompareAndSwap(true, false) {
		close(g.entered)
		<-g.release
	}
	return g.LogsSink.ConsumeLogs(ctx, ld)
}

// TestWatchCoalescesBurst: writes made while a read is under way are one
// more read after it, not one per write.
func TestWatchCoalescesBurst(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "proj", "s1.jsonl")
	testfiles.WriteFile(t, path, userLine("u0", "s1", "zero"))
	h := newHarness(t, watchConfig(t, dir), nil)
	h.patience = watchPatience
	g := &gated{LogsSink: h.sink, entered: make(chan struct{}), release: make(chan struct{})}
	h.rcv.next = g
	h.start()
	h.waitEvents(path, 1)
	tl := jsonlSourceOf(t, h, "claude_code").Tailer()
	before := tl.Reads()

	const n = 50
	g.armed.Store(true)
	testfiles.AppendFile(t, path, testfiles.JoinLines(userLine("u1", "s1", "one")))
	select {
	case <-g.entered: // the read of the first write is delivering
	case <-time.After(watchPatience):
		require.FailNow(t, "the first append was not read on its wake")
	}
	for i := 2; i <= n; i++ {
		testfiles.AppendFile(t, path, testfiles.JoinLines(userLine(fmt.Sprintf("u%d", i), "s1", "more")))
	}
	close(g.release)
	evs := h.waitEvents(path, 1+n)
	assert.Len(t, evs, 1+n, "every line once")
	reads := tl.Reads() - before
	// The read held, one after it for the writes made meanwhile, and at
	// most one more for write events still queued when it started (which
	// finds nothing new, opening nothing).
	assert.LessOrEqual(t, reads, int64(3), "%d writes during a read", n-1)
	assert.GreaterOrEqual(t, reads, int64(2))
}

// TestWatchOff: with watch: false nothing wakes the reader; the appended
// line waits for the next poll (an hour away).
func TestWatchOff(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "proj", "s1.jsonl")
	testfiles.WriteFile(t, path, userLine("u1", "s1", "one"))
	cfg := watchConfig(t, dir)
	cfg.Watch = false
	h := newHarness(t, cfg, nil)
	h.start()
	h.waitEvents(path, 1)
	tl := jsonlSourceOf(t, h, "claude_code").Tailer()
	before := tl.Reads()

	testfiles.AppendFile(t, path, testfiles.JoinLines(assistantLine("a1", "u1", "s1", "msg_1", "one!")))
	testfiles.WriteFile(t, filepath.Join(dir, "new-proj", "s2.jsonl"), userLine("u2", "s2", "two"))
	time.Sleep(500 * time.Millisecond)
	assert.Equal(t, before, tl.Reads(), "nothing read between polls")
	assert.Len(t, h.events(), 1)
}

// TestWatchLimit: when a watch cannot be added (the inotify limit), the
// limit is logged once per agent, whatever its number of sources, and the
// files are still read at every poll.
func TestWatchLimit(t *testing.T) {
	dir := t.TempDir()
	cfg := watchConfig(t, dir)
	cfg.PollInterval = 20 * time.Millisecond
	cfg.CopilotCLI.Enabled = true // a tailer and a snapshot poller: two watchers, one agent
	cfg.CopilotCLI.Include = []string{
		filepath.Join(dir, "copilot", "session-state", "*", "events.jsonl"),
		filepath.Join(dir, "copilot", "history-session-state", "*.json"),
	}
	path := filepath.Join(dir, "proj", "s1.jsonl")
	testfiles.WriteFile(t, path, userLine("u1", "s1", "one"))
	var adds atomic.Int64
	h := newHarness(t, cfg, nil, withWatchAdd(func(*fsnotify.Watcher, string) error {
		adds.Add(1)
		return syscall.ENOSPC
	}))
	h.start()
	h.waitEvents(path, 1)

	testfiles.AppendFile(t, path, testfiles.JoinLines(assistantLine("a1", "u1", "s1", "msg_1", "one!")))
	assert.Equal(t, []string{"u1", "a1"}, eventIDs(h.waitEvents(path, 2)), "read by the poll")
	h.barrier(dir)

	limits := h.logs.FilterLevelExact(zapcore.WarnLevel).FilterMessageSnippet("Cannot watch more directories")
	perAgent := map[string]int{}
	for _, e := range limits.All() {
		perAgent[fmt.Sprint(e.ContextMap()["agent"])]++
		assert.Contains(t, e.Message, "fs.inotify.max_user_watches")
		assert.Contains(t, e.Message, "poll_interval")
	}
	assert.Equal(t, map[string]int{"claude_code": 1, "copilot_cli": 1}, perAgent)
	// Each watcher tried once, then added no more.
	assert.Equal(t, int64(3), adds.Load())
}
