// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/testfiles"
)

// treeSnapshot records every entry below root: kind, mode, size, mtime and
// content hash.
func treeSnapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		info, err := d.Info()
		require.NoError(t, err)
		rel, _ := filepath.Rel(root, p)
		sum := [32]byte{}
		if !d.IsDir() {
			b, err := os.ReadFile(p) //nolint:gosec // G122: the test's temporary home
			require.NoError(t, err)
			sum = sha256.Sum256(b)
		}
		out[rel] = fmt.Sprintf("%s %s %d %x", info.Mode(), info.ModTime().Format(time.RFC3339Nano), info.Size(), sum)
		return nil
	}))
	return out
}

func TestDefaultPaths(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	claudeDir := filepath.Join(home, ".claude")
	main := filepath.Join(claudeDir, "projects", "-home-dev-proj", "s1.jsonl")
	sub := filepath.Join(claudeDir, "projects", "-home-dev-proj", "s1", "subagents", "agent-a1b2c3.jsonl")
	testfiles.WriteFile(t, main, userLine("u1", "s1", "hi"))
	testfiles.WriteFile(t, sub, userLine("w1", "s1", "warmup"))
	// Not a transcript: large tool outputs live next to the sessions.
	testfiles.WriteFile(t, filepath.Join(claudeDir, "projects", "-home-dev-proj", "s1", "tool-results", "x.txt"), "output")

	other := t.TempDir()
	configured := filepath.Join(other, "projects", "-srv", "s2.jsonl")
	testfiles.WriteFile(t, configured, userLine("v1", "s2", "there"))

	before := treeSnapshot(t, claudeDir)

	run := func(t *testing.T, want ...string) {
		// An empty agent_log block, plus storage (kept outside the agents' folders).
		cfg := createDefaultConfig().(*Config)
		cfg.PollInterval = 10 * time.Millisecond
		ext := storagetest.NewFileBackedStorageExtension("state", t.TempDir())
		cfg.Storage = &ext.ID
		h := newHarness(t, cfg, storagetest.NewStorageHost().WithExtension(ext.ID, ext))
		h.start()
		for _, p := range want {
			h.waitEvents(p, 1)
		}
		h.stop()
		files := map[string]bool{}
		for _, ev := range h.events() {
			files[ev.LogFile] = true
		}
		assert.Len(t, files, len(want), "exactly the transcripts at the default locations are read")
	}

	t.Run("home", func(t *testing.T) {
		run(t, main, sub)
	})
	t.Run("claude_config_dir", func(t *testing.T) {
		t.Setenv("CLAUDE_CONFIG_DIR", other)
		run(t, main, sub, configured)
	})
	t.Run("claude_config_dir_only", func(t *testing.T) {
		t.Setenv("HOME", "")
		t.Setenv("CLAUDE_CONFIG_DIR", other)
		run(t, configured)
	})

	assert.Equal(t, before, treeSnapshot(t, claudeDir), "nothing is written into the agent's folder")
}

func TestNoHomeNoDefault(t *testing.T) {
	t.Setenv("HOME", "")
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	h := newHarness(t, createDefaultConfig().(*Config), nil)
	err := h.rcv.Start(t.Context(), h.host)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "`claude_code.include`")
	require.NoError(t, h.rcv.Shutdown(t.Context()))
}

func TestResolvePatterns(t *testing.T) {
	env := agents.Env{Home: "/home/dev", Getenv: func(k string) string {
		return map[string]string{"CLAUDE_CONFIG_DIR": "~/alt-claude"}[k]
	}}
	a := agentByKey("claude_code")

	inc, exc, err := resolvePatterns(a, &AgentConfig{Enabled: true}, env)
	require.NoError(t, err)
	assert.Equal(t, []string{
		filepath.Join("/home/dev", ".claude", "projects", "**", "*.jsonl"),
		filepath.Join("/home/dev", "alt-claude", "projects", "**", "*.jsonl"),
	}, inc)
	assert.Empty(t, exc)

	inc, exc, err = resolvePatterns(a, &AgentConfig{
		Enabled: true,
		Include: []string{"~/logs/**/*.jsonl", "/abs/*.jsonl", "~other/x.jsonl"},
		Exclude: []string{"~/logs/skip/*.jsonl"},
	}, env)
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join("/home/dev", "logs", "**", "*.jsonl"), "/abs/*.jsonl", "~other/x.jsonl"}, inc)
	assert.Equal(t, []string{filepath.Join("/home/dev", "logs", "skip", "*.jsonl")}, exc)

	// The same directory twice is read once.
	same := agents.Env{Home: "/home/dev", Getenv: func(string) string { return "/home/dev/.claude/" }}
	inc, _, err = resolvePatterns(a, &AgentConfig{Enabled: true}, same)
	require.NoError(t, err)
	assert.Len(t, inc, 1)
}
