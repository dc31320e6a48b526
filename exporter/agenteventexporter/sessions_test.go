// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agenteventexporter

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agentotel/agentotel/exporter/agenteventexporter/internal/metadata"
	"github.com/agentotel/agentotel/exporter/agenteventexporter/schemas"
	"github.com/agentotel/agentotel/internal/agentevent"
)

// fiveSessions returns, per batch, one event of each of five sessions: a
// prompt, then answers, so that every batch touches every session.
func fiveSessions(batches int) ([]*testSession, [][]agentevent.Event) {
	var sessions []*testSession
	for i := range 5 {
		sessions = append(sessions, newTestSession(fmt.Sprintf("00000000-0000-4000-8000-00000000000%d", i)))
	}
	var out [][]agentevent.Event
	for b := range batches {
		var batch []agentevent.Event
		for _, s := range sessions {
			if b == 0 {
				batch = append(batch, s.userPrompt("p-"+s.id, "prompt", 0))
			} else {
				batch = append(batch, s.answer(fmt.Sprintf("a%d-%s", b, s.id), fmt.Sprintf("r%d", b), "answer", b))
			}
		}
		out = append(out, batch)
	}
	return sessions, out
}

// TestBoundedOpenFiles: with two files open at most, five sessions written
// in turn across batches each end up whole, in order, in their own file.
func TestBoundedOpenFiles(t *testing.T) {
	for _, format := range []Format{FormatAgtraceV1, FormatUniversal, FormatAgentManager} {
		t.Run(string(format), func(t *testing.T) {
			dir := t.TempDir()
			cfg := testConfig(format, dir)
			cfg.MaxOpenFiles = 2
			now := farFuture
			e := newTestExporter(t, cfg, &now)
			sessions, batches := fiveSessions(4)
			for _, b := range batches {
				require.NoError(t, e.consumeLogs(t.Context(), logsOf(b...)))
				assert.LessOrEqual(t, e.out.openFiles(), 2)
			}
			require.NoError(t, e.shutdown(t.Context()))
			files := readTree(t, dir)
			require.Len(t, files, 5)
			requireSchema(t, format, files)
			for _, s := range sessions {
				b := files["claude-code/"+s.id+".jsonl"]
				require.NotNil(t, b, s.id)
				if format == FormatAgentManager { // its lines carry no event ids
					assertSequenceFrom(t, b, 0)
					assert.Equal(t, 4, strings.Count(string(b), `"eventType":"message"`))
					continue
				}
				last := -1
				for _, id := range []string{"p-", "a1-", "a2-", "a3-"} {
					i := bytes.Index(b, []byte(`"`+id+s.id+`"`))
					require.Positive(t, i+1, "%s: %s missing", s.id, id)
					assert.Greater(t, i, last, "%s: %s out of order", s.id, id)
					last = i
				}
				if format == FormatUniversal {
					assertSequenceFrom(t, b, 1)
				}
			}
		})
	}
}

func assertSequenceFrom(t *testing.T, b []byte, first float64) {
	t.Helper()
	for i, line := range decodeLines(t, b) {
		require.Equal(t, first+float64(i), line["sequence"], "line %d", i+1)
	}
}

func lineTypes(t *testing.T, b []byte, key string) []string {
	t.Helper()
	var types []string
	for _, l := range decodeLines(t, b) {
		types = append(types, fmt.Sprint(l[key]))
	}
	return types
}

// TestRestartContinuesTheSession: a new exporter (a collector restart)
// appends to the session's file and goes on numbering from its last line;
// a session that ended (session.ended) and gets new events is opened again.
func TestRestartContinuesTheSession(t *testing.T) {
	dir := t.TempDir()
	s := newTestSession("11111111-0000-4000-8000-000000000001")
	first := []agentevent.Event{s.userPrompt("p1", "fix it", 0), s.answer("a1", "r1", "done", 1)}
	second := []agentevent.Event{s.userPrompt("p2", "and the docs", 2), s.answer("a2", "r2", "done too", 3)}
	third := []agentevent.Event{s.userPrompt("p3", "thanks", 120)}

	run := func(now time.Time, events []agentevent.Event) {
		e := newTestExporter(t, testConfig(FormatUniversal, dir), &now)
		require.NoError(t, e.consumeLogs(t.Context(), logsOf(events...)))
		require.NoError(t, e.shutdown(t.Context()))
	}
	path := filepath.Join(dir, "claude-code", s.id+".jsonl")

	// Live: the session is not idle at shutdown, so it is not ended.
	run(t0.Add(2*time.Minute), first)
	run(t0.Add(4*time.Minute), second)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assertSequenceFrom(t, b, 1)
	types := lineTypes(t, b, "type")
	assert.Equal(t, "session.started", types[0])
	assert.NotContains(t, types[1:], "session.started")
	assert.NotContains(t, types, "session.ended")

	// History: idle at shutdown, so it ends; a later prompt opens it again.
	run(farFuture, nil)
	run(farFuture, third)
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	assertSequenceFrom(t, b, 1)
	requireSchema(t, FormatUniversal, map[string][]byte{path: b})
	var lifecycle []string
	for _, typ := range lineTypes(t, b, "type") {
		if strings.HasPrefix(typ, "session.") {
			lifecycle = append(lifecycle, typ)
		}
	}
	assert.Equal(t, []string{"session.started", "session.ended", "session.started", "session.ended"}, lifecycle)
}

