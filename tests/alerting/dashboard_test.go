// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package alerting

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/processor/genaicostprocessor"
)

const (
	tokensMetric = "gen_ai_client_token_usage_sum"
	costMetric   = "agent_usage_cost_usd_total"
)

// usageTotals is what the golden events of the Claude testdata come to: tokens per type, and
// the cost gen_ai_cost gives them.
type usageTotals struct {
	input, output float64
	cost          float64
}

func expectedUsage(t *testing.T, root string) usageTotals {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "testdata", "claude_code", "*", "events.yaml"))
	require.NoError(t, err)
	sink := new(consumertest.LogsSink)
	f := genaicostprocessor.NewFactory()
	proc, err := f.CreateLogs(t.Context(), processortest.NewNopSettings(f.Type()), f.CreateDefaultConfig(), sink)
	require.NoError(t, err)
	require.NoError(t, proc.Start(t.Context(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, proc.Shutdown(t.Context())) }()
	var u usageTotals
	for _, file := range files {
		logs, err := golden.ReadLogs(file)
		require.NoError(t, err)
		require.NoError(t, proc.ConsumeLogs(t.Context(), logs))
	}
	for _, l := range sink.AllLogs() {
		evs, _ := agentevent.DecodeLogs(l)
		for i := range evs {
			ev := &evs[i]
			if agentevent.Value(ev.TokensInput)+agentevent.Value(ev.TokensOutput) == 0 {
				continue
			}
			u.input += float64(agentevent.Value(ev.TokensInput))
			u.output += float64(agentevent.Value(ev.TokensOutput))
			if ev.CostUSD != nil {
				u.cost += *ev.CostUSD
			}
		}
	}
	return u
}

func scrapedUsage(samples []sample) (u usageTotals, models map[string]bool) {
	models = map[string]bool{}
	for _, s := range samples {
		if strings.HasPrefix(s.labels["gen_ai_request_model"], probeModel) {
			continue // the harness's probe turns
		}
		switch s.name {
		case tokensMetric:
			if s.labels["gen_ai_token_type"] == "input" {
				u.input += s.value
			} else {
				u.output += s.value
			}
			models[s.labels["gen_ai_request_model"]] = true
		case costMetric:
			u.cost += s.value
		}
	}
	return u, models
}

// TestCostAndTokenSeries: the collector with config/alerting.yaml as written serves the token
// and spend series of the Claude testdata with the totals the golden events give (tokens summed,
// cost as gen_ai_cost prices them), per agent, with no session label.
func TestCostAndTokenSeries(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the collector (skipped with -short)")
	}
	root := repoRoot(t)
	want := expectedUsage(t, root)
	require.Positive(t, want.cost)
	c := startCollector(t, nil)
	var got usageTotals
	var samples []sample
	waitFor(t, 90*time.Second, "the token and cost series the events predict", func() (bool, string) {
		if c.proc.Exited() {
			t.Fatalf("collector exited: %s", c.proc.LogText())
		}
		var err error
		samples, err = scrape(c.metricsURL())
		if err != nil {
			return false, err.Error()
		}
		got, _ = scrapedUsage(samples)
		ok := got.input == want.input && got.output == want.output && math.Abs(got.cost-want.cost) < 1e-9
		return ok, fmt.Sprintf("want %+v, got %+v", want, got)
	})
	t.Logf("tokens in %.0f out %.0f, $%.6f", got.input, got.output, got.cost)
	for _, s := range samples {
		if s.name != tokensMetric && s.name != costMetric || strings.HasPrefix(s.labels["gen_ai_request_model"], probeModel) {
			continue
		}
		assert.Equal(t, "claude-code", s.labels["service_name"])
		assert.NotContains(t, s.labels, "gen_ai_conversation_id")
		assert.NotEmpty(t, s.labels["gen_ai_request_model"])
		if s.name == costMetric {
			assert.Equal(t, "table", s.labels["agent_usage_cost_source"], "Claude Code states no cost")
		}
	}
}

