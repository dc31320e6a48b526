// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentotel/agentotel/tests/testenv/history"
)

// The idle part (`BENCH_IDLE=1 make bench`): what agent_log costs while nothing is written. For
// each poll_interval the events-only collector reads the history to its end, its metrics stand
// still for BENCH_SETTLE, and then its CPU time is measured over BENCH_IDLE_WINDOW (default a
// minute) with nothing appended: the polls over the whole history, the sweeps, the flushes, and
// the directory watches. Each interval runs with watch on and off. BENCH_IDLE lists the intervals
// ("1s,250ms"; "1" for the default, 1s); with BENCH_PPROF=<dir> the CPU profile of each window is
// written to <dir>/idle-<interval>-watch-<bool>.pprof.

// idleRun is one poll_interval's idle figures.
type idleRun struct {
	PollInterval   string  `json:"poll_interval"`
	Watch          bool    `json:"watch"`
	BackfillS      float64 `json:"backfill_s"`
	WindowS        float64 `json:"window_s"`
	CPUPerMinute   float64 `json:"cpu_s_per_minute"`
	PercentOfCore  float64 `json:"percent_of_one_core"`
	RSSMB          float64 `json:"rss_mb"`
	RecordsDuring  float64 `json:"records_read_during_window"`
	RecordsTotal   float64 `json:"records_read"`
	ProfileWritten string  `json:"profile,omitempty"`
}

func idleIntervals(tb testing.TB) []time.Duration {
	v := os.Getenv("BENCH_IDLE")
	if v == "1" {
		v = "1s"
	}
	var out []time.Duration
	for s := range strings.SplitSeq(v, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil || d <= 0 {
			tb.Fatalf("BENCH_IDLE: %q is not a poll interval", s)
		}
		out = append(out, d)
	}
	return out
}

func idleWindow() time.Duration {
	if v, err := time.ParseDuration(os.Getenv("BENCH_IDLE_WINDOW")); err == nil && v > 0 {
		return v
	}
	return time.Minute
}

// benchIdle runs the idle part over the history h (below home) and prints its table.
func benchIdle(b *testing.B, bin, home string, h history.History) []idleRun {
	var runs []idleRun
	for _, interval := range idleIntervals(b) {
		for _, watch := range []bool{true, false} {
			runs = append(runs, idleOnce(b, bin, home, interval, watch))
		}
	}
	fmt.Printf("\nIdle: %d MB in %d files, nothing appended; %s; load average: %s\n\n",
		h.Bytes>>20, len(h.Files), machine(), loadAverage())
	writeIdleTable(os.Stdout, runs)
	return runs
}

func idleOnce(tb testing.TB, bin, home string, interval time.Duration, watch bool) idleRun {
	tb.Helper()
	port := freePort(tb)
	config := strings.Replace(eventsConfig(port), "    storage: file_storage\n",
		fmt.Sprintf("    storage: file_storage\n    poll_interval: %s\n    watch: %t\n", interval, watch), 1)
	pprofPort := 0
	if os.Getenv("BENCH_PPROF") != "" {
		pprofPort = freePort(tb)
		config = strings.Replace(config, "extensions:\n", fmt.Sprintf("extensions:\n  pprof:\n    endpoint: 127.0.0.1:%d\n", pprofPort), 1)
		config = strings.Replace(config, "  extensions: [file_storage]", "  extensions: [file_storage, pprof]", 1)
	}
	c := startCollector(tb, bin, home, config)
	defer c.stop()
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)

	// The backfill: until records read and events emitted stand still for BENCH_SETTLE.
	var (
		last       []float64
		lastChange = c.start
		m          metrics
	)
	tick := time.NewTicker(pollEvery)
	for {
		select {
		case err := <-c.exited:
			c.fail("the collector exited early: %v", err)
		case <-tick.C:
		}
		if time.Since(c.start) > 60*time.Minute {
			c.fail("no end of the backfill after an hour")
		}
		cur, err := scrape(url)
		if err != nil {
			continue
		}
		m = cur
		prog := []float64{m.get("otelcol_agent_log_records_read"), m.get("otelcol_agent_log_events_emitted")}
		if !equal(prog, last) {
			last, lastChange = prog, time.Now()
		}
		if time.Since(lastChange) >= settle() && anyPositive(last) {
			break
		}
	}
	tick.Stop()
	r := idleRun{PollInterval: interval.String(), Watch: watch, BackfillS: lastChange.Sub(c.start).Seconds(), RecordsTotal: last[0]}

	// The idle window.
	window := idleWindow()
	cpu0, err := cpuSeconds(c.pid)
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	if pprofPort != 0 {
		r.ProfileWritten = fetchProfile(tb, pprofPort, window, fmt.Sprintf("%s-watch-%t", interval, watch))
	}
	if rest := window - time.Since(start); rest > 0 {
		time.Sleep(rest) // a benchmark's measuring window, not a wait for a condition
	}
	cpu1, err := cpuSeconds(c.pid)
	if err != nil {
		tb.Fatal(err)
	}
	elapsed := time.Since(start)
	end, err := scrape(url)
	if err != nil {
		tb.Fatal(err)
	}
	r.WindowS = elapsed.Seconds()
	r.CPUPerMinute = (cpu1 - cpu0) / elapsed.Minutes()
	r.PercentOfCore = 100 * (cpu1 - cpu0) / elapsed.Seconds()
	r.RecordsDuring = end.get("otelcol_agent_log_records_read") - last[0]
	if rss, err := currentRSS(c.pid); err == nil {
		r.RSSMB = float64(rss) / 1e6
	}
	tb.Logf("idle at poll_interval %s, watch %t: backfill %.1f s, %.2f CPU s per minute (%.1f %% of a core)",
		interval, watch, r.BackfillS, r.CPUPerMinute, r.PercentOfCore)
	return r
}

// fetchProfile takes the collector's CPU profile over window through the pprof extension.
func fetchProfile(tb testing.TB, port int, window time.Duration, name string) string {
	tb.Helper()
	client := &http.Client{Timeout: window + 30*time.Second}
	resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/profile?seconds=%d", port, int(window.Seconds())))
	if err != nil {
		tb.Fatalf("CPU profile: %v", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		tb.Fatalf("CPU profile: %v %s", err, resp.Status)
	}
	dir, _ := filepath.Abs(os.Getenv("BENCH_PPROF"))
	_ = os.MkdirAll(dir, 0o755) //nolint:gosec // G703: the folder the developer names in BENCH_PPROF
	path := filepath.Join(dir, "idle-"+name+".pprof")
	if err := os.WriteFile(path, data, 0o600); err != nil { //nolint:gosec // G703: as above
		tb.Fatal(err)
	}
	return path
}

// currentRSS is the process's resident set now (VmRSS) in bytes.
func currentRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			_, err := fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(rest), "kB"), &kb)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
