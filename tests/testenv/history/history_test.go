// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package history

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/tests/testenv"
)

// historyRoots are the fixture roots, the test skipped when the fixtures are absent.
func historyRoots(t *testing.T) []string {
	roots := testenv.FixtureRoots(t)
	if _, err := os.Stat(roots[0]); err != nil {
		require.ErrorIs(t, err, fs.ErrNotExist, "skipped only when absent")
		t.Skipf("shared fixtures absent (%v)", err)
	}
	return roots
}

// TestWriteHistoryCopiesEveryAgentWithUniqueIDs: two copies of every session file of every root,
// each where its agent keeps it, and no id shared between copies or kept from a fixture. The
// properties hold whatever the fixtures' sizes.
func TestWriteHistoryCopiesEveryAgentWithUniqueIDs(t *testing.T) {
	roots := historyRoots(t)
	home := t.TempDir()
	h := WriteHistoryCopies(t, roots, home, 2)

	// Every session file of every root is copied, twice (OpenCode's project file, the same in
	// every copy, once); every agent the roots hold is there.
	want := map[string]bool{} // fixture file or OpenCode database
	seen := map[string]bool{}
	for _, root := range roots {
		for _, name := range HistoryAgents() {
			dir := filepath.Join(root, name)
			err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, err := filepath.Rel(dir, p)
				require.NoError(t, err)
				switch {
				case historyAgents()[name].Keep(filepath.ToSlash(rel)):
				case historyAgents()[name].d.Reader.Kind == agents.OpenCodeStore && d.Name() == historyAgents()[name].d.Reader.Database:
				default:
					return nil
				}
				want[p] = true
				seen[name] = true
				return nil
			})
			if !os.IsNotExist(err) {
				require.NoError(t, err)
			}
		}
	}
	require.NotEmpty(t, want)
	copies := map[string]map[int]int{} // source → replica → files
	for _, f := range h.Files {
		if copies[f.Source] == nil {
			copies[f.Source] = map[int]int{}
		}
		copies[f.Source][f.Replica]++
	}
	for src := range want {
		assert.Positivef(t, copies[src][0], "%s not in copy 0", src)
		if !strings.Contains(src, string(filepath.Separator)+"project"+string(filepath.Separator)) && !strings.HasSuffix(src, "opencode.db") {
			assert.Equalf(t, copies[src][0], copies[src][1], "%s: copy 1 differs from copy 0", src)
		}
	}
	for src := range copies {
		assert.Truef(t, want[src], "%s is copied but is no session file of the fixtures", src)
	}
	byAgent := h.ByAgent()
	for a := range seen {
		assert.Positive(t, byAgent[a][0], "no %s files", a)
	}
	// Both roots are drawn from: the newest real files too.
	for _, root := range roots {
		drawn := false
		for src := range copies {
			drawn = drawn || strings.HasPrefix(src, root+string(filepath.Separator))
		}
		assert.Truef(t, drawn, "nothing of %s in the history", root)
	}

	// Where each agent keeps its sessions.
	for _, f := range h.Files {
		rel, err := filepath.Rel(home, f.Path)
		require.NoError(t, err)
		prefix := map[string]string{
			"claude_code": ".claude/projects/", "codex": ".codex/sessions/", "pi": ".pi/agent/sessions/",
			"gemini": ".gemini/tmp/", "opencode": ".local/share/opencode/storage/",
			"copilot_cli": ".copilot/", "amp": ".local/share/amp/threads/",
		}[f.Agent]
		assert.Truef(t, strings.HasPrefix(rel, prefix), "%s file at %s", f.Agent, rel)
	}

	// No id of a fixture survives in a copy, and no two copies share one.
	fixtureIDs := map[string]bool{}
	for src := range want {
		if strings.HasSuffix(src, "opencode.db") {
			continue // its ids are checked through the objects below
		}
		b, err := os.ReadFile(src)
		require.NoError(t, err)
		for _, id := range idRe.FindAll(b, -1) {
			fixtureIDs[string(id)] = true
		}
	}
	replicaOfID := map[string]int{}
	for _, f := range h.Files {
		b, err := os.ReadFile(f.Path)
		require.NoError(t, err)
		for _, m := range idRe.FindAll(append([]byte(f.Path+"\n"), b...), -1) {
			id := string(m)
			require.Falsef(t, fixtureIDs[id], "fixture id %s in %s", id, f.Path)
			if r, ok := replicaOfID[id]; ok && r != f.Replica && !strings.Contains(f.Path, "/storage/project/") {
				require.Failf(t, "an id in two copies", "%s in copies %d and %d (%s)", id, r, f.Replica, f.Path)
			}
			replicaOfID[id] = f.Replica
		}
	}
	require.NotEmpty(t, replicaOfID)
	// The same, read by key rather than by idRe: the session ids of every agent, and every id of
	// OpenCode's objects (tool calls included).
	// Values of 8 characters and more: a Copilot CLI 0.0.3xx record names its agent "main" in a
	// sessionId field.
	keyed := regexp.MustCompile(`"(sessionId|sessionID|session_id|id|callID|messageID|parentID)":"([^"]{8,})"`)
	replicaOfKeyed := map[string]int{}
	for _, f := range h.Files {
		b, err := os.ReadFile(f.Path)
		require.NoError(t, err)
		for _, m := range keyed.FindAllSubmatch(b, -1) {
			key := string(m[1])
			if f.Agent != "opencode" && !strings.HasPrefix(strings.ToLower(key), "session") || strings.Contains(f.Path, "/storage/project/") {
				continue
			}
			v := key + "=" + string(m[2])
			if r, ok := replicaOfKeyed[v]; ok && r != f.Replica {
				require.Failf(t, "an id in two copies", "%s in copies %d and %d (%s)", v, r, f.Replica, f.Path)
			}
			replicaOfKeyed[v] = f.Replica
		}
	}

	// An OpenCode database is laid out as the tree of its objects, ids put back.
	for _, f := range h.Files {
		if f.Agent != "opencode" || !strings.HasSuffix(f.Source, "opencode.db") || !strings.Contains(f.Path, "/storage/part/") {
			continue
		}
		b, err := os.ReadFile(f.Path)
		require.NoError(t, err)
		var part struct{ ID, SessionID, MessageID, Type string }
		require.NoError(t, json.Unmarshal(b, &part))
		assert.Equal(t, strings.TrimSuffix(filepath.Base(f.Path), ".json"), part.ID)
		assert.Equal(t, filepath.Base(filepath.Dir(f.Path)), part.MessageID)
		assert.NotEmpty(t, part.SessionID)
		assert.NotEmpty(t, part.Type)
	}

	// Line-delimited files end with a newline and count their records: one include pattern per
	// agent with line-delimited files.
	include, size, lines := h.JSONL()
	jsonlAgents := map[string]bool{}
	for _, f := range h.Files {
		if f.Lines <= 0 {
			continue
		}
		jsonlAgents[f.Agent] = true
		b, err := os.ReadFile(f.Path)
		require.NoError(t, err)
		assert.True(t, bytes.HasSuffix(b, []byte("\n")), f.Path)
		assert.Equal(t, f.Lines, int64(bytes.Count(b, []byte("\n"))), f.Path)
		assert.NotContains(t, string(b), "\n\n", f.Path)
	}
	assert.Len(t, include, len(jsonlAgents))
	assert.Positive(t, size)
	assert.Positive(t, lines)
}

// TestWriteHistorySharesReachesItsSize: a history of a size holds at least that many bytes, every
// agent of the shares once at least, split as the shares say once each agent is copied more than
// once.
func TestWriteHistorySharesReachesItsSize(t *testing.T) {
	roots := historyRoots(t)
	const target = 4 << 20
	h := WriteHistoryShares(t, roots, t.TempDir(), target, map[string]float64{"codex": 3, "pi": 1})
	assert.GreaterOrEqual(t, h.Bytes, int64(target))
	byAgent := h.ByAgent()
	assert.Len(t, byAgent, 2, "agents without a share are left out")
	// Each agent stops at the first copy that reaches its share.
	for a, share := range map[string]float64{"codex": 0.75, "pi": 0.25} {
		var last int
		var before int64 // bytes of the copies before the last
		for _, f := range h.Files {
			if f.Agent == a {
				last = max(last, f.Replica)
			}
		}
		for _, f := range h.Files {
			if f.Agent == a && f.Replica < last {
				before += f.Size
			}
		}
		assert.GreaterOrEqualf(t, byAgent[a][1], int64(share*target), "%s holds its share", a)
		assert.Lessf(t, before, int64(share*target), "%s: one copy more than its share needs", a)
	}
}
