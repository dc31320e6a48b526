// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/claudecode"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// toolUseFirstRows is a Claude Code ≥ 2.1 session whose first response
// streams as two rows — a text block, then a tool_use block carrying the
// stop_reason and the final usage with 1-hour cache writes — followed by the
// tool result and a closing answer. No committed testdata file has a row
// whose first block is a tool_use with ephemeral_1h_input_tokens > 0 (the
// 149 rows of the newest fixture that do are under no licence, read in
// place only), so the rows are written here with the shape of such a real
// row (Claude Code 2.1.207: usage.cache_creation split into
// ephemeral_1h/5m, iterations, caller) and made-up ids, text and counts.
const toolUseFirstRows = `{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/dev/shop","sessionId":"5f0c2a7e-1b3d-4e6f-8a9b-0c1d2e3f4a5b","version":"2.1.207","gitBranch":"main","entrypoint":"cli","type":"user","message":{"role":"user","content":"Read go.mod and tell me the module path."},"uuid":"0a000000-0000-4000-8000-000000000001","timestamp":"2026-07-22T09:16:10.000Z"}
{"parentUuid":"0a000000-0000-4000-8000-000000000001","isSidechain":false,"message":{"model":"claude-opus-4-8","id":"msg_01TestToolUseFirst1h","type":"message","role":"assistant","content":[{"type":"text","text":"Let me read it."}],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":2,"cache_creation_input_tokens":2872,"cache_read_input_tokens":19964,"output_tokens":8,"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":2872,"ephemeral_5m_input_tokens":0}}},"requestId":"req_01TestToolUseFirst1h","type":"assistant","uuid":"0a000000-0000-4000-8000-000000000002","timestamp":"2026-07-22T09:16:13.100Z","userType":"external","entrypoint":"cli","cwd":"/home/dev/shop","sessionId":"5f0c2a7e-1b3d-4e6f-8a9b-0c1d2e3f4a5b","version":"2.1.207","gitBranch":"main"}
{"parentUuid":"0a000000-0000-4000-8000-000000000002","isSidechain":false,"message":{"model":"claude-opus-4-8","id":"msg_01TestToolUseFirst1h","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_01TestToolUseFirst1h","name":"Read","input":{"file_path":"/home/dev/shop/go.mod"},"caller":{"type":"direct"}}],"stop_reason":"tool_use","stop_sequence":null,"stop_details":null,"usage":{"input_tokens":2,"cache_creation_input_tokens":2872,"cache_read_input_tokens":19964,"output_tokens":295,"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":2872,"ephemeral_5m_input_tokens":0},"inference_geo":"not_available","iterations":[{"input_tokens":2,"output_tokens":295,"cache_read_input_tokens":19964,"cache_creation_input_tokens":2872,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":2872},"type":"message"}],"speed":"standard"},"diagnostics":null},"requestId":"req_01TestToolUseFirst1h","type":"assistant","uuid":"0a000000-0000-4000-8000-000000000003","timestamp":"2026-07-22T09:16:14.955Z","userType":"external","entrypoint":"cli","cwd":"/home/dev/shop","sessionId":"5f0c2a7e-1b3d-4e6f-8a9b-0c1d2e3f4a5b","version":"2.1.207","gitBranch":"main"}
{"parentUuid":"0a000000-0000-4000-8000-000000000003","isSidechain":false,"userType":"external","cwd":"/home/dev/shop","sessionId":"5f0c2a7e-1b3d-4e6f-8a9b-0c1d2e3f4a5b","version":"2.1.207","gitBranch":"main","entrypoint":"cli","type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01TestToolUseFirst1h","type":"tool_result","content":"module example.com/shop\n"}]},"uuid":"0a000000-0000-4000-8000-000000000004","timestamp":"2026-07-22T09:16:15.200Z","toolUseResult":{"type":"text","file":{"filePath":"/home/dev/shop/go.mod","content":"module example.com/shop\n","numLines":1,"startLine":1,"totalLines":1}}}
{"parentUuid":"0a000000-0000-4000-8000-000000000004","isSidechain":false,"message":{"model":"claude-opus-4-8","id":"msg_01TestToolUseFirst1hB","type":"message","role":"assistant","content":[{"type":"text","text":"The module path is example.com/shop."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"cache_creation_input_tokens":340,"cache_read_input_tokens":22836,"output_tokens":12,"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":340,"ephemeral_5m_input_tokens":0}}},"requestId":"req_01TestToolUseFirst1hB","type":"assistant","uuid":"0a000000-0000-4000-8000-000000000005","timestamp":"2026-07-22T09:16:17.400Z","userType":"external","entrypoint":"cli","cwd":"/home/dev/shop","sessionId":"5f0c2a7e-1b3d-4e6f-8a9b-0c1d2e3f4a5b","version":"2.1.207","gitBranch":"main"}
`

// TestOneHourCacheWritesLandOnTheChatSpan: when the final row of a Claude
// Code response starts with a tool_use block, the parser puts the
// response's usage on that tool_call event; every part of it — the 1-hour
// cache writes included, which gen_ai_cost prices at twice the input rate —
// goes on the response's chat span, and the execute_tool span carries none.
func TestOneHourCacheWritesLandOnTheChatSpan(t *testing.T) {
	p := claudecode.NewParser(filepath.Join(t.TempDir(), "5f0c2a7e-1b3d-4e6f-8a9b-0c1d2e3f4a5b.jsonl"))
	var evs []agentevent.Event
	for _, l := range vendortest.SplitLines([]byte(toolUseFirstRows)) {
		evs = append(evs, p.Parse(l.Data, l.No, l.Offset)...)
	}
	evs = append(evs, p.Flush()...)
	var call *agentevent.Event
	for i := range evs {
		if evs[i].Type == agentevent.TypeToolCall {
			call = &evs[i]
		}
	}
	require.NotNil(t, call)
	require.Equal(t, int64(2872), call.Attributes[agentevent.AttrTokensCacheCreation1h], "the parser puts the usage on the row's first event, the tool call")
	require.Equal(t, int64(2872+19964+2), agentevent.Value(call.TokensInput))

	h := newHarness(t)
	h.history()
	h.feed(evs...)
	h.tick()
	spans := h.spans()
	chats := named(spans, "chat claude-opus-4-8")
	require.Len(t, chats, 2)
	first, second := chats[0], chats[1]
	if attr(first, agentevent.AttrResponseID) != "msg_01TestToolUseFirst1h" {
		first, second = second, first
	}
	assert.Equal(t, int64(2872), attr(first, agentevent.AttrTokensCacheCreation1h), "the 1-hour writes on the response's chat span")
	assert.Equal(t, int64(2872), attr(first, agentevent.AttrTokensCacheCreation))
	assert.Equal(t, int64(22838), attr(first, agentevent.AttrTokensInput))
	assert.Equal(t, int64(340), attr(second, agentevent.AttrTokensCacheCreation1h))
	tool := one(t, spans, "execute_tool Read")
	for k := range tool.Attributes().All() {
		assert.False(t, isUsageAttr(k), "execute_tool span carries usage attribute %s", k)
	}
	for _, sp := range spans {
		if attr(sp, attrOperationName) == opChat {
			continue
		}
		for k := range sp.Attributes().All() {
			assert.False(t, isUsageAttr(k), "%s carries usage attribute %s", sp.Name(), k)
		}
	}
}
