// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agenteventexporter

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/exporter/agenteventexporter/internal/metadata"
	"github.com/agentotel/agentotel/exporter/agenteventexporter/internal/metadatatest"
	"github.com/agentotel/agentotel/internal/agentevent"
)

// crash stops an exporter as kill -9 does: what it buffered is lost, and
// nothing more is written or committed. A later exporter on the same
// directory is the restarted collector.
func crash(e *agentEventExporter) {
	e.shutdownOnce.Do(func() {
		if e.cancel != nil {
			e.cancel()
		}
		e.wg.Wait()
		e.mu.Lock()
		defer e.mu.Unlock()
		if ds, ok := e.out.(*dirSink); ok {
			for _, sf := range ds.files.Values() {
				sf.f.Close() // without flushing its buffer
			}
		}
		e.out = nil
		e.telemetry.Shutdown()
	})
}

// startExporter starts an exporter on cfg whose clock is far in the future
// (every testdata session is long idle).
func startExporter(t *testing.T, cfg *Config) *agentEventExporter {
	t.Helper()
	now := farFuture
	return newTestExporter(t, cfg, &now)
}

// run delivers batches in turn, each like one ConsumeLogs or ConsumeTraces
// call of the receiver (or the connector).
func run(t *testing.T, e *agentEventExporter, batches []any) {
	t.Helper()
	for _, b := range batches {
		switch b := b.(type) {
		case plog.Logs:
			require.NoError(t, e.consumeLogs(t.Context(), b))
		case ptrace.Traces:
			require.NoError(t, e.consumeTraces(t.Context(), b))
		}
	}
}

// mergeBatches makes one batch of several, in order.
func mergeBatches(batches []any) any {
	switch batches[0].(type) {
	case plog.Logs:
		out := plog.NewLogs()
		for _, b := range batches {
			rls := b.(plog.Logs).ResourceLogs()
			for i := 0; i < rls.Len(); i++ {
				rls.At(i).CopyTo(out.ResourceLogs().AppendEmpty())
			}
		}
		return out
	default:
		out := ptrace.NewTraces()
		for _, b := range batches {
			rss := b.(ptrace.Traces).ResourceSpans()
			for i := 0; i < rss.Len(); i++ {
				rss.At(i).CopyTo(out.ResourceSpans().AppendEmpty())
			}
		}
		return out
	}
}

// exactlyOnceCase is a testdata case cut into batches of one record (or
// one span), in one format.
type exactlyOnceCase struct {
	name    string
	format  Format
	batches []any
}

func exactlyOnceCases(t *testing.T) []exactlyOnceCase {
	var cases []exactlyOnceCase
	for _, format := range []Format{FormatAgtraceV1, FormatUniversal, FormatAgentManager} {
		for _, dir := range claudeCases(t, "events.yaml") {
			logs, err := golden.ReadLogs(filepath.Join(dir, "events.yaml"))
			require.NoError(t, err)
			var batches []any
			for _, b := range recordByRecord(logs) {
				batches = append(batches, b)
			}
			cases = append(cases, exactlyOnceCase{string(format) + "/" + filepath.Base(dir), format, batches})
		}
	}
	for _, dir := range claudeCases(t, "traces.yaml") {
		traces, err := golden.ReadTraces(filepath.Join(dir, "traces.yaml"))
		require.NoError(t, err)
		var batches []any
		for _, b := range spanBySpan(traces) {
			batches = append(batches, b)
		}
		if len(batches) == 0 {
			continue
		}
		cases = append(cases, exactlyOnceCase{string(FormatCanonicalTask) + "/" + filepath.Base(dir), FormatCanonicalTask, batches})
	}
	return cases
}

// restartedAt writes c's batches with a crash after the first k: the
// restarted exporter gets the rest, after again whatever redeliver returns
// (what the receiver delivers again). It returns the files, once the last
// exporter shut down.
func restartedAt(t *testing.T, c exactlyOnceCase, k int, redeliver func(dir string) []any) map[string][]byte {
	t.Helper()
	dir := t.TempDir()
	cfg := goldenConfig(c.format, dir)
	e := startExporter(t, cfg)
	run(t, e, c.batches[:k])
	crash(e)
	var again []any
	if redeliver != nil {
		again = redeliver(dir)
	}
	e = startExporter(t, goldenConfig(c.format, dir))
	run(t, e, again)
	run(t, e, c.batches[k:])
	require.NoError(t, e.shutdown(t.Context()))
	return readTree(t, dir)
}

