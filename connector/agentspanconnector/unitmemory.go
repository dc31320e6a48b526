// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"strings"
	"unsafe"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// unitMemory is the memory an open unit gives its events' strings, in
// place of ownStrings' allocation per event: the strings are copied into
// chunks the unit holds, and a string equal to the same field of the
// unit's previous event is that event's (the session, the file, the
// project, the model repeat from event to event). Its lifetime is the
// unit's: only the unit's events (and its key) point into its chunks, so
// once the unit went out none of them is reachable from the connector.
type unitMemory struct {
	// chunk is the free part of the current chunk; next the size of the
	// next one (chunks double up to maxChunk).
	chunk []byte
	next  int
	// boxed are the attribute values of the unit's events as stored in
	// Event.Attributes, by value: a value that repeats is boxed once.
	boxed map[string]any
}

const (
	minChunk = 512
	maxChunk = 16 << 10
)

// str gives s memory of the unit's.
func (m *unitMemory) str(s string) string {
	if s == "" {
		return ""
	}
	if len(s) > cap(m.chunk)-len(m.chunk) {
		n := max(m.next, minChunk)
		if len(s) > n/4 {
			// A long string (a path, a command) gets memory of its own
			// rather than leave most of a chunk unused.
			return strings.Clone(s)
		}
		m.chunk = make([]byte, 0, n)
		m.next = min(2*n, maxChunk)
	}
	off := len(m.chunk)
	m.chunk = append(m.chunk, s...)
	// The bytes before len(m.chunk) are never written again.
	return unsafe.String(&m.chunk[off], len(s))
}

// field gives *f memory of the unit's: prev's when equal.
func (m *unitMemory) field(f *string, prev string) {
	switch s := *f; s {
	case "":
	case prev:
		*f = prev
	default:
		*f = m.str(s)
	}
}

// own gives the strings of ev, an event the unit is to hold, memory of
// the unit's; prev is the unit's latest event (nil when none). The
// attribute map is ev's own (Decode makes one per event): its keys and
// values are replaced in place.
func (m *unitMemory) own(ev, prev *agentevent.Event, keys *keyInterner) {
	if prev == nil {
		prev = &agentevent.Event{}
	}
	m.field(&ev.SchemaVersion, prev.SchemaVersion)
	m.field((*string)(&ev.Source), string(prev.Source))
	m.field(&ev.ProjectHash, prev.ProjectHash)
	m.field(&ev.ProjectRoot, prev.ProjectRoot)
	m.field(&ev.SessionID, prev.SessionID)
	m.field(&ev.EventID, prev.EventID)
	m.field(&ev.ParentEventID, prev.ParentEventID)
	m.field((*string)(&ev.Type), string(prev.Type))
	m.field((*string)(&ev.Role), string(prev.Role))
	m.field((*string)(&ev.Channel), string(prev.Channel))
	m.field(&ev.Text, prev.Text)
	m.field(&ev.ToolName, prev.ToolName)
	m.field(&ev.ToolCallID, prev.ToolCallID)
	m.field((*string)(&ev.ToolStatus), string(prev.ToolStatus))
	m.field(&ev.FilePath, prev.FilePath)
	m.field(&ev.FileLanguage, prev.FileLanguage)
	m.field((*string)(&ev.FileOp), string(prev.FileOp))
	m.field(&ev.Model, prev.Model)
	m.field(&ev.AgentID, prev.AgentID)
	m.field(&ev.AgentVersion, prev.AgentVersion)
	m.field(&ev.GitBranch, prev.GitBranch)
	m.field(&ev.SubagentType, prev.SubagentType)
	m.field(&ev.ParentToolCallID, prev.ParentToolCallID)
	m.field(&ev.SpawnedAgentID, prev.SpawnedAgentID)
	m.field(&ev.Entrypoint, prev.Entrypoint)
	m.field(&ev.Provider, prev.Provider)
	m.field(&ev.ResponseID, prev.ResponseID)
	m.field(&ev.FinishReason, prev.FinishReason)
	m.field(&ev.ErrorType, prev.ErrorType)
	m.field(&ev.Status, prev.Status)
	m.field(&ev.LogFile, prev.LogFile)
	m.field(&ev.Unparsed, prev.Unparsed)
	for k, v := range ev.Attributes {
		if s, ok := v.(string); ok {
			v = m.box(s)
		}
		// Assigning to a key the map has replaces the stored key too (the
		// runtime updates string keys, whose memory may differ).
		ev.Attributes[keys.intern(k)] = v
	}
}

// box is s, with memory of the unit's, as an attribute value.
func (m *unitMemory) box(s string) any {
	if v, ok := m.boxed[s]; ok {
		return v
	}
	if m.boxed == nil {
		m.boxed = map[string]any{}
	}
	s = m.str(s)
	var v any = s
	m.boxed[s] = v
	return v
}

// keyInterner holds one copy of each attribute key the events carry: the
// keys are the parsers' names, a few dozen, shared by every unit. It is
// bounded, so that keys made of data (none is) cannot grow it without end:
// past maxKeys a key it does not hold is copied.
type keyInterner struct {
	keys map[string]string
}

const maxKeys = 4096

func (ki *keyInterner) intern(k string) string {
	if s, ok := ki.keys[k]; ok {
		return s
	}
	s := strings.Clone(k)
	if len(ki.keys) < maxKeys {
		if ki.keys == nil {
			ki.keys = map[string]string{}
		}
		ki.keys[s] = s
	}
	return s
}
