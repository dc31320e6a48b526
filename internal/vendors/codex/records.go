// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"strings"

	"github.com/agentotel/agentotel/internal/jsonx"
)

// record is the envelope of every rollout line: {timestamp, type, payload}.
type record struct {
	Timestamp string    `json:"timestamp"`
	Type      string    `json:"type"`
	Payload   jsonx.Raw `json:"payload"`
}

// fastRecord decodes a response_item or event_msg line in one pass: its
// payload holds the fields of both (item and eventMsg). A line it cannot
// decode, or of another type, is decoded again as a record, whose payload
// is then decoded on its own: the events are the same either way.
type fastRecord struct {
	Timestamp string   `json:"timestamp"`
	Type      string   `json:"type"`
	Payload   *payload `json:"payload"`
}

// fastOutputRecord is a fastRecord whose tool output, when there is one, is
// a string (the output of most tool calls), decoded in the same pass.
type fastOutputRecord struct {
	Timestamp string               `json:"timestamp"`
	Type      string               `json:"type"`
	Payload   *stringOutputPayload `json:"payload"`
}

type stringOutputPayload struct {
	payload
	Output *string `json:"output"`
}

// payload is item and eventMsg in one struct: item's members and those of
// eventMsg it does not share (the shared ones, type, call_id and status,
// have the same type in both).
type payload struct {
	item
	eventFields
}

// withOutput is the payload's item with its output taken as decoded in the
// line's pass.
func (pl *stringOutputPayload) withOutput() item {
	it := pl.item
	// An absent or null output reads as "" too.
	it.outputDecoded = true
	if pl.Output != nil {
		it.output = *pl.Output
	}
	return it
}

func (pl *payload) eventMsg() eventMsg {
	return eventMsg{Type: pl.Type, CallID: pl.CallID, Status: pl.Status, eventFields: pl.eventFields}
}

// sessionMeta is the payload of a session_meta record.
type sessionMeta struct {
	ID            string    `json:"id"`
	Cwd           string    `json:"cwd"`
	Originator    string    `json:"originator"`
	CLIVersion    string    `json:"cli_version"`
	Source        jsonx.Raw `json:"source"`
	ModelProvider string    `json:"model_provider"`
	ForkedFromID  string    `json:"forked_from_id"`
	AgentNickname string    `json:"agent_nickname"`
	AgentRole     string    `json:"agent_role"`
	Git           *struct {
		CommitHash string `json:"commit_hash"`
		Branch     string `json:"branch"`
	} `json:"git"`
}

// subagentSource is the object form of session_meta.source:
// {"subagent":"review"} or {"subagent":{"thread_spawn":{...}}}.
type subagentSource struct {
	Subagent jsonx.Raw `json:"subagent"`
}

type threadSpawn struct {
	ThreadSpawn *struct {
		ParentThreadID string `json:"parent_thread_id"`
		Depth          int64  `json:"depth"`
		AgentNickname  string `json:"agent_nickname"`
		AgentRole      string `json:"agent_role"`
	} `json:"thread_spawn"`
}

// turnContext is the payload of a turn_context record.
type turnContext struct {
	Cwd    string `json:"cwd"`
	Model  string `json:"model"`
	Effort string `json:"effort"`
	TurnID string `json:"turn_id"`
}

// item is the payload of a response_item record (all item types share it).
type item struct {
	Type      string    `json:"type"`
	Role      string    `json:"role"`
	Content   jsonx.Raw `json:"content"`
	Summary   jsonx.Raw `json:"summary"`
	Name      string    `json:"name"`
	Arguments string    `json:"arguments"`
	Input     string    `json:"input"`
	CallID    string    `json:"call_id"`
	ID        string    `json:"id"`
	Status    string    `json:"status"`
	Output    jsonx.Raw `json:"output"`
	Phase     string    `json:"phase"`
	Action    jsonx.Raw `json:"action"`
	// Execution and Tools: a tool search's (where it ran, what it found).
	Execution string    `json:"execution"`
	Tools     jsonx.Raw `json:"tools"`
	// Author and Recipient: the agent paths an inter-agent agent_message
	// item joins.
	Author    string `json:"author"`
	Recipient string `json:"recipient"`
	// GhostCommit is the undo snapshot of a ghost_snapshot item.
	GhostCommit *struct {
		ID string `json:"id"`
	} `json:"ghost_commit"`

	// output is Output as a string when outputDecoded: decoded in the
	// line's pass (stringOutputPayload), Output then is nil.
	output        string
	outputDecoded bool
}

