// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/testfiles"
)

// caughtUp returns the event ids of the records that carry
// agent.read.caught_up, in arrival order.
func (h *harness) caughtUp() []string {
	var ids []string
	for _, l := range h.sink.AllLogs() {
		for _, lr := range logRecords(l) {
			attrs := lr.Attributes()
			if v, ok := attrs.Get(agentevent.AttrReadCaughtUp); ok && v.Bool() {
				id, _ := attrs.Get(agentevent.AttrEventID)
				ids = append(ids, id.AsString())
			}
		}
	}
	return ids
}

// turnLines are n lines of one session: prompts and answers in turn.
func turnLines(session string, from, n int) []string {
	lines := make([]string, 0, n)
	for i := from; i < from+n; i++ {
		if i%2 == 0 {
			lines = append(lines, userLine(fmt.Sprintf("%s-u%d", session, i), session, "q"))
		} else {
			lines = append(lines, assistantLine(fmt.Sprintf("%s-a%d", session, i), fmt.Sprintf("%s-u%d", session, i-1), session,
				fmt.Sprintf("msg_%s_%d", session, i), "a"))
		}
	}
	return lines
}

// TestCaughtUpAtEndOfFile: the last record read from a file carries
// agent.read.caught_up, also when the tailer's batch of 100 lines ends
// exactly at the end of the file (a batch boundary does not say it), and
// with an unterminated line still being written after it; records before
// the end do not.
func TestCaughtUpAtEndOfFile(t *testing.T) {
	dir := t.TempDir()
	exact := filepath.Join(dir, "p", "exact.jsonl")   // 100 lines: one full batch
	longer := filepath.Join(dir, "p", "longer.jsonl") // 150 lines: a full batch, then 50
	partial := filepath.Join(dir, "p", "partial.jsonl")
	testfiles.WriteFile(t, exact, turnLines("exact", 0, 100)...)
	testfiles.WriteFile(t, longer, turnLines("longer", 0, 150)...)
	testfiles.WriteFile(t, partial, turnLines("partial", 0, 4)...)
	testfiles.AppendFile(t, partial, `{"type":"user","sessionId":"partial"`) // no "\n" yet
	h := newHarness(t, testConfig(dir), nil)
	h.start()
	h.waitEvents(exact, 100)
	h.waitEvents(longer, 150)
	h.waitEvents(partial, 4)
	h.barrier(dir)
	flagged := map[string]bool{}
	for _, id := range h.caughtUp() {
		flagged[id] = true
	}
	assert.True(t, flagged["exact-a99"], "the 100th line ends the file: caught up")
	assert.True(t, flagged["longer-a149"], "the last line of the longer file")
	assert.False(t, flagged["longer-a99"], "the end of the first batch is not the end of the file")
	assert.True(t, flagged["partial-a3"], "a half-written line after the last record is still being written")
	for _, ev := range h.eventsOf(longer) {
		if ev.EventID != "longer-a149" {
			assert.False(t, flagged[ev.EventID], "%s is not the end of the file", ev.EventID)
		}
	}

	// Appended later: the new last record is flagged again.
	testfiles.AppendFile(t, longer, testfiles.JoinLines(turnLines("longer", 150, 2)...))
	h.waitEvents(longer, 152)
	require.Eventually(t, func() bool {
		return slices.Contains(h.caughtUp(), "longer-a151")
	}, 10*time.Second, 5*time.Millisecond)
}

// TestCaughtUpSnapshot: a Gemini chat whose last message is held back is
// not caught up; once it settles, its last record is.
func TestCaughtUpSnapshot(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "tmp", "proj", "chats", "held.json")
	writeChat(t, path, "held", gemUser("u1", "one", 0), gemAnswer("g1", "one!", 0))
	h := newHarness(t, geminiConfig(t, home), nil, withSettleDelay(time.Hour))
	h.start()
	h.waitSession("held", 1)
	h.geminiBarrier(home)
	assert.NotContains(t, h.caughtUp(), "u1", "the last message is held back: not caught up")
	h.stop() // shutdown settles the file
	assert.Contains(t, h.caughtUp(), "g1")
	assert.NotContains(t, h.caughtUp(), "u1")
}

// logRecords lists the log records of ld in order.
func logRecords(ld plog.Logs) []plog.LogRecord {
	var out []plog.LogRecord
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				out = append(out, lr)
			}
		}
	}
	return out
}
