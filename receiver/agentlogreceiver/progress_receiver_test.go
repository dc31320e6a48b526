// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/textutil"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/metadatatest"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/progress"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/testfiles"
)

// TestReceiverLogsBackfillOnClaudeTestdata runs the receiver over the Claude testdata, read in
// place, and checks the lines a user sees: what was found at start, and the summary once the
// history is read, with the figures the golden events give.
func TestReceiverLogsBackfillOnClaudeTestdata(t *testing.T) {
	root := filepath.Join(repoRoot(t), "testdata", "claude_code")
	goldens, err := filepath.Glob(filepath.Join(root, "*", "events.yaml"))
	require.NoError(t, err)
	want := figuresFromGoldens(t, goldens...)
	files := jsonlFiles(t, root)
	var total int64
	for _, f := range files {
		fi, err := os.Stat(f)
		require.NoError(t, err)
		total += fi.Size()
	}

	cfg := testConfig(root)
	h := newHarness(t, cfg, nil)
	h.start()
	const summary = "claude_code: history read in"
	require.Eventually(t, func() bool { return h.logs.FilterMessageSnippet(summary).Len() == 1 }, 30*time.Second, 10*time.Millisecond,
		"waiting for the summary line")

	found := h.logs.FilterMessageSnippet("claude_code: found").All()
	require.Len(t, found, 1)
	assert.Equal(t, fmt.Sprintf("claude_code: found %d session files (%s) of history to read", len(files), progress.FormatBytes(total)), found[0].Message)
	assert.Equal(t, total, found[0].ContextMap()["bytes"])

	line := h.logs.FilterMessageSnippet(summary).All()[0]
	assert.Regexp(t, fmt.Sprintf(`^claude_code: history read in \S+: %s, %s, %s \(%s failed\), %s tokens$`,
		textutil.PluralGrouped(int64(len(want.sessions)), "session"), textutil.PluralGrouped(int64(int(want.turns)), "turn"), textutil.PluralGrouped(int64(int(want.calls)), "tool call"),
		textutil.Grouped(want.fails), textutil.Grouped(want.tokens)), line.Message)
	fields := line.ContextMap()
	assert.Equal(t, int64(len(want.sessions)), fields["sessions"])
	assert.Equal(t, want.turns, fields["turns"])
	assert.Equal(t, want.calls, fields["tool_calls"])
	assert.Equal(t, want.fails, fields["tool_calls_failed"])
	assert.Equal(t, want.tokens, fields["tokens"])
	assert.Equal(t, total, fields["bytes_read"])
}

// With start_at: end there is no history to follow: no progress lines, but what is read live is
// counted.
func TestReceiverCountsLiveWithoutBackfill(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "live.jsonl")
	testfiles.WriteFile(t, path, userLine("u0", "s-live", "before the start: not read"))
	cfg := testConfig(dir)
	cfg.StartAt = StartAtEnd
	h := newHarness(t, cfg, nil)
	h.start()
	// Lines appended before the first poll count as the end the reading starts at: append
	// until one is read.
	n := 0
	require.Eventually(t, func() bool {
		n++
		testfiles.AppendFile(t, path, userLine(fmt.Sprintf("u%d", n), "s-live", "hello")+"\n")
		return len(h.eventsOf(path)) > 0
	}, 20*time.Second, 50*time.Millisecond)
	h.barrier(dir) // every line appended has been read (the barrier's prompt is a turn too)
	evs := h.events()
	assert.Zero(t, h.logs.FilterMessageSnippet("of history to read").Len())
	assert.Zero(t, h.logs.FilterMessageSnippet("history read in").Len())
	metadatatest.AssertEqualAgentLogTurns(t, h.tel, []metricdata.DataPoint[int64]{{Attributes: agentAttr("claude_code"), Value: int64(len(evs))}},
		metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
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

// goldenFigures are the summary's figures computed from a case's golden events, independently
// of progress: distinct sessions, main-thread prompts, tool calls, failed tool results, tokens.
type goldenFigures struct {
	sessions                    map[string]bool
	turns, calls, fails, tokens int64
}

func figuresFromGoldens(t *testing.T, paths ...string) goldenFigures {
	t.Helper()
	f := goldenFigures{sessions: map[string]bool{}}
	for _, p := range paths {
		logs, err := golden.ReadLogs(p)
		require.NoError(t, err)
		evs, _ := agentevent.DecodeLogs(logs)
		for i := range evs {
			ev := &evs[i]
			if ev.Unparsed != "" {
				continue
			}
			f.sessions[ev.SessionID] = true
			if ev.Type == agentevent.TypeUserMessage && ev.AgentID == "" && !ev.IsSidechain {
				f.turns++
			}
			if ev.Type == agentevent.TypeToolCall {
				f.calls++
			}
			if ev.Type == agentevent.TypeToolResult && ev.ToolStatus == agentevent.ToolError {
				f.fails++
			}
			f.tokens += agentevent.Value(ev.TokensTotal)
		}
	}
	return f
}

func agentAttr(key string) attribute.Set { return attribute.NewSet(attribute.String("agent", key)) }

func messages(logs *observer.ObservedLogs) []string {
	var out []string
	entries := logs.All()
	for i := range entries {
		e := &entries[i]
		out = append(out, e.Message)
	}
	return out
}
