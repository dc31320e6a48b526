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
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/testfiles"
)

// onlyAgentConfig reads only one agent's session files, those below dirs.
func onlyAgentConfig(_ *testing.T, key string, dirs ...string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.PollInterval = 10 * time.Millisecond
	cfg.IncludeContent = true
	for _, a := range registered() {
		a.config(cfg).Enabled = a.key == key
	}
	ac := agentByKey(key).config(cfg)
	for _, d := range dirs {
		ac.Include = append(ac.Include, filepath.Join(d, "**", "*.jsonl"))
	}
	return cfg
}

// assertReadsLikeItsParser: every session file of agent key below dirs,
// read by the receiver, yields exactly what parsing it directly yields (bad
// records counted, not emitted), with the agent's service.name.
func assertReadsLikeItsParser(t *testing.T, key string, dirs ...string) {
	t.Helper()
	a := agentByKey(key)
	want := map[string][]agentevent.Event{}
	total := 0
	for _, dir := range dirs {
		for _, f := range jsonlFiles(t, dir) {
			evs := parseDirect(t, a, f)
			for i := range evs {
				ev := &evs[i]
				if ev.Unparsed != "" {
					continue
				}
				ev.Raw = nil
				if withoutContent {
					agentevent.StripContent(ev)
				}
				want[f] = append(want[f], *ev)
				total++
			}
		}
	}
	require.NotZero(t, total)
	cfg := onlyAgentConfig(t, key, dirs...)
	cfg.IncludeContent = !withoutContent
	h := newHarness(t, cfg, nil)
	h.start()
	require.Eventually(t, func() bool { return len(h.events()) >= total }, 30*time.Second, 10*time.Millisecond,
		"waiting for %d events", total)
	for f, evs := range want {
		assert.Equal(t, roundTrip(t, evs), h.eventsOf(f), "events of %s", f)
	}
	for _, l := range h.sink.AllLogs() {
		for i := 0; i < l.ResourceLogs().Len(); i++ {
			assert.Equal(t, a.Source.ServiceName(), l.ResourceLogs().At(i).Resource().Attributes().AsRaw()["service.name"])
		}
	}
}

func TestReadsTestdataOfEachJSONLAgent(t *testing.T) {
	for _, key := range []string{"pi", "codex"} {
		t.Run(key, func(t *testing.T) {
			assertReadsLikeItsParser(t, key, filepath.Join(repoRoot(t), "testdata", key))
		})
	}
}

// TestReadsFixtureCorpusOfEachJSONLAgent reads each agent's folder of every
// corpus root (testenv.FixtureRoots) in place.
func TestReadsFixtureCorpusOfEachJSONLAgent(t *testing.T) {
	for _, key := range []string{"pi", "codex"} {
		t.Run(key, func(t *testing.T) {
			vendortest.EachCorpus(t, key, func(t *testing.T, dir string) {
				assertReadsLikeItsParser(t, key, dir)
			})
		})
	}
}

