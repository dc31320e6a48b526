// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package copilotcli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// TestStateRoundTrip: a parser restored from MarshalState after any line
// goes on exactly as one that never stopped, and a restored parser skips
// lines it has already seen.
func TestStateRoundTrip(t *testing.T) {
	jsonl, _ := sessionFiles(t, filepath.Join(repoRoot(t), "testdata", "copilot_cli"))
	require.NotEmpty(t, jsonl)
	for _, path := range jsonl {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		want := parseBytes("f.jsonl", data, &Workspace{Cwd: "/ws"})
		var got []agentevent.Event
		p := NewParser("f.jsonl")
		p.SetWorkspace(Workspace{Cwd: "/ws"})
		for _, l := range splitLines(data) {
			st, err := p.MarshalState()
			require.NoError(t, err)
			p = NewParser("f.jsonl")
			require.NoError(t, p.UnmarshalState(st))
			got = append(got, p.Parse(l.Data, l.No, l.Offset)...)
			require.Empty(t, p.Parse(l.Data, l.No, l.Offset), "a line already parsed yields nothing")
		}
		require.Equal(t, want, got, path)
	}
}

func TestUnmarshalStateErrors(t *testing.T) {
	p := NewParser("f.jsonl")
	require.Error(t, p.UnmarshalState([]byte("{")))
	require.ErrorContains(t, p.UnmarshalState([]byte(`{"v":99}`)), "version")
}

func TestBadInput(t *testing.T) {
	p := NewParser("/home/u/.copilot/session-state/abc/events.jsonl")
	cases := []struct {
		line   string
		reason string
	}{
		{`not json`, ReasonMalformedJSON},
		{`[1,2]`, ReasonUnexpectedShape},
		{`{"type":"user.message","data":{"content":7}}`, ReasonUnexpectedShape},
		{`{"type":"user.message","data":`, ReasonMalformedJSON},
		{`{"data":{}}`, ReasonUnexpectedShape},
		{`{"type":"made.up","data":{}}`, ReasonUnknownType},
	}
	off := int64(0)
	for i, c := range cases {
		evs := p.Parse([]byte(c.line), int64(i+1), off)
		off += int64(len(c.line)) + 1
		require.Len(t, evs, 1, c.line)
		assert.Equal(t, c.reason, evs[0].Unparsed, c.line)
		assert.Equal(t, agentevent.TypeLog, evs[0].Type)
		assert.Equal(t, "abc", evs[0].SessionID, "the folder names the session before session.start")
		assert.Equal(t, []byte(c.line), evs[0].Raw)
	}
	assert.Empty(t, p.Parse([]byte("   "), 9, off), "a blank line is no record")
}

func TestSessionIDFromPath(t *testing.T) {
	assert.Equal(t, "abc", SessionIDFromPath("/h/.copilot/session-state/abc/events.jsonl"))
	assert.Equal(t, "99a3", SessionIDFromPath("/h/.copilot/session-state/99a3.jsonl"))
	assert.Equal(t, "e029", HistorySessionID("/h/.copilot/history-session-state/session_e029_1761492781060.json"))
	assert.Empty(t, HistorySessionID("/h/other.json"))
}

// TestShutdownCountsOnce: output tokens counted per response are not
// counted again by session.shutdown; the rest of its usage is.
func TestShutdownCountsOnce(t *testing.T) {
	lines := []string{
		`{"type":"session.start","data":{"sessionId":"s","selectedModel":"claude-haiku-4.5"},"id":"1","timestamp":"2026-01-01T00:00:00Z"}`,
		`{"type":"user.message","data":{"content":"hi"},"id":"2","timestamp":"2026-01-01T00:00:01Z"}`,
		`{"type":"assistant.message","data":{"messageId":"m","content":"hello","outputTokens":7},"id":"3","timestamp":"2026-01-01T00:00:02Z"}`,
		`{"type":"session.shutdown","data":{"modelMetrics":{"claude-haiku-4.5":{"requests":{"count":1},"usage":{"inputTokens":100,"outputTokens":10,"cacheReadTokens":40,"cacheWriteTokens":5}}}},"id":"4","timestamp":"2026-01-01T00:00:03Z"}`,
		// A resumed run: its own responses and its own shutdown.
		`{"type":"assistant.message","data":{"messageId":"n","content":"again","outputTokens":3},"id":"5","timestamp":"2026-01-01T00:01:02Z"}`,
		`{"type":"session.shutdown","data":{"modelMetrics":{"claude-haiku-4.5":{"usage":{"inputTokens":50,"outputTokens":3}}}},"id":"6","timestamp":"2026-01-01T00:01:03Z"}`,
	}
	var data []byte
	for _, l := range lines {
		data = append(data, l+"\n"...)
	}
	evs := parseBytes("f.jsonl", data, nil)
	tot := sumTokens(evs)
	assert.Equal(t, tokenTotals{Input: 150 - 40 - 5, CacheRead: 40, CacheCreation: 5, Output: 13}, tot)
	var usage []agentevent.Event
	for _, ev := range evs {
		if ev.TokensInput != nil {
			usage = append(usage, ev)
		}
	}
	require.Len(t, usage, 2)
	assert.Equal(t, int64(3), *usage[0].TokensOutput, "10 at shutdown, 7 already counted")
	assert.Equal(t, int64(0), *usage[1].TokensOutput)
	assert.Equal(t, "anthropic", usage[0].Provider)
	assert.NotEmpty(t, usage[0].ResponseID, "a chat span carries the usage")
}

