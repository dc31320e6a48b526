// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
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
// The tail is priced by ccusage too, at the rates of the model its
// response names.
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
	// 19768 cache reads; the tail: 33 out; all at claude-opus-4.6's rates
	// in ccusage.
	assert.InDelta(t, 3*5e-6+200*25e-6+19768*6.25e-6+1232*5e-6+55*25e-6+19768*0.5e-6+33*25e-6, got.Cost, 1e-9)
	assert.Equal(t, []string{defCopilotRuns, defCopilotNoShutdown}, got.Definitions)

	var ours tokens
	for i := range events {
		ours.add(eventTokens(&events[i]))
	}
	assert.Equal(t, ours, got.Tokens, "the events count each run once, and the tail")
}

// unnamedCopilotSession is a resumed session whose responses name no model
// and whose start and resume name none: only the tool results and the
// shutdown do, as in the real sessions of CLIs whose assistant.message has
// no model. Its first response's model is known from its own tool call
// only.
const unnamedCopilotSession = `{"type":"session.start","data":{"sessionId":"c0000000-0000-4000-8000-000000000001","copilotVersion":"1.0.10","producer":"copilot-agent"},"id":"a1","timestamp":"2026-06-08T01:00:00.000Z"}
{"type":"user.message","data":{"content":"fix it"},"id":"a2","timestamp":"2026-06-08T01:00:01.000Z"}
{"type":"assistant.message","data":{"messageId":"m1","content":"","toolRequests":[{"toolCallId":"t1","name":"view","arguments":{"path":"a.go"}}],"outputTokens":100},"id":"a3","timestamp":"2026-06-08T01:00:02.000Z"}
{"type":"tool.execution_complete","data":{"toolCallId":"t1","model":"claude-sonnet-4.6","success":true,"result":{"content":"x"}},"id":"a4","timestamp":"2026-06-08T01:00:04.000Z"}
{"type":"assistant.message","data":{"messageId":"m2","content":"Done.","toolRequests":[],"outputTokens":50},"id":"a5","timestamp":"2026-06-08T01:00:05.000Z"}
{"type":"session.shutdown","data":{"shutdownType":"routine","currentModel":"claude-sonnet-4.6","modelMetrics":{"claude-sonnet-4.6":{"requests":{"count":2,"cost":2},"usage":{"inputTokens":5000,"outputTokens":150,"cacheReadTokens":1000,"cacheWriteTokens":0}}}},"id":"a6","timestamp":"2026-06-08T01:01:00.000Z"}
{"type":"session.resume","data":{"eventCount":6},"id":"a7","timestamp":"2026-06-09T01:00:00.000Z"}
{"type":"user.message","data":{"content":"more"},"id":"a8","timestamp":"2026-06-09T01:00:01.000Z"}
{"type":"assistant.message","data":{"messageId":"m3","content":"","toolRequests":[{"toolCallId":"t2","name":"view","arguments":{"path":"b.go"}}],"outputTokens":40},"id":"a9","timestamp":"2026-06-09T01:00:02.000Z"}
{"type":"tool.execution_complete","data":{"toolCallId":"t2","model":"claude-sonnet-4.6","success":true,"result":{"content":"y"}},"id":"a10","timestamp":"2026-06-09T01:00:03.000Z"}
{"type":"assistant.message","data":{"messageId":"m4","content":"Here.","toolRequests":[],"outputTokens":20},"id":"a11","timestamp":"2026-06-09T01:00:04.000Z"}
`

// TestCopilotTailModels: the check's own reading of the responses after
// the last shutdown, from the file alone: a response's own tool calls'
// model first, else the nearest record naming one.
func TestCopilotTailModels(t *testing.T) {
	lines := bytes.SplitAfter([]byte(unnamedCopilotSession), []byte("\n"))
	out, requests, last := tailModels(lines, 6)
	assert.Equal(t, map[string]int64{"claude-sonnet-4.6": 40 + 20}, out)
	assert.Equal(t, map[string]int64{"claude-sonnet-4.6": 2}, requests)
	assert.Equal(t, "2026-06-09T01:00:04.000Z", last)
	// The whole file, as for a session without a shutdown: the first
	// response has its tool call's model, though nothing before it names one.
	out, _, _ = tailModels(lines, 0)
	assert.Equal(t, map[string]int64{"claude-sonnet-4.6": 100 + 50 + 40 + 20}, out)
	assert.Nil(t, tailShutdown(lines[:2], 0), "no response, no record")
}

// TestCopilotRunsPriceTheTail: the session above is held to its shutdown's
// usage at ccusage's rates plus its tail's output at ccusage's rate for
// the model the tail's tool calls name (claude-sonnet-4.6, $15 per million
// output tokens); the events match it.
func TestCopilotRunsPriceTheTail(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs ccusage")
	}
	bin := testenv.Ccusage(t)
	home := t.TempDir()
	file := filepath.Join(home, ".copilot", "session-state", "c0000000-0000-4000-8000-000000000001", "events.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
	require.NoError(t, os.WriteFile(file, []byte(unnamedCopilotSession), 0o600))
	p := copilotcli.NewParser(file)
	var events []agentevent.Event
	var offset int64
	for i, l := range strings.Split(strings.TrimSuffix(unnamedCopilotSession, "\n"), "\n") {
		events = append(events, p.Parse([]byte(l), int64(i+1), offset)...)
		offset += int64(len(l)) + 1
	}
	runs, err := copilotRuns(t.Context(), bin, events, filepath.Join(t.TempDir(), "scratch"))
	require.NoError(t, err)
	got := runs["c0000000-0000-4000-8000-000000000001"]
	assert.Equal(t, tokens{Input: 4000, Output: 150 + 40 + 20, CacheRead: 1000}, got.Tokens)
	assert.InDelta(t, 4000*3e-6+150*15e-6+1000*0.3e-6+(40+20)*15e-6, got.Cost, 1e-9)
	assert.Equal(t, []string{defCopilotRuns, defCopilotNoShutdown}, got.Definitions)
	var ours tokens
	for i := range events {
		ours.add(eventTokens(&events[i]))
	}
	assert.Equal(t, ours, got.Tokens)
}
