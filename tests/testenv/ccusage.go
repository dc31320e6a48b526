// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ccusageTimeout bounds installing ccusage and each of its runs.
const ccusageTimeout = 5 * time.Minute

// passedToCcusage are the variables of the test's environment ccusage is
// run with: what a process needs to run, nothing by which an agent (or
// ccusage) would look somewhere other than the scratch home.
var passedToCcusage = []string{"PATH", "TMPDIR", "TMP", "TEMP", "LANG", "LC_ALL", "TZ", "USER", "SYSTEMROOT"}

// Ccusage is the path of ccusage 20.0.24, the token and cost oracle:
// scripts/ensure-ccusage.sh installs it under ~/.cache/agentotel once and
// prints where it is.
func Ccusage(tb testing.TB) string {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tb.Context(), ccusageTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, "bash", filepath.Join(RepoRoot(tb), "scripts", "ensure-ccusage.sh")).Output() //nolint:gosec // G204: the repository's own script
	require.NoError(tb, err, "scripts/ensure-ccusage.sh could not provide ccusage")
	return strings.TrimSpace(string(out))
}

// CcusageHome is a scratch home holding files: each source file (the value)
// copied to its path below the home (the key), the way the agent lays it out
// (".claude/projects/<project>/<session>.jsonl", ".codex/sessions/…").
func CcusageHome(tb testing.TB, files map[string]string) string {
	tb.Helper()
	home := tb.TempDir()
	for dst, src := range files {
		CopyFile(tb, src, filepath.Join(home, dst))
	}
	return home
}

// CopyFile copies src to dst, making dst's directory.
func CopyFile(tb testing.TB, src, dst string) {
	tb.Helper()
	data, err := os.ReadFile(src)
	require.NoError(tb, err)
	require.NoError(tb, os.MkdirAll(filepath.Dir(dst), 0o755))
	require.NoError(tb, os.WriteFile(dst, data, 0o600)) //nolint:gosec // G703: dst is a path the test chose
}

// CcusageSession is one session of ccusage's report with the token counts
// it gives for every agent (inputTokens net of cache reads) and the fields
// that name the session; a test that needs other fields (costs) decodes
// into a type of its own.
type CcusageSession struct {
	SessionID             string `json:"sessionId"`
	SessionFile           string `json:"sessionFile"` // codex: the rollout file's name
	ProjectPath           string `json:"projectPath"`
	InputTokens           int64  `json:"inputTokens"`
	OutputTokens          int64  `json:"outputTokens"`
	CacheReadTokens       int64  `json:"cacheReadTokens"`
	CacheCreationTokens   int64  `json:"cacheCreationTokens"`
	ReasoningOutputTokens int64  `json:"reasoningOutputTokens"`
}

// CcusageSessions runs `ccusage <agent> session --json --offline` over home
// (HOME there, CLAUDE_CONFIG_DIR and CODEX_HOME at its .claude and .codex,
// nothing else of the test's environment but passedToCcusage) and decodes the "sessions" of
// its report into S, the fields the caller compares.
func CcusageSessions[S any](tb testing.TB, home, agent string) []S {
	tb.Helper()
	bin := Ccusage(tb)
	ctx, cancel := context.WithTimeout(tb.Context(), ccusageTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, agent, "session", "--json", "--offline")
	env := []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"), "CODEX_HOME=" + filepath.Join(home, ".codex")}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(passedToCcusage, name) {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	require.NoErrorf(tb, err, "ccusage %s failed: %s", agent, stderr.String())
	var report struct {
		Sessions []S `json:"sessions"`
	}
	require.NoErrorf(tb, json.Unmarshal(stdout, &report), "ccusage %s output: %s", agent, stdout)
	return report.Sessions
}
