// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package openclaw

import (
	"path/filepath"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/internal/vendors/pi"
)

func TestDescriptor(t *testing.T) {
	d := agents.Lookup(Source)
	require.NotNil(t, d)
	assert.Equal(t, "openclaw", d.Service)
	assert.Equal(t, "OpenClaw", d.Display)
	assert.Equal(t, agents.AppendedJSONL, d.Reader.Kind)
	assert.True(t, d.Optional)
	assert.Equal(t, "openclaw", d.Ccusage.Command)
	assert.Equal(t, []string{"OPENCLAW_DIR"}, d.Ccusage.Env)
	assert.Equal(t, "openclaw", d.Fixtures.Dir)
	assert.Equal(t, "openclaw", Source.ServiceName())
	assert.Equal(t, Source, agentevent.SourceFromServiceName("openclaw"))
}

func TestDataFolders(t *testing.T) {
	d := agents.Lookup(Source)
	require.NotNil(t, d)
	env := func(vars map[string]string) agents.Env {
		return agents.Env{Home: "/home/u", Getenv: func(k string) string { return vars[k] }}
	}
	for _, tc := range []struct {
		name string
		vars map[string]string
		want []string
	}{
		{"defaults", nil, []string{"/home/u/.openclaw", "/home/u/.clawdbot", "/home/u/.moldbot", "/home/u/.moltbot"}},
		{"state dir", map[string]string{"OPENCLAW_STATE_DIR": "/srv/claw"}, []string{"/srv/claw", "/home/u/.clawdbot", "/home/u/.moldbot", "/home/u/.moltbot"}},
		{"home", map[string]string{"OPENCLAW_HOME": "/srv/home"}, []string{"/home/u/.openclaw", "/srv/home/.openclaw", "/home/u/.clawdbot", "/home/u/.moldbot", "/home/u/.moltbot"}},
		{"legacy state dir", map[string]string{"CLAWDBOT_STATE_DIR": "~/old"}, []string{"/home/u/.openclaw", "/home/u/old", "/home/u/.clawdbot", "/home/u/.moldbot", "/home/u/.moltbot"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := d.DataFolders(env(tc.vars))
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestInclude(t *testing.T) {
	patterns := Include("/h/.openclaw")
	matches := func(path string) bool {
		for _, p := range patterns {
			if ok, err := doublestar.PathMatch(p, path); err == nil && ok {
				return true
			}
		}
		return false
	}
	sessions := "/h/.openclaw/agents/main/sessions/"
	for name, want := range map[string]bool{
		"7f3c2a10-5b6e-4c1d-9a2f-0e8d4b6a1c01.jsonl":                                  true,
		"7f3c2a10-5b6e-4c1d-9a2f-0e8d4b6a1c01-topic-1187.jsonl":                       true,
		"7f3c2a10-5b6e-4c1d-9a2f-0e8d4b6a1c01.jsonl.reset.2026-06-20T09-15-02.481Z":   true,
		"7f3c2a10-5b6e-4c1d-9a2f-0e8d4b6a1c01.jsonl.deleted.2026-06-18T17-40-11.006Z": true,
		"7f3c2a10-5b6e-4c1d-9a2f-0e8d4b6a1c01.jsonl.bak.2026-06-18T17-40-11.006Z":     false,
		"sessions.json":                   false,
		"sessions.json.bak.1782028800000": false,
	} {
		assert.Equal(t, want, matches(sessions+name), name)
		assert.Equal(t, want, Transcript(name), name)
	}
	assert.False(t, matches("/h/.openclaw/agents/main/sessions/archive/x.jsonl"), "folders below sessions/ are not read")
}

// TestDerived: a compaction's checkpoint twin and a run's trajectory
// sidecar match the include patterns but hold no transcript of their own:
// their parser maps nothing.
func TestDerived(t *testing.T) {
	line := []byte(`{"type":"message","id":"a1","parentId":null,"timestamp":"2026-06-21T08:00:04.313Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":3,"output":2,"cacheRead":0,"cacheWrite":0},"stopReason":"stop"}}`)
	for name, derived := range map[string]bool{
		"7f3c2a10-5b6e-4c1d-9a2f-0e8d4b6a1c01.checkpoint.3b7d8e52-9a41-4c0f-8e26-5d1f7a9b0c34.jsonl":                                true,
		"7f3c2a10-5b6e-4c1d-9a2f-0e8d4b6a1c01.checkpoint.3b7d8e52-9a41-4c0f-8e26-5d1f7a9b0c34.jsonl.reset.2026-06-20T09-15-02.481Z": true,
		"7f3c2a10-5b6e-4c1d-9a2f-0e8d4b6a1c01.trajectory.jsonl":                                                                     true,
		"7f3c2a10-5b6e-4c1d-9a2f-0e8d4b6a1c01.jsonl":                                                                                false,
		"checkpoint.jsonl": false,
	} {
		assert.Equal(t, derived, Derived(name), name)
		assert.Equal(t, !derived, Transcript(name), name)
		evs := NewParser("/h/.openclaw/agents/main/sessions/"+name, pi.Options{}).Parse(line, 1, 0)
		if derived {
			assert.Empty(t, evs, name)
		} else {
			assert.NotEmpty(t, evs, name)
		}
	}
}

func TestSessionKey(t *testing.T) {
	for path, want := range map[string]string{
		"/h/.openclaw/agents/main/sessions/7f3c2a10-5b6e-4c1d-9a2f-0e8d4b6a1c01.jsonl":                                "7f3c2a10-5b6e-4c1d-9a2f-0e8d4b6a1c01",
		"/h/.openclaw/agents/main/sessions/7f3c2a10-5b6e-4c1d-9a2f-0e8d4b6a1c01.jsonl.reset.2026-06-20T09-15-02.481Z": "7f3c2a10-5b6e-4c1d-9a2f-0e8d4b6a1c01",
		"/h/.openclaw/agents/work/sessions/e81f4a92-0b3d-4c57-a6e8-2f91d0c4b7a5-topic-1187.jsonl":                     "e81f4a92-0b3d-4c57-a6e8-2f91d0c4b7a5-topic-1187",
	} {
		assert.Equal(t, want, SessionKey(path, "ignored"), path)
	}
}

// TestStage lays the corpus out below a home as OpenClaw does.
func TestStage(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, stage(stagingOf(t, corpusDir(t), home)))
	for _, rel := range transcripts(t, corpusDir(t)) {
		agent, name := fixtureAgent(rel), filepath.Base(rel)
		assert.FileExists(t, filepath.Join(home, ".openclaw", "agents", agent, "sessions", name))
	}
	d := agents.Lookup(Source)
	assert.Equal(t, ".openclaw/agents/bench-r0003-work/sessions/x.jsonl", filepath.ToSlash(d.Fixtures.Place(3, "work/sessions/x.jsonl", nil)))
	assert.True(t, d.Fixtures.Keep("main/sessions/x.jsonl.reset.2026-06-20T09-15-02.481Z"))
	assert.False(t, d.Fixtures.Keep("main/sessions/x.trajectory.jsonl"))
	assert.False(t, d.Fixtures.Keep("SOURCES.md"))
}
