// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// Records of 0.14x rollouts, in the shapes of the real files (ids and
// texts made up, long members cut).
const (
	meta14      = `{"timestamp":"2026-07-01T00:00:00Z","type":"session_meta","payload":{"id":"019f0000-0000-7000-8000-000000000001","cwd":"/w","cli_version":"0.146.0-alpha.3.1","originator":"Codex Desktop","source":"vscode","model_provider":"openai"}}`
	worldFull   = `{"timestamp":"2026-07-01T00:00:01Z","type":"world_state","payload":{"full":true,"state":{"agents_md":{"text":"# Project notes"},"apps_instructions":true,"environments":{"current_date":"2026-07-01","timezone":"UTC"},"skills":{"includeInstructions":true}}}}`
	worldDelta  = `{"timestamp":"2026-07-02T00:00:00Z","type":"world_state","payload":{"full":false,"state":{"environments":{"current_date":"2026-07-02"}}}}`
	prompt14    = `{"timestamp":"2026-07-01T00:00:02Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"find the deploy tool"}]}}`
	userMsg14   = `{"timestamp":"2026-07-01T00:00:02Z","type":"event_msg","payload":{"type":"user_message","message":"find the deploy tool","images":[]}}`
	searchCall  = `{"timestamp":"2026-07-01T00:00:03Z","type":"response_item","payload":{"type":"tool_search_call","id":"tsc_01","call_id":"call_search1","status":"completed","execution":"client","arguments":{"query":"deploy a site","limit":5},"internal_chat_message_metadata_passthrough":{"turn_id":"t1"}}}`
	searchOut   = `{"timestamp":"2026-07-01T00:00:04Z","type":"response_item","payload":{"type":"tool_search_output","id":"tso_01","call_id":"call_search1","status":"completed","execution":"client","tools":[{"type":"namespace","name":"mcp__apps__sites","description":"Sites","tools":[{"type":"function","name":"deploy"}]}],"internal_chat_message_metadata_passthrough":{"turn_id":"t1"}}}`
	agentMsgEv  = `{"timestamp":"2026-07-01T00:00:05Z","type":"event_msg","payload":{"type":"agent_message","message":"Found it.","phase":"final_answer","memory_citation":null}}`
	agentMsgIt  = `{"timestamp":"2026-07-01T00:00:05Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Found it."}],"phase":"final_answer"}}`
	settings14  = `{"timestamp":"2026-07-01T00:00:06Z","type":"event_msg","payload":{"type":"thread_settings_applied","thread_settings":{"model":"gpt-5.5","model_provider_id":"openai","service_tier":"priority","approval_policy":"never","approvals_reviewer":"user","permission_profile":{"type":"disabled"},"cwd":"/w","reasoning_effort":"medium","reasoning_summary":"none","personality":"friendly","collaboration_mode":{"mode":"default","settings":{"model":"gpt-5.5","developer_instructions":"# Collaboration Mode: Default"}}}}}`
	aborted14   = `{"timestamp":"2026-07-01T00:00:08Z","type":"event_msg","payload":{"type":"turn_aborted","turn_id":"t2","reason":"interrupted","started_at":1784517246,"completed_at":1784517248,"duration_ms":1984}}`
	rolledBack1 = `{"timestamp":"2026-07-01T00:00:09Z","type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":1}}`
)

// parse14 parses data with the typed and the in-place decoders, with and
// without content, checks that they agree, and returns the full events.
func parse14(t *testing.T, data []byte) []agentevent.Event {
	t.Helper()
	requireSameEvents(t, "0.14x", splitLines(data))
	events := parseBytes("rollout-019f0000-0000-7000-8000-000000000001.jsonl", data)
	for i := range events {
		require.Emptyf(t, events[i].Unparsed, "line %d: %v", events[i].LogLine, events[i].Attributes)
	}
	require.Empty(t, agentevent.Validate(events).Violations)
	return events
}

func ofType(events []agentevent.Event, typ agentevent.EventType) []agentevent.Event {
	var out []agentevent.Event
	for i := range events {
		if events[i].Type == typ {
			out = append(out, events[i])
		}
	}
	return out
}

func byCodexEvent(events []agentevent.Event, name string) []agentevent.Event {
	var out []agentevent.Event
	for i := range events {
		if events[i].Attributes[agentevent.AttrCodexEvent] == name {
			out = append(out, events[i])
		}
	}
	return out
}