// TestRestartAgentManager: the run's sequence and status continue too.
func TestRestartAgentManager(t *testing.T) {
	dir := t.TempDir()
	s := newTestSession("22222222-0000-4000-8000-000000000002")
	now := t0.Add(2 * time.Minute)
	e := newTestExporter(t, testConfig(FormatAgentManager, dir), &now)
	require.NoError(t, e.consumeLogs(t.Context(), logsOf(s.userPrompt("p1", "go", 0))))
	require.NoError(t, e.shutdown(t.Context()))
	later := farFuture
	e = newTestExporter(t, testConfig(FormatAgentManager, dir), &later)
	require.NoError(t, e.consumeLogs(t.Context(), logsOf(s.answer("a1", "r1", "ok", 1))))
	require.NoError(t, e.shutdown(t.Context()))

	b, err := os.ReadFile(filepath.Join(dir, "claude-code", s.id+".jsonl"))
	require.NoError(t, err)
	assertSequenceFrom(t, b, 0)
	assert.Equal(t, []string{"status", "message", "message", "metric", "status"}, lineTypes(t, b, "eventType"))
	lines := decodeLines(t, b)
	assert.Equal(t, map[string]any{"oldStatus": "pending", "newStatus": "running", "reason": "session started"}, lines[0]["data"])
	assert.Equal(t, "complete", lines[4]["data"].(map[string]any)["newStatus"])
	assert.Equal(t, s.id, lines[0]["runId"], "a UUID session id is the run id")
}

// TestPartialLastLineIsRemoved: a file whose last line was cut short (the
// collector was killed mid-write) loses that fragment, and numbering goes
// on from the last whole line.
func TestPartialLastLineIsRemoved(t *testing.T) {
	dir := t.TempDir()
	s := newTestSession("33333333-0000-4000-8000-000000000003")
	now := t0.Add(2 * time.Minute)
	e := newTestExporter(t, testConfig(FormatUniversal, dir), &now)
	require.NoError(t, e.consumeLogs(t.Context(), logsOf(s.userPrompt("p1", "go", 0))))
	require.NoError(t, e.shutdown(t.Context()))
	path := filepath.Join(dir, "claude-code", s.id+".jsonl")
	whole, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, writeFile(path, string(whole)+`{"event_id":"evt_x","sequence":99,"ti`))

	e = newTestExporter(t, testConfig(FormatUniversal, dir), &now)
	require.NoError(t, e.consumeLogs(t.Context(), logsOf(s.answer("a1", "r1", "ok", 1))))
	require.NoError(t, e.shutdown(t.Context()))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, bytes.HasPrefix(b, whole))
	assert.NotContains(t, string(b), "evt_x")
	assertSequenceFrom(t, b, 1)
	requireSchema(t, FormatUniversal, map[string][]byte{path: b})
}

// TestIdleSessionsEnd: a session ends once its newest event is older than
// session_idle_timeout and nothing arrived for as long; history arriving
// now is not ended between batches.
func TestIdleSessionsEnd(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(FormatUniversal, dir)
	cfg.SessionIdleTimeout = 10 * time.Minute
	now := farFuture
	e := newTestExporter(t, cfg, &now)
	s := newTestSession("44444444-0000-4000-8000-000000000004")
	require.NoError(t, e.consumeLogs(t.Context(), logsOf(s.userPrompt("p1", "old history", 0))))
	path := filepath.Join(dir, "claude-code", s.id+".jsonl")
	ended := func() bool {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		return strings.Contains(string(b), `"type":"session.ended"`)
	}

	require.NoError(t, e.endIdleSessions(false))
	assert.False(t, ended(), "history that just arrived may still get more events")
	now = now.Add(9 * time.Minute)
	require.NoError(t, e.endIdleSessions(false))
	assert.False(t, ended())
	now = now.Add(time.Minute)
	require.NoError(t, e.endIdleSessions(false))
	assert.True(t, ended(), "idle by its own time and by arrival")
	require.NoError(t, e.endIdleSessions(false))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, 1, strings.Count(string(b), "session.ended"), "ended once")

	// A live session: its newest event is recent, so it is not ended even at shutdown.
	live := newTestSession("44444444-0000-4000-8000-000000000005")
	ev := live.userPrompt("p1", "live", 0)
	ev.Timestamp = now.Add(-time.Minute)
	require.NoError(t, e.consumeLogs(t.Context(), logsOf(ev)))
	require.NoError(t, e.shutdown(t.Context()))
	b, err = os.ReadFile(filepath.Join(dir, "claude-code", live.id+".jsonl"))
	require.NoError(t, err)
	assert.NotContains(t, string(b), "session.ended")
}