// TestRedeliveredBatchWritesNothing: after a crash the receiver delivers
// again what it had not seen accepted; what the files already hold is not
// written again, whole batches or parts of one, on every real testdata case
// in every format, crashed after the first batch, mid-way, and after the
// last two. The files are byte for byte
// those of a restart at the same point without anything delivered again —
// and, for agtrace_v1 and canonical_task, whose lines depend on nothing but
// the event or turn, those of a run without any crash.
func TestRedeliveredBatchWritesNothing(t *testing.T) {
	for _, c := range exactlyOnceCases(t) {
		t.Run(c.name, func(t *testing.T) {
			whole := exportWhole(t, c)
			n := len(c.batches)
			for _, k := range slices.Compact([]int{1, max(1, n/2), max(1, n-1), n}) {
				clean := restartedAt(t, c, k, nil)
				if c.format == FormatAgtraceV1 || c.format == FormatCanonicalTask {
					require.Equal(t, whole, clean, "a restart after batch %d", k)
				}
				// The last batch again, the last three again as one batch
				// (a partly new batch when k < len: only the rest is
				// written), and everything from the start.
				for _, again := range [][]any{
					c.batches[k-1 : k],
					{mergeBatches(c.batches[max(0, k-3):min(len(c.batches), k+2)])},
					c.batches[:k],
				} {
					got := restartedAt(t, c, k, func(string) []any { return again })
					require.Equal(t, clean, got, "crash after batch %d, %d batches delivered again", k, len(again))
				}
			}
		})
	}
}

// exportWhole writes every batch with one exporter.
func exportWhole(t *testing.T, c exactlyOnceCase) map[string][]byte {
	t.Helper()
	dir := t.TempDir()
	e := startExporter(t, goldenConfig(c.format, dir))
	run(t, e, c.batches)
	require.NoError(t, e.shutdown(t.Context()))
	return readTree(t, dir)
}

// TestRetriedBatchWritesNothing: a batch the receiver retries in the same
// process (another consumer refused it) adds nothing, and the skipped
// items are counted.
func TestRetriedBatchWritesNothing(t *testing.T) {
	for _, c := range exactlyOnceCases(t) {
		if !strings.HasSuffix(c.name, "/nested_subagent") {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			tel := newTelemetry(t)
			dir := t.TempDir()
			now := farFuture
			e := newTestExporterWithSettings(t, goldenConfig(c.format, dir), &now, metadatatest.NewSettings(tel))
			all := mergeBatches(c.batches)
			run(t, e, []any{all, all})
			require.NoError(t, e.shutdown(t.Context()))
			assert.Equal(t, exportWhole(t, c), readTree(t, dir))
			items := 0
			switch b := all.(type) {
			case plog.Logs:
				items = b.LogRecordCount()
			case ptrace.Traces:
				items = countTurnRoots(b)
			}
			metadatatest.AssertEqualAgentEventReplayed(t, tel, points("format", map[string]int64{string(c.format): int64(items)}),
				metricdatatest.IgnoreTimestamp())
		})
	}
}

// TestKilledMidBatch: the collector was killed after part of a batch had
// reached a file but before the batch was committed: whole lines and a cut
// one. At the next start the file goes back to its last commit, and the
// batch, delivered again, writes every line once — the same file as a
// restart right after the commit.
func TestKilledMidBatch(t *testing.T) {
	for _, c := range exactlyOnceCases(t) {
		if len(c.batches) < 3 {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			k := len(c.batches) / 3
			rest := mergeBatches(c.batches[k:])
			clean := restartedAt(t, c, k, nil)
			got := restartedAt(t, c, k, func(dir string) []any {
				// What the killed run wrote of the rest before it died: the
				// rest written by a run whose commit is then undone, as if it
				// never happened, and half a line more.
				marks := commitRecords(t, dir)
				e := startExporter(t, goldenConfig(c.format, dir))
				run(t, e, []any{rest})
				crash(e)
				files := 0
				for path := range commitRecords(t, dir) {
					data := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "."), markSuffix)
					dataPath := filepath.Join(filepath.Dir(path), data)
					if old, ok := marks[path]; ok {
						require.NoError(t, os.WriteFile(path, old, 0o600))
					} else {
						require.NoError(t, os.Remove(path))
						require.NoError(t, os.WriteFile(path, []byte(`{"size":0}`), 0o600))
					}
					if b, err := os.ReadFile(dataPath); err == nil && len(b) > 0 {
						f, err := os.OpenFile(dataPath, os.O_APPEND|os.O_WRONLY, 0)
						require.NoError(t, err)
						_, err = f.WriteString(`{"event_id":"cut sh`)
						require.NoError(t, err)
						require.NoError(t, f.Close())
						files++
					}
				}
				require.Positive(t, files)
				return []any{rest}
			})
			require.Equal(t, clean, got)
		})
	}
}