// dashboard is the part of a Grafana dashboard the test reads.
type dashboard struct {
	Panels []struct {
		Title   string `json:"title"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
	Templating struct {
		List []struct {
			Name string `json:"name"`
		} `json:"list"`
	} `json:"templating"`
}

// dashboardQueries are the PromQL queries of dashboards/agentotel.json, with the dashboard's
// variables as Grafana fills them for "All" ($agent) and a 2-minute $__rate_interval.
func dashboardQueries(t *testing.T, root string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "dashboards", "agentotel.json"))
	require.NoError(t, err)
	var d dashboard
	require.NoError(t, json.Unmarshal(b, &d))
	require.NotEmpty(t, d.Panels)
	out := map[string]string{}
	r := strings.NewReplacer("$__rate_interval", "2m", "$agent", ".+")
	for _, p := range d.Panels {
		require.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
		for i, tg := range p.Targets {
			require.NotEmpty(t, tg.Expr, "panel %q", p.Title)
			q := r.Replace(tg.Expr)
			require.NotRegexp(t, `\$\{?[A-Za-z_]`, q, "panel %q uses a variable the test does not know: %s", p.Title, tg.Expr)
			out[fmt.Sprintf("%s #%d", p.Title, i+1)] = q
		}
	}
	return out
}

// promQuery runs an instant query and returns the finite values of its result.
func promQuery(base, q string) ([]float64, error) {
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", resp.Status, body)
	}
	var out struct {
		Data struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("%w: %s", err, body)
	}
	var vals []float64
	for _, r := range out.Data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
			vals = append(vals, v)
		}
	}
	return vals, nil
}

// TestDashboardQueriesReturnSeries executes every panel query of dashboards/agentotel.json
// against the real Prometheus of the alerting recipe: the collector (config/alerting.yaml as
// written) reads the Claude testdata, Prometheus scrapes it every second, then two more sessions
// (turns whose GitHub MCP calls all fail) arrive one after the other, so that rates over the
// last minutes are not zero. Every query must return at least one series with a finite value.
func TestDashboardQueriesReturnSeries(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds and runs the collector and Prometheus (skipped with -short)")
	}
	root := repoRoot(t)
	queries := dashboardQueries(t, root)
	prometheus := prometheusBinary(t)

	c := launchCollector(t)
	prom, base := startPrometheus(t, root, prometheus, c.port)

	exp := expectedFromGoldens(t, root)
	c.writeSessions(t, true, nil)
	c.waitForCounters(t, exp)
	waitFor(t, 60*time.Second, "Prometheus to hold the testdata's series", func() (bool, string) {
		if prom.Exited() {
			t.Fatalf("prometheus exited: %s", prom.LogText())
		}
		v, err := promQuery(base, `count(`+costMetric+`) and count(`+callsMetric+`)`)
		if err != nil {
			return false, err.Error()
		}
		return len(v) == 1, "no series yet"
	})

	// Two more sessions, one after the other, each a turn whose GitHub MCP calls all fail: the
	// first makes the failure series, the second makes them grow (a series' first sample is no
	// increase to rate()).
	const tool, outageCalls = "mcp__github__get_issue", 3
	for i, session := range []string{"7a2e4c1b-3d5f-4e6a-8b9c-0d1e2f3a4b5c", "7a2e4c1b-3d5f-4e6a-8b9c-0d1e2f3a4b5d"} {
		tc := exp.tools[tool]
		tc.Calls += outageCalls
		tc.addErrors("tool_error", outageCalls)
		exp.tools[tool] = tc
		exp.turns++
		c.writeSessions(t, false, map[string][]byte{
			fmt.Sprintf("-alerting-dashboard-%d/%s.jsonl", i, session): outageSession(session, outageCalls),
		})
		c.waitForCounters(t, exp)
		want := float64(exp.tools[tool].Errors)
		waitFor(t, 60*time.Second, "Prometheus to hold the new failures", func() (bool, string) {
			v, err := promQuery(base, `sum(`+callsMetric+`{gen_ai_tool_name="`+tool+`", status_code="STATUS_CODE_ERROR"})`)
			if err != nil {
				return false, err.Error()
			}
			return len(v) == 1 && v[0] == want, fmt.Sprintf("want %v, got %v", want, v)
		})
	}

	var empty []string
	defer func() {
		if t.Failed() {
			for _, name := range empty {
				b, _ := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(queries[name]))
				if b != nil {
					body, _ := io.ReadAll(b.Body)
					b.Body.Close()
					t.Logf("%s: %s", name, body)
				}
			}
			for _, q := range []string{`traces_span_metrics_duration_milliseconds_bucket{gen_ai_tool_name="mcp__github__get_issue"}`} {
				b, _ := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
				if b != nil {
					body, _ := io.ReadAll(b.Body)
					b.Body.Close()
					t.Logf("%s: %s", q, body)
				}
			}
		}
	}()
	waitFor(t, 60*time.Second, "every dashboard query to return series", func() (bool, string) {
		if prom.Exited() {
			t.Fatalf("prometheus exited: %s", prom.LogText())
		}
		empty = empty[:0]
		for name, q := range queries {
			v, err := promQuery(base, q)
			if err != nil {
				return false, fmt.Sprintf("%s: %v", name, err)
			}
			if len(v) == 0 {
				empty = append(empty, name)
			}
		}
		sort.Strings(empty)
		return len(empty) == 0, fmt.Sprintf("no series yet: %v", empty)
	})
	for name, q := range queries {
		v, err := promQuery(base, q)
		require.NoError(t, err)
		t.Logf("%s: %d series (%s)", name, len(v), q)
	}
}
