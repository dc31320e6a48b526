// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentotel/agentotel/internal/jsonx"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/tests/testenv"
	"github.com/agentotel/agentotel/tests/testenv/history"
)

// The side-by-side benchmark (`make bench`): one history, five readers, one table, written to
// docs/benchmark.md (doc_test.go).
//
//	end to end   otelcol agent_log → agent_span → nop, until the last span
//	events only  otelcol agent_log → nop
//	file_log     otelcol file_log (json_parser) → nop, over the history's JSONL files
//	ccusage      ccusage 20.0.24 `session --json --offline` (every agent it reads)
//	floor        the project's JSON decoder (internal/jsonx) over every record, one core, in process
//
// With AGENTOTEL_BENCH_BASELINE=<bench collector> (`make bench BENCH_BASELINE=…`) the end-to-end
// and events-only runs are made with that build too, on the same history in the same run, each
// right after ours, as "baseline" rows: a change compared with a build of main.
//
// Every collector runs the bench build (tests/bench/builder-filelog.yaml: the distribution plus
// filelog and nop) with file_storage, as config/default.yaml does, and is timed from its start
// until its own metrics (Prometheus self-telemetry on a loopback port) stop moving: the run ends
// at the scrape where the final values were first seen. Peak RSS is VmHWM before the collector is
// stopped; CPU is utime+stime at that scrape.

// benchCollector is the bench build: $AGENTOTEL_BENCH_COLLECTOR (set by `make bench`), else
// built here with `make bench-collector`.
func benchCollector(tb testing.TB) string {
	tb.Helper()
	if bin := os.Getenv("AGENTOTEL_BENCH_COLLECTOR"); bin != "" {
		return bin
	}
	cmd := exec.Command("make", "-s", "bench-collector")
	cmd.Dir = repoRoot(tb)
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("make bench-collector: %v\n%s", err, out)
	}
	return filepath.Join(repoRoot(tb), "_build", "bench", "otelcol-agentotel-bench")
}

func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// telemetry is the service.telemetry block: warnings only, metrics on a loopback port.
func telemetry(port int) string {
	return fmt.Sprintf(`  telemetry:
    logs:
      level: warn
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: %d
`, port)
}

const storageBlock = `extensions:
  file_storage:
    directory: ${env:AGENTOTEL_BENCH_STATE}
    create_directory: true
`

// profileDir is where the CPU profiles of the runs go: BENCH_PPROF, else _build/bench/pprof.
func profileDir() string {
	if dir := os.Getenv("BENCH_PPROF"); dir != "" {
		return dir
	}
	return filepath.Join("..", "..", "_build", "bench", "pprof") // from tests/bench
}

// withProfile adds the pprof extension writing the CPU profile of the collector's whole run to
// <profileDir>/<name>.pprof (sampling at 100 Hz costs the run about 1 % of its CPU).
func withProfile(config, name string) string {
	dir := profileDir()
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	_ = os.MkdirAll(abs, 0o755)
	config = strings.Replace(config, "extensions:\n", fmt.Sprintf("extensions:\n  pprof:\n    endpoint: 127.0.0.1:0\n    save_to_file: %s\n", filepath.Join(abs, name+".pprof")), 1)
	return strings.Replace(config, "  extensions: [file_storage]", "  extensions: [file_storage, pprof]", 1)
}

func endToEndConfig(port int) string {
	return storageBlock + `receivers:
  agent_log:
    storage: file_storage
` + receiverExtra() + `connectors:
  agent_span:
    storage: file_storage
exporters:
  nop:
service:
  extensions: [file_storage]
  pipelines:
    logs:
      receivers: [agent_log]
      exporters: [agent_span]
    traces:
      receivers: [agent_span]
      exporters: [nop]
` + telemetry(port)
}

// receiverExtra is BENCH_AGENT_LOG: more agent_log settings, one "key: value" per line (to try a
// setting, e.g. BENCH_AGENT_LOG='max_concurrent_files: 16').
func receiverExtra() string {
	var out string
	for line := range strings.SplitSeq(os.Getenv("BENCH_AGENT_LOG"), "\n") {
		if strings.TrimSpace(line) != "" {
			out += "    " + strings.TrimSpace(line) + "\n"
		}
	}
	return out
}

func eventsConfig(port int) string {
	return storageBlock + `receivers:
  agent_log:
    storage: file_storage
` + receiverExtra() + `exporters:
  nop:
service:
  extensions: [file_storage]
  pipelines:
    logs:
      receivers: [agent_log]
      exporters: [nop]
` + telemetry(port)
}

