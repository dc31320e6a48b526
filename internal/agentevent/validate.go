// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentevent

import (
	"fmt"
	"slices"
)

// Violation is one broken invariant.
type Violation struct {
	EventID string
	Rule    string // role, parent_event_id, tool_pairing, schema
	Detail  string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s: event %s: %s", v.Rule, v.EventID, v.Detail)
}

// Report is the outcome of Validate.
type Report struct {
	Violations []Violation
	// OpenToolCalls are tool calls no tool_result answered (yet): a session
	// cut mid-call, or a call still running. Not a violation by itself.
	OpenToolCalls []Event
}

// threadKey groups the events of one conversation thread: a session's main
// agent, or one subagent of it.
type threadKey struct{ session, agent string }

// Validate checks a stream of events, in emission order, against the
// invariants of the agtrace spec:
//   - section 4: each event type carries an allowed role;
//   - section 3.1: a user_message has no parent; every other event's
//     parent_event_id is the event id of the latest user_message of its thread
//     (none before the first prompt);
//   - section 3.2: a tool_result's tool_call_id names an earlier tool_call of
//     the same thread, and tool call ids are unique.
func Validate(events []Event) Report {
	var r Report
	lastPrompt := map[threadKey]string{}
	type call struct {
		ev       Event
		answered bool
	}
	calls := map[threadKey]map[string]*call{}
	var callOrder []*call
	for i := range events {
		ev := &events[i]
		add := func(rule, format string, args ...any) {
			r.Violations = append(r.Violations, Violation{EventID: ev.EventID, Rule: rule, Detail: fmt.Sprintf(format, args...)})
		}
		if ev.SchemaVersion != SchemaVersion {
			add("schema", "schema_version %q", ev.SchemaVersion)
		}
		if ev.EventID == "" {
			add("schema", "empty event_id")
		}
		if !slices.Contains(AllowedRoles(ev.Type), ev.Role) {
			add("role", "event_type %s has role %q, allowed %v", ev.Type, ev.Role, AllowedRoles(ev.Type))
		}
		k := threadKey{ev.SessionID, ev.AgentID}
		if ev.Type == TypeUserMessage {
			if ev.ParentEventID != "" {
				add("parent_event_id", "user_message has parent %q", ev.ParentEventID)
			}
			lastPrompt[k] = ev.EventID
		} else if want := lastPrompt[k]; ev.ParentEventID != want {
			add("parent_event_id", "%s has parent %q, want latest user_message %q", ev.Type, ev.ParentEventID, want)
		}
		switch ev.Type {
		case TypeToolCall:
			if ev.ToolCallID == "" {
				add("tool_pairing", "tool_call without tool_call_id")
				break
			}
			if calls[k] == nil {
				calls[k] = map[string]*call{}
			}
			if _, dup := calls[k][ev.ToolCallID]; dup {
				add("tool_pairing", "tool_call id %q used twice", ev.ToolCallID)
				break
			}
			c := &call{ev: *ev}
			calls[k][ev.ToolCallID] = c
			callOrder = append(callOrder, c)
		case TypeToolResult:
			if ev.ToolCallID == "" {
				break // allowed: a result whose call cannot be identified
			}
			c := calls[k][ev.ToolCallID]
			if c == nil {
				add("tool_pairing", "tool_result for unknown tool_call %q", ev.ToolCallID)
				break
			}
			if c.answered {
				add("tool_pairing", "second tool_result for tool_call %q", ev.ToolCallID)
			}
			c.answered = true
		}
	}
	for _, c := range callOrder {
		if !c.answered {
			r.OpenToolCalls = append(r.OpenToolCalls, c.ev)
		}
	}
	return r
}
