// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package copilotcli

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// TestResumedSessionCountsEachSegmentOnce: a session run three times, the
// first two ending in a session.shutdown with that run's usage, the third
// cut before its shutdown. Its output is each shutdown's plus the tail's
// per-response outputTokens; the responses of a run that ends in a
// shutdown are in that shutdown's totals and never add to them, whatever
// model name a response was counted under. The rows keep the shape of the
// real Copilot CLI 1.0.59 rows of fixtures-new/copilot_cli (read in place);
// no fixture has a resumed session, so the case is built from them. The
// second run's responses name the model as the request did
// ("claude-opus-4.6") while its shutdown keys the metrics by another name
// ("claude-opus-4.6-1m"), the mismatch that left a real resumed session's
// responses counted on top of its shutdowns.
func TestResumedSessionCountsEachSegmentOnce(t *testing.T) {
	evs := parseBytes("events.jsonl", []byte(resumedSession(t)), nil)
	tot := sumTokens(evs)
	assert.Equal(t, int64(200+55+33), tot.Output, "each shutdown's output plus the tail's per-response output")
	assert.Equal(t, int64(19768+19768), tot.CacheRead+tot.CacheCreation, "cache reads and writes from the shutdowns")
	for _, ev := range evs {
		assert.Empty(t, ev.Unparsed)
	}
}

// TestResumedSessionAgainstCcusage runs ccusage over the resumed session
// above, laid out as ~/.copilot/session-state/<id>/events.jsonl, with both
// shutdowns keying the model by the same name: our totals are the sum of
// its runs, ccusage's the per-model maximum of each field over its
// shutdowns (assertCcusageTotals checks both, independently of the
// parser), and the two differ, which is the documented definition.
func TestResumedSessionAgainstCcusage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not running ccusage")
	}
	root := t.TempDir()
	path := filepath.Join(root, "session-state", "9a493a94-a307-489e-8bc7-d16f4afcd992", "events.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	file := strings.ReplaceAll(resumedSession(t), `"claude-opus-4.6-1m"`, `"claude-opus-4.6"`)
	require.NoError(t, os.WriteFile(path, []byte(file), 0o600))
	evs := parseSessionFile(t, path, "")
	sid := evs[0].SessionID
	u := fileUsage(t, path)
	assertCcusageTotals(t, []string{path}, root, map[string]tokenTotals{sid: sumTokens(evs)}, map[string]sessionUsage{sid: u})
	theirs, _ := u.ccusage()
	assert.Equal(t, tokenTotals{Input: 21000 - 19768, Output: 200, CacheRead: 19768, CacheCreation: 19768}, theirs,
		"ccusage: per field, the larger of the two shutdowns; the tail not at all")
	assert.Equal(t, tokenTotals{Input: 3 + 21000 - 19768, Output: 200 + 55 + 33, CacheRead: 19768, CacheCreation: 19768}, u.ours())
}

// resumedSessionFile is a session run three times, the first two runs ending
// in a session.shutdown with that run's usage, the third cut before its
// shutdown (see TestResumedSessionCountsEachSegmentOnce). cmd/agentcheck's
// tests read it too.
const resumedSessionFile = "testdata/resumed_session.jsonl"

func resumedSession(tb testing.TB) string {
	tb.Helper()
	b, err := os.ReadFile(resumedSessionFile)
	require.NoError(tb, err)
	return string(b)
}

// outputByModel sums the output tokens of events by the model they carry.
func outputByModel(evs []agentevent.Event) map[string]int64 {
	out := map[string]int64{}
	for i := range evs {
		if ev := &evs[i]; ev.TokensOutput != nil {
			out[ev.Model] += *ev.TokensOutput
		}
	}
	return out
}

