// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentevent

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ev(id string, typ EventType, parent string, mod ...func(*Event)) Event {
	e := Event{SchemaVersion: SchemaVersion, Source: Source("claude_code"), SessionID: "s", EventID: id, Type: typ, ParentEventID: parent}
	Normalize(&e)
	if typ == TypeSessionSummary || typ == TypeLog {
		e.Role = RoleSystem
	}
	for _, m := range mod {
		m(&e)
	}
	return e
}

func call(id string) func(*Event) { return func(e *Event) { e.ToolCallID = id } }

func TestValidateAcceptsWellFormedTurns(t *testing.T) {
	r := Validate([]Event{
		ev("sum", TypeSessionSummary, ""),
		ev("u1", TypeUserMessage, ""),
		ev("r1", TypeReasoning, "u1"),
		ev("c1", TypeToolCall, "u1", call("t1")),
		ev("x1", TypeToolResult, "u1", call("t1")),
		ev("c2", TypeToolCall, "u1", call("t2")),
		ev("a1", TypeAssistantMessage, "u1"),
		ev("u2", TypeUserMessage, ""),
		ev("x0", TypeToolResult, "u2"), // a result with no call id is allowed
		// a subagent thread has its own prompts
		ev("su", TypeUserMessage, "", func(e *Event) { e.AgentID = "sub" }),
		ev("sa", TypeAssistantMessage, "su", func(e *Event) { e.AgentID = "sub" }),
		ev("a2", TypeAssistantMessage, "u2"),
	})
	assert.Empty(t, r.Violations)
	require.Len(t, r.OpenToolCalls, 1)
	assert.Equal(t, "t2", r.OpenToolCalls[0].ToolCallID)
}

func TestValidateFindsEachViolation(t *testing.T) {
	cases := map[string]struct {
		events []Event
		rule   string
	}{
		"tool_result with role user": {[]Event{ev("u", TypeUserMessage, ""), ev("x", TypeToolResult, "u", func(e *Event) { e.Role = RoleUser })}, "role"},
		"reasoning as system":        {[]Event{ev("r", TypeReasoning, "", func(e *Event) { e.Role = RoleSystem })}, "role"},
		"log as assistant":           {[]Event{ev("l", TypeLog, "", func(e *Event) { e.Role = RoleAssistant })}, "role"},
		"user_message with parent":   {[]Event{ev("u", TypeUserMessage, "z")}, "parent_event_id"},
		"stale parent":               {[]Event{ev("u1", TypeUserMessage, ""), ev("u2", TypeUserMessage, ""), ev("a", TypeAssistantMessage, "u1")}, "parent_event_id"},
		"parent before any prompt":   {[]Event{ev("a", TypeAssistantMessage, "u1")}, "parent_event_id"},
		"orphan result":              {[]Event{ev("u", TypeUserMessage, ""), ev("x", TypeToolResult, "u", call("nope"))}, "tool_pairing"},
		"duplicate call id":          {[]Event{ev("u", TypeUserMessage, ""), ev("c", TypeToolCall, "u", call("t")), ev("d", TypeToolCall, "u", call("t"))}, "tool_pairing"},
		"second result":              {[]Event{ev("u", TypeUserMessage, ""), ev("c", TypeToolCall, "u", call("t")), ev("x", TypeToolResult, "u", call("t")), ev("y", TypeToolResult, "u", call("t"))}, "tool_pairing"},
		"call without id":            {[]Event{ev("u", TypeUserMessage, ""), ev("c", TypeToolCall, "u")}, "tool_pairing"},
		"missing schema version":     {[]Event{{EventID: "m", Type: TypeMeta, Role: RoleSystem}}, "schema"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := Validate(tc.events)
			require.NotEmpty(t, r.Violations)
			assert.Equal(t, tc.rule, r.Violations[0].Rule, r.Violations)
		})
	}
}