func TestWorldState(t *testing.T) {
	events := parse14(t, lines(meta14, worldFull, prompt14, worldDelta))
	ws := byCodexEvent(events, "world_state")
	require.Len(t, ws, 2)
	assert.Equal(t, agentevent.TypeMeta, ws[0].Type)
	assert.Equal(t, true, ws[0].Attributes[agentevent.AttrCodexWorldStateFull])
	assert.Equal(t, "agents_md,apps_instructions,environments,skills", ws[0].Attributes[agentevent.AttrCodexWorldStateKeys])
	assert.Contains(t, ws[0].Text, "# Project notes", "the state is content")
	assert.Equal(t, false, ws[1].Attributes[agentevent.AttrCodexWorldStateFull])
	assert.Equal(t, "environments", ws[1].Attributes[agentevent.AttrCodexWorldStateKeys])

	lean := NewParserWithOptions("r.jsonl", Options{OmitContent: true})
	for _, l := range splitLines(lines(meta14, worldFull)) {
		for _, ev := range lean.Parse(l.Data, l.No, l.Offset) {
			assert.Empty(t, ev.Text, "no content without include_content")
		}
	}
}

// A tool search is a call and its result, paired by call_id, though its
// arguments are an object.
func TestToolSearch(t *testing.T) {
	failed := `{"timestamp":"2026-07-01T00:00:04Z","type":"response_item","payload":{"type":"tool_search_output","call_id":"call_search2","status":"failed","execution":"client","tools":[]}}`
	call2 := `{"timestamp":"2026-07-01T00:00:03Z","type":"response_item","payload":{"type":"tool_search_call","call_id":"call_search2","status":"completed","execution":"client","arguments":{"query":"x"}}}`
	events := parse14(t, lines(meta14, prompt14, userMsg14, searchCall, searchOut, call2, failed))
	r := agentevent.Validate(events)
	assert.Empty(t, r.OpenToolCalls)
	calls, results := ofType(events, agentevent.TypeToolCall), ofType(events, agentevent.TypeToolResult)
	require.Len(t, calls, 2)
	require.Len(t, results, 2)
	assert.Equal(t, "tool_search", calls[0].ToolName)
	assert.Equal(t, "call_search1", calls[0].ToolCallID)
	assert.JSONEq(t, `{"query":"deploy a site","limit":5}`, calls[0].Text)
	assert.Equal(t, "client", calls[0].Attributes[agentevent.AttrCodexToolSearchExecution])
	assert.Equal(t, "tool_search", results[0].ToolName)
	assert.Equal(t, "call_search1", results[0].ToolCallID)
	assert.Equal(t, agentevent.ToolSuccess, results[0].ToolStatus)
	assert.Equal(t, int64(1000), agentevent.Value(results[0].ToolLatencyMs))
	assert.Equal(t, int64(1), results[0].Attributes[agentevent.AttrCodexToolSearchTools])
	assert.Equal(t, "mcp__apps__sites", results[0].Text)
	assert.Equal(t, agentevent.ToolError, results[1].ToolStatus)
	assert.Equal(t, agentevent.ErrorTypeTool, results[1].ErrorType)
}

func TestThreadSettingsApplied(t *testing.T) {
	events := parse14(t, lines(meta14, settings14))
	ev := byCodexEvent(events, "thread_settings_applied")
	require.Len(t, ev, 1)
	assert.Equal(t, map[string]any{
		agentevent.AttrCodexEvent:            "thread_settings_applied",
		agentevent.AttrCodexModel:            "gpt-5.5",
		agentevent.AttrCodexModelProvider:    "openai",
		agentevent.AttrCodexServiceTier:      "priority",
		agentevent.AttrCodexApprovalPolicy:   "never",
		agentevent.AttrCodexReasoningEffort:  "medium",
		agentevent.AttrCodexReasoningSummary: "none",
		agentevent.AttrCodexPersonality:      "friendly",
		agentevent.AttrCodexCollabMode:       "default",
	}, ev[0].Attributes)
	assert.Empty(t, ev[0].Text, "the mode's developer instructions are not read")
}

// The event_msg agent_message repeats the assistant item: one
// assistant_message per answer.
func TestAgentMessageCountsOnce(t *testing.T) {
	events := parse14(t, lines(meta14, prompt14, userMsg14, agentMsgEv, agentMsgIt))
	asst := ofType(events, agentevent.TypeAssistantMessage)
	require.Len(t, asst, 1)
	assert.Equal(t, "Found it.", asst[0].Text)
	assert.Len(t, ofType(events, agentevent.TypeUserMessage), 1)
}