// TestResumeSwitchesModel: a run resumed with another model (its
// session.resume names it; no session.model_change follows) counts its
// responses under that model, the one its shutdown's metrics name, so each
// model's output is its shutdowns' plus the tail's responses. The responses
// carry no model of their own, as in the 1.0.10 rows of
// fixtures/copilot_cli; the resume row has the fields of the CLI's schema
// (resumeTime, eventCount, selectedModel), no fixture has one with a model.
func TestResumeSwitchesModel(t *testing.T) {
	lines := []string{
		`{"type":"session.start","data":{"sessionId":"5f2b6c1e-1a2b-4c3d-8e4f-000000000d01","version":1,"producer":"copilot-agent","copilotVersion":"1.0.59","startTime":"2026-06-08T01:48:57.913Z","context":{"cwd":"/w"}},"id":"e1","timestamp":"2026-06-08T01:48:58.240Z","parentId":null}`,
		`{"type":"session.model_change","data":{"newModel":"claude-sonnet-4.6"},"id":"e2","timestamp":"2026-06-08T01:50:46.093Z","parentId":"e1"}`,
		`{"type":"user.message","data":{"content":"hi","interactionId":"i1"},"id":"e3","timestamp":"2026-06-08T01:51:43.887Z","parentId":"e2"}`,
		`{"type":"assistant.message","data":{"messageId":"m1","content":"Hi! How can I help you today?","toolRequests":[],"interactionId":"i1","outputTokens":12},"id":"e4","timestamp":"2026-06-08T01:51:48.866Z","parentId":"e3"}`,
		`{"type":"session.shutdown","data":{"shutdownType":"routine","totalPremiumRequests":1,"modelMetrics":{"claude-sonnet-4.6":{"requests":{"count":1,"cost":1},"usage":{"inputTokens":19771,"outputTokens":12,"cacheReadTokens":0,"cacheWriteTokens":19768,"reasoningTokens":0}}}},"id":"e5","timestamp":"2026-06-08T01:52:40.000Z","parentId":"e4"}`,
		`{"type":"session.resume","data":{"resumeTime":"2026-06-09T09:00:00.000Z","eventCount":5,"selectedModel":"claude-opus-4.6"},"id":"e6","timestamp":"2026-06-09T09:00:00.000Z","parentId":"e5"}`,
		`{"type":"user.message","data":{"content":"again","interactionId":"i2"},"id":"e7","timestamp":"2026-06-09T09:00:01.000Z","parentId":"e6"}`,
		`{"type":"assistant.message","data":{"messageId":"m2","content":"Sure.","toolRequests":[],"interactionId":"i2","outputTokens":40},"id":"e8","timestamp":"2026-06-09T09:00:04.000Z","parentId":"e7"}`,
		`{"type":"session.shutdown","data":{"shutdownType":"routine","totalPremiumRequests":3,"modelMetrics":{"claude-opus-4.6":{"requests":{"count":1,"cost":3},"usage":{"inputTokens":21000,"outputTokens":45,"cacheReadTokens":19768,"cacheWriteTokens":0,"reasoningTokens":0}}}},"id":"e9","timestamp":"2026-06-09T09:01:00.000Z","parentId":"e8"}`,
		`{"type":"session.resume","data":{"resumeTime":"2026-06-10T09:00:00.000Z","eventCount":9,"selectedModel":"claude-opus-4.6"},"id":"e10","timestamp":"2026-06-10T09:00:00.000Z","parentId":"e9"}`,
		`{"type":"user.message","data":{"content":"once more","interactionId":"i3"},"id":"e11","timestamp":"2026-06-10T09:00:01.000Z","parentId":"e10"}`,
		`{"type":"assistant.message","data":{"messageId":"m3","content":"Here.","toolRequests":[],"interactionId":"i3","outputTokens":7},"id":"e12","timestamp":"2026-06-10T09:00:04.000Z","parentId":"e11"}`,
	}
	evs := parseBytes("events.jsonl", []byte(strings.Join(lines, "\n")+"\n"), nil)
	assert.Equal(t, int64(12+45+7), sumTokens(evs).Output, "each shutdown's output plus the tail's per-response output")
	assert.Equal(t, map[string]int64{"claude-sonnet-4.6": 12, "claude-opus-4.6": 45 + 7}, outputByModel(evs),
		"each model's output is its shutdowns' and the tail's")
}

