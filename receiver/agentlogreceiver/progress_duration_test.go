// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every duration is wall-clock from the receiver's start: an agent found
// after others, and one done only when its quiet is noticed, are timed from
// the start to the moment they are known done, and the all-agents line from
// the start to the last of them.
func TestProgressDurationsFromStart(t *testing.T) {
	p, clock, logs, _ := newTestProgress(t)
	ctx := context.Background()
	p.begin = clock.now()

	clock.advance(300 * time.Millisecond) // finding an agent's history takes time
	p.found(ctx, "claude_code", history{sizes: map[string]int64{"/h/a.jsonl": 100}})
	clock.advance(200 * time.Millisecond)
	p.found(ctx, "opencode", history{unmeasured: true, files: 3, bytes: 1000})
	logs.TakeAll()

	clock.advance(100 * time.Millisecond)
	p.read(ctx, "opencode", "/d/opencode.db", 0, 0, true) // its last read, at +600ms
	clock.advance(100 * time.Millisecond)
	p.read(ctx, "claude_code", "/h/a.jsonl", 0, 100, true) // done at +700ms
	claude := logs.TakeAll()
	require.Len(t, claude, 1)
	assert.Equal(t, "claude_code: history read in 700ms: 0 sessions, 0 turns, 0 tool calls (0 failed), 0 tokens", claude[0].Message)

	// OpenCode is done when its quiet is noticed: the first check after quietAfter.
	clock.advance(p.quietAfter - 200*time.Millisecond)
	assert.False(t, p.finishQuiet(ctx))
	assert.Empty(t, logs.TakeAll(), "not quiet for long enough, and no progress line between the progress ticks")
	clock.advance(time.Second)
	assert.True(t, p.finishQuiet(ctx))
	done := logs.TakeAll()
	require.Len(t, done, 2)
	took := 700*time.Millisecond + p.quietAfter - 200*time.Millisecond + time.Second // the clock since begin
	require.Equal(t, took, clock.now().Sub(p.begin))
	assert.Equal(t, "opencode: history read in "+formatDuration(took)+": 0 sessions, 0 turns, 0 tool calls (0 failed), 0 tokens", done[0].Message)
	assert.Equal(t, "History of 2 agents read in "+formatDuration(took)+": 0 sessions, 0 turns, 0 tool calls (0 failed), 0 tokens", done[1].Message)
	assert.Equal(t, took, done[1].ContextMap()["elapsed"])
}

// The receiver, restarted on a history it has read: the Claude transcripts
// have nothing new (done only once quiet, seconds after the start), the
// Gemini chats are done at once. The all-agents line must not claim less
// time than passed between the start and the last agent's line, nor less
// than any agent took.
func TestReceiverAllAgentsDurationIsWallClock(t *testing.T) {
	claudeRoot := filepath.Join(repoRoot(t), "testdata", "claude_code")
	home, _ := geminiTestdataHome(t)
	ext := storagetest.NewFileBackedStorageExtension("state", t.TempDir())
	host := storagetest.NewStorageHost().WithExtension(ext.ID, ext)
	cfg := testConfig(claudeRoot)
	cfg.Gemini = geminiConfig(t, home).Gemini
	cfg.Storage = &ext.ID

	const total = "History of 2 agents read in"
	for _, run := range []string{"first run", "restart"} {
		before := time.Now()
		h := newHarness(t, cfg, host)
		h.start()
		require.Eventually(t, func() bool { return h.logs.FilterMessageSnippet(total).Len() == 1 }, 30*time.Second, 10*time.Millisecond,
			"%s: waiting for the all-agents line; got %v", run, messages(h.logs))
		h.stop()
		line := h.logs.FilterMessageSnippet(total).All()[0]
		elapsed := line.ContextMap()["elapsed"].(time.Duration)
		for _, key := range []string{"claude_code", "gemini"} {
			l := h.logs.FilterMessageSnippet(key + ": history read in").All()
			require.Len(t, l, 1, run)
			assert.GreaterOrEqual(t, elapsed, l[0].ContextMap()["elapsed"].(time.Duration), "%s: %s took longer than all agents", run, key)
		}
		assert.LessOrEqual(t, elapsed, line.Time.Sub(before), run)
		if run == "restart" {
			// Nothing to read: Claude Code is done once it has been quiet for quietAfter (3s here).
			assert.GreaterOrEqual(t, elapsed, 3*time.Second, "%s: %s", run, line.Message)
		}
	}
}
