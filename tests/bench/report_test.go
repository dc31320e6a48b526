// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// printReport prints the report's tables as Markdown (writeMarkdown writes the same tables to
// docs/benchmark.md).
func printReport(w io.Writer, rep report) {
	if len(rep.Rows) == 0 && rep.Growth == nil {
		fmt.Fprintf(w, "\n%s; load average before: %s\n", rep.Machine, rep.LoadBefore)
	} else {
		fmt.Fprintf(w, "\nHistory: %d MB in %d files (%s); %s; load average before: %s\n",
			rep.CorpusMB, rep.Files, agentsLine(rep.ByAgent), rep.Machine, rep.LoadBefore)
	}
	if len(rep.Rows) > 0 {
		fmt.Fprintln(w)
		writeRowsTable(w, rep.Rows)
	}
	if mem := memoryByKind(rep.Rows); len(mem) > 0 {
		fmt.Fprintf(w, "\nPeak resident set by kind (highest seen every %s; the two peak apart): %s\n", pollEvery, strings.Join(mem, "; "))
	}
	for _, line := range baselineComparison(rep.Rows) {
		fmt.Fprintf(w, "\n%s\n", line)
	}
	printGrowth(w, rep.Growth)
	for _, l := range rep.Latency {
		fmt.Fprintf(w, "\nLive: line that closes a turn appended → the turn's spans at the exporter (%s): p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f ms over %d turns (%d missed)\n",
			l.Setup, l.P50ms, l.P90ms, l.P99ms, l.MaxMs, l.Turns, l.Missed)
		fmt.Fprintf(w, "Turns by what closed them: %s; agent_span input dropped: %v\n", closedBy(l), l.Dropped)
	}
	fmt.Fprintln(w)
}

func agentsLine(by map[string]any) string {
	var parts []string
	for _, a := range []string{"claude_code", "codex", "pi", "copilot_cli", "gemini", "opencode", "amp"} {
		if v, ok := by[a].(map[string]int64); ok {
			parts = append(parts, fmt.Sprintf("%s %.0f MB", a, float64(v["bytes"])/1e6))
		}
	}
	return strings.Join(parts, ", ")
}

// writeReport writes the report as JSON to $BENCH_OUT, else _build/bench/bench-<MB>MB.json.
func writeReport(tb testing.TB, rep report) {
	tb.Helper()
	path := os.Getenv("BENCH_OUT")
	if path == "" {
		path = filepath.Join(repoRoot(tb), "_build", "bench", fmt.Sprintf("bench-%dMB.json", rep.CorpusMB))
		if len(rep.Rows) == 0 && rep.Growth == nil {
			path = filepath.Join(repoRoot(tb), "_build", "bench", "bench-live.json")
		}
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil { //nolint:gosec // G703: the file the developer names in BENCH_OUT, or _build/bench
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil { //nolint:gosec // G703: as above
		tb.Fatal(err)
	}
	fmt.Printf("written to %s\n", path)
}