// TestStdout writes every session to one stream.
func TestStdout(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Format = FormatAgtraceV1
	cfg.Stdout = true
	require.NoError(t, cfg.Validate())
	e, err := newExporter(exportertest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	var out bytes.Buffer
	e.stdout = &out
	require.NoError(t, e.start(t.Context(), componenttest.NewNopHost()))
	_, batches := fiveSessions(2)
	for _, b := range batches {
		require.NoError(t, e.consumeLogs(t.Context(), logsOf(b...)))
	}
	require.NoError(t, e.shutdown(t.Context()))
	lines := decodeLines(t, out.Bytes())
	assert.Len(t, lines, 10)
	n, err := schemas.ValidateLines(string(FormatAgtraceV1), out.Bytes())
	require.NoError(t, err)
	assert.Equal(t, 10, n)
}

// TestFileNames: session and agent ids become file names that stay inside
// the directory, and different ids never share a file.
func TestFileNames(t *testing.T) {
	assert.Equal(t, "1af7fc5e-8455-4414-9ccd-011d40f70b2a", fileName("1af7fc5e-8455-4414-9ccd-011d40f70b2a", "x"))
	assert.Equal(t, "no-session", fileName("", "no-session"))
	for _, id := range []string{"../../etc/passwd", "..", ".", "a/b", `a\b`, "a b", strings.Repeat("x", 300), "ünïcode"} {
		name := fileName(id, "x")
		assert.NotContains(t, name, "/", id)
		assert.NotContains(t, name, `\`, id)
		assert.NotEqual(t, "..", name)
		assert.False(t, strings.HasPrefix(name, "."), id)
		assert.LessOrEqual(t, len(name), maxNameLength, id)
	}
	assert.NotEqual(t, fileName("a/b", "x"), fileName("a_b", "x"))

	dir := t.TempDir()
	now := farFuture
	e := newTestExporter(t, testConfig(FormatAgtraceV1, filepath.Join(dir, "out")), &now)
	s := newTestSession("../../escape")
	require.NoError(t, e.consumeLogs(t.Context(), logsOf(s.userPrompt("p1", "x", 0))))
	require.NoError(t, e.shutdown(t.Context()))
	files := readTree(t, dir)
	require.Len(t, files, 1)
	for name := range files {
		assert.True(t, strings.HasPrefix(name, "out/claude-code/"), name)
	}
}

// TestEventsWithoutTime: events of a session none of whose events has a
// time wait for the first that has one, or for the session's end; past
// maxPending the wait is over and they are all written with the time they
// were read.
func TestEventsWithoutTime(t *testing.T) {
	dir := t.TempDir()
	now := farFuture
	e := newTestExporter(t, testConfig(FormatAgtraceV1, dir), &now)
	s := newTestSession("ffffffff-0000-4000-8000-00000000000f")
	var events []agentevent.Event
	for i := range maxPending + 2 {
		ev := s.event(agentevent.TypeSessionSummary, fmt.Sprintf("sum%d", i), 0)
		ev.Timestamp = time.Time{}
		events = append(events, ev)
	}
	logs := logsOf(events...)
	observed := t0.Add(time.Hour)
	lrs := logs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	for i := 0; i < lrs.Len(); i++ {
		lrs.At(i).SetObservedTimestamp(pcommon.NewTimestampFromTime(observed))
	}
	require.NoError(t, e.consumeLogs(t.Context(), logs))
	path := filepath.Join(dir, "claude-code", s.id+".jsonl")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := decodeLines(t, b)
	require.Len(t, lines, maxPending+2)
	for _, l := range lines {
		assert.Equal(t, formatTime(observed), l["ts"])
	}

	// Below the bound they wait, and the session's end writes them.
	one := newTestSession("ffffffff-0000-4000-8000-000000000010")
	ev := one.event(agentevent.TypeSessionSummary, "only", 0)
	ev.Timestamp = time.Time{}
	require.NoError(t, e.consumeLogs(t.Context(), logsOf(ev)))
	path = filepath.Join(dir, "claude-code", one.id+".jsonl")
	assert.NoFileExists(t, path)
	require.NoError(t, e.shutdown(t.Context()))
	b, err = os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, formatTime(farFuture), decodeLines(t, b)[0]["ts"], "no time at all: the exporter's clock")
}
