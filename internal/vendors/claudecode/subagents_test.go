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
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
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

	assert.True(t, orphanSubagent(sub), "no <session>.jsonl beside <session>/")
	assert.False(t, orphanSubagent(filepath.Join(dir, testSession+".jsonl")), "a main transcript is no subagent")
	assert.False(t, orphanSubagent(filepath.Join(dir, "agent-a1.jsonl")), "a flat agent file is a session of its own already")
	require.NoError(t, os.WriteFile(filepath.Join(dir, testSession+".jsonl"), nil, 0o600))
	assert.False(t, orphanSubagent(sub), "its session's transcript is there")

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

// TestCaseForkSubagent: the fork's fork-context-ref becomes the first event
// of its thread, with the envelope of the row after it; the fork is linked
// by the Agent result; SendMessage and the peer's reply carry the message
// ids.
func TestCaseForkSubagent(t *testing.T) {
	const fork = "a3c81f04d9e27b5f6"
	events := parseCase(t, "fork_subagent")
	forkEvents := filter(events, func(ev agentevent.Event) bool { return ev.AgentID == fork })
	require.NotEmpty(t, forkEvents)
	ref := forkEvents[0]
	assert.Equal(t, agentevent.TypeMeta, ref.Type)
	assert.Equal(t, "fork-context-ref", ref.Attributes[agentevent.AttrMetaKind])
	assert.Equal(t, "5d0f3c2a-8b1e-4f6a-9c7d-2e4b6a8c0f13", ref.Attributes[agentevent.AttrParentSessionID])
	assert.Equal(t, "1c7a2e3f-4b5d-4c6e-9f7a-8b9c0d1e2f3a", ref.Attributes[agentevent.AttrSubagentForkParentRecord], "the parent row holding the Agent call")
	assert.Equal(t, int64(2), ref.Attributes[agentevent.AttrSubagentForkContextLength])
	assert.Equal(t, int64(1), ref.LogLine, "its own line")
	assert.True(t, ref.IsSidechain)
	assert.Equal(t, "/home/dev/src/shop", ref.ProjectRoot, "the envelope of the row after it")
	assert.Equal(t, "2.1.230", ref.AgentVersion)
	assert.Equal(t, forkEvents[1].Timestamp, ref.Timestamp)
	assert.Empty(t, ref.ParentEventID, "before the fork's prompt")

	results := filter(events, func(ev agentevent.Event) bool { return ev.Type == agentevent.TypeToolResult && ev.AgentID == "" })
	require.Len(t, results, 2)
	assert.Equal(t, fork, results[0].SpawnedAgentID, "the Agent result links the fork, as any subagent")
	assert.Equal(t, "8a1f2b3c-4d5e-4f60-9a7b-8c9d0e1f2a3b", results[1].Attributes[agentevent.AttrAgentMessageID])

	calls := filter(events, func(ev agentevent.Event) bool {
		return ev.ToolName == toolSendMessage && ev.Type == agentevent.TypeToolCall
	})
	require.Len(t, calls, 1)
	assert.Equal(t, "release notes [7e21c4]", calls[0].Attributes[agentevent.AttrAgentMessageTo])

	prompts := filter(events, func(ev agentevent.Event) bool { return ev.Type == agentevent.TypeUserMessage && ev.AgentID == "" })
	require.Len(t, prompts, 2, "the peer's message starts a turn")
	peer := prompts[1]
	assert.Equal(t, "Thanks, added. Which version does it ship in?", peer.Text)
	assert.Equal(t, "uds:/run/user/1000/cc-socks/41234.sock", peer.Attributes[agentevent.AttrAgentMessageFrom])
	assert.Equal(t, "release notes", peer.Attributes[agentevent.AttrAgentMessageFromName])
	assert.Equal(t, "9b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d", peer.Attributes[agentevent.AttrAgentMessageID])
}

// TestSendMessageUndelivered: a SendMessage to an unknown recipient is
// recorded without is_error, its toolUseResult success false (the shape of a
// 2.1.232 row of fixtures-next, its texts shortened): a failed call, on
// both decode paths.
func TestSendMessageUndelivered(t *testing.T) {
	lines := []string{
		userRow(`"tell the outline session"`),
		assistantRow("a1", "2026-01-01T10:00:01.000Z", "msg_1", toolUse("toolu_1", "SendMessage", `{"to":"outline 3","summary":"s","message":"m"}`), 10, "tool_use"),
		resultRow("2026-01-01T10:00:02.000Z", "toolu_1", `"'outline 3' is not an agent in this conversation."`, false,
			`{"success":false,"message":"'outline 3' is not an agent in this conversation."}`),
	}
	var vl []vendortest.Line
	off := int64(0)
	for i, l := range lines {
		vl = append(vl, vendortest.Line{Data: []byte(l), No: int64(i + 1), Offset: off})
		off += int64(len(l)) + 1
	}
	fast, typed := parseBoth(testSession+".jsonl", vl, Options{})
	require.Equal(t, typed, fast)
	results := filter(fast, func(ev agentevent.Event) bool { return ev.Type == agentevent.TypeToolResult })
	require.Len(t, results, 1)
	assert.Equal(t, agentevent.ToolError, results[0].ToolStatus)
	assert.NotContains(t, results[0].Attributes, agentevent.AttrAgentMessageID, "nothing was delivered")
}
