// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
)

// The native part of the check: the agents' own OTLP log captures
// (<fixtures>/native_otel/{claude_code,codex}/logs-*.otlp.jsonl), posted to
// the built collector's otlp receiver, through agent_native, to a file of
// events. Per agent it prints what the processor made of the records (its
// own counter) and the tokens of the events against the tokens the
// captures state, summed here from the files.

// nativeRecordsMetric is agent_native's record counter as the collector's
// Prometheus reader names it (metadata.yaml: agent_native_records).
const nativeRecordsMetric = "otelcol_agent_native_records"

// nativeAgent is an agent whose native log captures the check sends: a
// registered agent whose own log records agent_native maps, its captures
// in native_otel/<its fixtures folder>.
type nativeAgent struct {
	dir string // folder under native_otel
	src agentevent.Source
}

func nativeAgents() []nativeAgent {
	var out []nativeAgent
	for _, d := range agents.All() {
		if d.Native != nil && d.Native.NewMapper != nil {
			out = append(out, nativeAgent{dir: d.Fixtures.Dir, src: d.Source})
		}
	}
	return out
}

// nativeTokens are tokens in the AgentEvent convention: input includes
// cache reads and writes, output includes reasoning.
type nativeTokens struct{ In, Out int64 }

// nativeCapture is what the check reads from one agent's capture files.
type nativeCapture struct {
	Files []string
	// Lines are the OTLP/JSON exports, one per line, as the agent sent them.
	Lines [][]byte
	// Records are the log records of the agent (by resource service.name,
	// as agent_native recognizes it) in the files.
	Records int
	// Tokens are the sums of the token attributes of the model-call records.
	Tokens nativeTokens
}

// readNativeCaptures reads each agent's logs-*.otlp.jsonl under the
// native_otel directories; agents without files are absent.
func readNativeCaptures(dirs []string) (map[agentevent.Source]*nativeCapture, error) {
	out := map[agentevent.Source]*nativeCapture{}
	var u plog.JSONUnmarshaler
	for _, dir := range dirs {
		for _, a := range nativeAgents() {
			files, _ := filepath.Glob(filepath.Join(dir, a.dir, "logs-*.otlp.jsonl"))
			slices.Sort(files)
			for _, f := range files {
				c := out[a.src]
				if c == nil {
					c = &nativeCapture{}
					out[a.src] = c
				}
				c.Files = append(c.Files, f)
				err := eachLine(f, func(b []byte) error {
					ld, err := u.UnmarshalLogs(b)
					if err != nil {
						return fmt.Errorf("%s: %w", f, err)
					}
					n, t := captureTokens(a.src, ld)
					c.Records += n
					c.Tokens.In += t.In
					c.Tokens.Out += t.Out
					c.Lines = append(c.Lines, bytes.TrimSpace(b))
					return nil
				})
				if err != nil {
					return nil, err
				}
			}
		}
	}
	return out, nil
}

// nativeService tells whether a resource's service.name is src's, as
// agent_native recognizes its logs (agents.Native).
func nativeService(src agentevent.Source, service string) bool {
	d := agents.Lookup(src)
	if d == nil || d.Native == nil {
		return false
	}
	svc := strings.ToLower(service)
	if slices.Contains(d.Native.Services, svc) {
		return true
	}
	for _, p := range d.Native.ServicePrefixes {
		if strings.HasPrefix(svc, p) {
			return true
		}
	}
	return false
}

// captureTokens counts src's records in one export and sums the tokens its
// model-call records state: Claude Code's api_request (input_tokens,
// exclusive of the cache, + cache_read_tokens + cache_creation_tokens;
// output_tokens), Codex's sse_event response.completed
// (input_token_count, inclusive; output_token_count). Counts arrive as
// int, double or decimal string.
func captureTokens(src agentevent.Source, ld plog.Logs) (records int, t nativeTokens) {
	for i := 0; i < ld.ResourceLogs().Len(); i++ {
		rl := ld.ResourceLogs().At(i)
		svc, _ := rl.Resource().Attributes().Get(agentevent.ResourceServiceName)
		if !nativeService(src, svc.AsString()) {
			continue
		}
		for j := 0; j < rl.ScopeLogs().Len(); j++ {
			lrs := rl.ScopeLogs().At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				records++
				a := lrs.At(k).Attributes()
				name := attrString(a, "event.name")
				switch {
				case src == claudeCode && strings.TrimPrefix(name, "claude_code.") == "api_request":
					t.In += attrCount(a, "input_tokens") + attrCount(a, "cache_read_tokens") + attrCount(a, "cache_creation_tokens")
					t.Out += attrCount(a, "output_tokens")
				case src == codex && strings.TrimPrefix(name, "codex.") == "sse_event" &&
					attrString(a, "event.kind") == "response.completed":
					t.In += attrCount(a, "input_token_count")
					t.Out += attrCount(a, "output_token_count")
				}
			}
		}
	}
	return records, t
}

