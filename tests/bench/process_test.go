// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// clockTicks is the unit of utime/stime in /proc/<pid>/stat (USER_HZ, 100 on Linux).
const clockTicks = 100

// cpuSeconds is the user+system CPU time the process used so far (all its threads).
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields are counted after its ")".
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	return (ut + st) / clockTicks, nil
}

// peakRSS is the process's resident-set high-water mark (VmHWM) in bytes.
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// rssParts is the process's resident set now, split as /proc/<pid>/status does: anonymous
// memory (the Go heap, stacks) and file-backed pages (the binary, and the storage files bbolt
// maps into memory).
func rssParts(pid int) (anon, file int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		for key, dst := range map[string]*int64{"RssAnon:": &anon, "RssFile:": &file} {
			if rest, ok := strings.CutPrefix(line, key); ok {
				kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
				if err != nil {
					return 0, 0, err
				}
				*dst = kb << 10
			}
		}
	}
	return anon, file, nil
}

// metrics is one scrape of the collector's Prometheus endpoint: the sum of every series of a
// metric by name (without the _total suffix), and the series by their full text.
type metrics map[string]float64

func (m metrics) get(name string) float64 { return m[name] }

// series sums the series of name whose label text contains every one of labels (`k="v"`).
func (m metrics) series(name string, labels ...string) float64 {
	var sum float64
	for k, v := range m {
		base, lbl, ok := strings.Cut(k, "{")
		if !ok || base != name {
			continue
		}
		match := true
		for _, l := range labels {
			if !strings.Contains(lbl, l) {
				match = false
			}
		}
		if match {
			sum += v
		}
	}
	return sum
}

var scrapeClient = &http.Client{Timeout: 5 * time.Second}

func scrape(url string) (metrics, error) {
	resp, err := scrapeClient.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	m := metrics{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		key := line[:i]
		name, labels, hasLabels := strings.Cut(key, "{")
		name = strings.TrimSuffix(name, "_total")
		m[name] += v
		if hasLabels {
			m[name+"{"+labels] += v
		}
	}
	return m, sc.Err()
}

// run is one measured run of a program over the history.
type run struct {
	Wall    time.Duration
	CPU     float64 // seconds
	PeakRSS int64   // bytes
	// PeakAnon and PeakFile are the highest anonymous and file-backed resident sets seen by
	// the scrapes (every pollEvery): their sum may exceed PeakRSS, they peak apart.
	PeakAnon, PeakFile int64
	Last               metrics // the collector's metrics at the end (nil for other programs)
}

// benchEnv is the environment every program runs in: HOME is the history, and no agent variable
// points elsewhere.
func benchEnv(home string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "PI_CODING_AGENT_DIR", "XDG_DATA_HOME", "GEMINI_DIR", "COPILOT_HOME", "AMP_DATA_DIR":
			continue
		}
		env = append(env, kv)
	}
	return append(append(env, "HOME="+home), extra...)
}

// collectorRun runs the collector with config until done says its work is over, polling its own
// metrics every pollEvery. done sees every scrape; the run ends at the first scrape after which
// nothing changed for settle (the values compared are what progress returns), and is timed to
// that scrape: from the process start until the last change was first seen. CPU time is read at
// that scrape and the peak RSS at the end, before the collector is stopped.
type collectorRun struct {
	bin      string
	home     string
	config   string
	port     int
	progress func(m metrics) []float64
	// done reports that the work is complete as soon as it is (no settling needed), e.g. when
	// the count of records is known.
	done   func(m metrics) bool
	settle time.Duration
}

const pollEvery = 100 * time.Millisecond

// collector is a running collector.
type collector struct {
	tb      testing.TB
	pid     int
	start   time.Time
	logPath string
	exited  chan error
}

