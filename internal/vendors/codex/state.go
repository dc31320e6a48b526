// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"encoding/json" // not goccy: its encoder has corrupted the Go 1.26 heap on maps
	"fmt"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// maxOpenCalls bounds the tool calls waiting for a result; beyond it the
// oldest is forgotten (its result then carries no name or latency).
const maxOpenCalls = 1024

const stateVersion = 1

// state is everything Parse needs to continue mid-file (MarshalState).
type state struct {
	Version int `json:"v"`
	// Cursor: the last offset parsed, the last sequence number, and the
	// event id of the latest user_message (the parent of every other event).
	agentevent.Cursor

	// Session envelope, from session_meta and turn_context.
	MetaSeen     int    `json:"meta_seen,omitempty"`
	SessionID    string `json:"session_id,omitempty"`
	OwnID        string `json:"own_id,omitempty"`
	AgentID      string `json:"agent_id,omitempty"`
	SubagentType string `json:"subagent_type,omitempty"`
	TurnLink     bool   `json:"turn_link,omitempty"`
	// Anchor is set on a subagent rollout that records no parent (/review):
	// its events ask the connector to nest it under the turn of the same
	// project's rollout whose event carries this anchor kind.
	Anchor     string    `json:"anchor,omitempty"`
	Cwd        string    `json:"cwd,omitempty"`
	AgentVer   string    `json:"version,omitempty"`
	GitBranch  string    `json:"git_branch,omitempty"`
	GitCommit  string    `json:"git_commit,omitempty"`
	Originator string    `json:"originator,omitempty"`
	Provider   string    `json:"provider,omitempty"`
	Model      string    `json:"model,omitempty"`
	TurnID     string    `json:"turn_id,omitempty"`
	Timestamp  time.Time `json:"timestamp"`
	// ParentHint is the parent session a caller named (SetParentSession) for
	// a subagent rollout that records none (/review).
	ParentHint string `json:"parent_hint,omitempty"`

	// SpawnPending: a thread_spawn child's session_meta named no
	// forked_from_id; the next record tells a fork from a fresh spawn
	// (Parser.forkOrSpawn).
	SpawnPending bool `json:"spawn_pending,omitempty"`
	// Fork replay of a thread_spawn child: records are skipped until the
	// child's own task_started (see Parser.replayEnds).
	Replaying bool `json:"replaying,omitempty"`
	// ReplayTurnOpen: a replayed turn started and did not end (the
	// parent's spawning turn is still open at the fork instant).
	ReplayTurnOpen bool `json:"replay_turn_open,omitempty"`
	// ReplayTurns counts the task_started of the replay; ReplayItems tells
	// whether any other replayed record came.
	ReplayTurns int  `json:"replay_turns,omitempty"`
	ReplayItems bool `json:"replay_items,omitempty"`

	// PromptText/PromptFrom/PromptMatched dedupe the two copies of a prompt
	// (response_item message and event_msg user_message).
	PromptText    string `json:"prompt_hash,omitempty"` // sha256 hex of the text
	PromptFrom    string `json:"prompt_from,omitempty"`
	PromptMatched bool   `json:"prompt_matched,omitempty"`

	// Usage: the cumulative total already attributed.
	Total usage `json:"total"`
	// Model request grouping (synthetic response ids).
	RespN        int64 `json:"resp_n"`
	RespOpen     bool  `json:"resp_open,omitempty"`
	RespHasUsage bool  `json:"resp_has_usage,omitempty"`
	// NoCarrier: a turn end or a compaction came and no model output since,
	// so a usage advance now has no response to carry it.
	NoCarrier bool `json:"no_carrier,omitempty"`

	// Prompts are the event ids of the latest prompts, oldest first, at
	// most maxRecentPrompts: the turns a thread_rolled_back may take back.
	Prompts []string `json:"prompts,omitempty"`
	// TriggerTurn is what the inter_agent_communication_metadata before an
	// inter-agent message said, until that message comes.
	TriggerTurn *bool `json:"trigger_turn,omitempty"`

	Calls   map[string]*openCall `json:"calls,omitempty"`
	CallSeq int64                `json:"call_seq"`
}

// openCall is a tool call waiting for its result, with what the structured
// *_end events told about it.
type openCall struct {
	Name       string    `json:"name"`
	Timestamp  time.Time `json:"ts"`
	Seq        int64     `json:"seq"`
	FilePath   string    `json:"file,omitempty"`
	Command    string    `json:"cmd,omitempty"`
	TestRunner string    `json:"test_runner,omitempty"`
	// Patch facts of an apply_patch call.
	ChangeType string `json:"change,omitempty"`
	Added      int64  `json:"added,omitempty"`
	Removed    int64  `json:"removed,omitempty"`
	// From exec_command_end / patch_apply_end / mcp_tool_call_end.
	EndSeen    bool   `json:"end,omitempty"`
	ExitCode   *int64 `json:"exit,omitempty"`
	DurationMs *int64 `json:"dur,omitempty"`
	Failed     bool   `json:"failed,omitempty"`
}

func newState() state {
	return state{Version: stateVersion, Cursor: agentevent.NewCursor(), Calls: map[string]*openCall{}}
}

// Order places the call among the calls of the file (agentevent.Ordered).
func (c *openCall) Order() int64 { return c.Seq }

func (s *state) addCall(id string, c *openCall) {
	// Decoded strings share the memory of their whole record: what the
	// state keeps is copied, or an open call would pin a multi-MB line.
	id = strings.Clone(id)
	c.Name, c.FilePath = strings.Clone(c.Name), strings.Clone(c.FilePath)
	s.CallSeq++
	c.Seq = s.CallSeq
	agentevent.AddOpenCall(s.Calls, id, c, maxOpenCalls)
}

// MarshalState returns everything Parse needs to continue mid-file.
func (p *Parser) MarshalState() ([]byte, error) {
	return json.Marshal(&p.st)
}

// UnmarshalState restores what MarshalState returned. Records at or before
// the restored offset are then dropped by Parse.
func (p *Parser) UnmarshalState(b []byte) error {
	st := newState()
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("codex parser state: %w", err)
	}
	if err := agentevent.CheckStateVersion("codex", st.Version, stateVersion); err != nil {
		return err
	}
	if st.Calls == nil {
		st.Calls = map[string]*openCall{}
	}
	p.st = st
	return nil
}