func TestParseWorkspace(t *testing.T) {
	w := ParseWorkspace([]byte("id: abc\r\ncwd: 'C:\\it''s'\ngit_root: \"/g\"\nbranch: main\nsummary: |-\n  line one\n  cwd: not this\nrepository: o/r\n"))
	assert.Equal(t, Workspace{ID: "abc", Cwd: `C:\it's`, GitRoot: "/g", Branch: "main", Repository: "o/r"}, w)
	assert.Equal(t, Workspace{}, ParseWorkspace([]byte("\x00garbage")))
}

func TestProvider(t *testing.T) {
	for model, want := range map[string]string{
		"claude-opus-4.6": "anthropic", "gpt-5-mini": "openai", "gpt-5.1-codex": "openai", "o3": "openai",
		"gemini-3-pro-preview": "gcp.gemini", "grok-code-fast-1": "x_ai", "": "", "mystery": "",
	} {
		assert.Equal(t, want, Provider(model), model)
	}
}

func TestHistory(t *testing.T) {
	_, err := DecodeHistory([]byte(`{"sessionId":`))
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, ReasonMalformedJSON, de.Reason)
	_, err = DecodeHistory([]byte(`{"timeline":[]}`))
	require.ErrorAs(t, err, &de)
	assert.Equal(t, ReasonUnexpectedShape, de.Reason)

	_, history := sessionFiles(t, filepath.Join(repoRoot(t), "testdata", "copilot_cli"))
	require.NotEmpty(t, history)
	data, err := os.ReadFile(history[0])
	require.NoError(t, err)
	h, err := DecodeHistory(data)
	require.NoError(t, err)
	all := MapHistory(HistoryContext{LogFile: "h"}, h, nil)

	// The file as first written (its first three entries), then whole: the
	// second snapshot adds only what the first did not emit.
	first := h
	first.Timeline = h.Timeline[:3]
	r1 := MapHistory(HistoryContext{LogFile: "h"}, first, nil)
	seen := map[string]bool{}
	for _, k := range r1.Emitted {
		seen[k] = true
	}
	r2 := MapHistory(HistoryContext{LogFile: "h", Sequence: int64(len(r1.Events))}, h, seen)
	require.Equal(t, all.Events, append(r1.Events, r2.Events...))
	assert.Empty(t, MapHistory(HistoryContext{LogFile: "h"}, h, func() map[string]bool {
		m := map[string]bool{}
		for _, k := range all.Emitted {
			m[k] = true
		}
		return m
	}()).Events, "nothing twice")
	assert.Empty(t, agentevent.Validate(all.Events).Violations)
}

// TestUnknownCallsAndThreads: a result whose call was never seen is kept
// without a pairing; a subagent's records without subagent.started still
// form its thread, and the spawning call's result names it.
func TestUnknownCallsAndThreads(t *testing.T) {
	lines := []string{
		`{"type":"user.message","data":{"content":"go"},"id":"1","timestamp":"2026-01-01T00:00:00Z"}`,
		`{"type":"tool.execution_complete","data":{"toolCallId":"ghost","success":true,"result":{"content":"x"}},"id":"2","timestamp":"2026-01-01T00:00:01Z"}`,
		`{"type":"assistant.message","data":{"messageId":"m","content":"","toolRequests":[{"toolCallId":"t1","name":"task","arguments":{"prompt":"look"}}]},"id":"3","timestamp":"2026-01-01T00:00:02Z"}`,
		`{"type":"assistant.message","data":{"messageId":"n","content":"found it","parentToolCallId":"t1"},"id":"4","timestamp":"2026-01-01T00:00:03Z"}`,
		`{"type":"tool.execution_complete","data":{"toolCallId":"t1","success":true,"result":{"content":"found it"}},"id":"5","timestamp":"2026-01-01T00:00:04Z"}`,
	}
	var data []byte
	for _, l := range lines {
		data = append(data, l+"\n"...)
	}
	evs := parseBytes("f.jsonl", data, nil)
	rep := agentevent.Validate(evs)
	assert.Empty(t, rep.Violations)
	assert.Empty(t, rep.OpenToolCalls)
	require.Len(t, evs, 5)
	assert.Empty(t, evs[1].ToolCallID)
	assert.Equal(t, "ghost", evs[1].Attributes["agent.tool.late_call_id"])
	assert.Equal(t, "t1", evs[3].AgentID)
	assert.True(t, evs[3].IsSidechain)
	assert.Equal(t, "t1", evs[4].SpawnedAgentID)
}
