// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package alerting

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/testhome"
)

const (
	callsMetric = "traces_span_metrics_calls_total"
	statusError = "STATUS_CODE_ERROR"
)

// toolCount is the number of execute_tool spans of one tool, how many of them failed, and the
// failures per error.type.
type toolCount struct {
	Calls, Errors int
	ErrorTypes    map[string]int
}

func (c *toolCount) addErrors(errType string, n int) {
	c.Errors += n
	if c.ErrorTypes == nil {
		c.ErrorTypes = map[string]int{}
	}
	c.ErrorTypes[errType] += n
}

// userDecisions are the error classes of calls the user interrupted or declined; the tool alert
// does not count them as failures.
var userDecisions = map[string]bool{"interrupted": true, "rejected": true}

// failures is the number of failed calls the tool alert counts.
func (c toolCount) failures() int {
	n := c.Errors
	for typ, k := range c.ErrorTypes {
		if userDecisions[typ] {
			n -= k
		}
	}
	return n
}

// expectation is what the golden events of the Claude testdata make of span counters, derived
// from the events alone with the rules the agent_span README documents: one execute_tool span per
// tool call id (a call and its result), failed when the result's tool_status is error (or, with
// no status, when it has an error type or an exit code other than 0), its error.type the call's
// or the result's, else tool_error; one turn root per prompt of a session's main thread, failed
// when one of its events recorded status error or an API error (an error type outside tool
// events) came after its last assistant answer.
type expectation struct {
	service     string
	tools       map[string]toolCount
	turns       int
	failedTurns int
}

