// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// TestClaudeCode21xxRecordTypes maps the record types Claude Code 2.1.2xx
// added. Each row keeps the shape of a real row of
// fixtures-new/claude_code/v2.1.207-217_agent_subagent (read in place, not
// copied: no license), with its paths and texts shortened.
func TestClaudeCode21xxRecordTypes(t *testing.T) {
	f := newFeeder(testSession + ".jsonl")

	delta := f.feed(`{"type":"file-history-delta","messageId":"ef970803-0043-4126-831e-14d00cb96d15","snapshotMessageId":"85755939-8c5d-4278-addd-eb060a8d0f37","trackingPath":"/w/include/agentx.h","backup":{"backupFileName":"63e9d7567dd9f4a1@v1","version":1,"backupTime":"2026-07-23T09:42:05.196Z","realParentDir":"/w/include"},"timestamp":"2026-07-23T09:42:05.199Z"}`)
	require.Len(t, delta, 1, "a file-history-delta is one file added to a prompt's snapshot")
	assert.Equal(t, agentevent.TypeFileSnapshot, delta[0].Type)
	assert.Equal(t, "/w/include/agentx.h", delta[0].FilePath)
	assert.Equal(t, true, delta[0].Attributes[agentevent.AttrSnapshotIsUpdate])
	assert.Equal(t, int64(1), delta[0].Attributes[agentevent.AttrSnapshotFileCount])
	assert.Equal(t, "85755939-8c5d-4278-addd-eb060a8d0f37", delta[0].Attributes[agentevent.AttrSnapshotMessageID])
	assert.Equal(t, "2026-07-23T09:42:05.199Z", delta[0].Timestamp.Format("2006-01-02T15:04:05.000Z"))

	away := f.feed(`{"parentUuid":"d39ed5a9-7e58-4d7a-9fad-7c212367a63f","isSidechain":false,"type":"system","subtype":"away_summary","content":"Goal: route GETs through AgentX. Next: ping me when ready.","timestamp":"2026-07-23T10:00:00.000Z","uuid":"a1","isMeta":false,"userType":"external","cwd":"/w","sessionId":"` + testSession + `","version":"2.1.217"}`)
	require.Len(t, away, 1)
	assert.Equal(t, agentevent.TypeSessionSummary, away[0].Type, "an away summary recaps the session")
	assert.Equal(t, "away", away[0].Attributes[agentevent.AttrSummaryKind])
	assert.Equal(t, "Goal: route GETs through AgentX. Next: ping me when ready.", away[0].Text)

	status := f.feed(`{"parentUuid":"1b641fea-a8c6-4f11-93cc-7c53374cb16a","isSidechain":false,"type":"system","subtype":"bridge_status","content":"/remote-control is active","url":"https://claude.ai/code/session_01","isMeta":false,"timestamp":"2026-07-23T09:19:49.060Z","uuid":"a2","cwd":"/w","sessionId":"` + testSession + `","version":"2.1.217"}`)
	require.Len(t, status, 1)
	assert.Equal(t, agentevent.TypeMeta, status[0].Type)
	assert.Equal(t, "bridge_status", status[0].Attributes[agentevent.AttrMetaKind])
	assert.Equal(t, "https://claude.ai/code/session_01", status[0].Attributes[agentevent.AttrRemoteControlURL])
	assert.Equal(t, "/remote-control is active", status[0].Text)

	bridge := f.feed(`{"type":"bridge-session","sessionId":"` + testSession + `","bridgeSessionId":"cse_01SiW1zwvtfmnmYMN682j6jM","lastSequenceNum":0}`)
	assert.Empty(t, bridge, "bridge-session repeats what bridge_status announced: known and skipped")

	meta := f.feed(`{"type":"mode","mode":"normal","sessionId":"`+testSession+`"}`, `{"type":"ai-title","aiTitle":"Review the MIB plan","sessionId":"`+testSession+`"}`)
	require.Len(t, meta, 2)
	assert.Equal(t, "normal", meta[0].Attributes[agentevent.AttrMode])
	assert.Equal(t, "Review the MIB plan", meta[1].Attributes[agentevent.AttrSessionTitle])
	for _, ev := range append(append(delta, away...), append(status, meta...)...) {
		assert.Empty(t, ev.Unparsed, "%s", ev.Type)
	}
}
