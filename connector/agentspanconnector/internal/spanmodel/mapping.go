// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package spanmodel

import (
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/metadata"
	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/textutil"
)

// Attribute values of the spans: operation names, the tool type, turn
// statuses. The keys are agentevent's; docs/design/span-model.md, section
// Attributes, lists them all.
const (
	opInvokeAgent = "invoke_agent"
	OpChat        = "chat"
	opExecuteTool = "execute_tool"

	// toolTypeFunction is gen_ai.tool.type for tools the agent runs itself
	// on the user's machine (every tool call in a session log).
	toolTypeFunction = "function"
	// subagentName names a subagent whose type the log does not tell.
	subagentName = "subagent"

	StatusCompleted   = "completed"
	StatusInterrupted = "interrupted"
	StatusError       = "error"
	StatusAbandoned   = "abandoned"
	StatusInProgress  = "in_progress"
)

// MapOptions are the settings the mapping reads: whether spans carry
// content, and how many bytes of it per attribute.
type MapOptions struct {
	IncludeContent   bool
	MaxContentLength int
}

// Group is a complete span tree to emit.
type Group struct {
	TraceID      pcommon.TraceID
	ParentSpanID pcommon.SpanID // of the top run: set for a subagent whose spawning span went out earlier
	Root         *Tree
	Reason       CloseReason
}

// Tree is a turn or subagent run with the subagent runs its tool calls spawned.
type Tree struct {
	Key        UnitKey
	Events     []agentevent.Event // in order
	PrevPrompt string
	Host       string
	// nameHint is the subagent type the spawning call asked for, used when
	// the subagent's own events do not name it.
	NameHint string
	// late: the unit went out before; these are events of it that came
	// after (its own span is not emitted again).
	Late     bool
	Children []Child
}

// session is the run's own session id (gen_ai.conversation.id): the
// vendor's id of the thread, which for a subagent with an id of its own is
// not the session the tree is keyed by.
func (t *Tree) session() string {
	if len(t.Events) > 0 && t.Events[0].SessionID != "" {
		return t.Events[0].SessionID
	}
	return t.Key.Thread.Session
}

// parentSession is the session a subagent with an id of its own was
// spawned from, "" for any other run.
func (t *Tree) parentSession() string {
	for i := range t.Events {
		if p, ok := t.Events[i].Attributes[agentevent.AttrParentSessionID].(string); ok && p != "" {
			return p
		}
	}
	return ""
}

// orphan tells whether the run is a subagent whose parent's log is absent
// (agentevent.AttrSubagentOrphan): a session of its own.
func (t *Tree) orphan() bool {
	for i := range t.Events {
		if o, ok := t.Events[i].Attributes[agentevent.AttrSubagentOrphan].(bool); ok && o {
			return true
		}
	}
	return false
}

// Child is a subagent run and the tool call that spawned it.
type Child struct {
	CallID string // the spawning tool call; "" for a run linked to the turn itself
	Run    *Tree
}

// MapGroup turns a complete group into one ResourceSpans. It is
// deterministic: the same group always yields the same spans.
func MapGroup(g Group, o MapOptions) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	setResource(rs.Resource(), g.Root)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(metadata.ScopeName)
	sc := scratchPool.Get().(*scratch)
	defer sc.release()
	m := &mapper{opts: o, traceID: g.TraceID, spans: ss.Spans(), reason: g.Reason, scratch: sc}
	m.run(g.Root, g.ParentSpanID)
	return td
}

func setResource(res pcommon.Resource, t *Tree) {
	a := res.Attributes()
	a.PutStr(agentevent.ResourceServiceName, t.Key.Thread.Source.ServiceName())
	version := ""
	if p := promptIndex(t); p >= 0 {
		version = t.Events[p].AgentVersion
	}
	for i := 0; version == "" && i < len(t.Events); i++ {
		version = t.Events[i].AgentVersion
	}
	if version != "" {
		a.PutStr(agentevent.ResourceServiceVersion, version)
	}
	if t.Host != "" {
		a.PutStr(agentevent.ResourceHostName, t.Host)
	}
}

type mapper struct {
	opts    MapOptions
	traceID pcommon.TraceID
	spans   ptrace.SpanSlice
	reason  CloseReason
	*scratch
}

// scratch is the memory a mapping works in, reused from one to the next:
// attrs builds the attributes of one span or span event after another;
// rest, chatAttrs and toolAttrs are those of chat and tool, emptied for
// each span.
type scratch struct {
	attrs     attrBuilder
	rest      usageAttrs
	chatAttrs map[string]any
	toolAttrs map[string]any
}

var scratchPool = sync.Pool{New: func() any {
	return &scratch{rest: usageAttrs{}, chatAttrs: map[string]any{}, toolAttrs: map[string]any{}}
}}

// release empties the scratch (it holds no event's memory past the
// mapping) and puts it back.
func (sc *scratch) release() {
	clear(sc.attrs.list)
	sc.attrs.list = sc.attrs.list[:0]
	clear(sc.attrs.keys[:cap(sc.attrs.keys)])
	clear(sc.rest)
	clear(sc.chatAttrs)
	clear(sc.toolAttrs)
	scratchPool.Put(sc)
}

