// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package alerting

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outageSession is a Claude Code session, written here, in which every call to the GitHub MCP
// server fails: one prompt, then `calls` tool calls each with an error result, then an answer.
func outageSession(sessionID string, calls int) []byte {
	var b bytes.Buffer
	ts := time.Date(2025, 12, 3, 10, 0, 0, 0, time.UTC)
	n := 0
	row := func(parent, typ, message, extra string) string {
		n++
		uuid := fmt.Sprintf("6d1f0c2a-0000-4000-8000-%012d", n)
		p := "null"
		if parent != "" {
			p = fmt.Sprintf("%q", parent)
		}
		fmt.Fprintf(&b, `{"parentUuid":%s,"isSidechain":false,"userType":"external","cwd":"/home/dev/src/tracker","sessionId":%q,"version":"2.0.50","gitBranch":"main","type":%q,"message":%s,%s"uuid":%q,"timestamp":%q}`+"\n",
			p, sessionID, typ, message, extra, uuid, ts.Format("2006-01-02T15:04:05.000Z"))
		ts = ts.Add(2 * time.Second)
		return uuid
	}
	usage := `"usage":{"input_tokens":5,"cache_creation_input_tokens":0,"cache_read_input_tokens":900,"output_tokens":40}`
	last := row("", "user", `{"role":"user","content":"summarize the open issues labeled bug"}`, "")
	for i := 1; i <= calls; i++ {
		msg, call := fmt.Sprintf("msg_outage%02d", i), fmt.Sprintf("toolu_outage%02d", i)
		last = row(last, "assistant",
			fmt.Sprintf(`{"id":%q,"type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"tool_use","id":%q,"name":"mcp__github__get_issue","input":{"owner":"acme","repo":"tracker","issue_number":%d}}],"stop_reason":"tool_use","stop_sequence":null,%s}`, msg, call, 100+i, usage),
			fmt.Sprintf(`"requestId":"req_outage%02d",`, i))
		last = row(last, "user",
			fmt.Sprintf(`{"role":"user","content":[{"tool_use_id":%q,"type":"tool_result","content":"MCP error -32603: connect ECONNREFUSED 127.0.0.1:3000","is_error":true}]}`, call),
			`"toolUseResult":"Error: MCP error -32603: connect ECONNREFUSED 127.0.0.1:3000",`)
	}
	row(last, "assistant",
		fmt.Sprintf(`{"id":"msg_outage_end","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{"type":"text","text":"The GitHub MCP server refuses connections; I could not read the issues."}],"stop_reason":"end_turn","stop_sequence":null,%s}`, usage),
		`"requestId":"req_outage_end",`)
	return b.Bytes()
}

// prometheusBinary is the Prometheus server that comes with promtool (Debian's prometheus
// package ships both).
func prometheusBinary(t *testing.T) string {
	t.Helper()
	promtool := promtoolBinary(t)
	if bin := filepath.Join(filepath.Dir(promtool), "prometheus"); fileExists(bin) {
		return bin
	}
	bin, err := exec.LookPath("prometheus")
	require.NoError(t, err, "no prometheus server next to %s nor on PATH", promtool)
	return bin
}

// startPrometheus runs the Prometheus server bin on a free loopback port, scraping the collector's
// Prometheus exporter on collectorPort and evaluating config/alerts.yaml as written, both every
// second; it returns the process and the server's base URL.
func startPrometheus(t *testing.T, root, bin string, collectorPort int) (*process, string) {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - %s
scrape_configs:
  - job_name: agentotel
    static_configs:
      - targets: ['127.0.0.1:%d']
`, filepath.Join(root, "config", "alerts.yaml"), collectorPort)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o600))
	port := freePort(t)
	prom := start(t, "prometheus", bin, nil,
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+filepath.Join(dir, "data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port))
	return prom, fmt.Sprintf("http://127.0.0.1:%d", port)
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir()
}

// promAlert is the part of Prometheus' /api/v1/alerts answer the test reads.
type promAlert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
	Value       string            `json:"value"`
}

func alerts(url string) ([]promAlert, error) {
	resp, err := http.Get(url) //nolint:gosec // G107: the Prometheus this test started
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	var out struct {
		Data struct {
			Alerts []promAlert `json:"alerts"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("%w: %s", err, body)
	}
	return out.Data.Alerts, nil
}