// fileLogConfig is what a user wires by hand: filelog over the same files from the beginning,
// every line parsed by json_parser, positions in file_storage; lines up to agent_log's
// max_log_size.
func fileLogConfig(port int, include []string) string {
	quoted := make([]string, len(include))
	for i, p := range include {
		quoted[i] = fmt.Sprintf("%q", p)
	}
	return storageBlock + `receivers:
  file_log:
    include: [` + strings.Join(quoted, ", ") + `]
    start_at: beginning
    max_log_size: 256MiB
    storage: file_storage
    operators:
      - type: json_parser
exporters:
  nop:
service:
  extensions: [file_storage]
  pipelines:
    logs:
      receivers: [file_log]
      exporters: [nop]
` + telemetry(port)
}

// row is one line of the table.
type row struct {
	Name       string  `json:"name"`
	What       string  `json:"what"`
	Bytes      int64   `json:"bytes"`
	Records    int64   `json:"records"`
	Out        int64   `json:"out,omitempty"`
	OutUnit    string  `json:"out_unit,omitempty"`
	Seconds    float64 `json:"seconds"`
	MBps       float64 `json:"mb_per_s"`
	RecordsPS  float64 `json:"records_per_s"`
	PeakRSSMB  float64 `json:"peak_rss_mb,omitempty"`
	PeakAnonMB float64 `json:"peak_rss_anon_mb,omitempty"`
	PeakFileMB float64 `json:"peak_rss_file_mb,omitempty"`
	CPUSeconds float64 `json:"cpu_s"`
	SpeedX     float64 `json:"mb_per_s_vs_file_log,omitempty"`
	RSSX       float64 `json:"peak_rss_vs_file_log,omitempty"`
	// Baseline marks a row of the AGENTOTEL_BENCH_BASELINE collector.
	Baseline bool `json:"baseline,omitempty"`
	// Stages is where the run's CPU went (its CPU profile, see cpuStages).
	Stages []stage `json:"cpu_stages,omitempty"`
}

// stagesOf reads the CPU profile the run named profile wrote; nil (logged) when it cannot.
func stagesOf(tb testing.TB, profile string) []stage {
	stages, err := cpuStages(filepath.Join(profileDir(), profile+".pprof"))
	if err != nil {
		tb.Logf("CPU stages of %s: %v", profile, err)
	}
	return stages
}

// baselinePrefix starts the name of a baseline row.
const baselinePrefix = "baseline: "

func newRow(name, what string, bytes, records int64, r run) row {
	s := r.Wall.Seconds()
	return row{
		Name: name, What: what, Bytes: bytes, Records: records, Seconds: s,
		MBps: float64(bytes) / 1e6 / s, RecordsPS: float64(records) / s,
		PeakRSSMB: float64(r.PeakRSS) / 1e6, CPUSeconds: r.CPU,
		PeakAnonMB: float64(r.PeakAnon) / 1e6, PeakFileMB: float64(r.PeakFile) / 1e6,
	}
}

// report is what `make bench` writes as JSON.
type report struct {
	Date     string         `json:"date"`
	Machine  string         `json:"machine"`
	CorpusMB int64          `json:"corpus_mb"`
	Files    int            `json:"files"`
	ByAgent  map[string]any `json:"by_agent"`
	// Shares is the mix of the history asked for (BENCH_AGENTS), by agent.
	Shares map[string]float64 `json:"shares,omitempty"`
	// BaselineCollector is AGENTOTEL_BENCH_BASELINE, the build of the baseline rows.
	BaselineCollector string     `json:"baseline_collector,omitempty"`
	Rows              []row      `json:"rows"`
	Latency           []*latency `json:"live_latency,omitempty"`
	Idle              []idleRun  `json:"idle,omitempty"`
	Growth            *growth    `json:"memory_growth,omitempty"`
	LoadBefore        string     `json:"load_average_before"`
}

