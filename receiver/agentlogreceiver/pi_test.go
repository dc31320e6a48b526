// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
)

func agentByKey(t *testing.T, key string) agent {
	t.Helper()
	for _, a := range agents {
		if a.key == key {
			return a
		}
	}
	t.Fatalf("no agent %q", key)
	return agent{}
}

// piConfig reads only Pi session files below dirs.
func piConfig(dirs ...string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.PollInterval = 10 * time.Millisecond
	cfg.IncludeContent = true
	cfg.ClaudeCode.Enabled, cfg.OpenCode.Enabled = false, false
	for _, d := range dirs {
		cfg.Pi.Include = append(cfg.Pi.Include, filepath.Join(d, "**", "*.jsonl"))
	}
	return cfg
}

// assertPiReadsLikeParser: every Pi session file below dirs, read by the
// receiver, yields exactly what parsing it directly yields (bad records
// counted, not emitted), with service.name pi.
func assertPiReadsLikeParser(t *testing.T, dirs ...string) {
	t.Helper()
	a := agentByKey(t, "pi")
	want := map[string][]agentevent.Event{}
	total := 0
	for _, dir := range dirs {
		for _, f := range jsonlFiles(t, dir) {
			for _, ev := range parseDirect(t, a, f) {
				if ev.Unparsed != "" {
					continue
				}
				ev.Raw = nil
				want[f] = append(want[f], ev)
				total++
			}
		}
	}
	require.NotZero(t, total)
	h := newHarness(t, piConfig(dirs...), nil)
	h.start()
	require.Eventually(t, func() bool { return len(h.events()) >= total }, 30*time.Second, 10*time.Millisecond,
		"waiting for %d events", total)
	for f, evs := range want {
		assert.Equal(t, roundTrip(t, evs), h.eventsOf(f), "events of %s", f)
	}
	for _, l := range h.sink.AllLogs() {
		for i := 0; i < l.ResourceLogs().Len(); i++ {
			assert.Equal(t, "pi", l.ResourceLogs().At(i).Resource().Attributes().AsRaw()["service.name"])
		}
	}
}

func TestReadsPiTestdata(t *testing.T) {
	assertPiReadsLikeParser(t, filepath.Join(repoRoot(t), "testdata", "pi"))
}

func TestReadsPiFixtureCorpus(t *testing.T) {
	root := os.Getenv("AGENTOTEL_FIXTURES")
	if root == "" {
		root = filepath.Join(repoRoot(t), "..", "shared", "fixtures")
	}
	dir := filepath.Join(root, "pi")
	if !dirExists(dir) {
		t.Skipf("fixture corpus %s absent (set AGENTOTEL_FIXTURES to its parent directory to run this test)", dir)
	}
	assertPiReadsLikeParser(t, dir)
}

// TestPiLiveAppend: a Pi session grows while the receiver runs; the new turn
// arrives and nothing is emitted twice.
func TestPiLiveAppend(t *testing.T) {
	src := filepath.Join(repoRoot(t), "testdata", "pi", "bash_failure", "--home-dev-calc--",
		"2026-06-26T01-26-40-000Z_5a1c0de0-0b1e-4c2a-9a51-7c0ffee00002.jsonl")
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	lines := bytes.SplitAfter(data, []byte("\n"))
	require.Greater(t, len(lines), 4)
	cut := len(lines) / 2

	dir := t.TempDir()
	path := filepath.Join(dir, "--home-dev-calc--", filepath.Base(src))
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, bytes.Join(lines[:cut], nil), 0o600))

	want := parseDirect(t, agentByKey(t, "pi"), src)
	for i := range want {
		want[i].Raw = nil
		want[i].LogFile = path // the parser names the file it was given
	}
	h := newHarness(t, piConfig(dir), nil)
	h.start()
	require.Eventually(t, func() bool { return len(h.eventsOf(path)) > 0 }, 10*time.Second, 10*time.Millisecond)

	appendFile(t, path, string(bytes.Join(lines[cut:], nil)))
	require.Eventually(t, func() bool { return len(h.eventsOf(path)) >= len(want) }, 10*time.Second, 10*time.Millisecond)
	got := h.eventsOf(path)
	seen := map[string]bool{}
	for _, ev := range got {
		assert.False(t, seen[ev.EventID], "event %s emitted twice", ev.EventID)
		seen[ev.EventID] = true
	}
	assert.Len(t, got, len(want), "every event once")
}

func TestPiDefaultPaths(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("PI_CODING_AGENT_DIR", "")
	src := filepath.Join(repoRoot(t), "testdata", "pi", "bash_failure", "--home-dev-calc--",
		"2026-06-26T01-26-40-000Z_5a1c0de0-0b1e-4c2a-9a51-7c0ffee00002.jsonl")
	data, err := os.ReadFile(src)
	require.NoError(t, err)
	inHome := filepath.Join(home, ".pi", "agent", "sessions", "--home-dev-calc--", filepath.Base(src))
	require.NoError(t, os.MkdirAll(filepath.Dir(inHome), 0o755))
	require.NoError(t, os.WriteFile(inHome, data, 0o600))
	moved := t.TempDir()
	inEnv := filepath.Join(moved, "sessions", "--p--", filepath.Base(src))
	require.NoError(t, os.MkdirAll(filepath.Dir(inEnv), 0o755))
	require.NoError(t, os.WriteFile(inEnv, data, 0o600))

	for _, tt := range []struct {
		name, env, want string
	}{
		{"home", "", inHome},
		{"pi_coding_agent_dir", moved, inEnv},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PI_CODING_AGENT_DIR", tt.env)
			cfg := createDefaultConfig().(*Config) // an empty agent_log block
			cfg.PollInterval = 10 * time.Millisecond
			h := newHarness(t, cfg, nil)
			h.start()
			h.waitEvents(tt.want, 1)
			for _, ev := range h.events() {
				assert.Equal(t, tt.want, ev.LogFile, "only the default location is read")
				assert.Equal(t, agentevent.SourcePi, ev.Source)
			}
		})
	}
}
