// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package state

import (
	"encoding/json"
	"fmt"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
)

// Version is the version of the saved records' shape, bumped on any
// incompatible change of it: a record of another version reads as
// unreadable (its turns are lost, the rest goes on). storagecodec's format
// version covers how values are encoded, shared with the receiver; this
// one covers what the connector's records hold.
const Version = 1

// SessionRecord is the saved form of one session: its threads (with the
// markers of their emitted units), the metadata of its open units (their
// events are saved one by one, see EventKey), its subagent links and tool
// calls.
type SessionRecord struct {
	Version  int             `json:"version"`
	CaughtUp map[string]bool `json:"caught_up,omitempty"`
	Threads  []SavedThread   `json:"threads,omitempty"`
	Units    []SavedUnit     `json:"units,omitempty"`
	Links    []SavedLink     `json:"links,omitempty"`
	Calls    []SavedCall     `json:"calls,omitempty"`
}

// SavedUnit is an open unit; Events is how many of its events are saved.
type SavedUnit struct {
	Key         spanmodel.UnitKey `json:"key"`
	PrevPrompt  string            `json:"prev_prompt,omitempty"`
	Host        string            `json:"host,omitempty"`
	LastArrival int64             `json:"last_arrival"`
	Events      int               `json:"events"`
}

// SavedThread is a thread; Preamble holds its events waiting for a prompt
// (EncodeEvents).
type SavedThread struct {
	Key           spanmodel.ThreadKey `json:"key"`
	LastPrompt    string              `json:"last_prompt,omitempty"`
	LastPromptSeq int64               `json:"last_prompt_seq,omitempty"`
	Preamble      []byte              `json:"preamble,omitempty"`
	PreambleHost  string              `json:"preamble_host,omitempty"`
	LastArrival   int64               `json:"last_arrival"`
	Prompts       []PromptRef         `json:"prompts,omitempty"`
	Closed        []ClosedUnit        `json:"closed,omitempty"`
	ClosedSeq     int64               `json:"closed_seq,omitempty"`
}

// SavedLink is the link of a subagent thread.
type SavedLink struct {
	Thread spanmodel.ThreadKey `json:"thread"`
	Link   Link                `json:"link"`
}

// SavedCall is a tool call of the session.
type SavedCall struct {
	Call spanmodel.CallKey `json:"call"`
	Ref  CallRef           `json:"ref"`
}

// MarshalJSON writes a call as [call id, agent, prompt, subagent type]
// (trailing empty ones left out): the agent and session are the record's,
// and a session keeps hundreds of calls (those of its open turns and of
// the turns among its markers), rewritten whenever the session changes.
func (c SavedCall) MarshalJSON() ([]byte, error) {
	f := []string{c.Call.CallID, c.Ref.Unit.Thread.Agent, c.Ref.Unit.Prompt, c.Ref.SubagentType}
	for len(f) > 1 && f[len(f)-1] == "" {
		f = f[:len(f)-1]
	}
	return json.Marshal(f)
}

// UnmarshalJSON reads a call written by MarshalJSON; the reader of the
// record fills in its source and session.
func (c *SavedCall) UnmarshalJSON(b []byte) error {
	var f []string
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	if len(f) == 0 {
		return fmt.Errorf("saved call: empty")
	}
	f = append(f, "", "", "")
	*c = SavedCall{
		Call: spanmodel.CallKey{CallID: f[0]},
		Ref:  CallRef{Unit: spanmodel.UnitKey{Thread: spanmodel.ThreadKey{Agent: f[1]}, Prompt: f[2]}, SubagentType: f[3]},
	}
	return nil
}

// SavedIndex is one shard of the index of active sessions.
type SavedIndex struct {
	Version  int                 `json:"version"`
	Sessions []spanmodel.SessKey `json:"sessions"`
}