// BenchmarkSideBySide is `make bench`: see the top of this file.
func BenchmarkSideBySide(b *testing.B) {
	roots := fixtureRoots(b)
	bin := benchCollector(b)
	if os.Getenv("BENCH_LIVE") == "only" {
		// The live run tails a history of its own: no corpus to write.
		rep := report{Date: time.Now().UTC().Format(time.RFC3339), Machine: machine(), LoadBefore: loadAverage()}
		for range b.N {
			rep.Latency = liveLatencies(b, bin, roots[0])
		}
		printReport(os.Stdout, rep)
		writeReport(b, rep)
		writeDoc(b, rep)
		return
	}
	baseline := baselineCollector(b)
	home := b.TempDir()
	target := corpusTarget()
	shares := historyShares(b)
	h := history.WriteHistoryShares(b, roots, home, target, shares)
	include, jsonlBytes, jsonlLines := h.JSONL()
	b.Logf("history: %d files, %.1f MB below %s", len(h.Files), float64(h.Bytes)/1e6, home)

	rep := report{
		Date: time.Now().UTC().Format(time.RFC3339), Machine: machine(),
		CorpusMB: h.Bytes >> 20, Files: len(h.Files), ByAgent: map[string]any{}, LoadBefore: loadAverage(),
		Shares: shares, BaselineCollector: baseline,
	}
	for a, v := range h.ByAgent() {
		rep.ByAgent[a] = map[string]int64{"files": v[0], "bytes": v[1]}
	}
	if os.Getenv("BENCH_IDLE") != "" {
		// The idle part alone (idle_test.go).
		for range b.N {
			rep.Idle = benchIdle(b, bin, home, h)
		}
		if os.Getenv("BENCH_OUT") == "" {
			b.Setenv("BENCH_OUT", filepath.Join(repoRoot(b), "_build", "bench", fmt.Sprintf("bench-idle-%dMB.json", rep.CorpusMB)))
		}
		writeReport(b, rep)
		writeDoc(b, rep)
		return
	}

	want := benchRows(b)
	for range b.N {
		// The floor first: it also brings every file into the page cache for the others.
		floorRead, floorDecode, records := decodeFloor(b, h)
		if want["floor"] {
			rep.Rows = append(rep.Rows,
				newRow("floor: read lines", "every file, one core, in process", h.Bytes, records, floorRead),
				newRow("floor: goccy decode", "every record into map[string]any, one core, in process", h.Bytes, records, floorDecode))
		}

		var rows []row
		if want["end_to_end"] {
			rows = append(rows, endToEndRow(b, bin, home, h.Bytes, "end_to_end"))
			if baseline != "" {
				rows = append(rows, asBaseline(endToEndRow(b, baseline, home, h.Bytes, "baseline-end_to_end")))
			}
		}
		if want["events"] {
			rows = append(rows, eventsRow(b, bin, home, h.Bytes, "events"))
			if baseline != "" {
				rows = append(rows, asBaseline(eventsRow(b, baseline, home, h.Bytes, "baseline-events")))
			}
		}
		var fileLog *row
		if want["file_log"] {
			fl := fileLogRun(b, bin, home, include, jsonlLines, "file_log")
			r := newRow("file_log + json_parser → nop", "the JSONL files (Claude Code, Codex, Pi, Copilot CLI)", jsonlBytes, jsonlLines, fl)
			r.Out, r.OutUnit = int64(fl.Last.series("otelcol_receiver_accepted_log_records")), "log records"
			rows = append(rows, r)
			fileLog = &rows[len(rows)-1]
		}
		if want["ccusage"] {
			cc := ccusageRun(b, home)
			ccusage := newRow("ccusage 20.0.24 session --offline", "every agent it reads (token totals only)", h.Bytes, records, cc.run)
			ccusage.Out, ccusage.OutUnit = cc.sessions, "sessions"
			rows = append(rows, ccusage)
		}
		if fileLog != nil {
			base := *fileLog
			for i := range rows {
				rows[i].SpeedX = rows[i].MBps / base.MBps
				rows[i].RSSX = rows[i].PeakRSSMB / base.PeakRSSMB
			}
		}
		rep.Rows = append(rows, rep.Rows...)
		if want["growth"] {
			rep.Growth = memoryGrowth(b, bin, roots, h, target)
		}
		if want["idle"] {
			// The idle cost at the default poll_interval, watch on and off.
			b.Setenv("BENCH_IDLE", "1")
			rep.Idle = benchIdle(b, bin, home, h)
		}
	}
	if os.Getenv("BENCH_LIVE") != "0" {
		rep.Latency = liveLatencies(b, bin, roots[0])
	}
	printReport(os.Stdout, rep)
	writeReport(b, rep)
	writeDoc(b, rep)
	for i := range rep.Rows {
		r := &rep.Rows[i]
		switch {
		case r.SpeedX == 0, r.Baseline:
		case strings.HasSuffix(r.Name, "(end to end)"):
			b.ReportMetric(r.SpeedX, "e2e-vs-file_log")
			b.ReportMetric(r.RSSX, "e2e-rss-vs-file_log")
		case strings.HasSuffix(r.Name, "(events only)"):
			b.ReportMetric(r.SpeedX, "events-vs-file_log")
		}
	}
}