func expectedFromGoldens(t *testing.T, root string) expectation {
	t.Helper()
	exp := expectation{service: "claude-code", tools: map[string]toolCount{}}
	files, err := filepath.Glob(filepath.Join(root, "testdata", "claude_code", "*", "events.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no golden events under testdata/claude_code")
	for _, f := range files {
		logs, err := golden.ReadLogs(f)
		require.NoError(t, err)
		evs, _ := agentevent.DecodeLogs(logs)

		type pair struct{ call, result *agentevent.Event }
		pairs := map[string]*pair{}
		var order []string
		for i := range evs {
			ev := &evs[i]
			if ev.Type != agentevent.TypeToolCall && ev.Type != agentevent.TypeToolResult {
				continue
			}
			id := ev.ToolCallID
			if id == "" {
				id = "event:" + ev.EventID
			}
			key := ev.SessionID + "\x00" + ev.AgentID + "\x00" + id
			p := pairs[key]
			if p == nil {
				p = &pair{}
				pairs[key] = p
				order = append(order, key)
			}
			if ev.Type == agentevent.TypeToolCall {
				p.call = ev
			} else {
				p.result = ev
			}
		}
		for _, key := range order {
			p := pairs[key]
			name := ""
			for _, ev := range []*agentevent.Event{p.call, p.result} {
				if ev != nil && name == "" {
					name = ev.ToolName
				}
			}
			require.NotEmpty(t, name, "%s: tool call %q without a tool name", f, key)
			c := exp.tools[name]
			c.Calls++
			if failed(p.call, p.result) {
				errType := "tool_error"
				for _, ev := range []*agentevent.Event{p.result, p.call} {
					if ev != nil && ev.ErrorType != "" {
						errType = ev.ErrorType
					}
				}
				c.addErrors(errType, 1)
			}
			exp.tools[name] = c
		}

		// Turns: main-thread prompts, and the events that belong to each.
		turnOf := map[string][]*agentevent.Event{}
		var prompts []string
		for i := range evs {
			ev := &evs[i]
			if ev.AgentID != "" {
				continue
			}
			if ev.Type == agentevent.TypeUserMessage {
				prompts = append(prompts, ev.EventID)
				turnOf[ev.EventID] = append(turnOf[ev.EventID], ev)
			} else if ev.ParentEventID != "" {
				turnOf[ev.ParentEventID] = append(turnOf[ev.ParentEventID], ev)
			}
		}
		exp.turns += len(prompts)
		for _, id := range prompts {
			if turnFailed(turnOf[id]) {
				exp.failedTurns++
			}
		}
	}
	return exp
}

// failed says whether a tool call ended in error.
func failed(call, result *agentevent.Event) bool {
	if result == nil {
		return false // still running when the turn closed: in_progress, not an error
	}
	switch result.ToolStatus {
	case agentevent.ToolError:
		return true
	case agentevent.ToolSuccess, agentevent.ToolInProgress:
		return false
	}
	for _, ev := range []*agentevent.Event{call, result} {
		if ev != nil && (ev.ErrorType != "" || (ev.ToolExitCode != nil && *ev.ToolExitCode != 0)) {
			return true
		}
	}
	return false
}

// turnFailed says whether a turn's events (in log order) make it end in error.
func turnFailed(evs []*agentevent.Event) bool {
	lastAPIError, lastAnswer := -1, -1
	for i, ev := range evs {
		if ev.Status == "error" {
			return true
		}
		switch {
		case ev.Type == agentevent.TypeToolCall || ev.Type == agentevent.TypeToolResult:
		case ev.ErrorType != "":
			lastAPIError = i
		case ev.Type == agentevent.TypeAssistantMessage:
			lastAnswer = i
		}
	}
	return lastAPIError >= 0 && lastAnswer < lastAPIError
}

// observed is what one scrape of the prometheus exporter says.
type observed struct {
	tools       map[string]toolCount // execute_tool series, summed over other labels
	turns       int                  // invoke_agent <service> series
	failedTurns int                  // … with status_code ERROR
	errorTurns  int                  // … with agent_turn_status error
	services    map[string]bool
}

func observe(samples []sample, service string) observed {
	o := observed{tools: map[string]toolCount{}, services: map[string]bool{}}
	for _, s := range samples {
		if s.name != callsMetric {
			continue
		}
		o.services[s.labels["service_name"]] = true
		n := int(s.value)
		switch span := s.labels["span_name"]; {
		case strings.HasPrefix(span, "execute_tool "):
			c := o.tools[s.labels["gen_ai_tool_name"]]
			c.Calls += n
			if s.labels["status_code"] == statusError {
				c.addErrors(s.labels["error_type"], n)
			}
			o.tools[s.labels["gen_ai_tool_name"]] = c
		case span == "invoke_agent "+service:
			o.turns += n
			if s.labels["status_code"] == statusError {
				o.failedTurns += n
			}
			if s.labels["agent_turn_status"] == "error" {
				o.errorTurns += n
			}
		}
	}
	return o
}

// TestToolErrorSeries runs the ocb-built collector with config/alerting.yaml exactly as a user
// would (see startCollector) over the Claude testdata, scrapes its prometheus exporter and checks
// the counters alerts.yaml reads: per tool, the calls and the failed calls (status_code
// STATUS_CODE_ERROR) the golden events predict; the turn roots and the failed ones; the label
// names the rules use.
func TestToolErrorSeries(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the collector (skipped with -short)")
	}
	root := repoRoot(t)
	exp := expectedFromGoldens(t, root)
	var failing []string
	for name, c := range exp.tools {
		if c.Errors > 0 {
			failing = append(failing, name)
		}
	}
	require.NotEmpty(t, failing, "the testdata must hold failed tool calls")
	require.Positive(t, exp.failedTurns, "the testdata must hold a failed turn")
	t.Logf("expected from the golden events: tools (calls, errors) %+v; %d turns, %d failed", exp.tools, exp.turns, exp.failedTurns)

	samples := startCollector(t, nil).waitForCounters(t, exp)

	// The exact series the rules select, for the tools that failed: one per error class.
	sort.Strings(failing)
	for _, name := range failing {
		for errType, n := range exp.tools[name].ErrorTypes {
			var series []sample
			for _, s := range samples {
				if s.name == callsMetric && s.labels["gen_ai_tool_name"] == name && s.labels["status_code"] == statusError &&
					s.labels["error_type"] == errType {
					series = append(series, s)
				}
			}
			require.Len(t, series, 1, "one series for %s errors of class %s", name, errType)
			s := series[0]
			assert.Equal(t, exp.service, s.labels["service_name"])
			assert.Equal(t, "execute_tool "+name, s.labels["span_name"])
			assert.Equal(t, "SPAN_KIND_INTERNAL", s.labels["span_kind"])
			assert.NotContains(t, s.labels, "collector_instance_id", "excluded so that a restart is a counter reset")
			assert.Equal(t, float64(n), s.value, "%s errors of class %s", name, errType)
			t.Logf("%s%s = %v (of %d %s calls)", callsMetric, labelString(s.labels), s.value, exp.tools[name].Calls, name)
		}
	}
	for _, s := range samples {
		if s.name == callsMetric && s.labels["span_name"] == "invoke_agent "+exp.service && s.labels["status_code"] == statusError {
			assert.Equal(t, "error", s.labels["agent_turn_status"])
			assert.NotEmpty(t, s.labels["error_type"])
			t.Logf("%s%s = %v", callsMetric, labelString(s.labels), s.value)
		}
	}
}