// TestUnmatchedOutputGoesToTheClosestModel: responses counted under a name
// the shutdown's metrics do not use are taken off the metrics' model whose
// name is closest (longest common prefix), not off another model that
// happens to sort first. The responses name their model as the 1.0.59 rows
// of fixtures-new/copilot_cli do (data.model); the metrics key one of them
// by another name, the mismatch the shutdown has to absorb.
func TestUnmatchedOutputGoesToTheClosestModel(t *testing.T) {
	lines := []string{
		`{"type":"session.start","data":{"sessionId":"5f2b6c1e-1a2b-4c3d-8e4f-000000000d02","version":1,"producer":"copilot-agent","copilotVersion":"1.0.59","startTime":"2026-06-08T01:48:57.913Z","context":{"cwd":"/w"}},"id":"e1","timestamp":"2026-06-08T01:48:58.240Z","parentId":null}`,
		`{"type":"session.model_change","data":{"newModel":"claude-opus-4.6"},"id":"e2","timestamp":"2026-06-08T01:50:46.093Z","parentId":"e1"}`,
		`{"type":"user.message","data":{"content":"hi","interactionId":"i1"},"id":"e3","timestamp":"2026-06-08T01:51:43.887Z","parentId":"e2"}`,
		`{"type":"assistant.message","data":{"messageId":"m1","model":"claude-haiku-4.5","content":"Hi.","toolRequests":[],"interactionId":"i1","turnId":"0","outputTokens":20},"id":"e4","timestamp":"2026-06-08T01:51:48.866Z","parentId":"e3"}`,
		`{"type":"assistant.message","data":{"messageId":"m2","model":"claude-opus-4.6","content":"Done.","toolRequests":[],"interactionId":"i1","turnId":"1","outputTokens":100},"id":"e5","timestamp":"2026-06-08T01:51:58.866Z","parentId":"e4"}`,
		`{"type":"session.shutdown","data":{"shutdownType":"routine","totalPremiumRequests":4,"modelMetrics":{"claude-haiku-4.5":{"requests":{"count":1,"cost":0.33},"usage":{"inputTokens":900,"outputTokens":30,"cacheReadTokens":0,"cacheWriteTokens":0,"reasoningTokens":0}},"claude-opus-4.6-1m":{"requests":{"count":2,"cost":3},"usage":{"inputTokens":19771,"outputTokens":130,"cacheReadTokens":0,"cacheWriteTokens":19768,"reasoningTokens":0}}}},"id":"e6","timestamp":"2026-06-08T01:52:40.000Z","parentId":"e5"}`,
	}
	evs := parseBytes("events.jsonl", []byte(strings.Join(lines, "\n")+"\n"), nil)
	assert.Equal(t, int64(30+130), sumTokens(evs).Output, "the shutdown's output, counted once")
	assert.Equal(t, map[string]int64{"claude-haiku-4.5": 30, "claude-opus-4.6": 100, "claude-opus-4.6-1m": 30}, outputByModel(evs),
		"haiku keeps its 30; the opus responses are taken off claude-opus-4.6-1m")
}

// TestSystemNotification: the notice of background work done is a log
// event with the facts of its kind, not an unparsed record. Shapes of the
// CLI's system.notification (data.content, data.kind) as its session-events
// schema names them; no fixture has one.
func TestSystemNotification(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		attrs      map[string]any
	}{
		{"content only", `{"type":"system.notification","data":{"content":"Background agent finished"},"id":"n1","timestamp":"2026-06-08T01:50:00.000Z","parentId":null}`, map[string]any{}},
		{
			"agent completed",
			`{"type":"system.notification","data":{"content":"<system_notification>Agent explore-1 completed</system_notification>","kind":{"type":"agent_completed","agentId":"explore-1","agentType":"explore","status":"failed","description":"Survey the repo"}},"id":"n2","timestamp":"2026-06-08T01:50:00.000Z","parentId":null}`,
			map[string]any{agentevent.AttrCopilotNotificationKind: "agent_completed", agentevent.AttrCopilotNotificationAgentID: "explore-1", agentevent.AttrCopilotNotificationAgentType: "explore", agentevent.AttrCopilotNotificationStatus: "failed"},
		},
		{
			"shell completed",
			`{"type":"system.notification","data":{"content":"<system_notification>Shell 13 exited</system_notification>","kind":{"type":"shell_completed","shellId":"13","exitCode":1,"description":"Test"}},"id":"n3","timestamp":"2026-06-08T01:50:00.000Z","parentId":null}`,
			map[string]any{agentevent.AttrCopilotNotificationKind: "shell_completed", agentevent.AttrCopilotNotificationShellID: "13", agentevent.AttrCopilotNotificationExitCode: int64(1)},
		},
		{"kind of another shape", `{"type":"system.notification","data":{"content":"x","kind":"agent_idle"},"id":"n4","timestamp":"2026-06-08T01:50:00.000Z","parentId":null}`, map[string]any{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs := parseBytes("events.jsonl", []byte(tc.line+"\n"), nil)
			require.Len(t, evs, 1)
			ev := evs[0]
			assert.Empty(t, ev.Unparsed)
			assert.Equal(t, agentevent.TypeLog, ev.Type)
			assert.Empty(t, ev.ErrorType, "a notice, never an error of the turn")
			assert.NotEmpty(t, ev.Text)
			want := map[string]any{agentevent.AttrCopilotEvent: "system.notification"}
			maps.Copy(want, tc.attrs)
			assert.Equal(t, want, ev.Attributes)
		})
	}
}