func attrString(m pcommon.Map, k string) string {
	v, ok := m.Get(k)
	if !ok {
		return ""
	}
	return v.AsString()
}

func attrCount(m pcommon.Map, k string) int64 {
	v, ok := m.Get(k)
	if !ok {
		return 0
	}
	n, _ := agentevent.NativeInt(v.AsRaw())
	return n
}

// nativeReport is one agent's native table.
type nativeReport struct {
	Agent                             string
	Files, Records                    int
	Mapped, Ignored, Unmapped, Passed int64
	Events                            int
	EventTokens, CaptureTokens        nativeTokens
	Problems                          []string
}

// analyzeNative compares what agent_native made of src's captures — its
// counts by outcome (otelcol_agent_native_records) and the events it
// emitted — with the captures. Every record sent must be counted once;
// the tokens over the events must equal the captures' (over events, not
// chat spans: a Codex model call before any prompt of its conversation is
// an event with tokens that agent_span may make no chat span of). No
// documented definition explains a token difference here.
func analyzeNative(src agentevent.Source, c *nativeCapture, outcomes map[string]int64, events []agentevent.Event) *nativeReport {
	r := &nativeReport{
		Agent: src.ServiceName(), Files: len(c.Files), Records: c.Records, CaptureTokens: c.Tokens,
		Mapped: outcomes["mapped"], Ignored: outcomes["ignored"], Unmapped: outcomes["unmapped"], Passed: outcomes["passed"],
	}
	for i := range events {
		ev := &events[i]
		if ev.Source != src {
			continue
		}
		r.Events++
		r.EventTokens.In += agentevent.Value(ev.TokensInput)
		r.EventTokens.Out += agentevent.Value(ev.TokensOutput)
		if ev.Attributes[agentevent.AttrOrigin] != agentevent.OriginNative {
			r.Problems = append(r.Problems, fmt.Sprintf("event %s of session %s has no %s=%s", ev.EventID, ev.SessionID, agentevent.AttrOrigin, agentevent.OriginNative))
		}
	}
	if counted := r.Mapped + r.Ignored + r.Unmapped + r.Passed; counted != int64(r.Records) {
		r.Problems = append(r.Problems, fmt.Sprintf("%d records sent, agent_native counted %d (mapped %d, ignored %d, unmapped %d, passed %d)",
			r.Records, counted, r.Mapped, r.Ignored, r.Unmapped, r.Passed))
	}
	if r.Mapped > 0 && r.Events == 0 {
		r.Problems = append(r.Problems, fmt.Sprintf("%d records mapped, no event written", r.Mapped))
	}
	if r.EventTokens != r.CaptureTokens {
		r.Problems = append(r.Problems, fmt.Sprintf("tokens in/out: events %d/%d, captures %d/%d",
			r.EventTokens.In, r.EventTokens.Out, r.CaptureTokens.In, r.CaptureTokens.Out))
	}
	return r
}

func (r *nativeReport) failures() []string {
	out := make([]string, 0, len(r.Problems))
	for _, p := range r.Problems {
		out = append(out, fmt.Sprintf("%s (native OTLP): %s", r.Agent, p))
	}
	return out
}

func printNative(w io.Writer, reports []*nativeReport) {
	fmt.Fprintf(w, "\n== native OTLP (agent_native)\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "agent\tfiles\trecords\tmapped\tignored\tunmapped\tpassed\tevents\tevents in/out\tcaptures in/out\tproblems\t")
	for _, r := range reports {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%d\t\n", r.Agent, r.Files, r.Records, r.Mapped, r.Ignored, r.Unmapped, r.Passed, r.Events,
			fmt.Sprintf("%d/%d", r.EventTokens.In, r.EventTokens.Out),
			mark(fmt.Sprintf("%d/%d", r.CaptureTokens.In, r.CaptureTokens.Out), r.EventTokens == r.CaptureTokens), len(r.Problems))
	}
	_ = tw.Flush()
}