// commitRecords reads every commit record under dir, by path.
func commitRecords(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(d.Name(), markSuffix) {
			return err
		}
		b, err := os.ReadFile(path) //nolint:gosec // G122: dir is the test's own output folder
		out[path] = b
		return err
	}))
	return out
}

// TestTornLastLineIsRepaired: a line cut short by a kill after the last
// commit is removed at start — not kept, not written twice — and the file
// goes on one JSON value per line.
func TestTornLastLineIsRepaired(t *testing.T) {
	for _, c := range exactlyOnceCases(t) {
		if !strings.HasSuffix(c.name, "/turn_rollup") {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			k := len(c.batches) / 2
			clean := restartedAt(t, c, k, nil)
			got := restartedAt(t, c, k, func(dir string) []any {
				for name, b := range readTree(t, dir) {
					path := filepath.Join(dir, filepath.FromSlash(name))
					// The next line's first bytes, as a kill mid-write leaves them.
					require.NoError(t, os.WriteFile(path, append(b, b[:len(b)/3]...), 0o600))
				}
				return nil
			})
			require.Equal(t, clean, got)
			requireSchema(t, c.format, got)
		})
	}
}

// TestHeldEventsSurviveACrash: events waiting for a time (a session whose
// records carry none, like Claude Code's summary-only files) were accepted,
// so the receiver never delivers them again; they are kept with the commit
// and written after a crash as without one — for every format, also those
// that otherwise pick up no session at start.
func TestHeldEventsSurviveACrash(t *testing.T) {
	for _, c := range exactlyOnceCases(t) {
		if !strings.HasSuffix(c.name, "/summary_only") {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			whole := exportWhole(t, c)
			require.NotEmpty(t, whole)
			dir := t.TempDir()
			e := startExporter(t, goldenConfig(c.format, dir))
			run(t, e, c.batches)
			assert.Empty(t, readTree(t, dir), "held: no line yet")
			crash(e)
			e = startExporter(t, goldenConfig(c.format, dir))
			require.NoError(t, e.shutdown(t.Context()))
			assert.Equal(t, whole, readTree(t, dir))
		})
	}
}

// TestCanonicalTurnsOutliveTheirOpenFile: with one file open at a time the
// turn ids of the others are read back from their commit records, and a
// turn delivered again is still recognized.
func TestCanonicalTurnsOutliveTheirOpenFile(t *testing.T) {
	var all []any
	for _, c := range exactlyOnceCases(t) {
		if c.format == FormatCanonicalTask {
			all = append(all, c.batches...)
		}
	}
	want := exportWhole(t, exactlyOnceCase{format: FormatCanonicalTask, batches: all})
	require.Greater(t, len(want), 2)
	dir := t.TempDir()
	cfg := goldenConfig(FormatCanonicalTask, dir)
	cfg.MaxOpenFiles = 1
	e := startExporter(t, cfg)
	run(t, e, all)
	run(t, e, all)
	require.NoError(t, e.shutdown(t.Context()))
	assert.Equal(t, want, readTree(t, dir))
	assert.LessOrEqual(t, e.turns.Len(), 1)
}

