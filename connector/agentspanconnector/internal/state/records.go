// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package state

import (
	"encoding/json"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
	"github.com/agentotel/agentotel/internal/agentevent"
)

// The values below are held in memory by the connector and saved as they
// are, inside a session's record (Link, CallRef, ClosedUnit, PromptRef) or
// in the list of anchors (Anchor).

// Link ties a subagent thread to the tool call that spawned it. Parent is
// known once the call's unit is (Resolved). A turn link (Turn) ties it to
// the main-thread turn open at At instead: its span's parent is that turn's
// root.
type Link struct {
	CallID   string            `json:"call_id"`
	Parent   spanmodel.UnitKey `json:"parent"`
	Resolved bool              `json:"resolved"`
	Turn     bool              `json:"turn,omitempty"`
	At       time.Time         `json:"at,omitzero"`
	// Anchor, on an unresolved turn link, is the anchor kind to look for
	// in another session of Project (agentevent.SubagentLinkAnchor).
	Anchor  string `json:"anchor,omitempty"`
	Project string `json:"project,omitempty"`
}

// Anchor is a main-thread event other sessions' subagents can be linked
// to (agentevent.AttrSubagentAnchor): the turn it belongs to, when.
type Anchor struct {
	Source  agentevent.Source `json:"source"`
	Kind    string            `json:"kind"`
	Project string            `json:"project"`
	At      time.Time         `json:"at"`
	Unit    spanmodel.UnitKey `json:"unit"`
}

// CallRef is where a tool call is, and the subagent type it asked for
// (which a subagent's own records may not repeat).
type CallRef struct {
	Unit         spanmodel.UnitKey `json:"unit"`
	SubagentType string            `json:"subagent_type,omitempty"`
}

// PromptRef is one prompt of a main thread.
type PromptRef struct {
	At time.Time `json:"at"`
	ID string    `json:"id"`
}

// ClosedUnit is the marker an emitted unit leaves in its thread: the trace
// it went into, and the few span ids a later event of it could produce
// again (its own invoke_agent span, the tool calls still open, its last
// model response), which are therefore never emitted a second time.
type ClosedUnit struct {
	Prompt string           `json:"prompt,omitempty"`
	Trace  pcommon.TraceID  `json:"trace"`
	Skip   []pcommon.SpanID `json:"skip,omitempty"`
}

// MarshalJSON writes a marker with its ids as bytes (base64): the trace as
// "t", the span ids to skip one after another as "s". As JSON arrays of
// numbers they would be a fifth of the bytes of every session record,
// which is rewritten whenever the session changes; base64 takes a third of
// that.
func (m ClosedUnit) MarshalJSON() ([]byte, error) {
	skip := make([]byte, 0, len(m.Skip)*len(pcommon.SpanID{}))
	for _, id := range m.Skip {
		skip = append(skip, id[:]...)
	}
	return json.Marshal(closedUnitJSON{Prompt: m.Prompt, T: m.Trace[:], S: skip})
}

// UnmarshalJSON reads a marker written by MarshalJSON.
func (m *ClosedUnit) UnmarshalJSON(b []byte) error {
	var w closedUnitJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var span pcommon.SpanID
	if len(w.T) != len(m.Trace) || len(w.S)%len(span) != 0 {
		return fmt.Errorf("closed unit: a trace id of %d bytes, span ids of %d", len(w.T), len(w.S))
	}
	*m = ClosedUnit{Prompt: w.Prompt}
	copy(m.Trace[:], w.T)
	for i := 0; i < len(w.S); i += len(span) {
		copy(span[:], w.S[i:])
		m.Skip = append(m.Skip, span)
	}
	return nil
}

// closedUnitJSON is a ClosedUnit as stored.
type closedUnitJSON struct {
	Prompt string `json:"prompt,omitempty"`
	T      []byte `json:"t"`
	S      []byte `json:"s,omitempty"`
}
