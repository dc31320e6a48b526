// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/claudecode"
	"github.com/agentotel/agentotel/internal/vendors/codex"
	"github.com/agentotel/agentotel/tests/testenv"
)

// latency is the live part of the report.
type latency struct {
	Setup  string  `json:"setup"`
	Turns  int     `json:"turns"`
	Missed int     `json:"missed"`
	P50ms  float64 `json:"p50_ms"`
	P90ms  float64 `json:"p90_ms"`
	P99ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
}

// liveTurnIdle is the short turn_idle_timeout of the live run: longer than the pause between two
// writes, so that every measured turn is closed by its own closing line, not by the clock.
const liveTurnIdle = 5 * time.Second

func liveConfig(port, sink int) string {
	return storageBlock + fmt.Sprintf(`receivers:
  agent_log:
    storage: file_storage
`+receiverExtra()+`connectors:
  agent_span:
    storage: file_storage
    turn_idle_timeout: %s
processors:
  batch:
exporters:
  otlphttp:
    endpoint: http://127.0.0.1:%d
service:
  extensions: [file_storage]
  pipelines:
    logs:
      receivers: [agent_log]
      exporters: [agent_span]
    traces:
      receivers: [agent_span]
      processors: [batch]
      exporters: [otlphttp]
`, liveTurnIdle, sink) + telemetry(port)
}

// liveSettings names the agent_log settings of the live run that are not defaults.
func liveSettings() string {
	if extra := strings.TrimSpace(receiverExtra()); extra != "" {
		return " but " + strings.Join(strings.Fields(strings.ReplaceAll(extra, "\n", ",")), " ")
	}
	return " (poll_interval 1s)"
}

// spanSink is an OTLP/HTTP endpoint that notes when each turn's root span arrives.
type spanSink struct {
	mu    sync.Mutex
	roots []time.Time
	cond  chan struct{}
}

func (s *spanSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		in = zr
	}
	body, err := io.ReadAll(in)
	now := time.Now()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	rss := req.Traces().ResourceSpans()
	for i := range rss.Len() {
		sss := rss.At(i).ScopeSpans()
		for j := range sss.Len() {
			spans := sss.At(j).Spans()
			for k := range spans.Len() {
				if spans.At(k).ParentSpanID().IsEmpty() {
					s.roots = append(s.roots, now)
				}
			}
		}
	}
	s.mu.Unlock()
	select {
	case s.cond <- struct{}{}:
	default:
	}
	resp, _ := ptraceotlp.NewExportResponse().MarshalProto()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

// waitRoot waits until the sink holds more than n roots and returns when root n+1 arrived.
func (s *spanSink) waitRoot(n int, timeout time.Duration) (time.Time, bool) {
	deadline := time.After(timeout)
	for {
		s.mu.Lock()
		if len(s.roots) > n {
			at := s.roots[n]
			s.mu.Unlock()
			return at, true
		}
		s.mu.Unlock()
		select {
		case <-s.cond:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			return time.Time{}, false
		}
	}
}

func (s *spanSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.roots)
}

var timestampRe = regexp.MustCompile(`"timestamp":"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}))"`)

// shiftTo moves every timestamp of lines so that the last one is at.
func shiftTo(lines [][]byte, at time.Time) []byte {
	var last time.Time
	for _, l := range lines {
		for _, m := range timestampRe.FindAllSubmatch(l, -1) {
			if ts, err := time.Parse(time.RFC3339Nano, string(m[1])); err == nil && ts.After(last) {
				last = ts
			}
		}
	}
	d := at.Sub(last)
	var out []byte
	for _, l := range lines {
		l = timestampRe.ReplaceAllFunc(l, func(m []byte) []byte {
			sub := timestampRe.FindSubmatch(m)
			ts, err := time.Parse(time.RFC3339Nano, string(sub[1]))
			if err != nil {
				return m
			}
			return []byte(`"timestamp":"` + ts.Add(d).UTC().Format("2006-01-02T15:04:05.000Z") + `"`)
		})
		out = append(append(out, l...), '\n')
	}
	return out
}

// prompts marks the lines that open a turn: those the vendor's parser maps to a user message
// (what the agent_span connector takes as a prompt).
func prompts(p interface {
	Parse(line []byte, lineNo, offset int64) []agentevent.Event
}, lines [][]byte) []bool {
	out := make([]bool, len(lines))
	var offset int64
	for i, l := range lines {
		for _, ev := range p.Parse(l, int64(i+1), offset) {
			if ev.Type == agentevent.TypeUserMessage && ev.AgentID == "" {
				out[i] = true
			}
		}
		offset += int64(len(l)) + 1
	}
	return out
}

