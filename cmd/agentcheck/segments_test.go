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
	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/internal/vendors/copilotcli"
	"github.com/agentotel/agentotel/tests/testenv"
)

// resumedCopilotSession is a Copilot CLI session run three times: two runs
// ending in a session.shutdown with that run's usage, a third cut before its
// shutdown. No fixture has a resumed session; these are the rows of
// internal/vendors/copilotcli's TestResumedSessionCountsEachSegmentOnce,
// built in the shape of the real Copilot CLI 1.0.59 rows of
// fixtures-new/copilot_cli.
func resumedCopilotSession(tb testing.TB) []string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "vendors", "copilotcli", "testdata", "resumed_session.jsonl"))
	require.NoError(tb, err)
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
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
	require.NoError(t, os.WriteFile(file, []byte(strings.Join(resumedCopilotSession(t), "\n")+"\n"), 0o600))
	p := copilotcli.NewParser(file)
	var events []agentevent.Event
	var offset int64
	for i, l := range resumedCopilotSession(t) {
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

	whole, err := runCcusage(t.Context(), bin, agents.Lookup(agentevent.Source("copilot_cli")), home, true, nil)
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
