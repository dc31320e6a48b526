// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteHistoryCopiesEveryAgentWithUniqueIDs(t *testing.T) {
	fixtures := filepath.Join(RepoRoot(t), "..", "shared", "fixtures")
	if _, err := os.Stat(fixtures); err != nil {
		require.ErrorIs(t, err, fs.ErrNotExist, "skipped only when absent")
		t.Skipf("shared fixtures absent (%v)", err)
	}
	home := t.TempDir()
	h := WriteHistory(t, fixtures, home, 8<<20)
	assert.GreaterOrEqual(t, h.Bytes, int64(8<<20))
	byAgent := h.ByAgent()
	for _, a := range HistoryAgents() {
		assert.Positive(t, byAgent[a][0], "no %s files", a)
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
	var claude []HistoryFile
	for _, f := range h.Files {
		if f.Agent == "claude_code" && strings.HasSuffix(filepath.Dir(f.Path), "-v1.0.98_viewer_basic") {
			claude = append(claude, f)
		}
	}
	require.GreaterOrEqual(t, len(claude), 2, "at least two copies of the session")
	a, err := os.ReadFile(claude[0].Path)
	require.NoError(t, err)
	b, err := os.ReadFile(claude[1].Path)
	require.NoError(t, err)
	src, err := os.ReadFile(filepath.Join(fixtures, "claude_code", "v1.0.98_viewer_basic", "1af7fc5e-8455-4414-9ccd-011d40f70b2a.jsonl"))
	require.NoError(t, err)
	assert.Equal(t, bytes.Count(src, []byte(`"requestId":"req_`)), bytes.Count(a, []byte(`"requestId":"req_`)))
	quoted := func(id []byte) []byte { return []byte(`"` + string(id) + `"`) }
	for _, id := range idRe.FindAll(src, -1) {
		assert.Falsef(t, bytes.Contains(a, quoted(id)), "fixture id %s in copy 0", id)
		assert.Falsef(t, bytes.Contains(b, quoted(id)), "fixture id %s in copy 1", id)
	}
	for _, id := range idRe.FindAll(a, -1) {
		assert.Falsef(t, bytes.Contains(b, quoted(id)), "id %s in both copies", id)
	}
	// Line-delimited files end with a newline and count their records.
	include, size, lines := h.JSONL()
	assert.Len(t, include, 4)
	assert.Positive(t, size)
	assert.Positive(t, lines)
	assert.True(t, bytes.HasSuffix(a, []byte("\n")))
	assert.Equal(t, claude[0].Lines, int64(bytes.Count(a, []byte("\n"))))
}