// TestLiveAppendOfEachJSONLAgent: a session grows while the receiver runs;
// the new turn arrives and nothing is emitted twice.
func TestLiveAppendOfEachJSONLAgent(t *testing.T) {
	for _, tt := range []struct{ key, src string }{
		{"pi", filepath.Join("bash_failure", "--home-dev-calc--", "2026-06-26T01-26-40-000Z_5a1c0de0-0b1e-4c2a-9a51-7c0ffee00002.jsonl")},
		{"codex", filepath.Join("exec_events_failure", "rollout-2026-03-01T10-00-00-019d0000-0000-7000-8000-000000000001.jsonl")},
	} {
		t.Run(tt.key, func(t *testing.T) {
			src := filepath.Join(repoRoot(t), "testdata", tt.key, tt.src)
			data, err := os.ReadFile(src)
			require.NoError(t, err)
			lines := bytes.SplitAfter(data, []byte("\n"))
			require.Greater(t, len(lines), 4)
			cut := len(lines) / 2

			dir := t.TempDir()
			path := filepath.Join(dir, filepath.Base(filepath.Dir(src)), filepath.Base(src))
			require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
			require.NoError(t, os.WriteFile(path, bytes.Join(lines[:cut], nil), 0o600)) //nolint:gosec // G703: the data written was read from a file; the path is the test's own
			want := 0
			for _, ev := range parseDirect(t, agentByKey(tt.key), src) {
				if ev.Unparsed == "" {
					want++
				}
			}

			h := newHarness(t, onlyAgentConfig(t, tt.key, dir), nil)
			h.start()
			require.Eventually(t, func() bool { return len(h.eventsOf(path)) > 0 }, 10*time.Second, 10*time.Millisecond)
			before := len(h.eventsOf(path))
			require.Less(t, before, want, "the first half holds part of the session")

			testfiles.AppendFile(t, path, string(bytes.Join(lines[cut:], nil)))
			require.Eventually(t, func() bool { return len(h.eventsOf(path)) >= want }, 10*time.Second, 10*time.Millisecond)
			got := h.eventsOf(path)
			seen := map[string]bool{}
			for _, ev := range got {
				assert.False(t, seen[ev.EventID], "event %s emitted twice", ev.EventID)
				seen[ev.EventID] = true
			}
			assert.Len(t, got, want, "every event once")
		})
	}
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
	require.NoError(t, os.WriteFile(inHome, data, 0o600)) //nolint:gosec // G703: the data written was read from a file; the path is the test's own
	moved := t.TempDir()
	inEnv := filepath.Join(moved, "sessions", "--p--", filepath.Base(src))
	require.NoError(t, os.MkdirAll(filepath.Dir(inEnv), 0o755))
	require.NoError(t, os.WriteFile(inEnv, data, 0o600)) //nolint:gosec // G703: the data written was read from a file; the path is the test's own

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
				assert.Equal(t, agentevent.Source("pi"), ev.Source)
			}
		})
	}
}

// TestCodexDefaultPathsAndArchive: an empty config reads $CODEX_HOME (or
// ~/.codex) sessions/ and archived_sessions/; a rollout present in both is
// read once.
func TestCodexDefaultPathsAndArchive(t *testing.T) {
	rollout := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "codex", name))
		require.NoError(t, err)
		return b
	}
	first := rollout(filepath.Join("exec_events_failure", "rollout-2026-03-01T10-00-00-019d0000-0000-7000-8000-000000000001.jsonl"))
	second := rollout(filepath.Join("v0.66.0_agtrace_basic", "v0.66.0_agtrace_basic.jsonl"))
	put := func(path string, data []byte) {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, data, 0o600))
	}
	for _, tt := range []struct{ name, viaEnv string }{{"home", ""}, {"codex_home", "custom"}} {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("CLAUDE_CONFIG_DIR", "")
			t.Setenv("XDG_DATA_HOME", "")
			t.Setenv("PI_CODING_AGENT_DIR", "")
			codexHome := filepath.Join(home, ".codex")
			t.Setenv("CODEX_HOME", "")
			if tt.viaEnv != "" {
				codexHome = filepath.Join(t.TempDir(), tt.viaEnv)
				t.Setenv("CODEX_HOME", codexHome)
			}
			live := filepath.Join(codexHome, "sessions", "2026", "03", "01", "rollout-2026-03-01T10-00-00-019d0000-0000-7000-8000-000000000001.jsonl")
			archived := filepath.Join(codexHome, "archived_sessions", filepath.Base(live))
			put(live, first)
			put(archived, first)
			want := 0
			for _, ev := range parseDirect(t, agentByKey("codex"), live) {
				if ev.Unparsed == "" {
					want++
				}
			}

			cfg := createDefaultConfig().(*Config) // an empty agent_log block
			cfg.PollInterval = 10 * time.Millisecond
			h := newHarness(t, cfg, nil)
			h.start()
			require.Eventually(t, func() bool { return len(h.events()) >= want }, 10*time.Second, 10*time.Millisecond)
			// A later rollout as a barrier: by the time it is read, a second copy
			// of the first would have been read too.
			later := filepath.Join(codexHome, "sessions", "2026", "03", "02", "rollout-2026-03-02T10-00-00-019d0000-0000-7000-8000-000000000002.jsonl")
			put(later, second)
			h.waitEvents(later, 1)
			n := len(h.eventsOf(live)) + len(h.eventsOf(archived))
			assert.Equal(t, want, n, "the rollout in sessions/ and archived_sessions/ is read once")
			for _, ev := range h.events() {
				assert.Equal(t, agentevent.Source("codex"), ev.Source)
			}
		})
	}
}