// nativeDirs are the native_otel directories of the fixture roots.
func nativeDirs(roots []string) []string {
	var dirs []string
	for _, r := range roots {
		d := filepath.Join(r, "native_otel")
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// checkNative runs the native part over the captures under roots: nil
// reports (and a note) when there are none.
func checkNative(ctx context.Context, bin string, roots []string, out string, timeout time.Duration) ([]*nativeReport, string, error) {
	dirs := nativeDirs(roots)
	if len(dirs) == 0 {
		return nil, "native OTLP: no native_otel directory under the fixture roots: skipped", nil
	}
	caps, err := readNativeCaptures(dirs)
	if err != nil {
		return nil, "", err
	}
	if len(caps) == 0 {
		return nil, "native OTLP: no logs-*.otlp.jsonl under " + strings.Join(dirs, ", ") + ": skipped", nil
	}
	var lines [][]byte
	want := 0
	for _, a := range nativeAgents() {
		if c := caps[a.src]; c != nil {
			lines = append(lines, c.Lines...)
			want += c.Records
		}
	}
	o, err := runNativeCollector(ctx, bin, out, lines, want, timeout)
	if err != nil {
		return nil, "", err
	}
	var reports []*nativeReport
	for _, a := range nativeAgents() {
		if c := caps[a.src]; c != nil {
			reports = append(reports, analyzeNative(a.src, c, o.outcomes[string(a.src)], o.events))
		}
	}
	return reports, "", nil
}

// nativeOutputs is what the native run gave: the events and the
// processor's counts by agent and outcome.
type nativeOutputs struct {
	events   []agentevent.Event
	outcomes map[string]map[string]int64
}

// freePort is a loopback TCP port free at the time of asking.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// nativeConfig: the otlp receiver (HTTP on a loopback port) → agent_native
// → a file of events; the collector's own metrics on a loopback
// Prometheus reader.
func nativeConfig(out string, otlpPort, metricsPort int) string {
	return fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%[2]d
processors:
  agent_native:
exporters:
  file/native-events:
    path: %[1]s/native-events.jsonl
    format: json
service:
  pipelines:
    logs:
      receivers: [otlp]
      processors: [agent_native]
      exporters: [file/native-events]
  telemetry:
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus:
                host: 127.0.0.1
                port: %[3]d
    logs:
      level: warn
`, out, otlpPort, metricsPort)
}

// runNativeCollector runs the built collector with nativeConfig, posts
// every line to /v1/logs, waits until agent_native has counted want
// records and the events file is quiet, reads the counter, stops the
// collector and returns what it wrote.
func runNativeCollector(ctx context.Context, bin, out string, lines [][]byte, want int, timeout time.Duration) (*nativeOutputs, error) {
	otlpPort, err := freePort()
	if err != nil {
		return nil, err
	}
	metricsPort, err := freePort()
	if err != nil {
		return nil, err
	}
	cfg := filepath.Join(out, "native-config.yaml")
	if werr := os.WriteFile(cfg, []byte(nativeConfig(out, otlpPort, metricsPort)), 0o600); werr != nil {
		return nil, werr
	}
	var logs bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "--config", cfg) //nolint:gosec // G204, G702: bin is the collector the user named
	cmd.Stdout, cmd.Stderr = &logs, &logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if serr := cmd.Start(); serr != nil {
		return nil, serr
	}
	done := make(chan struct{})
	var waitErr error // set before done is closed
	go func() { waitErr = cmd.Wait(); close(done) }()
	stop := func(sig syscall.Signal) {
		_ = syscall.Kill(-cmd.Process.Pid, sig)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	}
	fail := func(format string, args ...any) (*nativeOutputs, error) {
		stop(syscall.SIGKILL)
		return nil, fmt.Errorf("native OTLP run: "+format+"\n%s", append(args, logs.String())...)
	}
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: 30 * time.Second}
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", metricsPort)

	// Ready: the otlp receiver takes connections and the metrics answer.
	for {
		select {
		case <-done:
			return nil, fmt.Errorf("native OTLP run: the collector exited early (%v):\n%s", waitErr, logs.String()) //nolint:errorlint // waitErr may be nil
		default:
		}
		c, derr := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", otlpPort), time.Second)
		if derr == nil {
			_ = c.Close()
			if _, merr := scrapeOutcomes(ctx, client, metricsURL); merr == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			return fail("the collector did not listen on 127.0.0.1:%d within %s", otlpPort, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}

	url := fmt.Sprintf("http://127.0.0.1:%d/v1/logs", otlpPort)
	for i, line := range lines {
		req, rerr := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(line))
		if rerr != nil {
			return fail("%v", rerr)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, perr := client.Do(req)
		if perr != nil {
			return fail("POST export %d: %v", i+1, perr)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			return fail("POST export %d: %s: %s", i+1, resp.Status, body)
		}
	}

	// Counted: every record of a known agent went through agent_native
	// (which counts before it hands on), then the file is quiet.
	var outcomes map[string]map[string]int64
	for {
		outcomes, err = scrapeOutcomes(ctx, client, metricsURL)
		if err == nil && countAll(outcomes) >= int64(want) {
			break
		}
		if time.Now().After(deadline) {
			return fail("agent_native counted %d of %d records within %s (%v)", countAll(outcomes), want, timeout, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	events := filepath.Join(out, "native-events.jsonl")
	size := func() int64 {
		if fi, serr := os.Stat(events); serr == nil {
			return fi.Size()
		}
		return -1
	}
	last, since := size(), time.Now()
	for time.Since(since) < 1500*time.Millisecond {
		time.Sleep(250 * time.Millisecond)
		if n := size(); n != last {
			last, since = n, time.Now()
		}
	}
	if outcomes, err = scrapeOutcomes(ctx, client, metricsURL); err != nil {
		return fail("%v", err)
	}
	stop(syscall.SIGTERM)
	o := &nativeOutputs{outcomes: outcomes}
	if o.events, err = readEvents(events); err != nil {
		return nil, err
	}
	return o, nil
}

func countAll(m map[string]map[string]int64) int64 {
	var n int64
	for _, byOutcome := range m {
		for _, v := range byOutcome {
			n += v
		}
	}
	return n
}

// scrapeOutcomes reads agent_native's record counter off the collector's
// Prometheus endpoint: counts by agent, then outcome.
func scrapeOutcomes(ctx context.Context, client *http.Client, url string) (map[string]map[string]int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	return parseOutcomes(resp.Body)
}

// parseOutcomes reads nativeRecordsMetric's samples from a Prometheus text
// exposition: value by agent and outcome label (other labels summed over).
func parseOutcomes(r io.Reader) (map[string]map[string]int64, error) {
	out := map[string]map[string]int64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		// The exposition may name a counter with the _total suffix.
		name := nativeRecordsMetric + "{"
		if !strings.HasPrefix(line, name) {
			if name = nativeRecordsMetric + "_total{"; !strings.HasPrefix(line, name) {
				continue
			}
		}
		end := strings.LastIndexByte(line, '}')
		if end < len(name) {
			return nil, fmt.Errorf("%s: a sample without its labels closed: %q", nativeRecordsMetric, line)
		}
		labels := parseLabels(line[len(name):end])
		fields := strings.Fields(line[end+1:])
		if len(fields) == 0 {
			return nil, fmt.Errorf("%s: a sample without a value: %q", nativeRecordsMetric, line)
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", nativeRecordsMetric, line, err)
		}
		agent, outcome := labels["agent"], labels["outcome"]
		if out[agent] == nil {
			out[agent] = map[string]int64{}
		}
		out[agent][outcome] += int64(v)
	}
	return out, sc.Err()
}

// parseLabels reads name="value" pairs (values with \", \\ and \n escapes).
func parseLabels(s string) map[string]string {
	out := map[string]string{}
	for s != "" {
		eq := strings.IndexByte(s, '=')
		if eq < 0 || eq+1 >= len(s) || s[eq+1] != '"' {
			break
		}
		name := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s[:eq]), ","))
		var val strings.Builder
		i := eq + 2
		for ; i < len(s) && s[i] != '"'; i++ {
			if s[i] == '\\' && i+1 < len(s) {
				i++
				switch s[i] {
				case 'n':
					val.WriteByte('\n')
				default:
					val.WriteByte(s[i])
				}
				continue
			}
			val.WriteByte(s[i])
		}
		out[name] = val.String()
		if i >= len(s) {
			break
		}
		s = s[i+1:]
	}
	return out
}
