// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// docs/benchmark.md is written by `make bench` from the report of its run: the fixed text below,
// then the figures of that run and nothing older. BENCH_DOC names another file, or "none" to
// leave the doc as it is.

// docHeader is the fixed part of docs/benchmark.md.
const docHeader = "# Benchmark\n" +
	"\n" +
	"<!-- Written by `make bench` (tests/bench/doc_test.go) from its latest run: change the text there. -->\n" +
	"\n" +
	"`make bench` generates one history of agent sessions and reads it with several readers on the same\n" +
	"machine, one after the other. The tables below are its latest run.\n" +
	"\n" +
	"## How to read it\n" +
	"\n" +
	"- **The history** is made by copying the sessions of every agent `agent_log` reads from the shared\n" +
	"  fixture corpus, with unique session, message, request, part and tool-call ids, each laid out in\n" +
	"  its agent's default location below a scratch `HOME`. Its size is `BENCH_CORPUS_MB` (default 1024),\n" +
	"  its mix by bytes `BENCH_AGENTS` (default 45 % Claude Code, 30 % Codex, 5 % each of the others).\n" +
	"- **The readers.** *End to end* is the collector with `agent_log → agent_span → nop`, timed until\n" +
	"  its last span; *events only* is `agent_log → nop`, until its last event; *file_log* is contrib's\n" +
	"  `file_log` receiver with a `json_parser`, as a user would wire it, over the history's JSONL files\n" +
	"  (the JSON documents of Gemini CLI, OpenCode, Amp and Copilot CLI's history are not lines);\n" +
	"  *ccusage* is `ccusage session --json --offline` over every agent it reads (token totals only); the\n" +
	"  *floor* is one core, in process, reading every record and decoding it into `map[string]any`. The\n" +
	"  collectors are one bench build (the distribution plus `file_log`, `nop` and `pprof`), each with\n" +
	"  `file_storage` as in `config/default.yaml` and its own defaults otherwise.\n" +
	"- **The columns.** *Time* runs from the collector's start to the scrape of its own metrics (every\n" +
	"  100 ms) where the final values were first seen, confirmed after `BENCH_SETTLE` (5 s) without\n" +
	"  change. *CPU* is user + system time at that scrape. *Peak RSS* is the process's high-water mark\n" +
	"  (VmHWM) before it is stopped; its anonymous and file-backed parts peak apart. *MB/s* is over the\n" +
	"  bytes each reader reads; the last two columns compare with `file_log`.\n" +
	"- **Baseline rows**, when present, are the end-to-end and events-only runs of another collector\n" +
	"  build (`make bench BENCH_BASELINE=<bench collector>`), in the same run on the same history, to\n" +
	"  compare a change with a build of main.\n" +
	"- **Memory growth** reads a quarter of the history and all of it, several times each, alternating,\n" +
	"  and compares the medians: peak RSS moves by about 10 % between runs of the same code. Why peak\n" +
	"  memory grows with the number of files:\n" +
	"  [design/memory.md](design/memory.md#peak-memory-and-the-length-of-the-history).\n" +
	"- **Live latency** appends real Claude Code and Codex sessions one turn at a time to an empty `HOME`\n" +
	"  and times each turn from the write of the line that completes it to its root span at an OTLP/HTTP\n" +
	"  endpoint. The last turn of a session, which nothing completes, closes at `turn_idle_timeout` by\n" +
	"  design and is not timed. It runs twice: with `watch: true` (the default) the write wakes the\n" +
	"  receiver; with `watch: false` `poll_interval` bounds it, as a line written just after a poll waits\n" +
	"  for the next one. The live pipeline has no `batch` processor: one in front of the exporter adds up\n" +
	"  to its `timeout` (200 ms by default) to every turn.\n" +
	"- **Where the CPU goes**: the end-to-end and events-only runs write their CPU profiles to\n" +
	"  `_build/bench/pprof/` (or `BENCH_PPROF`); the tables split each by the step a record takes —\n" +
	"  reading lines, decoding and mapping records, the log records, the connector, the storage\n" +
	"  writes, the garbage collector. ccusage reads only the usage rows it sums.\n" +
	"- **Idle cost** (row `idle`): the events-only collector reads the history, then nothing is written\n" +
	"  for `BENCH_IDLE_WINDOW` (a minute) and its CPU time is measured, with `watch` on and off at the\n" +
	"  default `poll_interval`.\n" +
	"- **Run parts of it**: `BENCH_ROWS` (`end_to_end,events,file_log,ccusage,floor,growth,idle`),\n" +
	"  `BENCH_LIVE=0` or `only`, `BENCH_IDLE=1` for the idle part alone (`BENCH_IDLE=1s,200ms` for a\n" +
	"  list of intervals, each with `watch` on and off),\n" +
	"  `BENCH_PPROF=<dir>` for the CPU profiles, `BENCH_AGENT_LOG='poll_interval: 200ms'` to try a receiver\n" +
	"  setting. The JSON of each run goes to `_build/bench/`.\n" +
	"\n"

