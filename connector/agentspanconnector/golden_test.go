// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/ptracetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

var update = flag.Bool("update", false, "rewrite the golden traces.yaml files from the current output")

// goldenCases lists the repository's testdata/<agent>/<case> folders that
// hold golden events (written by the parsers' golden tests).
func goldenCases(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "*", "*", "events.yaml"))
	require.NoError(tb, err)
	require.NotEmpty(tb, files, "no testdata/*/*/events.yaml")
	dirs := make([]string, 0, len(files))
	for _, f := range files {
		dirs = append(dirs, filepath.Dir(f))
	}
	return dirs
}

// runGolden feeds a case's events to a connector whose clock is far past
// them, so every turn is history and closes at once; then it lets wall-clock
// time pass so unlinked subagents go out too. It returns every span emitted,
// merged into one Traces.
func runGolden(t *testing.T, eventsFile string) ptrace.Traces {
	t.Helper()
	logs, err := golden.ReadLogs(eventsFile)
	require.NoError(t, err)
	h := newHarness(t)
	h.history()
	require.NoError(t, h.c.ConsumeLogs(t.Context(), markCaughtUp(logs)))
	h.setNow(365*24*time.Hour + time.Hour)
	h.tick()
	require.Empty(t, h.c.asm.store.units, "everything closed")
	merged := ptrace.NewTraces()
	for _, td := range h.sink.AllTraces() {
		td.ResourceSpans().MoveAndAppendTo(merged.ResourceSpans())
	}
	return merged
}

func TestGoldenTraces(t *testing.T) {
	for _, dir := range goldenCases(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			got := runGolden(t, filepath.Join(dir, "events.yaml"))
			checkTraceShape(t, got)
			want := filepath.Join(dir, "traces.yaml")
			if *update {
				require.NoError(t, golden.WriteTraces(t, want, got))
				return
			}
			if _, err := os.Stat(want); os.IsNotExist(err) {
				t.Fatalf("%s is missing: run go test ./connector/agentspanconnector/ -run TestGoldenTraces -update", want)
			}
			expected, err := golden.ReadTraces(want)
			require.NoError(t, err)
			require.NoError(t, ptracetest.CompareTraces(expected, got,
				ptracetest.IgnoreResourceSpansOrder(), ptracetest.IgnoreScopeSpansOrder(), ptracetest.IgnoreSpansOrder()))
		})
	}
}

// checkTraceShape asserts what every backend relies on: each trace has
// exactly one root, every parent is in the trace, and no span id repeats.
func checkTraceShape(t *testing.T, td ptrace.Traces) {
	t.Helper()
	type spanRef struct{ trace, span string }
	ids := map[spanRef]int{}
	roots := map[string]int{}
	spans := allSpans(td)
	for _, sp := range spans {
		ids[spanRef{sp.TraceID().String(), sp.SpanID().String()}]++
		if sp.ParentSpanID().IsEmpty() {
			roots[sp.TraceID().String()]++
		}
	}
	for ref, n := range ids {
		assert.Equal(t, 1, n, "span %v emitted %d times", ref, n)
	}
	rootOf := map[string]ptrace.Span{}
	for _, sp := range spans {
		if sp.ParentSpanID().IsEmpty() {
			rootOf[sp.TraceID().String()] = sp
		}
	}
	for _, sp := range spans {
		if root, ok := rootOf[sp.TraceID().String()]; ok {
			assert.False(t, sp.StartTimestamp() < root.StartTimestamp() || sp.EndTimestamp() > root.EndTimestamp(),
				"the root of trace %s [%s, %s] must cover %s [%s, %s]", sp.TraceID(), root.StartTimestamp(), root.EndTimestamp(), sp.Name(), sp.StartTimestamp(), sp.EndTimestamp())
		}
		assert.Equal(t, 1, roots[sp.TraceID().String()], "trace %s must have one root", sp.TraceID())
		if !sp.ParentSpanID().IsEmpty() {
			assert.Contains(t, ids, spanRef{sp.TraceID().String(), sp.ParentSpanID().String()}, "parent of %s is missing", sp.Name())
		}
	}
}
