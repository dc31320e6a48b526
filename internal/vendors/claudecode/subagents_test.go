// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// subagentPrompt keeps the shape of the root row of a 2.1.221 subagent file
// of fixtures-next/claude_code/v2.1.221_subagents_parent_absent (read in
// place, not copied: no license), its prompt shortened.
const subagentPrompt = `{"parentUuid":null,"isSidechain":true,"promptId":"ad3a9185-48e6-4bf4-ae77-1199ec1a3082","agentId":"a6d0728387dd11c5a","type":"user","message":{"role":"user","content":"Write the provenance script."},"uuid":"c339465d-67bd-4a0d-b9e4-117f9955d897","timestamp":"2026-08-04T06:44:53.957Z","userType":"external","entrypoint":"cli","cwd":"/w","sessionId":"` + testSession + `","version":"2.1.221","gitBranch":"develop"}`

func TestOrphanSubagent(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, testSession, "subagents", "agent-a6d0728387dd11c5a.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(sub), 0o755))
	require.NoError(t, os.WriteFile(sub, []byte(subagentPrompt+"\n"), 0o600))

	assert.True(t, OrphanSubagent(sub), "no <session>.jsonl beside <session>/")
	assert.False(t, OrphanSubagent(filepath.Join(dir, testSession+".jsonl")), "a main transcript is no subagent")
	assert.False(t, OrphanSubagent(filepath.Join(dir, "agent-a1.jsonl")), "a flat agent file is a session of its own already")
	require.NoError(t, os.WriteFile(filepath.Join(dir, testSession+".jsonl"), nil, 0o600))
	assert.False(t, OrphanSubagent(sub), "its session's transcript is there")

	for _, orphan := range []bool{false, true} {
		evs := NewParserWithOptions(sub, Options{Orphan: orphan}).Parse([]byte(subagentPrompt), 1, 0)
		require.Len(t, evs, 1)
		ev := evs[0]
		assert.Equal(t, agentevent.TypeUserMessage, ev.Type)
		assert.Equal(t, testSession, ev.SessionID, "the session its rows name, as ccusage names it")
		assert.Equal(t, "a6d0728387dd11c5a", ev.AgentID)
		if !orphan {
			assert.NotContains(t, ev.Attributes, agentevent.AttrSubagentOrphan)
			assert.NotContains(t, ev.Attributes, agentevent.AttrSubagentLink, "a spawning call claims it")
			continue
		}
		assert.Equal(t, true, ev.Attributes[agentevent.AttrSubagentOrphan])
		assert.Equal(t, agentevent.SubagentLinkNone, ev.Attributes[agentevent.AttrSubagentLink], "no call is left to claim it")
	}

	// A main transcript is never an orphan, whatever the caller says.
	evs := NewParserWithOptions(filepath.Join(dir, testSession+".jsonl"), Options{Orphan: true}).Parse([]byte(userRow(`"hi"`)), 1, 0)
	require.Len(t, evs, 1)
	assert.NotContains(t, evs[0].Attributes, agentevent.AttrSubagentOrphan)
}
