// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/claudecode"
	"github.com/agentotel/agentotel/internal/vendors/codex"
	"github.com/agentotel/agentotel/tests/testenv"
	"github.com/agentotel/agentotel/tests/testenv/history"
)

// latency is the live part of the report.
type latency struct {
	Setup string `json:"setup"`
	// Watch is the receiver's watch setting of the run.
	Watch  bool    `json:"watch"`
	Turns  int     `json:"turns"`
	Missed int     `json:"missed"`
	P50ms  float64 `json:"p50_ms"`
	P90ms  float64 `json:"p90_ms"`
	P99ms  float64 `json:"p99_ms"`
	MaxMs  float64 `json:"max_ms"`
	// ByReason counts the measured turns by what closed them in the connector (its debug log:
	// next_prompt, end_marker, idle), and by "closer": whether the line that closes the turn is
	// its own end marker or the next prompt.
	ByReason map[string]int `json:"by_reason"`
	// Dropped is otelcol_agent_span_input_dropped by reason at the end: duplicate_span counts the
	// spans of events that came after their turn went out (rows written after its end marker
	// that the reader read after it) and were not emitted.
	Dropped map[string]int `json:"dropped,omitempty"`
	// PerTurn is one line per measured turn (BENCH_LIVE_DEBUG prints them too).
	PerTurn []string `json:"per_turn,omitempty"`
}

// liveTurnIdle is the short turn_idle_timeout of the live run: longer than the pause between two
// writes, so that every measured turn is closed by its own closing line, not by the clock.
const liveTurnIdle = 5 * time.Second

// liveConfig is the live run's collector: no batch processor in front of the exporter, which would
// hold every turn up to its timeout (200 ms by default); the exporter sends each ConsumeTraces.
func liveConfig(port, sink int, watch bool) string {
	return storageBlock + fmt.Sprintf(`receivers:
  agent_log:
    storage: file_storage
    watch: %t
`+receiverExtra()+`connectors:
  agent_span:
    storage: file_storage
    turn_idle_timeout: %s
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
      exporters: [otlphttp]
`, watch, liveTurnIdle, sink) + liveTelemetry(port)
}

// liveRuns are the live run's two settings of watch: on (the default), a write wakes the
// receiver; off, it waits for the next poll.
var liveRuns = []bool{true, false}

// liveTelemetry is telemetry with debug logs as JSON, unsampled (the collector's default keeps 10
// entries of a message per 10 s): the connector logs why it closed each turn ("Turn emitted",
// reason), which the live run reports per turn.
func liveTelemetry(port int) string {
	return strings.Replace(telemetry(port), "      level: warn\n",
		"      level: debug\n      encoding: json\n      sampling:\n        enabled: false\n", 1)
}

// liveSettings names the agent_log settings of the live run.
func liveSettings(watch bool) string {
	out := fmt.Sprintf("watch: %t", watch)
	if extra := strings.TrimSpace(receiverExtra()); extra != "" {
		out += ", " + strings.Join(strings.Fields(strings.ReplaceAll(extra, "\n", ",")), " ")
	} else {
		out += ", poll_interval: 1s"
	}
	return out
}

// rootKey names a turn: its session and its prompt's event id (agent.event.id on its root).
type rootKey struct{ session, prompt string }

// spanSink is an OTLP/HTTP endpoint that notes when each turn's root span arrives.
type spanSink struct {
	mu    sync.Mutex
	roots map[rootKey]sunkRoot
}

// sunkRoot is a root span as it arrived.
type sunkRoot struct {
	at     time.Time
	status string
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
				sp := spans.At(k)
				if !sp.ParentSpanID().IsEmpty() {
					continue
				}
				a := sp.Attributes()
				key := rootKey{attrStr(a, agentevent.AttrSessionID), attrStr(a, agentevent.AttrEventID)}
				if _, dup := s.roots[key]; !dup {
					s.roots[key] = sunkRoot{at: now, status: attrStr(a, "agent.turn.status")}
				}
			}
		}
	}
	s.mu.Unlock()
	resp, _ := ptraceotlp.NewExportResponse().MarshalProto()
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(resp)
}

func attrStr(a pcommon.Map, k string) string {
	if v, ok := a.Get(k); ok {
		return v.AsString()
	}
	return ""
}

// root is the root of the turn named by key, once it arrived.
func (s *spanSink) root(key rootKey) (sunkRoot, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.roots[key]
	return r, ok
}