// TestAlertsFireInPrometheus is the whole recipe: the collector with config/alerting.yaml as
// written reads the Claude testdata plus a session in which all 6 calls to the GitHub MCP tool
// fail; a real Prometheus (the one Debian's package ships with promtool) scrapes it every second
// and evaluates config/alerts.yaml as written. Exactly two alerts fire: AgentToolErrorRateHigh for
// claude-code's mcp__github__get_issue (6 of its 7 calls failed), and AgentTurnFailed for
// claude-code (the testdata's failed turn). The testdata's other failing tools (Bash, WebFetch,
// Write) stay quiet: below the threshold or under the 5-call guard.
func TestAlertsFireInPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the collector and Prometheus (skipped with -short)")
	}
	root := repoRoot(t)
	prometheus := prometheusBinary(t)

	const tool, outageCalls = "mcp__github__get_issue", 6
	exp := expectedFromGoldens(t, root)
	c := exp.tools[tool]
	c.Calls += outageCalls
	c.addErrors("tool_error", outageCalls)
	exp.tools[tool] = c
	exp.turns++
	col := startCollector(t, map[string][]byte{
		"-alerting-mcp-outage/6d1f0c2a-5b7e-4c3d-9a8f-0e1d2c3b4a59.jsonl": outageSession("6d1f0c2a-5b7e-4c3d-9a8f-0e1d2c3b4a59", outageCalls),
	})
	// Prometheus starts once the counters are complete, so its first scrape already holds them
	// all (a half-read history could show a passing error ratio).
	col.waitForCounters(t, exp)

	// The alerts the expectation implies: a tool above 50% failures (user decisions aside) over
	// at least 5 calls, and a failed turn.
	want := []string{fmt.Sprintf("AgentTurnFailed{service_name=%q}", exp.service)}
	for name, c := range exp.tools {
		if c.Calls >= 5 && 2*c.failures() > c.Calls {
			want = append(want, fmt.Sprintf("AgentToolErrorRateHigh{service_name=%q,gen_ai_tool_name=%q}", exp.service, name))
		}
	}
	sort.Strings(want)
	require.Contains(t, want, fmt.Sprintf("AgentToolErrorRateHigh{service_name=%q,gen_ai_tool_name=%q}", exp.service, tool))

	prom, base := startPrometheus(t, root, prometheus, col.port)

	var firing []promAlert
	var got []string
	waitFor(t, 60*time.Second, "the alerts to fire", func() (bool, string) {
		if prom.Exited() {
			t.Fatalf("prometheus exited: %s", prom.LogText())
		}
		as, err := alerts(base + "/api/v1/alerts")
		if err != nil {
			return false, err.Error()
		}
		firing, got = nil, nil
		for _, a := range as {
			if a.State != "firing" {
				continue
			}
			firing = append(firing, a)
			key := fmt.Sprintf("%s{service_name=%q}", a.Labels["alertname"], a.Labels["service_name"])
			if tn, ok := a.Labels["gen_ai_tool_name"]; ok {
				key = fmt.Sprintf("%s{service_name=%q,gen_ai_tool_name=%q}", a.Labels["alertname"], a.Labels["service_name"], tn)
			}
			got = append(got, key)
		}
		sort.Strings(got)
		return assert.ObjectsAreEqual(want, got), fmt.Sprintf("want %v, firing %v", want, got)
	})
	for _, a := range firing {
		t.Logf("firing: %v %v (value %s)", a.Labels, a.Annotations["summary"], a.Value)
		assert.Equal(t, "warning", a.Labels["severity"])
		if a.Labels["alertname"] == "AgentTurnFailed" {
			assert.Equal(t, fmt.Sprintf("%s: %d turn(s) failed in the last 5m", exp.service, exp.failedTurns), a.Annotations["summary"])
		}
		if a.Labels["gen_ai_tool_name"] == tool {
			c := exp.tools[tool]
			assert.Equal(t, fmt.Sprintf("%s: %.4g%% of %s calls failed in the last 5m", exp.service, 100*float64(c.failures())/float64(c.Calls), tool),
				a.Annotations["summary"])
		}
	}
}