func splitLines(data []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(data, []byte{'\n'}) {
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// liveSessions are copy r of the replayed sessions (two Claude Code sessions and a Codex rollout),
// cut at each prompt: the next prompt closes a turn.
func liveSessions(tb testing.TB, fixtures string, r int) [][]liveSessionLines {
	tb.Helper()
	var out [][]liveSessionLines
	for _, rel := range []string{
		"claude_code/v2.1.90_permission_mode_attachment/ca2442ad-2504-45cb-8b0f-adb8df732dc7.jsonl",
		"claude_code/v2.1.111_compaction_hooks/4e1f519b-0c87-4b0b-9f45-bdf046f7c96f.jsonl",
		"codex/v0.117.0_exec_patch_events.jsonl",
	} {
		b, err := os.ReadFile(filepath.Join(fixtures, rel))
		if err != nil {
			tb.Fatalf("live session: %v", err)
		}
		b = testenv.UniqueIDs(b, 1000+r)
		lines := splitLines(b)
		var path string
		var isPrompt []bool
		if strings.HasPrefix(rel, "codex/") {
			path = filepath.Join(".codex", "sessions", "2026", "01", "01", "rollout-"+testenv.CodexSessionID(b)+".jsonl")
			isPrompt = prompts(codex.NewParser(path), lines)
		} else {
			path = filepath.Join(".claude", "projects", "-live", testenv.ClaudeSessionID(b)+".jsonl")
			isPrompt = prompts(claudecode.NewParser(path), lines)
		}
		// One write per turn; a write's first line (the next prompt) closes the turn before it.
		var segs []liveSessionLines
		cur := liveSessionLines{path: path}
		seen := 0
		for i, l := range lines {
			if isPrompt[i] && len(cur.lines) > 0 {
				segs = append(segs, cur)
				cur = liveSessionLines{path: path, closes: seen > 0}
			}
			if isPrompt[i] {
				seen++
			}
			cur.lines = append(cur.lines, l)
		}
		segs = append(segs, cur)
		out = append(out, segs)
	}
	return out
}

// liveSessionLines is one write of a replayed session: what the agent appends at once, and
// whether it closes a turn (its last line is an end marker, or its first the next prompt).
type liveSessionLines struct {
	path   string // below home
	lines  [][]byte
	closes bool
}

// liveLatency appends real sessions to a history the collector tails, one write at a time, and
// times each write that closes a turn until the turn's root span reaches the exporter (an
// OTLP/HTTP endpoint of the benchmark). A pause of up to 1 s (random) separates the writes, so
// that the writes fall anywhere in the receiver's poll interval.
func liveLatency(tb testing.TB, bin, fixtures string) *latency {
	tb.Helper()
	sink := &spanSink{cond: make(chan struct{}, 1)}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: sink, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()

	home := tb.TempDir()
	port := freePort(tb)
	proc := startCollector(tb, bin, home, liveConfig(port, l.Addr().(*net.TCPAddr).Port), port)
	defer proc.stop()

	rounds := 6
	if v := os.Getenv("BENCH_LIVE_ROUNDS"); v != "" {
		fmt.Sscan(v, &rounds)
	}
	var samples []time.Duration
	missed := 0
	rng := rand.New(rand.NewPCG(1, 2))
	for r := range rounds {
		for _, segs := range liveSessions(tb, fixtures, r) {
			for _, seg := range segs {
				time.Sleep(time.Duration(rng.Int64N(int64(time.Second))))
				roots := sink.count()
				path := filepath.Join(home, seg.path)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					tb.Fatal(err)
				}
				f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
				if err != nil {
					tb.Fatal(err)
				}
				data := shiftTo(seg.lines, time.Now())
				written := time.Now()
				_, err = f.Write(data)
				f.Close()
				if err != nil {
					tb.Fatal(err)
				}
				if !seg.closes {
					continue
				}
				at, ok := sink.waitRoot(roots, 10*time.Second)
				if !ok {
					missed++
					continue
				}
				samples = append(samples, at.Sub(written))
				if os.Getenv("BENCH_LIVE_DEBUG") != "" {
					tb.Logf("live: %s: %s", seg.path, at.Sub(written))
				}
			}
		}
		// Let the last turns close by the idle timeout before the next round, so that no
		// stray root is taken for the next measured turn.
		n := sink.count()
		for {
			if _, ok := sink.waitRoot(n, liveTurnIdle+3*time.Second); !ok {
				break
			}
			n = sink.count()
		}
	}
	if len(samples) == 0 {
		proc.fail("live: no turn reached the exporter (%d missed)", missed)
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	pct := func(p float64) float64 {
		i := int(p*float64(len(samples))+0.5) - 1
		i = max(0, min(i, len(samples)-1))
		return float64(samples[i]) / float64(time.Millisecond)
	}
	return &latency{
		Setup: fmt.Sprintf("agent_log defaults%s, turn_idle_timeout %s, batch, otlphttp", liveSettings(), liveTurnIdle),
		Turns: len(samples), Missed: missed, P50ms: pct(0.50), P90ms: pct(0.90), P99ms: pct(0.99), MaxMs: pct(1),
	}
}