func labelString(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%q", k, labels[k]))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// collector is the ocb-built collector running config/alerting.yaml.
type collector struct {
	proc    *process
	port    int    // of its prometheus exporter
	home    string // the HOME it reads
	batches int    // session batches written
	// probeTurns is the number of probe turns read (see waitForFirstLook).
	probeTurns int
}

// startCollector runs the collector with config/alerting.yaml as written, only its environment
// variables set: HOME pointing at a folder laid out like ~/.claude/projects, its own state
// folder, the exporter's port and a 1s flush. The config reads only what is written after its
// first look at the files (start_at: end), so the Claude testdata (the cases with golden events)
// and the extra session files (path under projects, in a folder of its own → content) appear as
// new session files once that look happened — as an agent would write them.
func startCollector(t *testing.T, extra map[string][]byte) *collector {
	t.Helper()
	c := launchCollector(t)
	c.writeSessions(t, true, extra)
	return c
}

// launchCollector starts the collector and returns once it has taken its first look at the
// files (nothing read yet).
func launchCollector(t *testing.T) *collector {
	t.Helper()
	root := repoRoot(t)
	bin := collectorBinary(t)
	home := t.TempDir()
	projects := filepath.Join(home, ".claude", "projects")
	// A session file present at start, with 3 failed tool calls: history, which start_at: end
	// leaves unread (the expected counts leave it out).
	sentinel := filepath.Join(projects, "-alerting-history", "0b5e7a11-2c3d-4e5f-8a9b-0c1d2e3f4a5b.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(sentinel), 0o755))
	require.NoError(t, os.WriteFile(sentinel, outageSession("0b5e7a11-2c3d-4e5f-8a9b-0c1d2e3f4a5b", 3), 0o600))
	// The probe session, present at start too: what is appended to it once the collector has
	// looked is read (see waitForFirstLook).
	probe := filepath.Join(projects, "-alerting-probe", probeSession+".jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(probe), 0o755))
	require.NoError(t, os.WriteFile(probe, probeTurn(0), 0o600))

	port := freePort(t)
	env := append(testhome.Env(home),
		"AGENTOTEL_STATE_DIR="+filepath.Join(t.TempDir(), "state"),
		fmt.Sprintf("PROMETHEUS_PORT=%d", port),
		"AGENTOTEL_METRICS_FLUSH_INTERVAL=1s",
	)
	proc := start(t, "collector", bin, env, "--config", filepath.Join(root, "config", "alerting.yaml"))
	c := &collector{proc: proc, port: port, home: home}
	c.waitForFirstLook(t, probe)
	return c
}

const (
	probeSession = "5e1f0a2b-7c3d-4e9f-8a1b-2c3d4e5f6a7b"
	// probeModel prefixes the model of each probe turn (unknown to the price table: no cost).
	probeModel = "agentotel-probe-"
)

// probeTurn is turn k of the probe session: a prompt, an answer by model agentotel-probe-<k>
// with its usage, and Claude Code's end-of-turn record.
func probeTurn(k int) []byte {
	ts := time.Date(2025, 12, 3, 9, 0, k, 0, time.UTC).Format("2006-01-02T15:04:05.000Z")
	u, a := fmt.Sprintf("5e1f0a2b-0000-4000-8000-%012d", 3*k+1), fmt.Sprintf("5e1f0a2b-0000-4000-8000-%012d", 3*k+2)
	common := fmt.Sprintf(`"isSidechain":false,"userType":"external","cwd":"/home/dev/src/probe","sessionId":%q,"version":"2.0.50","gitBranch":"main","timestamp":%q`, probeSession, ts)
	return []byte(fmt.Sprintf(`{"parentUuid":null,%s,"type":"user","message":{"role":"user","content":"probe %d"},"uuid":%q}
{"parentUuid":%q,%s,"type":"assistant","message":{"id":"msg_probe%d","type":"message","role":"assistant","model":"%s%d","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":1}},"requestId":"req_probe%d","uuid":%q}
{"parentUuid":%q,%s,"type":"system","subtype":"turn_duration","durationMs":1000,"isMeta":false,"uuid":"5e1f0a2b-0000-4000-8000-%012d"}
`, common, k, u, u, common, k, probeModel, k, k, a, a, common, 3*k+3))
}

// waitForFirstLook returns once the collector has taken its first look at the session files:
// from then on what is written is read (start_at: end). The collector says nothing about that
// look, so the test appends a turn to the probe session, present at start, until one shows up
// in the metrics: what was appended before the look is history and never read, what was
// appended after is read in file order. The probe turns read are counted in probeTurns (their
// own model, no tools, completed), so that the expectations can add them.
func (c *collector) waitForFirstLook(t *testing.T, probe string) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for k := 1; time.Now().Before(deadline); k++ {
		f, err := os.OpenFile(probe, os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = f.Write(probeTurn(k))
		require.NoError(t, err)
		require.NoError(t, f.Close())
		tick := time.NewTicker(100 * time.Millisecond)
		wait := time.After(3 * time.Second)
	poll:
		for {
			select {
			case <-wait:
				break poll
			case <-tick.C:
				if c.proc.Exited() {
					t.Fatalf("collector exited: %s", c.proc.LogText())
				}
				samples, err := scrape(c.metricsURL())
				if err != nil {
					continue
				}
				models := map[string]bool{}
				for _, s := range samples {
					if s.name == tokensMetric && strings.HasPrefix(s.labels["gen_ai_request_model"], probeModel) {
						models[s.labels["gen_ai_request_model"]] = true
					}
				}
				if models[fmt.Sprintf("%s%d", probeModel, k)] {
					tick.Stop()
					c.probeTurns = len(models)
					return
				}
			}
		}
		tick.Stop()
	}
	t.Fatalf("no probe turn read in 90s: %s", c.proc.LogText())
}

// writeSessions puts new session folders under ~/.claude/projects: the Claude testdata cases
// with golden events (when testdata is set) and the extra files. Each folder is written outside
// the watched tree and renamed into it, so the collector never sees a half-written file.
func (c *collector) writeSessions(t *testing.T, testdata bool, extra map[string][]byte) {
	t.Helper()
	root := repoRoot(t)
	projects := filepath.Join(c.home, ".claude", "projects")
	c.batches++
	staging := filepath.Join(c.home, fmt.Sprintf("staging-%d", c.batches))
	var dirs []string
	if testdata {
		cases, err := os.ReadDir(filepath.Join(root, "testdata", "claude_code"))
		require.NoError(t, err)
		for _, tc := range cases {
			// Only the cases with golden events: the expectation is computed from them.
			if !tc.IsDir() || !fileExists(filepath.Join(root, "testdata", "claude_code", tc.Name(), "events.yaml")) {
				continue
			}
			copyTree(t, filepath.Join(root, "testdata", "claude_code", tc.Name()), filepath.Join(staging, "-alerting-"+tc.Name()),
				func(p string) bool { return strings.HasSuffix(p, ".jsonl") })
			dirs = append(dirs, "-alerting-"+tc.Name())
		}
	}
	for name, content := range extra {
		path := filepath.Join(staging, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, content, 0o600))
		dirs = append(dirs, strings.SplitN(filepath.ToSlash(name), "/", 2)[0])
	}
	for _, d := range dirs {
		require.NoError(t, os.Rename(filepath.Join(staging, d), filepath.Join(projects, d)))
	}
}

func (c *collector) metricsURL() string { return fmt.Sprintf("http://127.0.0.1:%d/metrics", c.port) }

// waitForCounters scrapes the exporter until its counters are the expected ones, and returns
// that scrape.
func (c *collector) waitForCounters(t *testing.T, exp expectation) []sample {
	t.Helper()
	want := observed{
		tools: exp.tools, turns: exp.turns + c.probeTurns, failedTurns: exp.failedTurns, errorTurns: exp.failedTurns,
		services: map[string]bool{exp.service: true},
	}
	var samples []sample
	waitFor(t, 90*time.Second, "the span counters the events predict", func() (bool, string) {
		if c.proc.Exited() {
			t.Fatalf("collector exited: %s", c.proc.LogText())
		}
		var err error
		samples, err = scrape(c.metricsURL())
		if err != nil {
			return false, err.Error()
		}
		got := observe(samples, exp.service)
		if assert.ObjectsAreEqual(want, got) {
			return true, ""
		}
		return false, fmt.Sprintf("want %+v, got %+v", want, got)
	})
	return samples
}
