// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentotel/agentotel/tests/testenv/history"
)

// The memory-growth part of `make bench` (BENCH_ROWS "growth"): does the collector's peak RSS
// grow with the length of the history? It runs the end-to-end collector and file_log over a
// history of a quarter of the size (the same mix of agents) and over the full one, each
// growthRuns times, and compares the medians: peak RSS moves by ~10 % between runs of the same
// code, which one run each would mistake for growth or its absence.

// growthRuns is how many times each reader runs at each size (BENCH_GROWTH_RUNS, default 3).
func growthRuns() int {
	if n, err := strconv.Atoi(os.Getenv("BENCH_GROWTH_RUNS")); err == nil && n > 0 {
		return n
	}
	return 3
}

type growth struct {
	SmallMB int64       `json:"small_mb"`
	FullMB  int64       `json:"full_mb"`
	Rows    []growthRow `json:"rows"`
}

// growthRow is one reader's peak RSS (MB) per run at each size, and the medians.
type growthRow struct {
	Name        string    `json:"name"`
	Small       []float64 `json:"small_peak_rss_mb"`
	Full        []float64 `json:"full_peak_rss_mb"`
	SmallAnon   []float64 `json:"small_peak_anon_mb"`
	FullAnon    []float64 `json:"full_peak_anon_mb"`
	SmallFile   []float64 `json:"small_peak_file_mb"`
	FullFile    []float64 `json:"full_peak_file_mb"`
	SmallMedian float64   `json:"small_median_mb"`
	FullMedian  float64   `json:"full_median_mb"`
	// Growth is FullMedian/SmallMedian − 1.
	Growth float64 `json:"growth"`
}

func memoryGrowth(b *testing.B, bin string, roots []string, full history.History, target int64) *growth {
	smallHome := b.TempDir()
	small := history.WriteHistoryShares(b, roots, smallHome, target/4, historyShares(b))
	g := &growth{SmallMB: small.Bytes >> 20, FullMB: full.Bytes >> 20}
	type reader struct {
		name string
		run  func(h history.History, i int) run
	}
	readers := []reader{
		{"agent_log → agent_span → nop (end to end)", func(h history.History, i int) run {
			return endToEndRun(b, bin, h.Home, fmt.Sprintf("growth-end_to_end-%dMB-%d", h.Bytes>>20, i))
		}},
		{"file_log + json_parser → nop", func(h history.History, i int) run {
			include, _, lines := h.JSONL()
			return fileLogRun(b, bin, h.Home, include, lines, fmt.Sprintf("growth-file_log-%dMB-%d", h.Bytes>>20, i))
		}},
	}
	mb := func(n int64) float64 { return float64(n) / 1e6 }
	for _, rd := range readers {
		r := growthRow{Name: rd.name}
		for i := range growthRuns() {
			// The sizes alternate, so that a slow drift of the machine falls on both.
			s := rd.run(small, i)
			r.Small, r.SmallAnon, r.SmallFile = append(r.Small, mb(s.PeakRSS)), append(r.SmallAnon, mb(s.PeakAnon)), append(r.SmallFile, mb(s.PeakFile))
			f := rd.run(full, i)
			r.Full, r.FullAnon, r.FullFile = append(r.Full, mb(f.PeakRSS)), append(r.FullAnon, mb(f.PeakAnon)), append(r.FullFile, mb(f.PeakFile))
		}
		r.SmallMedian, r.FullMedian = median(r.Small), median(r.Full)
		if r.SmallMedian > 0 {
			r.Growth = r.FullMedian/r.SmallMedian - 1
		}
		g.Rows = append(g.Rows, r)
	}
	return g
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

// printGrowth prints the growth table as Markdown.
func printGrowth(w io.Writer, g *growth) {
	if g == nil || len(g.Rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nMemory growth: peak RSS over %d MiB and over %d MiB of history, median of %d runs each (each run: peak RSS (peak anonymous + peak file-backed, which peak apart), MB)\n\n",
		g.SmallMB, g.FullMB, len(g.Rows[0].Small))
	writeGrowthTable(w, g)
}

func TestGrowthTable(t *testing.T) {
	if got := median([]float64{3, 1, 2}); got != 2 {
		t.Fatalf("median of 3, 1, 2: %v", got)
	}
	if got := median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Fatalf("median of 4, 1, 3, 2: %v", got)
	}
	var b strings.Builder
	printGrowth(&b, &growth{SmallMB: 256, FullMB: 1024, Rows: []growthRow{{
		Name: "end to end", Small: []float64{100, 110}, SmallAnon: []float64{60, 70}, SmallFile: []float64{40, 40},
		Full: []float64{120, 130}, FullAnon: []float64{70, 80}, FullFile: []float64{50, 50}, SmallMedian: 105, FullMedian: 125, Growth: 125.0/105 - 1,
	}}})
	want := "| end to end | 105 MB | 125 MB | +19 % | 100 (60 + 40), 110 (70 + 40) | 120 (70 + 50), 130 (80 + 50) |"
	if !strings.Contains(b.String(), want) {
		t.Fatalf("growth table:\n%s\nwant a row\n%s", b.String(), want)
	}
}
