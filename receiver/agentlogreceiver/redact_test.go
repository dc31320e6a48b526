// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/testfiles"
)

// bashToolUseLine is an assistant row calling Bash with cmd.
func bashToolUseLine(uuid, parent, session, msgID, callID, cmd string) string {
	input, _ := json.Marshal(map[string]string{"command": cmd, "description": "run it"})
	return fmt.Sprintf(`{"parentUuid":%q,"isSidechain":false,"userType":"external","cwd":"/home/dev/proj","sessionId":%q,"version":%q,"gitBranch":"main","message":{"id":%q,"type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"tool_use","id":%q,"name":"Bash","input":%s}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5,"service_tier":"standard"}},"requestId":"req_%s","type":"assistant","uuid":%q,"timestamp":"2025-06-01T10:00:01.000Z"}`,
		parent, session, testVersion, msgID, callID, input, msgID, uuid)
}

// webFetchLine is an assistant row fetching a URL (its file.path) with a token in the query.
func webFetchLine(uuid, parent, session, msgID, callID, url string) string {
	input, _ := json.Marshal(map[string]string{"url": url, "prompt": "summarize"})
	return fmt.Sprintf(`{"parentUuid":%q,"isSidechain":false,"userType":"external","cwd":"/home/dev/proj","sessionId":%q,"version":%q,"gitBranch":"main","message":{"id":%q,"type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"tool_use","id":%q,"name":"mcp__fetch__fetch","input":%s}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5,"service_tier":"standard"}},"requestId":"req_%s","type":"assistant","uuid":%q,"timestamp":"2025-06-01T10:00:02.000Z"}`,
		parent, session, testVersion, msgID, callID, input, msgID, uuid)
}

// TestRedactsBeforeEventsLeave: the commands and tool arguments an agent logged reach the next
// consumer with their credentials replaced, and only with redact: false as logged.
func TestRedactsBeforeEventsLeave(t *testing.T) {
	const (
		secretCmd = `curl -sS -H "Authorization: Bearer ghp_16C7e42F292c6912E7710c838347Ae178B4a" https://api.github.com/user && export OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9kLmN2pQr5sTu8vWx1yZa4BcDe`
		cleanCmd  = `curl -sS -H "Authorization: Bearer [REDACTED]" https://api.github.com/user && export OPENAI_API_KEY=[REDACTED]`
		plainCmd  = `go test ./... && MAX_TOKENS=4096 make lint`
		secretURL = `https://api.example.com/report?access_token=9f8e7d6c5b4a3928&page=2`
		cleanURL  = `https://api.example.com/report?access_token=[REDACTED]&page=2`
	)
	for _, tt := range []struct {
		name            string
		redact          bool
		wantCmd, wantFn string
	}{
		{"default", true, cleanCmd, cleanURL},
		{"redact false", false, secretCmd, secretURL},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "s1.jsonl")
			testfiles.WriteFile(t, path,
				userLine("u1", "s1", "check my token"),
				bashToolUseLine("a1", "u1", "s1", "msg_1", "toolu_1", secretCmd),
				bashToolUseLine("a2", "u1", "s1", "msg_2", "toolu_2", plainCmd),
				webFetchLine("a3", "u1", "s1", "msg_3", "toolu_3", secretURL),
			)
			cfg := testConfig(dir)
			cfg.IncludeContent = true // tool arguments (MCP arguments among them) are redacted too
			cfg.Redact = tt.redact
			h := newHarness(t, cfg, nil)
			h.start()
			evs := h.waitEvents(path, 4)

			calls := map[string]agentevent.Event{}
			for _, ev := range evs {
				if ev.Type == agentevent.TypeToolCall {
					calls[ev.ToolCallID] = ev
				}
			}
			require.Len(t, calls, 3)
			assert.Equal(t, tt.wantCmd, calls["toolu_1"].Attributes[agentevent.AttrToolCommand])
			assert.Equal(t, plainCmd, calls["toolu_2"].Attributes[agentevent.AttrToolCommand], "nothing to redact")
			assert.Contains(t, calls["toolu_1"].Text, jsonString(t, tt.wantCmd), "the arguments, as content")
			assert.Contains(t, calls["toolu_3"].Text, jsonString(t, tt.wantFn), "the MCP call's arguments")
			if tt.redact {
				for _, ev := range evs {
					assert.NotContains(t, fmt.Sprint(ev), "ghp_16C7e42F", "event %s", ev.EventID)
					assert.NotContains(t, fmt.Sprint(ev), "9f8e7d6c5b4a3928", "event %s", ev.EventID)
				}
			}
		})
	}
}

// jsonString is s as it appears inside a JSON document written by Go's
// encoder (quotes escaped, "&" as \u0026), without the quotes.
func jsonString(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	return string(b[1 : len(b)-1])
}