// waitAll waits until every turn of keys has arrived, or until timeout.
func (s *spanSink) waitAll(keys []rootKey, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		all := true
		for _, k := range keys {
			if _, ok := s.root(k); !ok {
				all = false
				break
			}
		}
		if all {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

var timestampRe = regexp.MustCompile(`"timestamp":"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}))"`)

// shiftTo moves every timestamp of a write's lines so that the latest one of a line the parser
// maps to events (evLines; of any line when none is) is at, and clamps later ones to at: rows that
// map to nothing (Claude Code's queue operations) may carry the time of the next prompt, minutes
// later, which would make the turn's events look that old — and a caught-up turn that old closes
// as idle at once.
func shiftTo(lines [][]byte, evLines []bool, at time.Time) []byte {
	var last, lastAny time.Time
	for i, l := range lines {
		for _, m := range timestampRe.FindAllSubmatch(l, -1) {
			if ts, err := time.Parse(time.RFC3339Nano, string(m[1])); err == nil {
				if ts.After(lastAny) {
					lastAny = ts
				}
				if evLines[i] && ts.After(last) {
					last = ts
				}
			}
		}
	}
	if last.IsZero() {
		last = lastAny
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
			ts = ts.Add(d)
			if ts.After(at) {
				ts = at
			}
			return []byte(`"timestamp":"` + ts.UTC().Format("2006-01-02T15:04:05.000Z") + `"`)
		})
		out = append(append(out, l...), '\n')
	}
	return out
}

// lineFacts is what the vendor's parser makes of one line: the prompt it opens (the event id of
// a main-thread user_message, what the agent_span connector takes as a prompt), and whether it
// carries the vendor's end-of-turn marker.
type lineFacts struct {
	prompt string
	ends   bool
	events bool // the line maps to at least one event
}

// lineParser is a vendor parser as parseLines uses it.
type lineParser interface {
	Parse(line []byte, lineNo, offset int64) []agentevent.Event
}

func parseLines(p lineParser, lines [][]byte) []lineFacts {
	out := make([]lineFacts, len(lines))
	var offset int64
	for i, l := range lines {
		events := p.Parse(l, int64(i+1), offset)
		for j := range events {
			ev := &events[j]
			out[i].events = true
			if ev.Type == agentevent.TypeUserMessage && ev.AgentID == "" {
				out[i].prompt = ev.EventID
			}
			if _, ok := ev.Attributes[agentevent.AttrTurnEnd]; ok && ev.AgentID == "" {
				out[i].ends = true
			}
		}
		offset += int64(len(l)) + 1
	}
	return out
}