// endToEndRow is the end-to-end row: bin over home until its last span.
func endToEndRow(b *testing.B, bin, home string, bytes int64, profile string) row {
	e2e := endToEndRun(b, bin, home, profile)
	r := newRow("agent_log → agent_span → nop (end to end)", "every file, until the last span", bytes, int64(e2e.Last.get("otelcol_agent_log_records_read")), e2e)
	r.Stages = stagesOf(b, profile)
	r.Out, r.OutUnit = int64(e2e.Last.get("otelcol_agent_span_spans_emitted")), "spans"
	if open := e2e.Last.get("otelcol_agent_span_open_turns"); open > 0 {
		b.Logf("%s: %v turns still open at the end", bin, open)
	}
	return r
}

// eventsRow is the events-only row: bin over home until its last event.
func eventsRow(b *testing.B, bin, home string, bytes int64, profile string) row {
	port := freePort(b)
	ev := collectorRun{
		bin: bin, home: home, config: withProfile(eventsConfig(port), profile), port: port, settle: settle(),
		// Records read is not a progress signal: the OpenCode tree reader reads a session whose last
		// message never finished again at every poll, so that count grows while nothing new comes.
		progress: func(m metrics) []float64 {
			return []float64{m.get("otelcol_agent_log_events_emitted")}
		},
	}.run(b, 60*time.Minute)
	r := newRow("agent_log → nop (events only)", "every file", bytes, int64(ev.Last.get("otelcol_agent_log_records_read")), ev)
	r.Stages = stagesOf(b, profile)
	r.Out, r.OutUnit = int64(ev.Last.get("otelcol_agent_log_events_emitted")), "events"
	return r
}

// asBaseline marks r as a row of the baseline collector.
func asBaseline(r row) row {
	r.Name, r.Baseline = baselinePrefix+r.Name, true
	return r
}

// baselineCollector is AGENTOTEL_BENCH_BASELINE, a bench build (make bench-collector) of another
// checkout, "" when unset. It must hold what the end-to-end and events-only configurations use.
func baselineCollector(tb testing.TB) string {
	tb.Helper()
	bin := os.Getenv("AGENTOTEL_BENCH_BASELINE")
	if bin == "" {
		return ""
	}
	out, err := exec.Command(bin, "components").Output() //nolint:gosec // the collector the user names to compare with
	if err != nil {
		tb.Fatalf("AGENTOTEL_BENCH_BASELINE=%s: %v", bin, err)
	}
	for _, want := range []string{"name: agent_log", "name: agent_span", "name: nop", "name: file_storage"} {
		if !strings.Contains(string(out), want) {
			tb.Fatalf("AGENTOTEL_BENCH_BASELINE=%s has no %q: give the bench build of the baseline checkout (make bench-collector there: _build/bench/otelcol-agentotel-bench)", bin, strings.TrimPrefix(want, "name: "))
		}
	}
	return bin
}

// endToEndRun runs the end-to-end collector over home until its last span.
func endToEndRun(b *testing.B, bin, home, profile string) run {
	port := freePort(b)
	return collectorRun{
		bin: bin, home: home, config: withProfile(endToEndConfig(port), profile), port: port, settle: settle(),
		progress: func(m metrics) []float64 {
			// Events, not records read (see eventsRow).
			return []float64{
				m.get("otelcol_agent_log_events_emitted"), m.get("otelcol_agent_span_spans_emitted"),
				m.get("otelcol_agent_span_open_turns"),
			}
		},
	}.run(b, 60*time.Minute)
}

// fileLogRun runs file_log + json_parser over the JSONL files until it accepted every line.
func fileLogRun(b *testing.B, bin, home string, include []string, lines int64, profile string) run {
	port := freePort(b)
	return collectorRun{
		bin: bin, home: home, config: withProfile(fileLogConfig(port, include), profile), port: port,
		progress: func(m metrics) []float64 { return []float64{m.series("otelcol_receiver_accepted_log_records")} },
		done: func(m metrics) bool {
			return int64(m.series("otelcol_receiver_accepted_log_records")) >= lines
		},
	}.run(b, 60*time.Minute)
}

// benchRows is BENCH_ROWS, the rows to run as a comma-separated list of end_to_end, events,
// file_log, ccusage, floor and growth (e.g. "end_to_end,file_log" to compare memory alone); all
// of them when unset.
func benchRows(tb testing.TB) map[string]bool {
	all := []string{"end_to_end", "events", "file_log", "ccusage", "floor", "growth", "idle"}
	want := map[string]bool{}
	v := os.Getenv("BENCH_ROWS")
	if strings.TrimSpace(v) == "" {
		for _, r := range all {
			want[r] = true
		}
		return want
	}
	for part := range strings.SplitSeq(v, ",") {
		name := strings.TrimSpace(part)
		if !slices.Contains(all, name) {
			tb.Fatalf("BENCH_ROWS: %q is none of %s", name, strings.Join(all, ", "))
		}
		want[name] = true
	}
	return want
}