// benchDocPath is where the doc goes: BENCH_DOC, else docs/benchmark.md for a run that read the
// history (rows or growth); "" for none. A live-only or idle-only run writes a doc only to
// BENCH_DOC, so that it does not replace the tables of a full run.
func benchDocPath(tb testing.TB, rep report) string {
	switch v := os.Getenv("BENCH_DOC"); {
	case v == "none":
		return ""
	case v != "":
		return v
	case len(rep.Rows) == 0 && rep.Growth == nil:
		return "" // a live-only or idle-only run: its figures go to its JSON
	default:
		return filepath.Join(repoRoot(tb), "docs", "benchmark.md")
	}
}

// writeDoc writes docs/benchmark.md (or BENCH_DOC) from rep.
func writeDoc(tb testing.TB, rep report) {
	tb.Helper()
	path := benchDocPath(tb, rep)
	if path == "" {
		return
	}
	var b bytes.Buffer
	writeMarkdown(&b, rep)
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		tb.Fatal(err)
	}
	fmt.Printf("written to %s\n", path)
}

// writeMarkdown renders the report as docs/benchmark.md: the fixed text, then what the run
// measured, in the order of printReport.
func writeMarkdown(w io.Writer, rep report) {
	fmt.Fprint(w, docHeader)
	fmt.Fprintf(w, "\n## Machine\n\n%s", rep.Machine)
	if rep.LoadBefore != "" {
		fmt.Fprintf(w, "; load average before the run: %s", rep.LoadBefore)
	}
	fmt.Fprintln(w, ".")
	if rep.CorpusMB > 0 {
		fmt.Fprintf(w, "\n## History\n\n%s MiB in %s files.\n", thousands(rep.CorpusMB), thousands(int64(rep.Files)))
		for _, line := range historyMix(rep) {
			fmt.Fprintf(w, "\n- %s", line)
		}
		fmt.Fprintln(w)
	}
	if len(rep.Rows) > 0 {
		fmt.Fprintln(w, "\n## Reading the whole history")
		fmt.Fprintln(w)
		writeRowsTable(w, rep.Rows)
		if mem := memoryByKind(rep.Rows); len(mem) > 0 {
			fmt.Fprintf(w, "\nPeak resident set by kind:\n\n- %s\n", strings.Join(mem, "\n- "))
		}
		for _, line := range baselineComparison(rep.Rows) {
			fmt.Fprintf(w, "\n%s\n", line)
		}
	}
	if g := rep.Growth; g != nil && len(g.Rows) > 0 {
		fmt.Fprintf(w, "\n## Memory growth\n\nPeak RSS over %d MiB and over %d MiB of the same mix, median of %d runs each;\n"+
			"each run's peak RSS (peak anonymous + peak file-backed), MB.\n\n",
			g.SmallMB, g.FullMB, len(g.Rows[0].Small))
		writeGrowthTable(w, g)
	}
	if len(rep.Latency) > 0 {
		fmt.Fprintln(w, "\n## Live latency\n\nFrom the write of the line that completes a turn to the turn's root span at the exporter:")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| watch | p50 | p90 | p99 | max | turns | missed |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
		for _, l := range rep.Latency {
			fmt.Fprintf(w, "| %t | %.0f ms | %.0f ms | %.0f ms | %.0f ms | %d | %d |\n",
				l.Watch, l.P50ms, l.P90ms, l.P99ms, l.MaxMs, l.Turns, l.Missed)
		}
		fmt.Fprintln(w)
		for _, l := range rep.Latency {
			fmt.Fprintf(w, "- watch %t: %s", l.Watch, l.Setup)
			if reasons := closedBy(l); reasons != "" {
				fmt.Fprintf(w, "; turns by what closed them: %s", reasons)
			}
			fmt.Fprintln(w)
		}
	}
	for i := range rep.Rows {
		r := &rep.Rows[i]
		if len(r.Stages) == 0 || r.Baseline {
			continue
		}
		fmt.Fprintf(w, "\n### Where the CPU goes: %s\n\nIts CPU profile, each sample in the first stage its stack falls in (from the leaf up).\n\n", r.Name)
		writeStages(w, r.Stages)
	}
	if targets := targetLines(rep); len(targets) > 0 {
		fmt.Fprintln(w, "\n## Targets\n\nThe speed, memory and latency targets, against this run's figures.")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| target | this run | met |")
		fmt.Fprintln(w, "|---|---|---|")
		for _, t := range targets {
			fmt.Fprintf(w, "| %s | %s | %s |\n", t.what, t.got, yesNo(t.met))
		}
		fmt.Fprintln(w, "\nWhy a speed target is missed, by stage, and the next steps: [design/performance.md](design/performance.md).")
	}
	if len(rep.Idle) > 0 {
		fmt.Fprintln(w, "\n## Idle cost\n\nThe events-only collector after reading the history, nothing appended, CPU over the window.")
		fmt.Fprintln(w)
		writeIdleTable(w, rep.Idle)
	}
}