func splitLines(data []byte) [][]byte {
	var out [][]byte
	for l := range bytes.SplitSeq(data, []byte{'\n'}) {
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// liveSession is one replayed session, cut into writes at each prompt: a write holds one turn
// (the first write also what comes before the first prompt).
type liveSession struct {
	agent   string
	session string
	path    string // below home
	writes  []liveWrite
}

// liveWrite is what the agent appends at once.
type liveWrite struct {
	lines   [][]byte
	evLines []bool // per line, whether the parser maps it to events
	// prompt is the event id of the prompt the write opens ("" for lines before the first).
	prompt string
	// ends tells that the write holds the turn's end marker: the turn is complete with it.
	ends bool
}

// liveSessions are copy r of the replayed sessions (two Claude Code sessions and a Codex rollout),
// to be written below home (event ids made from the file's path, as Codex's, need the real one).
func liveSessions(tb testing.TB, fixtures, home string, r int) []liveSession {
	tb.Helper()
	var out []liveSession
	for _, rel := range []string{
		"claude_code/v2.1.90_permission_mode_attachment/ca2442ad-2504-45cb-8b0f-adb8df732dc7.jsonl",
		"claude_code/v2.1.111_compaction_hooks/4e1f519b-0c87-4b0b-9f45-bdf046f7c96f.jsonl",
		"codex/v0.117.0_exec_patch_events.jsonl",
	} {
		b, err := os.ReadFile(filepath.Join(fixtures, rel))
		if err != nil {
			tb.Fatalf("live session: %v", err)
		}
		b = history.UniqueIDs(b, 1000+r)
		lines := splitLines(b)
		s := liveSession{}
		var facts []lineFacts
		if strings.HasPrefix(rel, "codex/") {
			s.agent, s.session = "codex", codex.RolloutSessionID(b)
			s.path = filepath.Join(".codex", "sessions", "2026", "01", "01", "rollout-"+s.session+".jsonl")
			facts = parseLines(codex.NewParser(filepath.Join(home, s.path)), lines)
		} else {
			s.agent, s.session = "claude_code", testenv.ClaudeSessionID(b)
			s.path = filepath.Join(".claude", "projects", "-live", s.session+".jsonl")
			facts = parseLines(claudecode.NewParser(filepath.Join(home, s.path)), lines)
		}
		starts := writeStarts(lines, facts)
		var cur liveWrite
		for i, l := range lines {
			if starts[i] && len(cur.lines) > 0 {
				s.writes = append(s.writes, cur)
				cur = liveWrite{}
			}
			if facts[i].prompt != "" {
				cur.prompt = facts[i].prompt
			}
			if facts[i].ends && cur.prompt != "" {
				cur.ends = true
			}
			cur.lines = append(cur.lines, l)
			cur.evLines = append(cur.evLines, facts[i].events)
		}
		s.writes = append(s.writes, cur)
		out = append(out, s)
	}
	return out
}

// promptBurst is how long before a prompt the rows an agent writes when the user submits it may be
// stamped (Claude Code's queue operations, the file-history snapshot of the new message, a local
// command's caveat).
const promptBurst = 2 * time.Second

// writeStarts marks the lines that begin a write: a write per prompt, starting with the rows
// written together with the prompt — those just before it that have no timestamp of their own or
// one within promptBurst of the prompt's — so that, as live, they come after the previous turn's
// last row was read (its end marker, if it has one, never moves).
func writeStarts(lines [][]byte, facts []lineFacts) []bool {
	stamp := func(l []byte) (time.Time, bool) {
		if m := timestampRe.FindSubmatch(l); m != nil {
			if ts, err := time.Parse(time.RFC3339Nano, string(m[1])); err == nil {
				return ts, true
			}
		}
		return time.Time{}, false
	}
	starts := make([]bool, len(lines))
	prev := 0 // the first line of the write being built
	for i := range lines {
		if facts[i].prompt == "" || i == 0 {
			continue
		}
		at, ok := stamp(lines[i])
		j := i
		for ok && j-1 > prev && facts[j-1].prompt == "" && !facts[j-1].ends {
			if ts, has := stamp(lines[j-1]); has && ts.Before(at.Add(-promptBurst)) {
				break
			}
			j--
		}
		starts[j] = true
		prev = i
	}
	return starts
}

// Closers of a turn: the line that completes it is in its own write, or it is the next prompt.
const (
	closerOwn  = "own end marker"
	closerNext = "next prompt"
)

// closers gives, per write, what completes the turn the write opens: its own end marker, the
// next write's prompt, or nothing ("": the session's last turn without an end marker, which only
// turn_idle_timeout closes, and a write that opens no turn).
func (s liveSession) closers() []string {
	out := make([]string, len(s.writes))
	for i, w := range s.writes {
		switch {
		case w.prompt == "":
		case w.ends:
			out[i] = closerOwn
		case i+1 < len(s.writes) && s.writes[i+1].prompt != "":
			out[i] = closerNext
		}
	}
	return out
}

// liveTurn is one turn of the live run.
type liveTurn struct {
	agent string
	key   rootKey
	round int
	index int // 1-based within its session
	// written is when the turn's own lines were appended; closing when the line that completes
	// it was: its own write when that holds its end marker, else the next prompt's write.
	written, closing time.Time
	closer           string // "own end marker" or "next prompt"
}

// liveLatency appends real sessions to a history the collector tails, one write (one turn) at a
// time with a random pause of up to 1 s in between, so that the writes fall anywhere in the
// receiver's poll interval. Each turn that its own lines or the next prompt complete is timed
// from the write of that line until its root span reaches the exporter (an OTLP/HTTP endpoint of
// the benchmark), matched by session and prompt id. The last turn of a session without an end
// marker is closed by turn_idle_timeout by design and is not measured. What closed each turn in
// the connector comes from its debug log.
func liveLatency(tb testing.TB, bin, fixtures string, watch bool) *latency {
	tb.Helper()
	sink := &spanSink{roots: map[rootKey]sunkRoot{}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	srv := &http.Server{Handler: sink, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()

	home := tb.TempDir()
	port := freePort(tb)
	proc := startCollector(tb, bin, home, liveConfig(port, l.Addr().(*net.TCPAddr).Port, watch))
	defer proc.stop()

	rounds := 6
	if v := os.Getenv("BENCH_LIVE_ROUNDS"); v != "" {
		_, _ = fmt.Sscan(v, &rounds) // a value that is not a number keeps the default
	}
	var measured []*liveTurn
	rng := rand.New(rand.NewPCG(1, 2))
	for r := range rounds {
		var all []rootKey
		for _, s := range liveSessions(tb, fixtures, home, r) {
			closers := s.closers()
			var prev *liveTurn // the turn the next prompt completes
			index := 0
			for i, w := range s.writes {
				time.Sleep(time.Duration(rng.Int64N(int64(time.Second))))
				path := filepath.Join(home, s.path)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					tb.Fatal(err)
				}
				f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
				if err != nil {
					tb.Fatal(err)
				}
				data := shiftTo(w.lines, w.evLines, time.Now())
				written := time.Now()
				_, err = f.Write(data)
				f.Close()
				if err != nil {
					tb.Fatal(err)
				}
				if prev != nil {
					prev.closing = written
					measured = append(measured, prev)
					prev = nil
				}
				if w.prompt == "" {
					continue
				}
				index++
				t := &liveTurn{agent: s.agent, key: rootKey{s.session, w.prompt}, round: r, index: index, written: written, closer: closers[i]}
				all = append(all, t.key)
				switch t.closer {
				case closerOwn:
					t.closing = written
					measured = append(measured, t)
				case closerNext:
					prev = t
				}
			}
		}
		// Let every turn of the round out (the last ones by the idle timeout) before the next.
		sink.waitAll(all, liveTurnIdle+5*time.Second)
	}
	reasons := emittedReasons(proc.logPath)
	lat := &latency{Watch: watch, ByReason: map[string]int{}}
	if m, err := scrape(fmt.Sprintf("http://127.0.0.1:%d/metrics", port)); err == nil {
		for _, r := range []string{"duplicate_span", "replayed", "no_turn", "not_agent_event", "malformed"} {
			if n := int(m.series("otelcol_agent_span_input_dropped", `reason="`+r+`"`)); n > 0 {
				if lat.Dropped == nil {
					lat.Dropped = map[string]int{}
				}
				lat.Dropped[r] = n
			}
		}
	}
	if os.Getenv("BENCH_LIVE_DEBUG") != "" {
		if b, err := os.ReadFile(proc.logPath); err == nil {
			out := filepath.Join(repoRoot(tb), "_build", "bench", fmt.Sprintf("live-collector-watch-%t.log", watch))
			if os.WriteFile(out, b, 0o600) == nil { //nolint:gosec // G703: a file under the repository's _build folder
				tb.Logf("live: the collector's log is in %s", out)
			}
		}
	}

	var samples []time.Duration
	for _, t := range measured {
		reason := reasons[t.key]
		if reason == "" {
			reason = "?"
		}
		root, ok := sink.root(t.key)
		line := fmt.Sprintf("round %d %s turn %d (%s…): closing line: %s; ", t.round, t.agent, t.index, t.key.session[:8], t.closer)
		if !ok {
			lat.Missed++
			line += "root never arrived"
		} else {
			d := root.at.Sub(t.closing)
			samples = append(samples, d)
			lat.ByReason["closer "+t.closer]++
			lat.ByReason["connector "+reason]++
			line += fmt.Sprintf("closed by %s, %s, %d ms after the closing write (%d ms after its own)",
				reason, root.status, d.Milliseconds(), root.at.Sub(t.written).Milliseconds())
		}
		lat.PerTurn = append(lat.PerTurn, line)
		if os.Getenv("BENCH_LIVE_DEBUG") != "" {
			tb.Log("live: " + line)
		}
	}
	if len(samples) == 0 {
		proc.fail("live: no turn reached the exporter (%d missed)", lat.Missed)
	}
	slices.Sort(samples)
	pct := func(p float64) float64 {
		i := int(p*float64(len(samples))+0.5) - 1
		i = max(0, min(i, len(samples)-1))
		return float64(samples[i]) / float64(time.Millisecond)
	}
	lat.Setup = fmt.Sprintf("agent_log %s, turn_idle_timeout %s, no batch, otlphttp", liveSettings(watch), liveTurnIdle)
	lat.Turns = len(samples)
	lat.P50ms, lat.P90ms, lat.P99ms, lat.MaxMs = pct(0.50), pct(0.90), pct(0.99), pct(1)
	return lat
}

// emittedReasons reads the connector's "Turn emitted" debug lines from the collector's log: why
// each turn closed.
func emittedReasons(logPath string) map[rootKey]string {
	out := map[rootKey]string{}
	b, err := os.ReadFile(logPath)
	if err != nil {
		return out
	}
	for line := range bytes.SplitSeq(b, []byte{'\n'}) {
		if !bytes.Contains(line, []byte(`"Turn emitted"`)) {
			continue
		}
		var rec struct {
			Session string `json:"session"`
			Agent   string `json:"agent_id"`
			Prompt  string `json:"prompt"`
			Reason  string `json:"reason"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.Agent == "" {
			out[rootKey{rec.Session, rec.Prompt}] = rec.Reason
		}
	}
	return out
}

// liveLatencies is the live run with each setting of watch (liveRuns).
func liveLatencies(tb testing.TB, bin, fixtures string) []*latency {
	tb.Helper()
	var out []*latency
	for _, watch := range liveRuns {
		out = append(out, liveLatency(tb, bin, fixtures, watch))
	}
	return out
}