// TestStdoutSkipsRetries: a stream is not read back after a restart, but a
// batch retried in the same process is recognized there too.
func TestStdoutSkipsRetries(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Format = FormatAgtraceV1
	cfg.Stdout = true
	e, err := newExporter(exportertest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	var out strings.Builder
	e.stdout = &out
	require.NoError(t, e.start(t.Context(), componenttest.NewNopHost()))
	_, batches := fiveSessions(2)
	for _, b := range batches {
		require.NoError(t, e.consumeLogs(t.Context(), logsOf(b...)))
		require.NoError(t, e.consumeLogs(t.Context(), logsOf(b...)))
	}
	require.NoError(t, e.shutdown(t.Context()))
	assert.Equal(t, 10, strings.Count(out.String(), "\n"))
}

// TestEventsWithoutSequence: an event without a Sequence (a record a
// reader could not decode) is known by its id, across a crash too.
func TestEventsWithoutSequence(t *testing.T) {
	s := newTestSession("13131313-0000-4000-8000-000000000013")
	bad := s.event(agentevent.TypeLog, "bad-1", 1)
	bad.Unparsed, bad.Role, bad.Sequence = "malformed_json", agentevent.RoleSystem, 0
	batch := logsOf(s.userPrompt("p1", "hi", 0), bad)
	dir := t.TempDir()
	e := startExporter(t, testConfig(FormatAgtraceV1, dir))
	run(t, e, []any{batch, batch})
	crash(e)
	e = startExporter(t, testConfig(FormatAgtraceV1, dir))
	run(t, e, []any{batch})
	require.NoError(t, e.shutdown(t.Context()))
	b := readTree(t, dir)["claude-code/"+s.id+".jsonl"]
	assert.Equal(t, 1, strings.Count(string(b), `"event_id":"bad-1"`))
	assert.Equal(t, 1, strings.Count(string(b), `"event_id":"p1"`))
}

// TestTwoFilesOfOneSession: two files of one session id, each numbered
// from 1 (a history copied next to itself; OpenCode's messages), are two
// threads: both are written, and each is recognized when delivered again.
func TestTwoFilesOfOneSession(t *testing.T) {
	a := newTestSession("14141414-0000-4000-8000-000000000014")
	b := newTestSession(a.id)
	fromA := []agentevent.Event{a.userPrompt("a1", "one", 0), a.answer("a2", "r1", "ok", 1)}
	fromB := []agentevent.Event{b.userPrompt("b1", "two", 2), b.answer("b2", "r2", "ok", 3)}
	for i := range fromB {
		fromB[i].LogFile = "copy/" + fromB[i].LogFile
	}
	require.Equal(t, fromA[0].Sequence, fromB[0].Sequence)
	dir := t.TempDir()
	e := startExporter(t, testConfig(FormatAgtraceV1, dir))
	run(t, e, []any{logsOf(fromA...), logsOf(fromB...)})
	crash(e)
	e = startExporter(t, testConfig(FormatAgtraceV1, dir))
	run(t, e, []any{logsOf(fromB[1:]...), logsOf(fromA...)})
	require.NoError(t, e.shutdown(t.Context()))
	file := string(readTree(t, dir)["claude-code/"+a.id+".jsonl"])
	for _, id := range []string{"a1", "a2", "b1", "b2"} {
		assert.Equal(t, 1, strings.Count(file, `"event_id":"`+id+`"`), id)
	}
}

// TestNewFileKilledBeforeItsFirstCommit: a session file gets its commit
// record (length 0) before it is created, so lines that reached a new file
// before a crash ended its first batch are removed at the next start, like
// any uncommitted lines — not taken for a file written before records
// existed.
func TestNewFileKilledBeforeItsFirstCommit(t *testing.T) {
	dir := t.TempDir()
	logger := zap.NewNop()
	s, err := newDirSink(dir, 0o750, false, 4, logger)
	require.NoError(t, err)
	key := sessionKey{agent: "claude-code", session: "15151515-0000-4000-8000-000000000015"}
	require.NoError(t, s.write(key, [][]byte{[]byte(`{"event_id":"e1"}`), []byte(`{"event_id":"e2"}`)}))
	require.NoError(t, s.flush()) // the lines reach the file (a buffer filled up); no commit
	b, err := os.ReadFile(s.path(key))
	require.NoError(t, err)
	require.NotEmpty(t, b)
	for _, f := range s.files.Values() {
		f.f.Close()
	}

	again, err := newDirSink(dir, 0o750, false, 4, logger)
	require.NoError(t, err)
	again.repair()
	b, err = os.ReadFile(again.path(key))
	require.NoError(t, err)
	assert.Empty(t, b)
}

// TestFsync: with fsync every commit syncs the file, its record and the
// folder; the files are the same as without.
func TestFsync(t *testing.T) {
	for _, c := range exactlyOnceCases(t) {
		if !strings.HasSuffix(c.name, "/nested_subagent") {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := goldenConfig(c.format, dir)
			cfg.Fsync = true
			e := startExporter(t, cfg)
			run(t, e, c.batches[:len(c.batches)/2])
			crash(e)
			e = startExporter(t, cfg)
			run(t, e, c.batches)
			require.NoError(t, e.shutdown(t.Context()))
			assert.Equal(t, exportWhole(t, c), readTree(t, dir))
			assert.NotEmpty(t, commitRecords(t, dir))
		})
	}
}
