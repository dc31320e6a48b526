// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package spanmodel

import (
	"crypto/sha256"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// ThreadKey identifies one conversation thread: a session's main agent
// (Agent "") or one of its subagents (Agent = the vendor agent id).
type ThreadKey struct {
	Source  agentevent.Source `json:"source"`
	Session string            `json:"session"`
	Agent   string            `json:"agent,omitempty"`
}

// Subagent reports whether the thread is a subagent's.
func (k ThreadKey) Subagent() bool { return k.Agent != "" }

// UnitKey identifies what becomes one span subtree: a main-thread turn
// (Prompt = the event id of its user_message) or the whole run of a
// subagent thread (Prompt "").
type UnitKey struct {
	Thread ThreadKey `json:"thread"`
	Prompt string    `json:"prompt,omitempty"`
}

// CallKey identifies a tool call within a session.
type CallKey struct {
	Source  agentevent.Source `json:"source"`
	Session string            `json:"session"`
	CallID  string            `json:"call_id"`
}

// Ids are hashes of what identifies the thing in the agent's own logs, so
// re-reading a file (or restarting the collector) never yields a different
// trace. Span ids hash the session, the thread and the span's own key (not
// the trace id), so a subagent's spans keep their ids whichever trace they
// end up in.
func digest(kind string, th ThreadKey, key string) [32]byte {
	h := sha256.New()
	for _, s := range []string{kind, string(th.Source), th.Session, th.Agent, key} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

func traceIDFrom(sum [32]byte) pcommon.TraceID {
	var id pcommon.TraceID
	copy(id[:], sum[:16])
	if id.IsEmpty() {
		id[15] = 1
	}
	return id
}

func spanIDFrom(sum [32]byte) pcommon.SpanID {
	var id pcommon.SpanID
	copy(id[:], sum[:8])
	if id.IsEmpty() {
		id[7] = 1
	}
	return id
}

// TurnTraceID is the trace of the turn opened by prompt in a main thread.
func TurnTraceID(th ThreadKey, prompt string) pcommon.TraceID {
	return traceIDFrom(digest("turn", th, prompt))
}

// OrphanTraceID is the trace of a subagent run whose spawning tool call
// never became known.
func OrphanTraceID(th ThreadKey) pcommon.TraceID {
	return traceIDFrom(digest("subagent", th, ""))
}

// UnitSpanID is the invoke_agent span of a unit: the turn root, or the
// subagent's span.
func UnitSpanID(k UnitKey) pcommon.SpanID {
	if k.Thread.Subagent() {
		return spanIDFrom(digest("invoke_agent", k.Thread, ""))
	}
	return spanIDFrom(digest("invoke_agent", k.Thread, k.Prompt))
}

// ChatSpanID is the chat span of a model response of a thread.
func ChatSpanID(th ThreadKey, responseKey string) pcommon.SpanID {
	return spanIDFrom(digest("chat", th, responseKey))
}

// ToolSpanID is the execute_tool span of a tool call of a thread.
func ToolSpanID(th ThreadKey, callID string) pcommon.SpanID {
	return spanIDFrom(digest("execute_tool", th, callID))
}

// SessKey identifies one session of one agent.
type SessKey struct {
	Source  agentevent.Source `json:"source"`
	Session string            `json:"session"`
}

// Sess is the session of the thread.
func (k ThreadKey) Sess() SessKey { return SessKey{Source: k.Source, Session: k.Session} }

// Sess is the session of the call.
func (k CallKey) Sess() SessKey { return SessKey{Source: k.Source, Session: k.Session} }
