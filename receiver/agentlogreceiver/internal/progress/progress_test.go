// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package progress

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/textutil"
	"github.com/agentotel/agentotel/internal/vendors/claudecode"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/metadata"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/metadatatest"
)

// stepClock is the progress' clock, moved by the test.
type stepClock struct{ t time.Time }

func (c *stepClock) now() time.Time          { return c.t }
func (c *stepClock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newStepClock() *stepClock               { return &stepClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func agentAttr(key string) attribute.Set { return attribute.NewSet(attribute.String("agent", key)) }

func messages(logs *observer.ObservedLogs) []string {
	var out []string
	entries := logs.All()
	for i := range entries {
		out = append(out, entries[i].Message)
	}
	return out
}

func newTestProgress(t *testing.T) (*Progress, *stepClock, *observer.ObservedLogs, *componenttest.Telemetry) {
	t.Helper()
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	tb, err := metadata.NewTelemetryBuilder(metadatatest.NewSettings(tel).TelemetrySettings)
	require.NoError(t, err)
	core, logs := observer.New(zapcore.InfoLevel)
	clock := newStepClock()
	p := New(zap.New(core), tb, 200*time.Millisecond, 0)
	p.now = clock.now
	return p, clock, logs, tel
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

// TestProgressOnClaudeTestdata feeds progress the Claude testdata the way the reader does — each
// file's events in two batches, then its read positions — and checks the found line, a progress
// line mid-way with its figures, the summary line with the figures the golden events give, and
// the self-telemetry.
func TestProgressOnClaudeTestdata(t *testing.T) {
	p, clock, logs, tel := newTestProgress(t)
	ctx := t.Context()
	a := struct{ key string }{"claude_code"}

	goldens, err := filepath.Glob(filepath.Join(repoRoot(t), "testdata", "claude_code", "*", "events.yaml"))
	require.NoError(t, err)
	sizes := map[string]int64{}
	var files []string
	var total int64
	for _, g := range goldens {
		c := filepath.Dir(g)
		for _, f := range jsonlFiles(t, c) {
			fi, err := os.Stat(f)
			require.NoError(t, err)
			sizes[f] = fi.Size()
			total += fi.Size()
			files = append(files, f)
		}
	}
	require.NotEmpty(t, files)
	want := figuresFromGoldens(t, goldens...)
	require.Positive(t, want.turns)
	require.Positive(t, want.calls)
	require.Positive(t, want.fails, "the testdata holds failed tool calls")
	require.Positive(t, want.tokens)

	p.Found(ctx, a.key, History{sizes: sizes})
	assert.Equal(t, []string{fmt.Sprintf("claude_code: found %d session files (%s) of history to read", len(files), FormatBytes(total))}, messages(logs))

	// Read the first half of the files, 2s apart each, then look at the progress line.
	half := len(files) / 2
	var doneBytes int64
	readFile := func(f string) {
		evs := parseClaudeCode(t, f)
		mid := len(evs) / 2
		p.Add(ctx, a.key, p.Tally(evs[:mid]))
		p.Read(ctx, a.key, f, 0, sizes[f]/2, false)
		p.Add(ctx, a.key, p.Tally(evs[mid:]))
		p.Read(ctx, a.key, f, sizes[f]/2, sizes[f], false)
		doneBytes += sizes[f]
	}
	for _, f := range files[:half] {
		clock.advance(2 * time.Second)
		readFile(f)
	}
	logs.TakeAll()
	assert.False(t, p.tick(ctx))
	elapsed := time.Duration(half) * 2 * time.Second
	rate := float64(doneBytes) / elapsed.Seconds()
	left := time.Duration(float64(total-doneBytes) / rate * float64(time.Second))
	line := logs.TakeAll()
	require.Len(t, line, 1)
	assert.Equal(t, fmt.Sprintf("claude_code: %s/%s files, %s of %s (%.0f%%), %s/s, about %s left",
		textutil.Grouped(int64(half)), textutil.Grouped(int64(len(files))), FormatBytes(doneBytes), FormatBytes(total), 100*float64(doneBytes)/float64(total),
		FormatBytes(int64(rate)), FormatDuration(left)), line[0].Message)
	assert.Equal(t, int64(half), line[0].ContextMap()["files_read"])

	for _, f := range files[half:] {
		clock.advance(time.Second)
		readFile(f)
	}
	summary := logs.TakeAll()
	require.Len(t, summary, 1, "one summary line when the last file is read: %v", summary)
	took := elapsed + time.Duration(len(files)-half)*time.Second
	assert.Equal(t, fmt.Sprintf("claude_code: history read in %s: %s, %s, %s (%s failed), %s tokens",
		FormatDuration(took), textutil.PluralGrouped(int64(len(want.sessions)), "session"), textutil.PluralGrouped(int64(int(want.turns)), "turn"),
		textutil.PluralGrouped(int64(int(want.calls)), "tool call"), textutil.Grouped(want.fails), textutil.Grouped(want.tokens)), summary[0].Message)
	fields := summary[0].ContextMap()
	assert.Equal(t, want.turns, fields["turns"])
	assert.Equal(t, want.calls, fields["tool_calls"])
	assert.Equal(t, want.fails, fields["tool_calls_failed"])
	assert.Equal(t, want.tokens, fields["tokens"])
	assert.Equal(t, int64(len(want.sessions)), fields["sessions"])
	assert.True(t, p.tick(ctx), "nothing more to report")
	assert.Empty(t, logs.TakeAll(), "no line after the summary")

	attrs := agentAttr("claude_code")
	opts := []metricdatatest.Option{metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars()}
	metadatatest.AssertEqualAgentLogBackfillFiles(t, tel, []metricdata.DataPoint[int64]{{Attributes: attrs, Value: int64(len(files))}}, opts...)
	metadatatest.AssertEqualAgentLogBackfillBytes(t, tel, []metricdata.DataPoint[int64]{{Attributes: attrs, Value: total}}, opts...)
	metadatatest.AssertEqualAgentLogBackfillFilesRead(t, tel, []metricdata.DataPoint[int64]{{Attributes: attrs, Value: int64(len(files))}}, opts...)
	metadatatest.AssertEqualAgentLogBackfillBytesRead(t, tel, []metricdata.DataPoint[int64]{{Attributes: attrs, Value: total}}, opts...)
	metadatatest.AssertEqualAgentLogBackfillSessions(t, tel, []metricdata.DataPoint[int64]{{Attributes: attrs, Value: int64(len(want.sessions))}}, opts...)
	metadatatest.AssertEqualAgentLogBackfillDuration(t, tel, []metricdata.DataPoint[float64]{{Attributes: attrs, Value: took.Seconds()}}, opts...)
	metadatatest.AssertEqualAgentLogTurns(t, tel, []metricdata.DataPoint[int64]{{Attributes: attrs, Value: want.turns}}, opts...)
	metadatatest.AssertEqualAgentLogToolCalls(t, tel, []metricdata.DataPoint[int64]{{Attributes: attrs, Value: want.calls}}, opts...)
	metadatatest.AssertEqualAgentLogToolCallsFailed(t, tel, []metricdata.DataPoint[int64]{{Attributes: attrs, Value: want.fails}}, opts...)
	metadatatest.AssertEqualAgentLogTokens(t, tel, []metricdata.DataPoint[int64]{{Attributes: attrs, Value: want.tokens}}, opts...)
}

// A restart: files an earlier run read completely are never read again, a resumed file counts
// from its stored position; the backfill ends when nothing has been read for quietAfter.
func TestProgressResumedAndQuiet(t *testing.T) {
	p, clock, logs, tel := newTestProgress(t)
	ctx := t.Context()
	p.Found(ctx, "codex", History{sizes: map[string]int64{"/h/a.jsonl": 1000, "/h/b.jsonl": 3000}})
	p.Found(ctx, "pi", History{sizes: map[string]int64{"/h/p.jsonl": 500}})
	p.Found(ctx, "gemini", History{})
	p.Found(ctx, "opencode", History{unmeasured: true})
	assert.Equal(t, []string{
		"codex: found 2 session files (4.0 kB) of history to read",
		"pi: found 1 session file (500 B) of history to read",
	}, messages(logs), "an agent with nothing to read is done without a line")
	logs.TakeAll()

	clock.advance(time.Second)
	p.Read(ctx, "codex", "/h/b.jsonl", 2000, 3000, true) // resumed at 2000
	p.Read(ctx, "codex", "/h/new.jsonl", 0, 10, true)    // created after the start: live, not history
	p.Read(ctx, "pi", "/h/p.jsonl", 0, 500, false)
	pi := logs.TakeAll()
	require.Len(t, pi, 1)
	assert.Equal(t, "pi: history read in 1s: 0 sessions, 0 turns, 0 tool calls (0 failed), 0 tokens", pi[0].Message)

	assert.False(t, p.tick(ctx))
	line := logs.TakeAll()
	require.Len(t, line, 1)
	assert.Equal(t, "codex: 1/2 files, 3.0 kB of 4.0 kB (75%), 1.0 kB/s, about 1s left", line[0].Message,
		"a.jsonl is still to read; b.jsonl's first 2000 bytes were read by an earlier run and count as done, not in the rate")

	clock.advance(p.quietAfter)
	assert.True(t, p.tick(ctx))
	done := logs.TakeAll()
	require.Len(t, done, 2)
	took := FormatDuration(time.Second + p.quietAfter)
	assert.Equal(t, "codex: history read in "+took+": 0 sessions, 0 turns, 0 tool calls (0 failed), 0 tokens", done[0].Message,
		"done when its quiet is noticed, timed from the start")
	assert.Equal(t, "History of 2 agents read in "+took+": 0 sessions, 0 turns, 0 tool calls (0 failed), 0 tokens", done[1].Message,
		"from the start to the last agent done")
	metadatatest.AssertEqualAgentLogBackfillBytesRead(t, tel, []metricdata.DataPoint[int64]{
		{Attributes: agentAttr("codex"), Value: 1000}, {Attributes: agentAttr("pi"), Value: 500},
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

// OpenCode's data is not followed file by file: its progress line counts sessions and turns, and
// it is done when it goes quiet.
func TestProgressUnmeasured(t *testing.T) {
	p, clock, logs, _ := newTestProgress(t)
	ctx := t.Context()
	p.Found(ctx, "opencode", History{sizes: map[string]int64{"/d/opencode.db": 4_000_000, "/d/opencode.db-wal": 1000}, unmeasured: true})
	assert.Equal(t, []string{"opencode: found 2 files (4.0 MB) of history to read"}, messages(logs))
	logs.TakeAll()
	clock.advance(time.Second)
	p.Add(ctx, "opencode", p.Tally([]agentevent.Event{
		{SessionID: "ses_1", Type: agentevent.TypeUserMessage},
		{SessionID: "ses_1", Type: agentevent.TypeToolCall},
		{SessionID: "ses_2", Type: agentevent.TypeUserMessage, TokensTotal: agentevent.Int(1200)},
	}))
	p.Read(ctx, "opencode", "/d/opencode.db", 0, 0, true)
	assert.False(t, p.tick(ctx))
	assert.Equal(t, []string{"opencode: reading, 2 sessions and 2 turns so far"}, messages(logs))
	logs.TakeAll()
	clock.advance(p.quietAfter)
	assert.True(t, p.tick(ctx))
	assert.Equal(t, []string{"opencode: history read in " + FormatDuration(time.Second+p.quietAfter) + ": 2 sessions, 2 turns, 1 tool call (0 failed), 1,200 tokens"}, messages(logs))
}

// Stopped mid-backfill: one line says how far it got, and nothing follows.
func TestProgressShutdownMidBackfill(t *testing.T) {
	p, clock, logs, _ := newTestProgress(t)
	ctx := t.Context()
	p.Found(ctx, "claude_code", History{sizes: map[string]int64{"/h/a.jsonl": 3_000_000, "/h/b.jsonl": 1_000_000}})
	clock.advance(time.Second)
	p.Read(ctx, "claude_code", "/h/a.jsonl", 0, 3_000_000, true)
	logs.TakeAll()
	p.Shutdown()
	assert.Equal(t, []string{"claude_code: stopped with 3.0 MB of 4.0 MB of history read; the rest is read at the next start (with storage: from where it stopped)"},
		messages(logs))
	logs.TakeAll()
	p.Shutdown()
	assert.True(t, p.tick(ctx))
	assert.Empty(t, logs.TakeAll())
}

func TestProgressStartAndShutdown(t *testing.T) {
	p, _, logs, _ := newTestProgress(t)
	p.Shutdown() // before Start
	assert.Zero(t, logs.Len(), "nothing found, nothing to report")
	select {
	case <-p.stop:
	default:
		t.Fatal("Shutdown before Start stops the progress")
	}

	p, _, logs, _ = newTestProgress(t)
	p.interval = time.Millisecond
	p.Found(t.Context(), "claude_code", History{sizes: map[string]int64{"/h/s.jsonl": 10}})
	p.Start()
	p.Shutdown()
	p.Shutdown()
	assert.Equal(t, 1, logs.FilterMessageSnippet("claude_code: stopped with 0 B of 10 B of history read").Len(),
		"the stop line is logged once, however often Shutdown is called: %v", messages(logs))
}

func TestFormatting(t *testing.T) {
	assert.Equal(t, "1,234,567", textutil.Grouped(1234567))
	assert.Equal(t, "999", textutil.Grouped(999))
	assert.Equal(t, "812.0 MB", FormatBytes(812_000_000))
	assert.Equal(t, "1.5 GB", FormatBytes(1_500_000_000))
	assert.Equal(t, "512 B", FormatBytes(512))
	assert.Equal(t, "1m5s", FormatDuration(65*time.Second+200*time.Millisecond))
	assert.Equal(t, "4.2s", FormatDuration(4230*time.Millisecond))
	assert.Equal(t, "1 turn", textutil.PluralGrouped(int64(1), "turn"))
	assert.Equal(t, "2,000 turns", textutil.PluralGrouped(int64(2000), "turn"))
}

func repoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := filepath.Abs(".")
	require.NoError(tb, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(tb, dir, parent, "no go.mod above the test directory")
		dir = parent
	}
}

// jsonlFiles lists the .jsonl files below dir, sorted.
func jsonlFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return nil
	}))
	sort.Strings(files)
	return files
}

// parseClaudeCode runs Claude Code's parser over a file's complete lines in
// order, flushed at the end of its data, as the receiver reads it.
func parseClaudeCode(t *testing.T, path string) []agentevent.Event {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	p := claudecode.NewParser(path)
	var out []agentevent.Event
	var offset, lineNo int64
	for {
		i := bytes.IndexByte(data[offset:], '\n')
		if i < 0 {
			if offset == int64(len(data)) {
				out = append(out, p.Flush()...)
			}
			return out
		}
		lineNo++
		out = append(out, p.Parse(data[offset:offset+int64(i)], lineNo, offset)...)
		offset += int64(i) + 1
	}
}
