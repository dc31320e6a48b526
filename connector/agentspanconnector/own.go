// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"strings"

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