// writeRowsTable is the main table, as printReport prints it.
func writeRowsTable(w io.Writer, rows []row) {
	fmt.Fprintln(w, "| reader | read | time | MB/s | records/s | peak RSS | CPU | cores busy | MB/s vs file_log | RSS vs file_log |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	ratio := func(x float64) string {
		if x == 0 {
			return "—"
		}
		return fmt.Sprintf("%.2f×", x)
	}
	for i := range rows {
		r := &rows[i]
		rss := "—"
		if r.PeakRSSMB > 0 {
			rss = fmt.Sprintf("%.0f MB", r.PeakRSSMB)
		}
		out := ""
		if r.Out > 0 {
			out = fmt.Sprintf(" → %d %s", r.Out, r.OutUnit)
		}
		cores := "—"
		if r.Seconds > 0 && r.CPUSeconds > 0 {
			cores = fmt.Sprintf("%.2f", r.CPUSeconds/r.Seconds)
		}
		fmt.Fprintf(w, "| %s | %.0f MB, %d records%s | %.1f s | %.0f | %.0f | %s | %.1f s | %s | %s | %s |\n",
			r.Name, float64(r.Bytes)/1e6, r.Records, out, r.Seconds, r.MBps, r.RecordsPS, rss, r.CPUSeconds,
			cores, ratio(r.SpeedX), ratio(r.RSSX))
	}
}

// memoryByKind lists the peak anonymous and file-backed memory of the rows that have them.
func memoryByKind(rows []row) []string {
	var mem []string
	for i := range rows {
		r := &rows[i]
		if r.PeakAnonMB > 0 {
			mem = append(mem, fmt.Sprintf("%s: %.0f MB anonymous + %.0f MB file-backed", r.Name, r.PeakAnonMB, r.PeakFileMB))
		}
	}
	return mem
}

// baselineComparison compares each of our rows with the baseline row of the same reader: this
// build's time, CPU and peak RSS as multiples of the baseline's.
func baselineComparison(rows []row) []string {
	var out []string
	for j := range rows {
		base := &rows[j]
		if !base.Baseline {
			continue
		}
		i := slices.IndexFunc(rows, func(r row) bool { return !r.Baseline && baselinePrefix+r.Name == base.Name })
		if i < 0 || base.Seconds == 0 || base.CPUSeconds == 0 || base.PeakRSSMB == 0 {
			continue
		}
		ours := &rows[i]
		out = append(out, fmt.Sprintf("%s, this build against the baseline: time %.2f×, CPU %.2f×, peak RSS %.2f×.",
			ours.Name, ours.Seconds/base.Seconds, ours.CPUSeconds/base.CPUSeconds, ours.PeakRSSMB/base.PeakRSSMB))
	}
	return out
}

// writeGrowthTable is the growth table, as printGrowth prints it.
func writeGrowthTable(w io.Writer, g *growth) {
	fmt.Fprintf(w, "| reader | %d MiB | %d MiB | growth | runs at %d MiB | runs at %d MiB |\n", g.SmallMB, g.FullMB, g.SmallMB, g.FullMB)
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	runs := func(rss, anon, file []float64) string {
		parts := make([]string, len(rss))
		for i := range rss {
			parts[i] = fmt.Sprintf("%.0f (%.0f + %.0f)", rss[i], at(anon, i), at(file, i))
		}
		return strings.Join(parts, ", ")
	}
	for i := range g.Rows {
		r := &g.Rows[i]
		fmt.Fprintf(w, "| %s | %.0f MB | %.0f MB | %+.0f %% | %s | %s |\n", r.Name, r.SmallMedian, r.FullMedian, 100*r.Growth,
			runs(r.Small, r.SmallAnon, r.SmallFile), runs(r.Full, r.FullAnon, r.FullFile))
	}
}