// historyShares is the mix of the history: BENCH_AGENTS as agent=share,… (e.g.
// "claude_code=1,codex=1" for a Claude Code and Codex history), else testenv's default.
func historyShares(tb testing.TB) map[string]float64 {
	v := os.Getenv("BENCH_AGENTS")
	if v == "" {
		return history.DefaultHistoryShares
	}
	out := map[string]float64{}
	for part := range strings.SplitSeq(v, ",") {
		name, share, ok := strings.Cut(strings.TrimSpace(part), "=")
		var f float64
		if _, err := fmt.Sscan(share, &f); !ok || err != nil || f < 0 {
			tb.Fatalf("BENCH_AGENTS: %q is not agent=share", part)
		}
		out[name] = f
	}
	return out
}

// settle is how long a collector's metrics must stand still before its work counts as done:
// longer than a poll of agent_log (1 s) plus a pause of a loaded machine.
func settle() time.Duration {
	if v, err := time.ParseDuration(os.Getenv("BENCH_SETTLE")); err == nil && v > 0 {
		return v
	}
	return 5 * time.Second
}

// fixtureRoots are the folders of the fixture corpus (testenv.FixtureRoots: the fixtures, then the
// newest real files), the benchmark skipped when the fixtures are absent. The live replay's
// sessions are named files of the fixtures (the first root).
func fixtureRoots(tb testing.TB) []string {
	tb.Helper()
	roots := testenv.FixtureRoots(tb)
	vendortest.SkipIfAbsent(tb, roots[0])
	return roots
}

// decodeFloor reads every file of the history line by line (a JSON file as one record), then
// decodes every record with jsonx.Unmarshal (the project's decoder) into map[string]any, on one goroutine.
func decodeFloor(tb testing.TB, h history.History) (read, decode run, records int64) {
	tb.Helper()
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	each := func(fn func([]byte)) run {
		runtime.GC()
		cpu0 := selfCPU()
		start := time.Now()
		for _, f := range h.Files {
			data, err := os.ReadFile(f.Path)
			if err != nil {
				tb.Fatal(err)
			}
			if f.Lines == 0 {
				fn(data)
				continue
			}
			for len(data) > 0 {
				i := bytes.IndexByte(data, '\n')
				if i < 0 {
					i = len(data)
				}
				fn(data[:i])
				data = data[min(i+1, len(data)):]
			}
		}
		return run{Wall: time.Since(start), CPU: selfCPU() - cpu0}
	}
	read = each(func([]byte) { records++ })
	var bad int
	decode = each(func(line []byte) {
		var v map[string]any
		if jsonx.Unmarshal(line, &v) != nil {
			bad++
		}
	})
	if bad > 0 {
		tb.Logf("floor: %d records did not decode", bad)
	}
	return read, decode, records
}

func selfCPU() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

type ccusageResult struct {
	run      run
	sessions int64
}

// ccusageRun runs `ccusage session --json --offline` over the history (every agent it detects
// below HOME).
func ccusageRun(tb testing.TB, home string) ccusageResult {
	tb.Helper()
	out, err := exec.Command("bash", filepath.Join(repoRoot(tb), "scripts", "ensure-ccusage.sh")).Output() //nolint:gosec // G204: the repository's own script
	if err != nil {
		tb.Fatalf("scripts/ensure-ccusage.sh: %v", err)
	}
	bin := strings.TrimSpace(string(out))
	var stdout bytes.Buffer
	r := programRun(tb, home, &stdout, bin, "session", "--json", "--offline")
	// `ccusage session` over every agent lists them under "session" (one agent's command under
	// "sessions").
	var rep struct {
		Session  []json.RawMessage `json:"session"`
		Sessions []json.RawMessage `json:"sessions"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		tb.Fatalf("ccusage output: %v: %.300s", err, stdout.Bytes())
	}
	n := int64(len(rep.Session) + len(rep.Sessions))
	if n == 0 {
		tb.Fatalf("ccusage found no session in the history: %.300s", stdout.Bytes())
	}
	return ccusageResult{run: r, sessions: n}
}

func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	return fmt.Sprintf("%d CPUs, %s, %s", runtime.NumCPU(), model, runtime.Version())
}

func loadAverage() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
