// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector // import "github.com/agentotel/agentotel/connector/agentspanconnector"

import (
	"crypto/sha256"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// threadKey identifies one conversation thread: a session's main agent
// (Agent "") or one of its subagents (Agent = the vendor agent id).
type threadKey struct {
	Source  agentevent.Source `json:"source"`
	Session string            `json:"session"`
	Agent   string            `json:"agent,omitempty"`
}

// subagent reports whether the thread is a subagent's.
func (k threadKey) subagent() bool { return k.Agent != "" }

// unitKey identifies what becomes one span subtree: a main-thread turn
// (Prompt = the event id of its user_message) or the whole run of a
// subagent thread (Prompt "").
type unitKey struct {
	Thread threadKey `json:"thread"`
	Prompt string    `json:"prompt,omitempty"`
}

// callKey identifies a tool call within a session.
type callKey struct {
	Source  agentevent.Source `json:"source"`
	Session string            `json:"session"`
	CallID  string            `json:"call_id"`
}

// Ids are hashes of what identifies the thing in the agent's own logs, so
// re-reading a file (or restarting the collector) never yields a different
// trace. Span ids hash the session, the thread and the span's own key (not
// the trace id), so a subagent's spans keep their ids whichever trace they
// end up in.
func digest(kind string, th threadKey, key string) [32]byte {
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

// turnTraceID is the trace of the turn opened by prompt in a main thread.
func turnTraceID(th threadKey, prompt string) pcommon.TraceID {
	return traceIDFrom(digest("turn", th, prompt))
}

// orphanTraceID is the trace of a subagent run whose spawning tool call
// never became known.
func orphanTraceID(th threadKey) pcommon.TraceID {
	return traceIDFrom(digest("subagent", th, ""))
}

// unitSpanID is the invoke_agent span of a unit: the turn root, or the
// subagent's span.
func unitSpanID(k unitKey) pcommon.SpanID {
	if k.Thread.subagent() {
		return spanIDFrom(digest("invoke_agent", k.Thread, ""))
	}
	return spanIDFrom(digest("invoke_agent", k.Thread, k.Prompt))
}

func chatSpanID(th threadKey, responseKey string) pcommon.SpanID {
	return spanIDFrom(digest("chat", th, responseKey))
}

func toolSpanID(th threadKey, callID string) pcommon.SpanID {
	return spanIDFrom(digest("execute_tool", th, callID))
}
