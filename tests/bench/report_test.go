// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// printReport writes the table as Markdown (the README carries it as printed).
func printReport(w io.Writer, rep report) {
	if len(rep.Rows) == 0 && rep.Growth == nil {
		fmt.Fprintf(w, "\n%s; load average before: %s\n", rep.Machine, rep.LoadBefore)
	} else {
		fmt.Fprintf(w, "\nHistory: %d MB in %d files (%s); %s; load average before: %s\n",
			rep.CorpusMB, rep.Files, agentsLine(rep.ByAgent), rep.Machine, rep.LoadBefore)
	}
	if len(rep.Rows) > 0 {
		fmt.Fprintln(w, "\n| reader | read | time | MB/s | records/s | peak RSS | CPU | MB/s vs file_log | RSS vs file_log |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	}
	for _, r := range rep.Rows {
		ratio := func(x float64) string {
			if x == 0 {
				return "—"
			}
			return fmt.Sprintf("%.2f×", x)
		}
		rss := "—"
		if r.PeakRSSMB > 0 {
			rss = fmt.Sprintf("%.0f MB", r.PeakRSSMB)
		}
		out := ""
		if r.Out > 0 {
			out = fmt.Sprintf(" → %d %s", r.Out, r.OutUnit)
		}
		fmt.Fprintf(w, "| %s | %.0f MB, %d records%s | %.1f s | %.0f | %.0f | %s | %.1f s | %s | %s |\n",
			r.Name, float64(r.Bytes)/1e6, r.Records, out, r.Seconds, r.MBps, r.RecordsPS, rss, r.CPUSeconds,
			ratio(r.SpeedX), ratio(r.RSSX))
	}
	var mem []string
	for _, r := range rep.Rows {
		if r.PeakAnonMB > 0 {
			mem = append(mem, fmt.Sprintf("%s %.0f MB anonymous + %.0f MB file-backed", r.Name, r.PeakAnonMB, r.PeakFileMB))
		}
	}
	if len(mem) > 0 {
		fmt.Fprintf(w, "\nPeak resident set by kind (highest seen every %s; the two peak apart): %s\n", pollEvery, strings.Join(mem, "; "))
	}
	printGrowth(w, rep.Growth)
	if l := rep.Latency; l != nil {
		fmt.Fprintf(w, "\nLive: line that closes a turn appended → the turn's spans at the exporter (%s): p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f ms over %d turns (%d missed)\n",
			l.Setup, l.P50ms, l.P90ms, l.P99ms, l.MaxMs, l.Turns, l.Missed)
		reasons := make([]string, 0, len(l.ByReason))
		for k, n := range l.ByReason {
			reasons = append(reasons, fmt.Sprintf("%s: %d", k, n))
		}
		sort.Strings(reasons)
		fmt.Fprintf(w, "Turns by what closed them: %s; agent_span input dropped: %v\n", strings.Join(reasons, ", "), l.Dropped)
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
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		tb.Fatal(err)
	}
	fmt.Printf("written to %s\n", path)
}
