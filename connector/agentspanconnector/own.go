// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"strings"
	"unsafe"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// ownStrings gives an event's strings memory of their own, in one
// allocation per event.
//
// The receiver's parsers decode a record with strings that share memory
// with a copy of the whole record (internal/jsonx), and the log record
// hands those very strings over. The connector keeps an event's strings
// long after the record: in an open turn, and in what a thread, a tool
// call or a link remembers (ids kept for hours, in up to
// max_cached_sessions sessions). Each kept id would keep its whole record
// alive — tool output, file contents, base64 images included, though the
// text was dropped — so the connector's memory would follow the size of
// the records read, not the number of events held.
func ownStrings(ev *agentevent.Event) {
	fields := [...]*string{
		&ev.SchemaVersion, &ev.ProjectHash, &ev.ProjectRoot, &ev.SessionID, &ev.EventID,
		&ev.ParentEventID, &ev.Text, &ev.ToolName, &ev.ToolCallID, &ev.FilePath,
		&ev.FileLanguage, &ev.Model, &ev.AgentID, &ev.AgentVersion, &ev.GitBranch,
		&ev.SubagentType, &ev.ParentToolCallID, &ev.SpawnedAgentID, &ev.Entrypoint,
		&ev.Provider, &ev.ResponseID, &ev.FinishReason, &ev.ErrorType, &ev.Status,
		&ev.LogFile, &ev.Unparsed,
		(*string)(&ev.Source), (*string)(&ev.Type), (*string)(&ev.Role), (*string)(&ev.Channel),
		(*string)(&ev.ToolStatus), (*string)(&ev.FileOp),
	}
	n := 0
	for _, f := range fields {
		n += len(*f)
	}
	for k, v := range ev.Attributes {
		n += len(k)
		if s, ok := v.(string); ok {
			n += len(s)
		}
	}
	if n == 0 {
		return
	}
	var b strings.Builder
	b.Grow(n)
	for _, f := range fields {
		b.WriteString(*f)
	}
	type kv struct {
		k string
		v any
	}
	attrs := make([]kv, 0, len(ev.Attributes))
	for k, v := range ev.Attributes {
		attrs = append(attrs, kv{k, v})
		b.WriteString(k)
		if s, ok := v.(string); ok {
			b.WriteString(s)
		}
	}
	all := b.String()
	off := 0
	take := func(l int) string {
		if l == 0 {
			return ""
		}
		s := all[off : off+l]
		off += l
		return s
	}
	for _, f := range fields {
		*f = take(len(*f))
	}
	if len(attrs) > 0 {
		m := make(map[string]any, len(attrs))
		for _, a := range attrs {
			k := take(len(a.k))
			if s, ok := a.v.(string); ok {
				m[k] = take(len(s))
			} else {
				m[k] = a.v
			}
		}
		ev.Attributes = m
	}
}

// ownAll gives strings, together, one allocation of their own.
func ownAll(ss ...*string) {
	n := 0
	for _, s := range ss {
		n += len(*s)
	}
	if n == 0 {
		return
	}
	var b strings.Builder
	b.Grow(n)
	for _, s := range ss {
		b.WriteString(*s)
	}
	all, off := b.String(), 0
	for _, s := range ss {
		if l := len(*s); l > 0 {
			*s = all[off : off+l]
			off += l
		}
	}
}

// The keys and ids below outlive the event they were taken from (a
// thread, a tool call, a link or a marker is kept after its unit went out,
// a session's key while it is out of memory): each is given memory of its
// own when it is kept, or it would keep all of its event's strings (an
// event's are one allocation, see ownStrings) — with include_content, the
// prompt's text and a tool call's arguments.

func ownKey(sk sessKey) sessKey {
	ownAll((*string)(&sk.Source), &sk.Session)
	return sk
}

func ownThread(k threadKey) threadKey {
	ownAll((*string)(&k.Source), &k.Session, &k.Agent)
	return k
}

func ownCall(c callKey) callKey {
	ownAll((*string)(&c.Source), &c.Session, &c.CallID)
	return c
}

func ownLink(l link) link {
	ownAll(&l.CallID, (*string)(&l.Parent.Thread.Source), &l.Parent.Thread.Session, &l.Parent.Thread.Agent, &l.Parent.Prompt, &l.Anchor, &l.Project)
	return l
}

func ownAnchor(an anchor) anchor {
	ownAll((*string)(&an.Source), &an.Kind, &an.Project, (*string)(&an.Unit.Thread.Source), &an.Unit.Thread.Session, &an.Unit.Thread.Agent, &an.Unit.Prompt)
	return an
}

func ownRef(r callRef) callRef {
	ownAll((*string)(&r.Unit.Thread.Source), &r.Unit.Thread.Session, &r.Unit.Thread.Agent, &r.Unit.Prompt, &r.SubagentType)
	return r
}

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

// key gives a unit key memory of the unit's.
func (m *unitMemory) key(k unitKey) unitKey {
	k.Thread.Source = agentevent.Source(m.str(string(k.Thread.Source)))
	k.Thread.Session = m.str(k.Thread.Session)
	k.Thread.Agent = m.str(k.Thread.Agent)
	k.Prompt = m.str(k.Prompt)
	return k
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
