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

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOpenCodeTracesInJaeger: the collector, with config/jaeger.yaml as written, reads an OpenCode
// 1.1 storage tree at OpenCode's default location (XDG_DATA_HOME) and Jaeger shows service
// opencode with the shape testdata/opencode/storage_tree/traces.yaml describes: two turns, the
// explore child session nested under the task call, the failed bash call as an Error span with its
// exit code, the aborted turn interrupted.
func TestOpenCodeTracesInJaeger(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: builds the collector and Jaeger (skipped with -short)")
	}
	root := repoRoot(t)
	bin := collectorBinary(t)
	j := startJaeger(t)

	home, xdg := t.TempDir(), t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(xdg, "opencode"),
		os.DirFS(filepath.Join(root, "testdata", "opencode", "storage_tree"))))
	env := []string{
		"HOME=" + home,
		"CLAUDE_CONFIG_DIR=",
		"XDG_DATA_HOME=" + xdg,
		"AGENTOTEL_STATE_DIR=" + filepath.Join(t.TempDir(), "state"),
		fmt.Sprintf("OTLP_ENDPOINT=127.0.0.1:%d", j.otlpGRPC),
	}
	start(t, "collector", bin, env, "--config", filepath.Join(root, "config", "jaeger.yaml"))

	const session = "ses_2f1e0c7d1ffeAbCdEfGhIjKlMn"
	const child = "ses_2f1e0c7c2ffeChildSessionXy"
	var traces []jTrace
	waitFor(t, 90*time.Second, "2 opencode turns and the explore subagent in Jaeger", func() (bool, string) {
		traces = j.traces(t, "opencode")
		roots, sub := 0, false
		for _, tr := range traces {
			for _, sp := range tr.Spans {
				if sp.parent() == "" && sp.OperationName == "invoke_agent opencode" {
					roots++
				}
				if sp.OperationName == "invoke_agent explore" {
					sub = true
				}
			}
		}
		return roots == 2 && sub, fmt.Sprintf("%d traces, %d roots, subagent %v", len(traces), roots, sub)
	})

	byID := map[string]jSpan{}
	var statuses []string
	for _, tr := range traces {
		for _, sp := range tr.Spans {
			byID[sp.SpanID] = sp
			if sp.parent() == "" {
				assert.Equal(t, "opencode", tr.Processes[sp.ProcessID].ServiceName)
				assert.Equal(t, session, sp.tagString("gen_ai.conversation.id"))
				statuses = append(statuses, sp.tagString("agent.turn.status"))
			}
		}
	}
	assert.ElementsMatch(t, []string{"completed", "interrupted"}, statuses)
	var sawBash, sawSub bool
	for _, sp := range byID {
		switch {
		case sp.OperationName == "invoke_agent explore":
			sawSub = true
			assert.Equal(t, child, sp.tagString("gen_ai.agent.id"))
			assert.Equal(t, "execute_tool task", byID[sp.parent()].OperationName, "the child session nests under its task call")
		case sp.OperationName == "execute_tool bash":
			sawBash = true
			assert.Equal(t, "exit_code", sp.tagString("error.type"))
			assert.Equal(t, "1", sp.tagString("process.exit.code"))
			assert.Equal(t, "ERROR", sp.tagString("otel.status_code"))
		case strings.HasPrefix(sp.OperationName, "chat "):
			assert.Equal(t, "anthropic", sp.tagString("gen_ai.provider.name"))
			assert.NotEmpty(t, sp.tagString("gen_ai.usage.input_tokens"))
		}
	}
	assert.True(t, sawBash, "the failed bash call")
	assert.True(t, sawSub, "the child session")
}
