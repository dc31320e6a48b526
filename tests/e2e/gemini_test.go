// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/testhome"
)

// TestGeminiTracesInJaeger: the collector, with config/jaeger.yaml as written, reads a Gemini CLI
// home (testdata/gemini/subagent_and_logs as ~/.gemini) and Jaeger shows service gemini-cli: the
// session's four turns (completed, interrupted, error, completed), the subagent chat nested in the
// turn that delegated to it, the failed shell call as an Error span with its exit code, and the
// prompt only logs.json holds as a turn of its own.
func TestGeminiTracesInJaeger(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds the collector and Jaeger (skipped with -short)")
	}
	root := repoRoot(t)
	bin := collectorBinary(t)
	j := startJaeger(t)
	home := t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(home, ".gemini"),
		os.DirFS(filepath.Join(root, "testdata", "gemini", "subagent_and_logs"))))
	// History: files nobody has written to for a while. (A chat file changed in the last few
	// seconds has its last answer held back until it settles.)
	old := time.Now().Add(-time.Hour)
	require.NoError(t, filepath.WalkDir(filepath.Join(home, ".gemini"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(p, old, old) //nolint:gosec // G122: the test's temporary home
	}))
	env := append(testhome.Env(home),
		"AGENTOTEL_STATE_DIR="+filepath.Join(t.TempDir(), "state"),
		fmt.Sprintf("OTLP_ENDPOINT=127.0.0.1:%d", j.otlpGRPC),
	)
	start(t, "collector", bin, env, "--config", filepath.Join(root, "config", "jaeger.yaml"))

	const session = "a1b2c3d4-0000-4000-8000-000000000001"
	const logsOnly = "c9d8e7f6-0000-4000-8000-000000000002"
	var traces []jTrace
	waitFor(t, 90*time.Second, "5 gemini-cli turns and the subagent in Jaeger", func() (bool, string) {
		traces = j.traces(t, "gemini-cli")
		roots, sub := 0, false
		for _, tr := range traces {
			for _, sp := range tr.Spans {
				if sp.parent() == "" && sp.OperationName == "invoke_agent gemini-cli" {
					roots++
				}
				sub = sub || sp.OperationName == "invoke_agent subagent"
			}
		}
		return roots == 5 && sub, fmt.Sprintf("%d traces, %d roots, subagent %v", len(traces), roots, sub)
	})
	byID := map[string]jSpan{}
	statuses := map[string][]string{}
	for _, tr := range traces {
		for _, sp := range tr.Spans {
			byID[sp.SpanID] = sp
			if sp.parent() == "" {
				assert.Equal(t, "gemini-cli", tr.Processes[sp.ProcessID].ServiceName)
				id := sp.tagString("gen_ai.conversation.id")
				statuses[id] = append(statuses[id], sp.tagString("agent.turn.status"))
			}
		}
	}
	assert.ElementsMatch(t, []string{"completed", "interrupted", "error", "completed"}, statuses[session])
	assert.Equal(t, []string{"abandoned"}, statuses[logsOnly], "the prompt only logs.json holds")
	var sawShell, sawSub bool
	for _, sp := range byID {
		switch {
		case sp.OperationName == "invoke_agent subagent":
			sawSub = true
			assert.Equal(t, "rv8x2k", sp.tagString("gen_ai.agent.id"))
			assert.Equal(t, "invoke_agent gemini-cli", byID[sp.parent()].OperationName, "nested in the delegating turn")
		case sp.OperationName == "execute_tool run_shell_command" && sp.tagString("process.exit.code") == "1":
			sawShell = true
			assert.Equal(t, "exit_code", sp.tagString("error.type"))
			assert.Equal(t, "ERROR", sp.tagString("otel.status_code"))
		case strings.HasPrefix(sp.OperationName, "chat "):
			assert.Equal(t, "gcp.gemini", sp.tagString("gen_ai.provider.name"))
		}
	}
	assert.True(t, sawShell, "the failed shell call")
	assert.True(t, sawSub, "the subagent chat")
}
