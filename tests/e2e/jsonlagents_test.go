// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/testhome"
)

// TestPiTracesInJaeger: the collector, with config/jaeger.yaml as written, reads the Pi testdata at
// Pi's default location (~/.pi/agent/sessions) and Jaeger shows service pi with one trace per
// turn (the golden events say how many per session) and the failed commands as Error spans
// with their exit codes.
func TestPiTracesInJaeger(t *testing.T) {
	testJSONLAgentInJaeger(t, "pi", "pi", nil, func(home string, i int, c string) {
		// Cases reuse session directory names; keep each case in its own.
		copyTree(t, c, filepath.Join(home, ".pi", "agent", "sessions", fmt.Sprintf("case%02d", i)),
			func(p string) bool { return strings.HasSuffix(p, ".jsonl") })
	})
}

// TestCodexTracesInJaeger: the same for Codex, its rollouts laid out as in ~/.codex/sessions; the
// /review rollout (a session of its own that names no parent) is nested under the turn whose
// entered_review_mode opened it.
func TestCodexTracesInJaeger(t *testing.T) {
	review := nestedUnder("invoke_agent review", "the /review rollout's span",
		"invoke_agent codex", "under the turn's root", func(c *assert.CollectT, parent jSpan) {
			assert.Empty(c, parent.parent(), "the turn's root")
		})
	testJSONLAgentInJaeger(t, "codex", "codex", review, func(home string, i int, c string) {
		files, err := filepath.Glob(filepath.Join(c, "*.jsonl"))
		require.NoError(t, err)
		for _, f := range files {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			name := filepath.Base(f)
			if !strings.HasPrefix(name, "rollout-") {
				name = "rollout-" + name
			}
			dst := filepath.Join(home, ".codex", "sessions", "2026", "01", fmt.Sprintf("%02d", i+1), name)
			require.NoError(t, os.MkdirAll(filepath.Dir(dst), 0o755))
			require.NoError(t, os.WriteFile(dst, b, 0o600)) //nolint:gosec // G703: dst is in the test's temporary home
		}
	})
}

// testJSONLAgentInJaeger lays out every testdata/<key>/<case> for the agent under a fresh HOME with
// place, runs the collector with config/jaeger.yaml as written, and checks service in Jaeger.
func testJSONLAgentInJaeger(t *testing.T, key, service string, extra func(c *assert.CollectT, spans map[string]jSpan), place func(home string, i int, caseDir string)) {
	if testing.Short() {
		t.Skip("end-to-end: builds the collector and Jaeger (skipped with -short)")
	}
	root := repoRoot(t)
	files, err := filepath.Glob(filepath.Join(root, "testdata", key, "*", "events.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	turns := map[string]int{}
	var failed []agentevent.Event
	for _, f := range files {
		logs, errRead := golden.ReadLogs(f)
		require.NoError(t, errRead)
		evs, _ := agentevent.DecodeLogs(logs)
		for i := range evs {
			ev := &evs[i]
			if ev.Type == agentevent.TypeUserMessage && ev.AgentID == "" {
				turns[ev.SessionID]++
			}
			if ev.Type == agentevent.TypeToolResult && ev.ToolStatus == agentevent.ToolError && ev.ToolExitCode != nil && *ev.ToolExitCode != 0 {
				failed = append(failed, *ev)
			}
		}
	}
	require.NotEmpty(t, failed, "the %s testdata holds a failed command", key)
	want := 0
	for _, n := range turns {
		want += n
	}

	bin := collectorBinary(t)
	j := startJaeger(t)
	home := t.TempDir()
	cases, err := filepath.Glob(filepath.Join(root, "testdata", key, "*"))
	require.NoError(t, err)
	i := 0
	for _, c := range cases {
		if info, err := os.Stat(c); err == nil && info.IsDir() {
			place(home, i, c)
			i++
		}
	}
	env := append(testhome.Env(home),
		"AGENTOTEL_STATE_DIR="+filepath.Join(t.TempDir(), "state"),
		fmt.Sprintf("OTLP_ENDPOINT=127.0.0.1:%d", j.otlpGRPC),
	)
	start(t, "collector", bin, env, "--config", filepath.Join(root, "config", "jaeger.yaml"))

	var traces []jTrace
	waitFor(t, 90*time.Second, fmt.Sprintf("%d %s turns in Jaeger", want, service), func() (bool, string) {
		traces = j.traces(t, service)
		roots := 0
		for _, tr := range traces {
			for i := range tr.Spans {
				if sp := &tr.Spans[i]; sp.parent() == "" && sp.OperationName == "invoke_agent "+service {
					roots++
				}
			}
		}
		return roots >= want, fmt.Sprintf("%d traces, %d roots", len(traces), roots)
	})

	got := map[string]int{}
	calls := map[string]jSpan{}
	for _, tr := range traces {
		var roots []jSpan
		for i := range tr.Spans {
			sp := &tr.Spans[i]
			if sp.parent() == "" {
				roots = append(roots, *sp)
			}
			if strings.HasPrefix(sp.OperationName, "execute_tool ") {
				calls[sp.tagString("gen_ai.tool.call.id")] = *sp
			}
		}
		require.Len(t, roots, 1, "trace %s has one root", tr.TraceID)
		assert.Equal(t, service, tr.Processes[roots[0].ProcessID].ServiceName)
		got[roots[0].tagString("gen_ai.conversation.id")]++
	}
	assert.Equal(t, turns, got, "one trace per turn, per session")
	for i := range failed {
		ev := &failed[i]
		sp, ok := calls[ev.ToolCallID]
		if assert.True(t, ok, "a span for the failed call %s", ev.ToolCallID) {
			assert.Equal(t, "ERROR", sp.tagString("otel.status_code"))
			assert.Equal(t, fmt.Sprint(*ev.ToolExitCode), sp.tagString("process.exit.code"))
		}
	}
	if extra != nil {
		// Checks of spans that may arrive after the roots (a subagent
		// waiting for its link): poll until they hold.
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			all := map[string]jSpan{}
			for _, tr := range j.traces(t, service) {
				for i := range tr.Spans {
					all[tr.Spans[i].SpanID] = tr.Spans[i]
				}
			}
			extra(c, all)
		}, 30*time.Second, 250*time.Millisecond)
	}
}

// nestedUnder is a check for testJSONLAgentInJaeger: the spans hold a span named op (what says
// which), and each such span's parent is a span named parentOp (under says why); check, when set,
// sees that parent.
func nestedUnder(op, what, parentOp, under string, check func(c *assert.CollectT, parent jSpan)) func(c *assert.CollectT, spans map[string]jSpan) {
	return func(c *assert.CollectT, spans map[string]jSpan) {
		var found bool
		for id := range spans {
			sp := spans[id]
			if sp.OperationName != op {
				continue
			}
			found = true
			parent, ok := spans[sp.parent()]
			if assert.True(c, ok, "%s has a parent span", op) {
				assert.Equal(c, parentOp, parent.OperationName, under)
				if check != nil {
					check(c, parent)
				}
			}
		}
		assert.True(c, found, what)
	}
}