// startCollector starts bin with config, HOME at home and its file_storage in a fresh folder.
func startCollector(tb testing.TB, bin, home, config string) *collector {
	tb.Helper()
	dir := tb.TempDir()
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		tb.Fatal(err)
	}
	c := &collector{tb: tb, logPath: filepath.Join(dir, "collector.log"), exited: make(chan error, 1)}
	logFile, err := os.Create(c.logPath)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", cfgPath)
	cmd.Env = benchEnv(home, "AGENTOTEL_BENCH_STATE="+filepath.Join(dir, "state"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.start = time.Now()
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	c.pid = cmd.Process.Pid
	go func() { c.exited <- cmd.Wait(); logFile.Close() }()
	return c
}

// fail kills the collector and fails the benchmark with the tail of its log.
func (c *collector) fail(format string, args ...any) {
	c.tb.Helper()
	_ = syscall.Kill(-c.pid, syscall.SIGKILL)
	b, _ := os.ReadFile(c.logPath)
	if len(b) > 6000 {
		b = b[len(b)-6000:]
	}
	c.tb.Fatalf("%s\n--- collector log (tail) ---\n%s", fmt.Sprintf(format, args...), b)
}

// stop sends SIGTERM, then SIGKILL to its process group after a minute.
func (c *collector) stop() {
	_ = syscall.Kill(c.pid, syscall.SIGTERM)
	select {
	case <-c.exited: //nolint:errcheck // stop only waits for the collector to be gone; its exit status is not measured
	case <-time.After(60 * time.Second):
		_ = syscall.Kill(-c.pid, syscall.SIGKILL)
		<-c.exited //nolint:errcheck // as above
	}
}

func (c collectorRun) run(tb testing.TB, timeout time.Duration) run {
	tb.Helper()
	p := startCollector(tb, c.bin, c.home, c.config)
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", c.port)
	var (
		last       []float64
		lastChange = p.start
		changeCPU  float64
		m          metrics
		peakAnon   int64
		peakFile   int64
	)
	deadline := p.start.Add(timeout)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case err := <-p.exited:
			p.fail("the collector exited early: %v", err)
		case <-tick.C:
		}
		now := time.Now()
		if now.After(deadline) {
			p.fail("no end of work after %s (last progress %v)", timeout, last)
		}
		cur, err := scrape(url)
		if err != nil {
			continue // not listening yet
		}
		cpu, err := cpuSeconds(p.pid)
		if err != nil {
			continue
		}
		if anon, file, err := rssParts(p.pid); err == nil {
			peakAnon, peakFile = max(peakAnon, anon), max(peakFile, file)
		}
		m = cur
		prog := c.progress(m)
		if !equal(prog, last) {
			last, lastChange, changeCPU = prog, now, cpu
			if os.Getenv("BENCH_TRACE") != "" {
				fmt.Fprintf(os.Stderr, "bench trace: %6.1fs cpu %5.1fs progress %v\n", now.Sub(p.start).Seconds(), cpu, prog)
			}
		}
		if c.done != nil && c.done(m) {
			break
		}
		if c.done == nil && now.Sub(lastChange) >= c.settle && anyPositive(last) {
			break
		}
	}
	r := run{Wall: lastChange.Sub(p.start), CPU: changeCPU, Last: m, PeakAnon: peakAnon, PeakFile: peakFile}
	var err error
	if r.PeakRSS, err = peakRSS(p.pid); err != nil {
		tb.Fatal(err)
	}
	p.stop()
	return r
}

func equal(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func anyPositive(v []float64) bool {
	for _, x := range v {
		if x > 0 {
			return true
		}
	}
	return false
}

// programRun runs a program to its end; CPU and peak RSS come from its rusage.
func programRun(tb testing.TB, home string, stdout io.Writer, name string, args ...string) run {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tb.Context(), 60*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = benchEnv(home)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		tb.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.Bytes())
	}
	wall := time.Since(start)
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	return run{Wall: wall, CPU: cpu, PeakRSS: ru.Maxrss << 10}
}