// contentPart is one element of a message's content or a reasoning's
// summary/content.
type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// eventMsg is the payload of an event_msg record (all types share it).
type eventMsg struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Status string `json:"status"`
	eventFields
}

// eventFields are the members of an event_msg payload a response_item
// payload does not have.
type eventFields struct {
	Message            string     `json:"message"`
	Info               *tokenInfo `json:"info"`
	TurnID             string     `json:"turn_id"`
	Reason             string     `json:"reason"`
	DurationMs         *int64     `json:"duration_ms"`
	TimeToFirstTokenMs *int64     `json:"time_to_first_token_ms"`
	ExitCode           *int64     `json:"exit_code"`
	Duration           jsonx.Raw  `json:"duration"`
	Success            *bool      `json:"success"`
	Result             jsonx.Raw  `json:"result"`
	Invocation         *struct {
		Server string `json:"server"`
		Tool   string `json:"tool"`
	} `json:"invocation"`
	// ThreadSettings: thread_settings_applied's.
	ThreadSettings *threadSettings `json:"thread_settings"`
	// NumTurns: thread_rolled_back's.
	NumTurns *int64 `json:"num_turns"`
	// AgentThreadID, AgentPath, Kind: sub_agent_activity's.
	AgentThreadID string `json:"agent_thread_id"`
	AgentPath     string `json:"agent_path"`
	Kind          string `json:"kind"`
}

// threadSettings are the settings a thread_settings_applied applies to the
// turns that follow (the facts read of them; the collaboration mode's
// developer instructions are not read).
type threadSettings struct {
	Model             string `json:"model"`
	ModelProvider     string `json:"model_provider_id"`
	ServiceTier       string `json:"service_tier"`
	ApprovalPolicy    string `json:"approval_policy"`
	ReasoningEffort   string `json:"reasoning_effort"`
	ReasoningSummary  string `json:"reasoning_summary"`
	Personality       string `json:"personality"`
	CollaborationMode *struct {
		Mode string `json:"mode"`
	} `json:"collaboration_mode"`
}

// worldState is the payload of a world_state record: the context Codex
// keeps the model's view of (AGENTS.md, environments, skills, ...), whole
// (full) or as the parts that changed.
type worldState struct {
	Full  *bool     `json:"full"`
	State jsonx.Raw `json:"state"`
}

// interAgentMessage is the payload of an inter_agent_communication record:
// a message between two agents of one thread tree, by their paths.
type interAgentMessage struct {
	Author          string    `json:"author"`
	Recipient       string    `json:"recipient"`
	OtherRecipients []string  `json:"other_recipients"`
	Content         string    `json:"content"`
	TriggerTurn     *bool     `json:"trigger_turn"`
	ID              jsonx.Raw `json:"id"`
}

type tokenInfo struct {
	Total              *usage `json:"total_token_usage"`
	Last               *usage `json:"last_token_usage"`
	ModelContextWindow *int64 `json:"model_context_window"`
}

// usage is one token_count usage block. cached ⊆ input, reasoning ⊆ output.
type usage struct {
	Input     int64 `json:"input_tokens"`
	Cached    int64 `json:"cached_input_tokens"`
	Output    int64 `json:"output_tokens"`
	Reasoning int64 `json:"reasoning_output_tokens"`
	Total     int64 `json:"total_tokens"`
}

func (u usage) sub(o usage) usage {
	return usage{u.Input - o.Input, u.Cached - o.Cached, u.Output - o.Output, u.Reasoning - o.Reasoning, u.Total - o.Total}
}

func (u usage) zero() bool { return u == usage{} }

func (u usage) negative() bool {
	return u.Input < 0 || u.Cached < 0 || u.Output < 0 || u.Reasoning < 0
}

// duration is the {secs, nanos} of the *_end events.
type duration struct {
	Secs  int64 `json:"secs"`
	Nanos int64 `json:"nanos"`
}

func (d duration) millis() int64 { return d.Secs*1000 + d.Nanos/1_000_000 }

// partsText joins the text of content parts (input_text, output_text,
// summary_text, reasoning_text; any part with a text).
func partsText(raw jsonx.Raw) string {
	if len(raw) == 0 || raw[0] != '[' {
		var s string
		if jsonx.Unmarshal(raw, &s) == nil {
			return s
		}
		return ""
	}
	var parts []contentPart
	if jsonx.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

// jsonString decodes raw as a JSON string; ok is false for any other value.
func jsonString(raw jsonx.Raw) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || jsonx.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}