func at(v []float64, i int) float64 {
	if i < len(v) {
		return v[i]
	}
	return 0
}

// writeIdleTable is the idle table, as benchIdle prints it.
func writeIdleTable(w io.Writer, runs []idleRun) {
	fmt.Fprintln(w, "| poll_interval | watch | backfill | idle CPU per minute | of one core | RSS | records read while idle |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for i := range runs {
		r := &runs[i]
		fmt.Fprintf(w, "| %s | %t | %.1f s | %.2f s | %.1f %% | %.0f MB | %.0f |\n",
			r.PollInterval, r.Watch, r.BackfillS, r.CPUPerMinute, r.PercentOfCore, r.RSSMB, r.RecordsDuring)
	}
}

// historyMix says what the history holds: each agent's bytes when the run measured them, and the
// mix it asked for.
func historyMix(rep report) []string {
	agents := []string{"claude_code", "codex", "pi", "copilot_cli", "gemini", "opencode", "amp"}
	var lines []string
	if line := agentsLine(rep.ByAgent); line != "" {
		lines = append(lines, "bytes by agent: "+line)
	}
	if len(rep.Shares) > 0 {
		var mix []string
		for _, a := range agents {
			if s, ok := rep.Shares[a]; ok && s > 0 {
				mix = append(mix, fmt.Sprintf("%s %.0f %%", a, 100*s))
			}
		}
		lines = append(lines, "mix of bytes asked for: "+strings.Join(mix, ", "))
	}
	return lines
}

// closedBy lists the measured turns by what closed them.
func closedBy(l *latency) string {
	reasons := make([]string, 0, len(l.ByReason))
	for k, n := range l.ByReason {
		reasons = append(reasons, fmt.Sprintf("%s: %d", k, n))
	}
	slices.Sort(reasons)
	return strings.Join(reasons, ", ")
}

