// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/copilotcli"
	"github.com/agentotel/agentotel/tests/testenv"
)

// resumedCopilotSession is a Copilot CLI session run three times: two runs
// ending in a session.shutdown with that run's usage, a third cut before its
// shutdown. No fixture has a resumed session; these are the rows of
// internal/vendors/copilotcli's TestResumedSessionCountsEachSegmentOnce,
// built in the shape of the real Copilot CLI 1.0.59 rows of
// fixtures-new/copilot_cli.
var resumedCopilotSession = []string{
	`{"type":"session.start","data":{"sessionId":"9a493a94-a307-489e-8bc7-d16f4afcd992","version":1,"producer":"copilot-agent","copilotVersion":"1.0.59","startTime":"2026-06-08T01:48:57.913Z","context":{"cwd":"/w","gitRoot":"/w","branch":"main"}},"id":"e1","timestamp":"2026-06-08T01:48:57.913Z","parentId":null}`,
	`{"type":"session.model_change","data":{"newModel":"claude-opus-4.6"},"id":"e2","timestamp":"2026-06-08T01:48:58.000Z","parentId":"e1"}`,
	`{"type":"user.message","data":{"content":"hi","interactionId":"i1"},"id":"e3","timestamp":"2026-06-08T01:49:00.000Z","parentId":"e2"}`,
	`{"type":"assistant.message","data":{"messageId":"m1","model":"claude-opus-4.6","content":"Hi!","toolRequests":[],"interactionId":"i1","turnId":"0","outputTokens":120,"requestId":"r1"},"id":"e4","timestamp":"2026-06-08T01:49:03.000Z","parentId":"e3"}`,
	`{"type":"assistant.message","data":{"messageId":"m2","model":"claude-opus-4.6","content":"Done.","toolRequests":[],"interactionId":"i1","turnId":"1","outputTokens":80,"requestId":"r2"},"id":"e5","timestamp":"2026-06-08T01:49:05.000Z","parentId":"e4"}`,
	`{"type":"session.shutdown","data":{"shutdownType":"routine","totalPremiumRequests":2,"modelMetrics":{"claude-opus-4.6":{"requests":{"count":2,"cost":2},"usage":{"inputTokens":19771,"outputTokens":200,"cacheReadTokens":0,"cacheWriteTokens":19768,"reasoningTokens":0}}}},"id":"e6","timestamp":"2026-06-08T01:50:00.000Z","parentId":"e5"}`,
	`{"type":"session.resume","data":{"eventCount":6},"id":"e7","timestamp":"2026-06-09T09:00:00.000Z","parentId":"e6"}`,
	`{"type":"user.message","data":{"content":"again","interactionId":"i2"},"id":"e8","timestamp":"2026-06-09T09:00:01.000Z","parentId":"e7"}`,
	`{"type":"assistant.message","data":{"messageId":"m3","model":"claude-opus-4.6","content":"Sure.","toolRequests":[],"interactionId":"i2","turnId":"2","outputTokens":50,"requestId":"r3"},"id":"e9","timestamp":"2026-06-09T09:00:04.000Z","parentId":"e8"}`,
	`{"type":"session.shutdown","data":{"shutdownType":"routine","totalPremiumRequests":1,"modelMetrics":{"claude-opus-4.6-1m":{"requests":{"count":1,"cost":1},"usage":{"inputTokens":21000,"outputTokens":55,"cacheReadTokens":19768,"cacheWriteTokens":0,"reasoningTokens":0}}}},"id":"e10","timestamp":"2026-06-09T09:01:00.000Z","parentId":"e9"}`,
	`{"type":"session.resume","data":{"eventCount":10},"id":"e11","timestamp":"2026-06-10T09:00:00.000Z","parentId":"e10"}`,
	`{"type":"user.message","data":{"content":"once more","interactionId":"i3"},"id":"e12","timestamp":"2026-06-10T09:00:01.000Z","parentId":"e11"}`,
	`{"type":"assistant.message","data":{"messageId":"m4","model":"claude-opus-4.6","content":"Here.","toolRequests":[],"interactionId":"i3","turnId":"3","outputTokens":33,"requestId":"r4"},"id":"e13","timestamp":"2026-06-10T09:00:04.000Z","parentId":"e12"}`,
}

// TestCopilotRunsAgainstCcusage: ccusage reports a resumed session's
// per-field maximum over its shutdowns (in 1232, out 200, cache r 19768,
// cache w 19768, $0.144594 for the session above); run by run it reports
// each run, and their sum plus the tail's output is what the events count.
func TestCopilotRunsAgainstCcusage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs ccusage")
	}
	bin := testenv.Ccusage(t)
	home := t.TempDir()
	file := filepath.Join(home, ".copilot", "session-state", "9a493a94-a307-489e-8bc7-d16f4afcd992", "events.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
	require.NoError(t, os.WriteFile(file, []byte(strings.Join(resumedCopilotSession, "\n")+"\n"), 0o600))
	p := copilotcli.NewParser(file)
	var events []agentevent.Event
	var offset int64
	for i, l := range resumedCopilotSession {
		events = append(events, p.Parse([]byte(l), int64(i+1), offset)...)
		offset += int64(len(l)) + 1
	}
	var tailCost float64
	for i := range events {
		if events[i].LogLine == 13 && events[i].TokensOutput != nil {
			events[i].CostUSD = agentevent.Float(33 * 25e-6) // gen_ai_cost's price of the tail: claude-opus-4-6 output
			tailCost += *events[i].CostUSD
		}
	}
	require.Positive(t, tailCost, "the tail's response has output tokens")

	whole, err := runCcusage(t.Context(), bin, agentevent.SourceCopilotCLI, home, true, nil)
	require.NoError(t, err)
	require.Len(t, whole, 1)
	assert.Equal(t, tokens{Input: 1232, Output: 200, CacheRead: 19768, CacheCreation: 19768}, whole[0].Tokens, "ccusage: each field's maximum")

	runs, err := copilotRuns(t.Context(), bin, events, filepath.Join(t.TempDir(), "scratch"))
	require.NoError(t, err)
	require.Contains(t, runs, "9a493a94-a307-489e-8bc7-d16f4afcd992")
	got := runs["9a493a94-a307-489e-8bc7-d16f4afcd992"]
	assert.Equal(t, tokens{Input: 3 + 1232, Output: 200 + 55 + 33, CacheRead: 19768, CacheCreation: 19768}, got.Tokens)
	// Run 1: 3 in, 200 out, 19768 cache writes; run 2: 1232 in, 55 out,
	// 19768 cache reads, both at claude-opus-4.6's rates in ccusage.
	assert.InDelta(t, 3*5e-6+200*25e-6+19768*6.25e-6+1232*5e-6+55*25e-6+19768*0.5e-6+tailCost, got.Cost, 1e-9)
	assert.Equal(t, []string{defCopilotRuns, defCopilotNoShutdown}, got.Definitions)

	var ours tokens
	for i := range events {
		ours.add(eventTokens(&events[i]))
	}
	assert.Equal(t, ours, got.Tokens, "the events count each run once, and the tail")
}
