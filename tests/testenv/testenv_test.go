// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFreePortsAreDistinct(t *testing.T) {
	ports := FreePorts(t, 8)
	seen := map[int]bool{}
	for _, p := range ports {
		assert.False(t, seen[p], "port %d handed out twice", p)
		seen[p] = true
		assert.Positive(t, p)
	}
}

func TestRepoRootHoldsGoMod(t *testing.T) {
	_, err := os.Stat(filepath.Join(RepoRoot(t), "go.mod"))
	require.NoError(t, err)
}

func TestStartAndStopByPID(t *testing.T) {
	p := Start(t, "sleep", "/bin/sh", nil, "-c", "echo started; exec sleep 60")
	WaitFor(t, 10*time.Second, "the process's output", func() (bool, string) {
		return p.LogText() == "started\n", p.LogText()
	})
	assert.False(t, p.Exited())
	p.Stop(t)
	assert.True(t, p.Exited(), "stopped by SIGTERM")
}

func TestCopyTreeKeepsLayoutAndFilter(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(src, "a", "b"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "a", "b", "s.jsonl"), []byte("x\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(src, "a", "events.yaml"), []byte("y\n"), 0o600))
	CopyTree(t, src, dst, func(p string) bool { return filepath.Ext(p) == ".jsonl" })
	b, err := os.ReadFile(filepath.Join(dst, "a", "b", "s.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, "x\n", string(b))
	assert.NoFileExists(t, filepath.Join(dst, "a", "events.yaml"))
}
