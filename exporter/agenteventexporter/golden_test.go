// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agenteventexporter

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/internal/agentevent"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

// claudeCases lists the repository's testdata/claude_code/<case> folders
// holding file (events.yaml: the parser's golden events; traces.yaml: the
// connector's golden traces).
func claudeCases(t *testing.T, file string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "claude_code", "*", file))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no testdata/claude_code/*/%s", file)
	dirs := make([]string, 0, len(files))
	for _, f := range files {
		dirs = append(dirs, filepath.Dir(f))
	}
	sort.Strings(dirs)
	return dirs
}

// goldenConfig is how the golden outputs are written: content on (the
// golden events carry it), raw off (they do not).
func goldenConfig(format Format, dir string) *Config {
	cfg := testConfig(format, dir)
	cfg.IncludeContent = true
	return cfg
}

// exportLogs writes logs with a fresh exporter, in the given batches, and
// returns the files it wrote once shut down.
func exportLogs(t *testing.T, cfg *Config, batches []plog.Logs) map[string][]byte {
	t.Helper()
	now := farFuture
	e := newTestExporter(t, cfg, &now)
	for _, b := range batches {
		require.NoError(t, e.consumeLogs(t.Context(), b))
	}
	require.NoError(t, e.shutdown(t.Context()))
	return readTree(t, cfg.Directory)
}

func exportTraces(t *testing.T, cfg *Config, batches []ptrace.Traces) map[string][]byte {
	t.Helper()
	now := farFuture
	e := newTestExporter(t, cfg, &now)
	for _, b := range batches {
		require.NoError(t, e.consumeTraces(t.Context(), b))
	}
	require.NoError(t, e.shutdown(t.Context()))
	return readTree(t, cfg.Directory)
}

// recordByRecord splits logs into one batch per record.
func recordByRecord(ld plog.Logs) []plog.Logs {
	var out []plog.Logs
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			sl := rl.ScopeLogs().At(j)
			for k := 0; k < sl.LogRecords().Len(); k++ {
				one := plog.NewLogs()
				orl := one.ResourceLogs().AppendEmpty()
				rl.Resource().CopyTo(orl.Resource())
				osl := orl.ScopeLogs().AppendEmpty()
				sl.Scope().CopyTo(osl.Scope())
				sl.LogRecords().At(k).CopyTo(osl.LogRecords().AppendEmpty())
				out = append(out, one)
			}
		}
	}
	return out
}

// spanBySpan splits traces into one batch per span.
func spanBySpan(td ptrace.Traces) []ptrace.Traces {
	var out []ptrace.Traces
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			for k := 0; k < ss.Spans().Len(); k++ {
				one := ptrace.NewTraces()
				ors := one.ResourceSpans().AppendEmpty()
				rs.Resource().CopyTo(ors.Resource())
				oss := ors.ScopeSpans().AppendEmpty()
				ss.Scope().CopyTo(oss.Scope())
				ss.Spans().At(k).CopyTo(oss.Spans().AppendEmpty())
				out = append(out, one)
			}
		}
	}
	return out
}

// compareGolden compares the written files with testdata/golden/<...>, or
// rewrites them with -update.
func compareGolden(t *testing.T, dir string, got map[string][]byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.RemoveAll(dir))
		for name, b := range got {
			p := filepath.Join(dir, filepath.FromSlash(name))
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, b, 0o600))
		}
		return
	}
	want := map[string][]byte{}
	if _, err := os.Stat(dir); err == nil {
		want = readTree(t, dir)
	}
	require.Equal(t, sortedKeys(want), sortedKeys(got), "files written (run go test ./exporter/agenteventexporter/ -run TestGolden -update to regenerate)")
	for name := range want {
		if w, g := want[name], got[name]; !bytes.Equal(w, g) {
			t.Errorf("%s differs from %s (run with -update to regenerate): %s", name, dir, firstDifference(w, g))
		}
	}
}

// firstDifference names the first line that differs, with both versions.
func firstDifference(want, got []byte) string {
	w, g := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl []byte
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if !bytes.Equal(wl, gl) {
			return fmt.Sprintf("line %d\nwant: %s\n got: %s", i+1, wl, gl)
		}
	}
	return "same lines"
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// TestGoldenLogs writes the parser's golden events of every Claude Code
// testdata case in each logs format and compares with testdata/golden. The
// same events handed over one record per batch must give the same files
// (sessions stay in one file across batches), and every line must match the
// format's JSON Schema.
func TestGoldenLogs(t *testing.T) {
	for _, format := range []Format{FormatAgtraceV1, FormatUniversal, FormatAgentManager} {
		for _, dir := range claudeCases(t, "events.yaml") {
			name := filepath.Base(dir)
			t.Run(string(format)+"/"+name, func(t *testing.T) {
				logs, err := golden.ReadLogs(filepath.Join(dir, "events.yaml"))
				require.NoError(t, err)
				got := exportLogs(t, goldenConfig(format, t.TempDir()), []plog.Logs{logs})
				require.NotEmpty(t, got)
				assert.Equal(t, got, exportLogs(t, goldenConfig(format, t.TempDir()), recordByRecord(logs)),
					"one record per batch must write the same files")
				assert.Positive(t, requireSchema(t, format, got))
				compareGolden(t, filepath.Join("testdata", "golden", string(format), name), got)
			})
		}
	}
}

// TestGoldenTraces writes the connector's golden traces of every Claude
// Code testdata case as canonical task events (one per turn root).
func TestGoldenTraces(t *testing.T) {
	for _, dir := range claudeCases(t, "traces.yaml") {
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			traces, err := golden.ReadTraces(filepath.Join(dir, "traces.yaml"))
			require.NoError(t, err)
			got := exportTraces(t, goldenConfig(FormatCanonicalTask, t.TempDir()), []ptrace.Traces{traces})
			assert.Equal(t, got, exportTraces(t, goldenConfig(FormatCanonicalTask, t.TempDir()), spanBySpan(traces)),
				"one span per batch must write the same files")
			lines := requireSchema(t, FormatCanonicalTask, got)
			assert.Equal(t, countTurnRoots(traces), lines, "one line per turn root")
			compareGolden(t, filepath.Join("testdata", "golden", string(FormatCanonicalTask), name), got)
		})
	}
}

func countTurnRoots(td ptrace.Traces) int {
	n := 0
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		for j := 0; j < td.ResourceSpans().At(i).ScopeSpans().Len(); j++ {
			spans := td.ResourceSpans().At(i).ScopeSpans().At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				if isTurnRoot(spans.At(k)) {
					n++
				}
			}
		}
	}
	return n
}

// TestEveryAgentsTestdata writes the golden events and traces of every
// agent's testdata (testdata/<agent>/<case>/) in every format — without
// golden files of their own, so that agents being added do not churn this
// package — and requires every line to match its schema and the agtrace
// output to break no invariant.
func TestEveryAgentsTestdata(t *testing.T) {
	events, err := filepath.Glob(filepath.Join("..", "..", "testdata", "*", "*", "events.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, events)
	for _, f := range events {
		name := filepath.Base(filepath.Dir(filepath.Dir(f))) + "/" + filepath.Base(filepath.Dir(f))
		logs, err := golden.ReadLogs(f)
		require.NoError(t, err, name)
		for _, format := range []Format{FormatAgtraceV1, FormatUniversal, FormatAgentManager} {
			got := exportLogs(t, goldenConfig(format, t.TempDir()), []plog.Logs{logs})
			assert.NotEmpty(t, got, "%s %s", format, name)
			requireSchema(t, format, got)
			if format == FormatAgtraceV1 {
				assertCallsHaveStatus(t, name, got)
			}
		}
		evs, _ := agentevent.DecodeLogs(logs)
		assert.Empty(t, agentevent.Validate(evs).Violations, name)
		traces, err := golden.ReadTraces(filepath.Join(filepath.Dir(f), "traces.yaml"))
		if err != nil {
			continue // a case without traces
		}
		got := exportTraces(t, goldenConfig(FormatCanonicalTask, t.TempDir()), []ptrace.Traces{traces})
		assert.Equal(t, countTurnRoots(traces), requireSchema(t, FormatCanonicalTask, got), name)
	}
}

// assertCallsHaveStatus requires every agtrace tool_call line to carry a
// tool_status — in_progress unless the event had one — and every call without
// a result in its session to be in_progress (TestAgtraceToolStatus has one;
// the repository's testdata answers every call).
func assertCallsHaveStatus(t *testing.T, name string, files map[string][]byte) {
	t.Helper()
	for file, b := range files {
		lines := decodeLines(t, b)
		answered := map[any]bool{}
		for _, l := range lines {
			if l["event_type"] == "tool_result" {
				answered[l["tool_call_id"]] = true
			}
		}
		for _, l := range lines {
			if l["event_type"] != "tool_call" {
				continue
			}
			assert.NotNil(t, l["tool_status"], "%s %s: tool_call %v without tool_status", name, file, l["event_id"])
			if !answered[l["tool_call_id"]] {
				assert.Equal(t, "in_progress", l["tool_status"], "%s %s: unanswered tool_call %v", name, file, l["event_id"])
			}
		}
	}
}
