// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package e2e

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

// expectedTurns reads the golden events of every Claude testdata case and returns, per session,
// the prompts of its main thread (each must become one trace) and the failed Bash results.
type expectation struct {
	turns       map[string]int // session id → main-thread prompts
	bashFailure []agentevent.Event
	subagentOf  map[string]string // spawned agent id → spawning tool call id
}

func expectedFromGoldens(t *testing.T, root string) expectation {
	t.Helper()
	exp := expectation{turns: map[string]int{}, subagentOf: map[string]string{}}
	files, err := filepath.Glob(filepath.Join(root, "testdata", "claude_code", "*", "events.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no golden events under testdata/claude_code")
	for _, f := range files {
		logs, err := golden.ReadLogs(f)
		require.NoError(t, err)
		evs, _ := agentevent.DecodeLogs(logs)
		for i := range evs {
			ev := &evs[i]
			switch {
			case ev.Type == agentevent.TypeUserMessage && ev.AgentID == "":
				exp.turns[ev.SessionID]++
			case ev.Type == agentevent.TypeToolResult && ev.ToolName == "Bash" && ev.ToolStatus == agentevent.ToolError && ev.ToolExitCode != nil:
				exp.bashFailure = append(exp.bashFailure, *ev)
			}
			if ev.SpawnedAgentID != "" {
				exp.subagentOf[ev.SpawnedAgentID] = ev.ToolCallID
			}
		}
	}
	return exp
}

// TestClaudeCodeTracesInJaeger builds the collector, starts Jaeger on loopback, runs the collector
// with config/jaeger.yaml exactly as a user would (HOME pointing at a folder laid out like
// ~/.claude/projects with the Claude testdata), and checks through Jaeger's HTTP API: one trace per
// turn with one invoke_agent root, chat and tool children, a failed Bash call with Error status and
// its exit code, and a subagent's spans under the Agent/Task tool span that spawned it.
func TestClaudeCodeTracesInJaeger(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds the collector and Jaeger (skipped with -short)")
	}
	root := repoRoot(t)
	exp := expectedFromGoldens(t, root)
	require.NotEmpty(t, exp.bashFailure, "the testdata must hold a failed Bash call")
	require.NotEmpty(t, exp.subagentOf, "the testdata must hold a linked subagent")
	wantTraces := 0
	for _, n := range exp.turns {
		wantTraces += n
	}

	bin := collectorBinary(t)
	j := startJaeger(t)

	home := t.TempDir()
	projects := filepath.Join(home, ".claude", "projects")
	cases, err := os.ReadDir(filepath.Join(root, "testdata", "claude_code"))
	require.NoError(t, err)
	for _, c := range cases {
		copyTree(t, filepath.Join(root, "testdata", "claude_code", c.Name()), filepath.Join(projects, "-e2e-"+c.Name()),
			func(p string) bool { return strings.HasSuffix(p, ".jsonl") })
	}
	env := append(testhome.Env(home),
		"AGENTOTEL_STATE_DIR="+filepath.Join(t.TempDir(), "state"),
		fmt.Sprintf("OTLP_ENDPOINT=127.0.0.1:%d", j.otlpGRPC),
	)
	start(t, "collector", bin, env, "--config", filepath.Join(root, "config", "jaeger.yaml"))

	var traces []jTrace
	waitFor(t, 90*time.Second, fmt.Sprintf("%d claude-code turns and %d subagents in Jaeger", wantTraces, len(exp.subagentOf)), func() (bool, string) {
		traces = j.traces(t, "claude-code")
		roots, subs := 0, map[string]bool{}
		for _, tr := range traces {
			for _, sp := range tr.Spans {
				if sp.parent() == "" && sp.OperationName == "invoke_agent claude-code" {
					roots++
				}
				if id := sp.tagString("gen_ai.agent.id"); strings.HasPrefix(sp.OperationName, "invoke_agent") && exp.subagentOf[id] != "" {
					subs[id] = true
				}
			}
		}
		return roots >= wantTraces && len(subs) == len(exp.subagentOf),
			fmt.Sprintf("%d traces, %d turn roots, %d linked subagents", len(traces), roots, len(subs))
	})

	byName := map[string][]jSpan{}
	spanByID := map[string]jSpan{}
	turnsPerSession := map[string]int{}
	for _, tr := range traces {
		var roots []jSpan
		for _, sp := range tr.Spans {
			byName[sp.OperationName] = append(byName[sp.OperationName], sp)
			spanByID[sp.SpanID] = sp
			if sp.parent() == "" {
				roots = append(roots, sp)
			}
		}
		require.Len(t, roots, 1, "trace %s must have exactly one root", tr.TraceID)
		if roots[0].OperationName == "invoke_agent claude-code" {
			turnsPerSession[roots[0].tagString("gen_ai.conversation.id")]++
		}
		assert.Equal(t, "claude-code", tr.Processes[roots[0].ProcessID].ServiceName)
	}
	assert.Equal(t, exp.turns, turnsPerSession, "one trace per turn, per session")

	var chats, tools int
	for name, sps := range byName {
		switch {
		case strings.HasPrefix(name, "chat "):
			chats += len(sps)
			for _, sp := range sps {
				assert.NotEmpty(t, sp.tagString("gen_ai.usage.input_tokens"), "chat span %s without input tokens", sp.SpanID)
				assert.Equal(t, "chat", sp.tagString("gen_ai.operation.name"))
			}
		case strings.HasPrefix(name, "execute_tool "):
			tools += len(sps)
		}
	}
	assert.Positive(t, chats, "chat spans")
	assert.Positive(t, tools, "execute_tool spans")

	// The failed Bash calls: Error status, error.type and the exit code.
	for _, want := range exp.bashFailure {
		var found bool
		for _, sp := range byName["execute_tool Bash"] {
			if sp.tagString("gen_ai.tool.call.id") != want.ToolCallID {
				continue
			}
			found = true
			assert.Equal(t, "ERROR", sp.tagString("otel.status_code"), "failed Bash %s", want.ToolCallID)
			assert.Equal(t, fmt.Sprint(*want.ToolExitCode), sp.tagString("process.exit.code"))
			assert.NotEmpty(t, sp.tagString("error.type"))
		}
		assert.True(t, found, "no span for failed Bash call %s", want.ToolCallID)
	}

	// Each linked subagent: an invoke_agent span under its spawning tool span, with children.
	var ids []string
	for agentID := range exp.subagentOf {
		ids = append(ids, agentID)
	}
	sort.Strings(ids)
	for _, agentID := range ids {
		callID := exp.subagentOf[agentID]
		var sub *jSpan
		for _, sp := range spanByID {
			if strings.HasPrefix(sp.OperationName, "invoke_agent") && sp.tagString("gen_ai.agent.id") == agentID {
				sp := sp
				sub = &sp
			}
		}
		require.NotNil(t, sub, "no invoke_agent span for subagent %s", agentID)
		parent, ok := spanByID[sub.parent()]
		require.True(t, ok, "subagent %s span has no parent in its trace", agentID)
		assert.Contains(t, []string{"execute_tool Agent", "execute_tool Task"}, parent.OperationName)
		assert.Equal(t, callID, parent.tagString("gen_ai.tool.call.id"))
		children := 0
		for _, sp := range spanByID {
			if sp.parent() == sub.SpanID {
				children++
			}
		}
		assert.Positive(t, children, "subagent %s span has no children", agentID)
	}
}
