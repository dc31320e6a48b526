// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCcusageHomeLaysOutFiles(t *testing.T) {
	src := filepath.Join(t.TempDir(), "s.jsonl")
	require.NoError(t, os.WriteFile(src, []byte("{}\n"), 0o600))
	dst := filepath.Join(".claude", "projects", "p", "s.jsonl")
	home := CcusageHome(t, map[string]string{dst: src})
	data, err := os.ReadFile(filepath.Join(home, dst))
	require.NoError(t, err)
	assert.Equal(t, "{}\n", string(data))
}

// TestCcusageSessionsReadsTheScratchHome: ccusage reads the home it is
// given, not the one the environment names.
func TestCcusageSessionsReadsTheScratchHome(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not running ccusage")
	}
	t.Setenv("CODEX_HOME", t.TempDir()) // empty: not where ccusage must look
	files, err := filepath.Glob(filepath.Join(RepoRoot(t), "testdata", "codex", "exec_events_failure", "rollout-*.jsonl"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	name := filepath.Base(files[0])
	home := CcusageHome(t, map[string]string{filepath.Join(".codex", "sessions", "2025", "01", "01", name): files[0]})
	sessions := CcusageSessions[CcusageSession](t, home, "codex")
	require.Len(t, sessions, 1)
	assert.Equal(t, strings.TrimSuffix(name, ".jsonl"), sessions[0].SessionFile)
	assert.Positive(t, sessions[0].InputTokens+sessions[0].OutputTokens)
}