// chatGroup is the events of one model response.
type chatGroup struct {
	key     string
	members []int
}

// toolPair is a tool call and its result.
type toolPair struct {
	key          string
	call, result *agentevent.Event
}

// isConversation reports whether an event is part of the exchange with the
// model (as opposed to bookkeeping around it).
func isConversation(t agentevent.EventType) bool {
	return t == agentevent.TypeUserMessage || t == agentevent.TypeToolResult || isAssistantType(t)
}

func isAssistantType(t agentevent.EventType) bool {
	return t == agentevent.TypeAssistantMessage || t == agentevent.TypeReasoning || t == agentevent.TypeToolCall
}

// nativeCall reports whether an event is a tool call mapped from an agent's
// own telemetry (agentevent.AttrOrigin). Such a call names no model
// response: the model call that asked for it is an event of its own, with
// its own usage, so the call gets no chat span of its own either.
func nativeCall(ev *agentevent.Event) bool {
	return ev.Type == agentevent.TypeToolCall && ev.Attributes[agentevent.AttrOrigin] == agentevent.OriginNative
}

// promptLost reports whether t is a main turn of an agent's own telemetry
// (agentevent.AttrOrigin) that has not gone out before and whose prompt
// never came: it gets a root span all the same, starting with the earliest
// of its spans. A turn read from files always has its prompt in the group unless
// the group is more of a turn that went out.
func promptLost(t *Tree) bool {
	if t.Late || t.Key.Thread.Subagent() || t.Key.Prompt == "" || len(t.Events) == 0 {
		return false
	}
	return t.Events[0].Attributes[agentevent.AttrOrigin] == agentevent.OriginNative
}

// promptIndex is the index of the run's prompt: a main turn's user_message,
// a subagent's first user_message; -1 when it is not there.
func promptIndex(t *Tree) int {
	for i := range t.Events {
		ev := &t.Events[i]
		if ev.Type != agentevent.TypeUserMessage {
			continue
		}
		if t.Key.Thread.Subagent() || ev.EventID == t.Key.Prompt {
			return i
		}
	}
	return -1
}