// thousands writes n with commas between groups of three digits.
func thousands(n int64) string {
	if n < 0 {
		return "-" + thousands(-n)
	}
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestBenchmarkDoc renders a report as docs/benchmark.md and checks that every measured figure
// is in it, in the table layout the generator writes, with the baseline beside our rows.
func TestBenchmarkDoc(t *testing.T) {
	rep := report{
		Machine: "2 CPUs, AMD EPYC, go1.26.8", LoadBefore: "0.50 0.40 0.30", CorpusMB: 1027, Files: 103648,
		Shares: map[string]float64{"claude_code": 0.45, "codex": 0.30, "amp": 0.05},
		Rows: []row{
			{
				Name: "agent_log → agent_span → nop (end to end)", Bytes: 1077e6, Records: 582220, Out: 250372, OutUnit: "spans",
				Seconds: 11.4, MBps: 94, RecordsPS: 51055, PeakRSSMB: 177, PeakAnonMB: 109, PeakFileMB: 84, CPUSeconds: 20.8, SpeedX: 0.51, RSSX: 0.88,
				Stages: []stage{{Name: "connector: turns to spans", Seconds: 6.2, Share: 0.31}, {Name: "other", Seconds: 13.8, Share: 0.69}},
			},
			{
				Name: baselinePrefix + "agent_log → agent_span → nop (end to end)", Baseline: true, Bytes: 1077e6, Records: 582220, Out: 250372, OutUnit: "spans",
				Seconds: 22.8, MBps: 47, RecordsPS: 25536, PeakRSSMB: 354, CPUSeconds: 41.6, SpeedX: 0.25, RSSX: 1.76,
			},
			{
				Name: "file_log + json_parser → nop", Bytes: 912e6, Records: 485488, Out: 485488, OutUnit: "log records",
				Seconds: 4.9, MBps: 186, RecordsPS: 99047, PeakRSSMB: 201, PeakAnonMB: 162, PeakFileMB: 35, CPUSeconds: 8.5, SpeedX: 1, RSSX: 1,
			},
			{Name: "floor: read lines", Bytes: 1077e6, Records: 576653, Seconds: 1.5, MBps: 714, RecordsPS: 382071, CPUSeconds: 1.5},
		},
		Growth: &growth{SmallMB: 258, FullMB: 1027, Rows: []growthRow{{
			Name: "agent_log → agent_span → nop (end to end)", Small: []float64{104, 102, 109}, SmallAnon: []float64{62, 62, 71},
			SmallFile: []float64{49, 47, 48}, Full: []float64{171, 171, 171}, FullAnon: []float64{103, 109, 106},
			FullFile: []float64{84, 84, 84}, SmallMedian: 104, FullMedian: 171, Growth: 171.0/104 - 1,
		}}},
		Latency: []*latency{
			{
				Setup: "agent_log watch: true, poll_interval: 1s, turn_idle_timeout 5s, no batch, otlphttp", Watch: true,
				Turns: 60, P50ms: 12, P90ms: 20, P99ms: 41, MaxMs: 55, ByReason: map[string]int{"connector end_marker": 40, "connector next_prompt": 20},
			},
			{
				Setup: "agent_log watch: false, poll_interval: 1s, turn_idle_timeout 5s, no batch, otlphttp",
				Turns: 60, P50ms: 477, P90ms: 981, P99ms: 1053, MaxMs: 1070, Missed: 1, ByReason: map[string]int{"connector end_marker": 40, "connector next_prompt": 20},
			},
		},
		Idle: []idleRun{
			{PollInterval: "1s", Watch: true, BackfillS: 40.5, CPUPerMinute: 4.75, PercentOfCore: 7.9, RSSMB: 128},
			{PollInterval: "1s", BackfillS: 41.2, CPUPerMinute: 4.80, PercentOfCore: 8.0, RSSMB: 127},
		},
	}
	var b strings.Builder
	writeMarkdown(&b, rep)
	doc := b.String()
	for _, want := range []string{
		docHeader,
		"\n## Machine\n\n2 CPUs, AMD EPYC, go1.26.8; load average before the run: 0.50 0.40 0.30.\n",
		"\n## History\n\n1,027 MiB in 103,648 files.\n\n- mix of bytes asked for: claude_code 45 %, codex 30 %, amp 5 %\n",
		"| reader | read | time | MB/s | records/s | peak RSS | CPU | cores busy | MB/s vs file_log | RSS vs file_log |\n|---|---|---|---|---|---|---|---|---|---|\n" +
			"| agent_log → agent_span → nop (end to end) | 1077 MB, 582220 records → 250372 spans | 11.4 s | 94 | 51055 | 177 MB | 20.8 s | 1.82 | 0.51× | 0.88× |\n" +
			"| baseline: agent_log → agent_span → nop (end to end) | 1077 MB, 582220 records → 250372 spans | 22.8 s | 47 | 25536 | 354 MB | 41.6 s | 1.82 | 0.25× | 1.76× |\n" +
			"| file_log + json_parser → nop | 912 MB, 485488 records → 485488 log records | 4.9 s | 186 | 99047 | 201 MB | 8.5 s | 1.73 | 1.00× | 1.00× |\n" +
			"| floor: read lines | 1077 MB, 576653 records | 1.5 s | 714 | 382071 | — | 1.5 s | 1.00 | — | — |\n",
		"### Where the CPU goes: agent_log → agent_span → nop (end to end)\n",
		"| stage | CPU | share |\n|---|---|---|\n| connector: turns to spans | 6.2 s | 31 % |\n| other | 13.8 s | 69 % |\n",
		"| target | this run | met |\n|---|---|---|\n" +
			"| end to end ≥ 1.5× file_log's MB/s | 0.51× | no |\n" +
			"| end to end peak RSS ≤ 1.0× file_log's | 0.88× | yes |\n" +
			"| live p99 < 100 ms (watch on) | 41 ms | yes |\n" +
			"| idle CPU with watch on ≤ polling alone (1 s) | 4.75 s/min vs 4.80 s/min | yes |\n",
		"Peak resident set by kind:\n\n- agent_log → agent_span → nop (end to end): 109 MB anonymous + 84 MB file-backed\n" +
			"- file_log + json_parser → nop: 162 MB anonymous + 35 MB file-backed\n",
		"agent_log → agent_span → nop (end to end), this build against the baseline: time 0.50×, CPU 0.50×, peak RSS 0.50×.\n",
		"| agent_log → agent_span → nop (end to end) | 104 MB | 171 MB | +64 % | 104 (62 + 49), 102 (62 + 47), 109 (71 + 48) | 171 (103 + 84), 171 (109 + 84), 171 (106 + 84) |\n",
		"| watch | p50 | p90 | p99 | max | turns | missed |\n|---|---|---|---|---|---|---|\n" +
			"| true | 12 ms | 20 ms | 41 ms | 55 ms | 60 | 0 |\n" +
			"| false | 477 ms | 981 ms | 1053 ms | 1070 ms | 60 | 1 |\n",
		"- watch true: agent_log watch: true, poll_interval: 1s, turn_idle_timeout 5s, no batch, otlphttp; " +
			"turns by what closed them: connector end_marker: 40, connector next_prompt: 20\n" +
			"- watch false: agent_log watch: false, poll_interval: 1s, turn_idle_timeout 5s, no batch, otlphttp; " +
			"turns by what closed them: connector end_marker: 40, connector next_prompt: 20\n",
		"| poll_interval | watch | backfill | idle CPU per minute | of one core | RSS | records read while idle |\n|---|---|---|---|---|---|---|\n" +
			"| 1s | true | 40.5 s | 4.75 s | 7.9 % | 128 MB | 0 |\n" +
			"| 1s | false | 41.2 s | 4.80 s | 8.0 % | 127 MB | 0 |\n",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/benchmark.md lacks\n%s\nin\n%s", want, doc)
		}
	}
	rep.Idle = nil
	b.Reset()
	writeMarkdown(&b, rep)
	if strings.Contains(b.String(), "## Idle cost") {
		t.Error("an idle section without idle runs")
	}
	if got := thousands(103648); got != "103,648" {
		t.Errorf("thousands(103648) = %q", got)
	}
}