// A rollback keeps what the rolled-back turn spent; its event lands in
// that turn and names its prompt.
func TestThreadRolledBack(t *testing.T) {
	prompt2 := `{"timestamp":"2026-07-01T00:00:07Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"second try"}]}}`
	done := `{"timestamp":"2026-07-01T00:00:06Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t1"}}`
	events := parse14(t, lines(meta14, prompt14, agentMsgIt, tc(100, 20, 10, 0), done,
		prompt2, tc(250, 40, 30, 5), aborted14, rolledBack1))
	assert.Equal(t, tokenTotals{Input: 210, CacheRead: 40, Output: 30, Reasoning: 5}, sumTokens(events), "the rolled-back turn's tokens stay")
	prompts := ofType(events, agentevent.TypeUserMessage)
	require.Len(t, prompts, 2)
	rb := byCodexEvent(events, "thread_rolled_back")
	require.Len(t, rb, 1)
	assert.Equal(t, prompts[1].EventID, rb[0].ParentEventID, "in the turn taken back")
	assert.Equal(t, true, rb[0].Attributes[agentevent.AttrTurnRolledBack])
	assert.Equal(t, int64(1), rb[0].Attributes[agentevent.AttrCodexRolledBackTurns])
	assert.Equal(t, prompts[1].EventID, rb[0].Attributes[agentevent.AttrCodexRolledBackPrompts])

	// A second rollback of two turns goes further back than the first.
	again := `{"timestamp":"2026-07-01T00:00:10Z","type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":2}}`
	events = parse14(t, lines(meta14, prompt14, done, prompt2, aborted14, rolledBack1, again))
	prompts = ofType(events, agentevent.TypeUserMessage)
	rb = byCodexEvent(events, "thread_rolled_back")
	require.Len(t, rb, 2)
	assert.Equal(t, prompts[0].EventID, rb[1].Attributes[agentevent.AttrCodexRolledBackPrompts], "only the prompts it still knows")
}

// A multi-agent parent: the child's activity and the messages between the
// agents, which name the agents they join.
func TestInterAgentMessages(t *testing.T) {
	activity := `{"timestamp":"2026-07-01T00:00:03Z","type":"event_msg","payload":{"type":"sub_agent_activity","event_id":"e1","occurred_at_ms":1784517246000,"agent_thread_id":"019f0000-0000-7000-8000-0000000000c1","agent_path":"/root/worker","kind":"started"}}`
	trigger := `{"timestamp":"2026-07-01T00:00:04Z","type":"inter_agent_communication_metadata","payload":{"trigger_turn":true}}`
	delivered := `{"timestamp":"2026-07-01T00:00:04Z","type":"response_item","payload":{"type":"agent_message","author":"/root/worker","recipient":"/root","content":[{"type":"input_text","text":"done: 3 files"}]}}`
	direct := `{"timestamp":"2026-07-01T00:00:05Z","type":"inter_agent_communication","payload":{"author":"/root","recipient":"/root/worker","other_recipients":[],"content":"stop now","trigger_turn":false}}`
	events := parse14(t, lines(meta14, prompt14, activity, trigger, delivered, direct))

	act := byCodexEvent(events, "sub_agent_activity")
	require.Len(t, act, 1)
	assert.Equal(t, "started", act[0].Attributes[agentevent.AttrCodexSubagentActivity])
	assert.Equal(t, "/root/worker", act[0].Attributes[agentevent.AttrCodexAgentPath])
	assert.Equal(t, "019f0000-0000-7000-8000-0000000000c1", act[0].Attributes[agentevent.AttrCodexAgentThreadID])

	msgs := ofType(events, agentevent.TypeSystemMessage)
	require.Len(t, msgs, 2)
	assert.Equal(t, "/root/worker", msgs[0].Attributes[agentevent.AttrCodexMessageAuthor])
	assert.Equal(t, "/root", msgs[0].Attributes[agentevent.AttrCodexMessageRecipient])
	assert.Equal(t, true, msgs[0].Attributes[agentevent.AttrCodexTriggerTurn])
	assert.Equal(t, "done: 3 files", msgs[0].Text)
	assert.Equal(t, "/root", msgs[1].Attributes[agentevent.AttrCodexMessageAuthor])
	assert.Equal(t, false, msgs[1].Attributes[agentevent.AttrCodexTriggerTurn])
	assert.Equal(t, "stop now", msgs[1].Text)
	assert.Len(t, ofType(events, agentevent.TypeUserMessage), 1, "an inter-agent message is no prompt")
}

// A forked child's copy of its parent's world_state is replayed history:
// the child's own turn starts at its task_started after it.
func TestForkReplaysWorldState(t *testing.T) {
	data := lines(
		`{"timestamp":"2026-07-01T00:00:00Z","type":"session_meta","payload":{"id":"019f0000-0000-7000-8000-0000000000c2","forked_from_id":"019f0000-0000-7000-8000-000000000001","source":{"subagent":{"thread_spawn":{"parent_thread_id":"019f0000-0000-7000-8000-000000000001","depth":1,"agent_role":"worker"}}}}}`,
		`{"timestamp":"2026-07-01T00:00:00Z","type":"session_meta","payload":{"id":"019f0000-0000-7000-8000-000000000001","source":"vscode"}}`,
		worldFull,
		`{"timestamp":"2026-07-01T00:00:03Z","type":"event_msg","payload":{"type":"task_started","turn_id":"child"}}`,
		`{"timestamp":"2026-07-01T00:00:03Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"child task"}]}}`)
	events := parse14(t, data)
	assert.Empty(t, byCodexEvent(events, "world_state"), "the parent's, not the child's")
	require.Len(t, ofType(events, agentevent.TypeUserMessage), 1)
}