// run emits the spans of one turn or subagent run under parent and returns
// what it did. A main turn whose prompt is not in the group (events that
// arrived after the turn went out) has no root span of its own: its spans
// join the deterministic root id that went out before. The exception is a
// turn of an agent's own telemetry that never went out: its prompt record
// may have been sent before the collector listened, or lost on the way,
// and the events still name their turn (promptLost).
func (m *mapper) run(t *Tree, parent pcommon.SpanID) rollup {
	th := t.Key.Thread
	self := UnitSpanID(t.Key)
	evs := t.Events
	prompt := promptIndex(t)
	lost := prompt < 0 && promptLost(t)
	hasSpan := prompt >= 0 || th.Subagent() || lost
	var span ptrace.Span
	first := m.spans.Len() // the run's own span, then its children
	if hasSpan {
		span = m.spans.AppendEmpty() // first, so a run's own span precedes its children
	}
	var r rollup
	var start time.Time
	if prompt >= 0 {
		start = evs[prompt].Timestamp
	}
	for i := range evs {
		ts := evs[i].Timestamp
		if start.IsZero() {
			start = ts
		}
		if ts.After(r.end) {
			r.end = ts
		}
	}

	// Classify: model responses, tool calls, and the rest (span events).
	var chats []*chatGroup
	chatByKey := map[string]*chatGroup{}
	var tools []*toolPair
	toolByCall := map[string]*toolPair{}
	var others []int
	fallback := ""
	for i := range evs {
		ev := &evs[i]
		if i == prompt {
			fallback = ""
			continue
		}
		inChat := false
		if ev.Type != agentevent.TypeUserMessage && ev.Type != agentevent.TypeToolResult && !nativeCall(ev) {
			key := ev.ResponseID
			if key == "" && isAssistantType(ev.Type) {
				// No response id: a run of assistant events is one response.
				if fallback == "" {
					fallback = "event:" + ev.EventID
				}
				key = fallback
			} else {
				fallback = ""
			}
			if key != "" {
				g := chatByKey[key]
				if g == nil {
					g = &chatGroup{key: key}
					chatByKey[key] = g
					chats = append(chats, g)
				}
				g.members = append(g.members, i)
				inChat = true
			}
		} else {
			fallback = ""
		}
		switch ev.Type {
		case agentevent.TypeToolCall, agentevent.TypeToolResult:
			key := ev.ToolCallID
			if key == "" {
				key = "event:" + ev.EventID
			}
			p := toolByCall[key]
			if p == nil {
				p = &toolPair{key: key}
				toolByCall[key] = p
				tools = append(tools, p)
			}
			if ev.Type == agentevent.TypeToolCall {
				p.call = ev
			} else {
				p.result = ev
			}
			continue
		}
		if !inChat {
			others = append(others, i)
		}
	}

	for _, g := range chats {
		if m.chat(t, g, self, &r) {
			continue
		}
		// An error notice that is not a model call (no usage): an event.
		others = append(others, g.members...)
	}
	for _, i := range others {
		if evs[i].ErrorType != "" {
			r.apiErrors++ // an error notice: API failure, retried call, hook error
		}
	}
	for _, p := range tools {
		m.tool(t, p, self, &r)
	}
	for _, c := range t.Children {
		under := self // a turn-linked subagent nests under the run's own span
		if c.CallID != "" {
			under = ToolSpanID(th, c.CallID)
		}
		cr := m.run(c.Run, under)
		r.add(cr)
		r.subagents++
	}

	if !hasSpan {
		return r
	}
	name := th.Source.ServiceName()
	if th.Subagent() {
		name = textutil.FirstNonEmpty(t.NameHint, subagentName)
		for i := range evs {
			if evs[i].SubagentType != "" {
				name = evs[i].SubagentType
				break
			}
		}
	}
	span.SetTraceID(m.traceID)
	span.SetSpanID(self)
	span.SetParentSpanID(parent)
	span.SetName(opInvokeAgent + " " + name)
	span.SetKind(ptrace.SpanKindInternal)
	if lost {
		// No prompt to start at: the root starts with the earliest of its
		// spans (a model call stated its duration: it began before its
		// record was sent).
		for i := first + 1; i < m.spans.Len(); i++ {
			if st := m.spans.At(i).StartTimestamp().AsTime(); st.Before(start) {
				start = st
			}
		}
	}
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(maxTime(start, r.end)))
	// Every key below is a constant, each put once.
	b := &m.attrs
	b.add(strAttr(agentevent.AttrOperationName, opInvokeAgent))
	b.add(strAttr(agentevent.AttrAgentName, name))
	if th.Subagent() {
		b.add(strAttr(agentevent.AttrAgentID, th.Agent))
	}
	b.add(strAttr(agentevent.AttrSessionID, t.session()))
	if parent := t.parentSession(); parent != "" {
		b.add(strAttr(agentevent.AttrParentSessionID, parent))
	}
	if th.Subagent() && t.orphan() {
		b.add(trueAttr(agentevent.AttrSubagentOrphan))
	}
	b.addStr(agentevent.AttrProvider, r.firstProvide)
	b.addStr(agentevent.AttrRequestModel, r.firstModel)
	ctx := evs[0]
	if prompt >= 0 {
		ctx = evs[prompt]
	}
	b.addStr(agentevent.AttrGitBranch, ctx.GitBranch)
	b.addStr(agentevent.AttrProjectRoot, ctx.ProjectRoot)
	b.addStr(agentevent.AttrEntrypoint, ctx.Entrypoint)
	if prompt >= 0 {
		b.addStr(agentevent.AttrEventID, evs[prompt].EventID)
	}
	if lost { // no prompt: no event id above
		b.add(strAttr(agentevent.AttrEventID, t.Key.Prompt))
		b.add(trueAttr(agentevent.AttrTurnPromptMissing))
	}

	status, errType := runStatus(evs, m.reason)
	b.add(strAttr(agentevent.AttrTurnStatus, status))
	if rolledBack(evs) {
		b.add(trueAttr(agentevent.AttrTurnRolledBack))
	}
	if status == StatusError {
		b.add(strAttr(agentevent.AttrErrorType, errType))
		span.Status().SetCode(ptrace.StatusCodeError)
		span.Status().SetMessage(errType)
	}
	prevPrompt := ""
	if !th.Subagent() {
		prevPrompt = t.PrevPrompt
	}
	putRollup(b, &r, start, r.end, prevPrompt)
	if m.opts.IncludeContent && prompt >= 0 && evs[prompt].Text != "" {
		cb := contentBudget{left: m.opts.MaxContentLength}
		text, _ := cb.take(evs[prompt].Text)
		b.add(strAttr(agentevent.AttrInputMessages, messagesJSON([]Message{{Role: "user", Parts: []MessagePart{{Type: "text", Content: text}}}})))
	}
	b.into(span.Attributes())

	if prevPrompt != "" {
		l := span.Links().AppendEmpty()
		prev := UnitKey{Thread: th, Prompt: t.PrevPrompt}
		l.SetTraceID(TurnTraceID(th, t.PrevPrompt))
		l.SetSpanID(UnitSpanID(prev))
		l.Attributes().PutStr(agentevent.AttrLinkType, "previous_turn")
	}
	for _, i := range others {
		m.addSpanEvent(span, &evs[i])
	}
	return r
}

// rolledBack tells whether an event of the run says the run was taken back
// out of the conversation (agentevent.AttrTurnRolledBack): it still
// happened and spent its tokens, so it stays a trace, marked.
func rolledBack(evs []agentevent.Event) bool {
	for i := range evs {
		if v, ok := evs[i].Attributes[agentevent.AttrTurnRolledBack].(bool); ok && v {
			return true
		}
	}
	return false
}
