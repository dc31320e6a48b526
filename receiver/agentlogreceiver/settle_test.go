// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/testfiles"
)

// rowWithoutStop is a Claude Code ≤2.0 assistant row: no stop_reason, so
// nothing in the row says it is the response's last.
// at is the row's timestamp.
func rowWithoutStop(uuid, parent, session, msgID string, output int, at time.Time) string {
	return fmt.Sprintf(`{"parentUuid":%q,"isSidechain":false,"userType":"external","cwd":"/home/dev/proj","sessionId":%q,"version":"1.0.98","gitBranch":"main","message":{"id":%q,"type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"text","text":"a"}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":%d,"service_tier":"standard"}},"requestId":"req_%s","type":"assistant","uuid":%q,"timestamp":%q}`,
		parent, session, msgID, output, msgID, uuid, at.UTC().Format("2006-01-02T15:04:05.000Z"))
}

// historyTime is when the history rows of these tests were written.
var historyTime = time.Date(2025, 6, 1, 10, 0, 1, 0, time.UTC)

// usageEvents are the events of path that carry a response's usage.
func usageEvents(evs []agentevent.Event) []agentevent.Event {
	var out []agentevent.Event
	for i := range evs {
		ev := &evs[i]
		if ev.TokensOutput != nil && strings.HasSuffix(ev.EventID, "#usage") {
			out = append(out, *ev)
		}
	}
	return out
}

// TestHeldUsageWaitsForTheFileToSettle: a response whose rows carry no
// stop_reason has its usage held by the Claude Code parser until the end of
// the file's data. While the file is being written (the file and the
// response's rows are new), reaching its end says
// nothing about the response (the writer may be between two of its rows),
// so the usage goes out only once the file has stayed unchanged for the
// settle delay: what comes out depends on the file, not on when the reader
// caught up with the writer (the fault-injection suite compares runs by
// event id). A restart while the flush is pending still flushes it, once.
func TestHeldUsageWaitsForTheFileToSettle(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p", "live.jsonl")
	testfiles.WriteFile(t, path,
		userLine("u1", "live", "q"),
		rowWithoutStop("a1", "u1", "live", "msg_live", 7, time.Now()),
	)
	ext := storagetest.NewFileBackedStorageExtension("state", t.TempDir())
	host := storagetest.NewStorageHost().WithExtension(ext.ID, ext)
	cfg := testConfig(dir)
	cfg.Storage = &ext.ID

	clk := &fakeClock{}
	h := newHarness(t, cfg, host, withClock(clk.clock()), withSettleDelay(time.Hour))
	h.start()
	h.waitEvents(path, 2)
	h.barrier(dir)
	h.barrier(dir)
	assert.Empty(t, usageEvents(h.eventsOf(path)), "the file was written just now: the usage is held")
	src := jsonlSourceOf(t, h, "claude_code")
	pending := src.Pending(path)
	require.True(t, pending, "the file waits to settle")
	h.stop()

	// A restart, the file untouched: no line triggers a read, the pending
	// flush is in storage and runs once the file has settled.
	clk.advance(2 * time.Hour)
	h2 := newHarness(t, cfg, host, withClock(clk.clock()), withSettleDelay(time.Hour))
	h2.start()
	require.Eventually(t, func() bool { return len(usageEvents(h2.eventsOf(path))) == 1 }, 20*time.Second, 5*time.Millisecond,
		"the settled file's held usage goes out")
	u := usageEvents(h2.eventsOf(path))[0]
	assert.Equal(t, "a1#usage", u.EventID)
	assert.Equal(t, int64(7), *u.TokensOutput)
	h2.barrier(dir)
	assert.Len(t, h2.eventsOf(path), 1, "nothing else of the file is read again")
	pending = jsonlSourceOf(t, h2, "claude_code").Pending(path)
	assert.False(t, pending, "flushed: no longer pending")
	h2.stop()

	// Another restart: the flush is not repeated.
	h3 := newHarness(t, cfg, host, withClock(clk.clock()), withSettleDelay(time.Hour))
	h3.start()
	h3.barrier(dir)
	h3.barrier(dir)
	assert.Empty(t, h3.eventsOf(path), "the usage went out once")
}

// TestHeldUsageOfHistoryGoesOutAtTheEnd: history — a file that has not
// changed for the settle delay, or a file just copied (new to the file
// system) whose records were written long ago — has its held usage go out as
// soon as the reader reaches its end.
func TestHeldUsageOfHistoryGoesOutAtTheEnd(t *testing.T) {
	for _, tc := range []struct {
		name  string
		clock time.Duration // how far the receiver's clock is ahead of the file's modification
		rows  time.Time
	}{
		{name: "settled file", clock: time.Minute, rows: time.Now()},
		{name: "copied history", clock: 0, rows: historyTime},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "p", "old.jsonl")
			testfiles.WriteFile(t, path,
				userLine("u1", "old", "q"),
				rowWithoutStop("a1", "u1", "old", "msg_old", 3, tc.rows),
				rowWithoutStop("a2", "u1", "old", "msg_old", 9, tc.rows),
			)
			clk := &fakeClock{}
			clk.advance(tc.clock)
			h := newHarness(t, testConfig(dir), nil, withClock(clk.clock()), withSettleDelay(time.Second))
			h.start()
			evs := h.waitEvents(path, 4)
			u := usageEvents(evs)
			require.Len(t, u, 1)
			assert.Equal(t, "a2#usage", u[0].EventID, "at the response's last row")
			assert.Equal(t, int64(9), *u[0].TokensOutput, "the largest output of the response's rows")
			pending := jsonlSourceOf(t, h, "claude_code").Pending(path)
			assert.False(t, pending)
		})
	}
}