// target is one of the targets the run is held to.
type target struct {
	what, got string
	met       bool
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// targetLines compares the run's figures with the targets: end to end at least 1.5× file_log's
// MB/s and events only at least 2×, peak RSS end to end at most file_log's, end to end at least
// half ccusage's MB/s, live p99 with watch on under 100 ms, and idle CPU with watch on no higher
// than with it off. A target whose figures the run did not measure is left out.
func targetLines(rep report) []target {
	var out []target
	var e2e, events, ccusage *row
	for i := range rep.Rows {
		r := &rep.Rows[i]
		switch {
		case r.Baseline:
		case strings.HasSuffix(r.Name, "(end to end)"):
			e2e = r
		case strings.HasSuffix(r.Name, "(events only)"):
			events = r
		case strings.HasPrefix(r.Name, "ccusage"):
			ccusage = r
		}
	}
	if e2e != nil && e2e.SpeedX > 0 {
		out = append(out,
			target{"end to end ≥ 1.5× file_log's MB/s", fmt.Sprintf("%.2f×", e2e.SpeedX), e2e.SpeedX >= 1.5},
			target{"end to end peak RSS ≤ 1.0× file_log's", fmt.Sprintf("%.2f×", e2e.RSSX), e2e.RSSX <= 1.0})
	}
	if events != nil && events.SpeedX > 0 {
		out = append(out, target{"events only ≥ 2× file_log's MB/s", fmt.Sprintf("%.2f×", events.SpeedX), events.SpeedX >= 2},
			target{"events only peak RSS ≤ 1.0× file_log's", fmt.Sprintf("%.2f×", events.RSSX), events.RSSX <= 1.0})
	}
	if e2e != nil && ccusage != nil && ccusage.MBps > 0 {
		x := e2e.MBps / ccusage.MBps
		out = append(out, target{"end to end ≥ 0.5× ccusage's MB/s", fmt.Sprintf("%.2f×", x), x >= 0.5})
	}
	for _, l := range rep.Latency {
		if l.Watch && l.Turns > 0 {
			out = append(out, target{"live p99 < 100 ms (watch on)", fmt.Sprintf("%.0f ms", l.P99ms), l.P99ms < 100})
		}
	}
	var on, off *idleRun
	for i := range rep.Idle {
		if rep.Idle[i].PollInterval == "1s" {
			if rep.Idle[i].Watch {
				on = &rep.Idle[i]
			} else {
				off = &rep.Idle[i]
			}
		}
	}
	if on != nil && off != nil {
		out = append(out, target{
			"idle CPU with watch on ≤ polling alone (1 s)",
			fmt.Sprintf("%.2f s/min vs %.2f s/min", on.CPUPerMinute, off.CPUPerMinute),
			on.CPUPerMinute <= off.CPUPerMinute*1.05,
		})
	}
	return out
}
