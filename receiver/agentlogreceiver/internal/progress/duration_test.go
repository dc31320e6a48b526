// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package progress

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every duration is wall-clock from the receiver's start: an agent found
// after others, and one done only when its quiet is noticed, are timed from
// the start to the moment they are known done, and the all-agents line from
// the start to the last of them.
func TestProgressDurationsFromStart(t *testing.T) {
	p, clock, logs, _ := newTestProgress(t)
	ctx := t.Context()
	p.begin = clock.now()

	clock.advance(300 * time.Millisecond) // finding an agent's history takes time
	p.Found(ctx, "claude_code", History{sizes: map[string]int64{"/h/a.jsonl": 100}})
	clock.advance(200 * time.Millisecond)
	p.Found(ctx, "opencode", History{unmeasured: true, files: 3, bytes: 1000})
	logs.TakeAll()

	clock.advance(100 * time.Millisecond)
	p.Read(ctx, "opencode", "/d/opencode.db", 0, 0, true) // its last read, at +600ms
	clock.advance(100 * time.Millisecond)
	p.Read(ctx, "claude_code", "/h/a.jsonl", 0, 100, true) // done at +700ms
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
	assert.Equal(t, "opencode: history read in "+FormatDuration(took)+": 0 sessions, 0 turns, 0 tool calls (0 failed), 0 tokens", done[0].Message)
	assert.Equal(t, "History of 2 agents read in "+FormatDuration(took)+": 0 sessions, 0 turns, 0 tool calls (0 failed), 0 tokens", done[1].Message)
	assert.Equal(t, took, done[1].ContextMap()["elapsed"])
}
