// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector // import "github.com/agentotel/agentotel/connector/agentspanconnector"

import (
	"maps"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/metadata"
	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/textutil"
)

// This file is the pure part of the connector: a complete group of events
// (a turn with its subagent runs) in, spans out. No clock, no I/O, no state.

// Attribute keys the connector emits beyond those agentevent already names.
// The README lists them all.
const (
	attrOperationName    = "gen_ai.operation.name"
	attrAgentName        = "gen_ai.agent.name"
	attrRequestModel     = "gen_ai.request.model"
	attrToolType         = "gen_ai.tool.type"
	attrInputMessages    = "gen_ai.input.messages"
	attrOutputMessages   = "gen_ai.output.messages"
	attrToolCallArgs     = "gen_ai.tool.call.arguments"
	attrToolCallResult   = "gen_ai.tool.call.result"
	attrTurnStatus       = "agent.turn.status"
	attrTurnModelCalls   = "agent.turn.model_calls"
	attrTurnToolCalls    = "agent.turn.tool_calls"
	attrTurnToolErrors   = "agent.turn.tool_errors"
	attrTurnFilesChanged = "agent.turn.files_changed"
	attrTurnSubagents    = "agent.turn.subagents"
	attrTurnSummary      = "agent.turn.summary"
	attrTurnUsagePrefix  = "agent.turn.usage."
	attrLinkType         = "agent.link.type"
	attrLate             = "agent.span.late"

	opInvokeAgent = "invoke_agent"
	opChat        = "chat"
	opExecuteTool = "execute_tool"

	// toolTypeFunction is gen_ai.tool.type for tools the agent runs itself
	// on the user's machine (every tool call in a session log).
	toolTypeFunction = "function"
	// subagentName names a subagent whose type the log does not tell.
	subagentName = "subagent"

	statusCompleted   = "completed"
	statusInterrupted = "interrupted"
	statusError       = "error"
	statusAbandoned   = "abandoned"
	statusInProgress  = "in_progress"

	// errorTypeTool / errorTypeAgent are error.type when a failure carries
	// no classification of its own.
	errorTypeTool  = "tool_error"
	errorTypeAgent = "agent_error"
)

// Span event names.
const (
	eventReasoning    = "agent.reasoning"
	eventCompaction   = "agent.compaction"
	eventFileSnapshot = "agent.file_snapshot"
	eventSummary      = "agent.session_summary"
	eventAPIError     = "agent.api_error"
)

type mapOptions struct {
	includeContent   bool
	maxContentLength int
}

// group is a complete span tree to emit.
type group struct {
	traceID      pcommon.TraceID
	parentSpanID pcommon.SpanID // of the top run: set for a subagent whose spawning span went out earlier
	root         *tree
	reason       closeReason
}

// tree is a turn or subagent run with the subagent runs its tool calls spawned.
type tree struct {
	key        unitKey
	events     []agentevent.Event // in order
	prevPrompt string
	host       string
	// nameHint is the subagent type the spawning call asked for, used when
	// the subagent's own events do not name it.
	nameHint string
	// late: the unit went out before; these are events of it that came
	// after (its own span is not emitted again).
	late     bool
	children []child
}

// session is the run's own session id (gen_ai.conversation.id): the
// vendor's id of the thread, which for a subagent with an id of its own is
// not the session the tree is keyed by.
func (t *tree) session() string {
	if len(t.events) > 0 && t.events[0].SessionID != "" {
		return t.events[0].SessionID
	}
	return t.key.Thread.Session
}

// parentSession is the session a subagent with an id of its own was
// spawned from, "" for any other run.
func (t *tree) parentSession() string {
	for i := range t.events {
		if p, ok := t.events[i].Attributes[agentevent.AttrParentSessionID].(string); ok && p != "" {
			return p
		}
	}
	return ""
}

type child struct {
	callID string // the spawning tool call; "" for a run linked to the turn itself
	run    *tree
}

// mapGroup turns a complete group into one ResourceSpans. It is
// deterministic: the same group always yields the same spans.
func mapGroup(g group, o mapOptions) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	setResource(rs.Resource(), g.root)
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(metadata.ScopeName)
	m := &mapper{opts: o, traceID: g.traceID, spans: ss.Spans(), reason: g.reason}
	m.run(g.root, g.parentSpanID)
	return td
}

func setResource(res pcommon.Resource, t *tree) {
	a := res.Attributes()
	a.PutStr(agentevent.ResourceServiceName, t.key.Thread.Source.ServiceName())
	version := ""
	if p := promptIndex(t); p >= 0 {
		version = t.events[p].AgentVersion
	}
	for i := 0; version == "" && i < len(t.events); i++ {
		version = t.events[i].AgentVersion
	}
	if version != "" {
		a.PutStr(agentevent.ResourceServiceVersion, version)
	}
	if t.host != "" {
		a.PutStr(agentevent.ResourceHostName, t.host)
	}
}

type mapper struct {
	opts    mapOptions
	traceID pcommon.TraceID
	spans   ptrace.SpanSlice
	reason  closeReason
}

// usage is a token sum; has records which fields any event reported.
type usage struct {
	input, output, cacheRead, cacheCreation, reasoning int64
	has                                                [5]bool
}

func (u *usage) addEvent(ev *agentevent.Event) {
	for i, p := range []*int64{ev.TokensInput, ev.TokensOutput, ev.TokensCached, ev.TokensCacheCreation, ev.TokensThinking} {
		if p == nil {
			continue
		}
		u.has[i] = true
		*u.field(i) += *p
	}
}

func (u *usage) add(o usage) {
	for i := range u.has {
		if o.has[i] {
			u.has[i] = true
			*u.field(i) += *o.field(i)
		}
	}
}

func (u *usage) field(i int) *int64 {
	return [...]*int64{&u.input, &u.output, &u.cacheRead, &u.cacheCreation, &u.reasoning}[i]
}

func (u *usage) any() bool { return u.has != [5]bool{} }

// put writes the usage under prefix + the GenAI usage names.
func (u *usage) put(a pcommon.Map, prefix string) {
	keys := [...]string{"input_tokens", "output_tokens", "cache_read.input_tokens", "cache_creation.input_tokens", "reasoning.output_tokens"}
	for i, k := range keys {
		if u.has[i] {
			a.PutInt(prefix+k, *u.field(i))
		}
	}
}

// usageAttrs is the rest of a response's usage, beyond the five GenAI token
// counts: the event model's other token counts (total, tool) and every
// usage attribute its events carry (isUsageAttr: the 1-hour cache writes,
// the carrier, the cost's source, …), by key. Numbers add up; of strings
// the first holds, except that a carrier "own" wins.
type usageAttrs map[string]any

func (x usageAttrs) addEvent(ev *agentevent.Event) {
	if ev.TokensTotal != nil {
		x.add(agentevent.AttrTokensTotal, *ev.TokensTotal)
	}
	if ev.TokensTool != nil {
		x.add(agentevent.AttrTokensTool, *ev.TokensTool)
	}
	for k, v := range ev.Attributes {
		if isUsageAttr(k) {
			x.add(k, v)
		}
	}
}

func (x usageAttrs) add(k string, v any) {
	old, ok := x[k]
	if !ok {
		x[k] = v
		return
	}
	switch o := old.(type) {
	case int64:
		if n, ok := v.(int64); ok {
			x[k] = o + n
		}
	case float64:
		if f, ok := v.(float64); ok {
			x[k] = o + f
		}
	case bool:
		if b, ok := v.(bool); ok {
			x[k] = o || b
		}
	case string:
		if k == agentevent.AttrUsageCarrier && v == agentevent.UsageCarrierOwn {
			x[k] = v
		}
	}
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

// promptIndex is the index of the run's prompt: a main turn's user_message,
// a subagent's first user_message; -1 when it is not there.
func promptIndex(t *tree) int {
	for i := range t.events {
		ev := &t.events[i]
		if ev.Type != agentevent.TypeUserMessage {
			continue
		}
		if t.key.Thread.subagent() || ev.EventID == t.key.Prompt {
			return i
		}
	}
	return -1
}

// run emits the spans of one turn or subagent run under parent and returns
// what it did. A main turn whose prompt is not in the group (events that
// arrived after the turn went out) has no root span of its own: its spans
// join the deterministic root id that went out before.
func (m *mapper) run(t *tree, parent pcommon.SpanID) rollup {
	th := t.key.Thread
	self := unitSpanID(t.key)
	evs := t.events
	prompt := promptIndex(t)
	hasSpan := prompt >= 0 || th.subagent()
	var span ptrace.Span
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
		if ev.Type != agentevent.TypeUserMessage && ev.Type != agentevent.TypeToolResult {
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
	for _, c := range t.children {
		under := self // a turn-linked subagent nests under the run's own span
		if c.callID != "" {
			under = toolSpanID(th, c.callID)
		}
		cr := m.run(c.run, under)
		r.add(cr)
		r.subagents++
	}

	if !hasSpan {
		return r
	}
	name := th.Source.ServiceName()
	if th.subagent() {
		name = textutil.FirstNonEmpty(t.nameHint, subagentName)
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
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(maxTime(start, r.end)))
	a := span.Attributes()
	a.PutStr(attrOperationName, opInvokeAgent)
	a.PutStr(attrAgentName, name)
	if th.subagent() {
		a.PutStr(agentevent.AttrAgentID, th.Agent)
	}
	a.PutStr(agentevent.AttrSessionID, t.session())
	if parent := t.parentSession(); parent != "" {
		a.PutStr(agentevent.AttrParentSessionID, parent)
	}
	if r.firstProvide != "" {
		a.PutStr(agentevent.AttrProvider, r.firstProvide)
	}
	if r.firstModel != "" {
		a.PutStr(attrRequestModel, r.firstModel)
	}
	ctx := evs[0]
	if prompt >= 0 {
		ctx = evs[prompt]
	}
	putStr(a, agentevent.AttrGitBranch, ctx.GitBranch)
	putStr(a, agentevent.AttrProjectRoot, ctx.ProjectRoot)
	putStr(a, agentevent.AttrEntrypoint, ctx.Entrypoint)
	if prompt >= 0 {
		putStr(a, agentevent.AttrEventID, evs[prompt].EventID)
	}

	status, errType := runStatus(evs, m.reason)
	a.PutStr(attrTurnStatus, status)
	if status == statusError {
		a.PutStr(agentevent.AttrErrorType, errType)
		span.Status().SetCode(ptrace.StatusCodeError)
		span.Status().SetMessage(errType)
	}
	prevPrompt := ""
	if !th.subagent() {
		prevPrompt = t.prevPrompt
	}
	putRollup(a, &r, start, r.end, prevPrompt)

	if prevPrompt != "" {
		l := span.Links().AppendEmpty()
		prev := unitKey{Thread: th, Prompt: t.prevPrompt}
		l.SetTraceID(turnTraceID(th, t.prevPrompt))
		l.SetSpanID(unitSpanID(prev))
		l.Attributes().PutStr(attrLinkType, "previous_turn")
	}
	if m.opts.includeContent && prompt >= 0 && evs[prompt].Text != "" {
		b := contentBudget{left: m.opts.maxContentLength}
		text, _ := b.take(evs[prompt].Text)
		a.PutStr(attrInputMessages, messagesJSON([]message{{Role: "user", Parts: []messagePart{{Type: "text", Content: text}}}}))
	}
	for _, i := range others {
		addSpanEvent(span, &evs[i])
	}
	return r
}

// chat emits the span of one model response. It returns false (and emits
// nothing) for a group that is an error notice rather than a model call.
func (m *mapper) chat(t *tree, g *chatGroup, parent pcommon.SpanID, r *rollup) bool {
	evs := t.events
	// The span carries all of the response's usage, whichever of its events
	// (a tool call, when the response's last row starts with one) the
	// parser put it on: gen_ai_cost prices the span from it.
	var u usage
	rest := usageAttrs{}
	var cost float64
	hasCost := false
	model, provider, responseID, errType := "", "", "", ""
	var finish []string
	end := time.Time{}
	for _, i := range g.members {
		ev := &evs[i]
		u.addEvent(ev)
		rest.addEvent(ev)
		if ev.CostUSD != nil {
			cost += *ev.CostUSD
			hasCost = true
		}
		model = textutil.FirstNonEmpty(model, ev.Model)
		provider = textutil.FirstNonEmpty(provider, ev.Provider)
		responseID = textutil.FirstNonEmpty(responseID, ev.ResponseID)
		if ev.ErrorType != "" && ev.Type != agentevent.TypeToolCall {
			errType = ev.ErrorType
		}
		if ev.FinishReason != "" && (len(finish) == 0 || finish[len(finish)-1] != ev.FinishReason) {
			finish = append(finish, ev.FinishReason)
		}
		if ev.Timestamp.After(end) {
			end = ev.Timestamp
		}
	}
	if !u.any() && len(rest) == 0 && !hasCost && errType != "" {
		return false
	}
	// The model was called when the conversation event before the response
	// was written: the prompt, or the last tool result it answers (file
	// snapshots, hooks and other bookkeeping in between do not count).
	first := g.members[0]
	start := evs[first].Timestamp
	for i := first - 1; i >= 0; i-- {
		if !isConversation(evs[i].Type) {
			continue
		}
		if prev := evs[i].Timestamp; !prev.IsZero() && !prev.After(start) {
			start = prev
		}
		break
	}

	key := g.key
	if t.late {
		// More of a unit that went out: its response may be one already
		// emitted (usage written after the turn closed). A span id of its
		// own keeps both — each event's tokens on exactly one chat span.
		key += "\x00late\x00" + evs[g.members[0]].EventID
	}
	sp := m.newSpan(chatSpanID(t.key.Thread, key), parent, opChat, model, ptrace.SpanKindClient, start, end)
	a := sp.Attributes()
	a.PutStr(attrOperationName, opChat)
	putStr(a, agentevent.AttrProvider, provider)
	putStr(a, attrRequestModel, model)
	putStr(a, agentevent.AttrModel, model)
	putStr(a, agentevent.AttrResponseID, responseID)
	a.PutStr(agentevent.AttrSessionID, t.session())
	if len(finish) > 0 {
		s := a.PutEmptySlice(agentevent.AttrFinishReasons)
		for _, f := range finish {
			s.AppendEmpty().SetStr(f)
		}
	}
	u.put(a, usagePrefixGenAI)
	for _, k := range slices.Sorted(maps.Keys(rest)) {
		agentevent.PutValue(a, k, rest[k])
	}
	if t.late {
		// Say so: the turn's root went out before this span.
		a.PutBool(attrLate, true)
	}
	if hasCost {
		a.PutDouble(agentevent.AttrCostUSD, cost)
	}
	if errType != "" {
		a.PutStr(agentevent.AttrErrorType, errType)
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage(errType)
	}
	for _, i := range g.members {
		if evs[i].Type == agentevent.TypeReasoning {
			addSpanEvent(sp, &evs[i])
		}
	}
	if m.opts.includeContent {
		if out := m.outputMessage(evs, g.members, finish); out != "" {
			a.PutStr(attrOutputMessages, out)
		}
	}

	r.modelCalls++
	if errType != "" {
		r.apiErrors++
	}
	r.usage.add(u)
	r.costUSD += cost
	r.hasCost = r.hasCost || hasCost
	r.firstModel = textutil.FirstNonEmpty(r.firstModel, model)
	r.firstProvide = textutil.FirstNonEmpty(r.firstProvide, provider)
	return true
}

func (m *mapper) outputMessage(evs []agentevent.Event, members []int, finish []string) string {
	b := contentBudget{left: m.opts.maxContentLength}
	msg := message{Role: "assistant"}
	if len(finish) > 0 {
		msg.FinishReason = finish[len(finish)-1]
	}
	for _, i := range members {
		ev := &evs[i]
		switch ev.Type {
		case agentevent.TypeAssistantMessage, agentevent.TypeReasoning:
			if ev.Text == "" {
				continue
			}
			text, ok := b.take(ev.Text)
			if !ok {
				continue
			}
			typ := "text"
			if ev.Type == agentevent.TypeReasoning {
				typ = "reasoning"
			}
			msg.Parts = append(msg.Parts, messagePart{Type: typ, Content: text})
		case agentevent.TypeToolCall:
			part := messagePart{Type: "tool_call", ID: ev.ToolCallID, Name: ev.ToolName}
			if ev.Text != "" {
				if text, ok := b.take(ev.Text); ok {
					part.Arguments = arguments(text)
				}
			}
			msg.Parts = append(msg.Parts, part)
		}
	}
	if len(msg.Parts) == 0 {
		return ""
	}
	return messagesJSON([]message{msg})
}

// tool emits the execute_tool span of a call and its result.
func (m *mapper) tool(t *tree, p *toolPair, parent pcommon.SpanID, r *rollup) {
	call, res := p.call, p.result
	var latency *int64
	for _, ev := range []*agentevent.Event{call, res} {
		if ev != nil && ev.ToolLatencyMs != nil {
			latency = ev.ToolLatencyMs
		}
	}
	var start, end time.Time
	switch {
	case call != nil:
		start = call.Timestamp
	case res != nil && latency != nil:
		start = res.Timestamp.Add(-time.Duration(*latency) * time.Millisecond)
	case res != nil:
		start = res.Timestamp
	}
	switch {
	case res != nil && !res.Timestamp.IsZero():
		end = res.Timestamp
	case latency != nil:
		end = start.Add(time.Duration(*latency) * time.Millisecond)
	default:
		// Still running when the turn closed: up to the turn's last event.
		end = start
		for i := range t.events {
			end = maxTime(end, t.events[i].Timestamp)
		}
	}

	name, callID := "", ""
	var exit *int64
	var filePath, fileOp, fileLang, errType, spawned string
	attrs := map[string]any{}
	for _, ev := range []*agentevent.Event{call, res} {
		if ev == nil {
			continue
		}
		name = textutil.FirstNonEmpty(name, ev.ToolName)
		callID = textutil.FirstNonEmpty(callID, ev.ToolCallID)
		if ev.ToolExitCode != nil {
			exit = ev.ToolExitCode
		}
		filePath = textutil.FirstNonEmpty(filePath, ev.FilePath)
		fileOp = textutil.FirstNonEmpty(fileOp, string(ev.FileOp))
		fileLang = textutil.FirstNonEmpty(fileLang, ev.FileLanguage)
		errType = textutil.FirstNonEmpty(errType, ev.ErrorType)
		spawned = textutil.FirstNonEmpty(spawned, ev.SpawnedAgentID)
		for k, v := range ev.Attributes {
			attrs[k] = v
		}
	}
	status := agentevent.ToolInProgress
	if res != nil {
		status = res.ToolStatus
		if status == "" || status == agentevent.ToolUnknown {
			status = agentevent.ToolSuccess
			if errType != "" || (exit != nil && *exit != 0) {
				status = agentevent.ToolError
			}
		}
	}

	sp := m.newSpan(toolSpanID(t.key.Thread, p.key), parent, opExecuteTool, name, ptrace.SpanKindInternal, start, end)
	a := sp.Attributes()
	putAttrs(a, attrs)
	a.PutStr(attrOperationName, opExecuteTool)
	putStr(a, agentevent.AttrToolName, name)
	putStr(a, agentevent.AttrToolCallID, callID)
	a.PutStr(attrToolType, toolTypeFunction)
	a.PutStr(agentevent.AttrSessionID, t.session())
	a.PutStr(agentevent.AttrToolStatus, string(status))
	if latency != nil {
		a.PutInt(agentevent.AttrToolLatencyMs, *latency)
	}
	if exit != nil {
		a.PutInt(agentevent.AttrExitCode, *exit)
	}
	putStr(a, agentevent.AttrFilePath, filePath)
	putStr(a, agentevent.AttrFileOp, fileOp)
	putStr(a, agentevent.AttrFileLanguage, fileLang)
	putStr(a, agentevent.AttrSpawnedAgentID, spawned)
	if status == agentevent.ToolError {
		if errType == "" {
			errType = errorTypeTool
		}
		a.PutStr(agentevent.AttrErrorType, errType)
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage(errType)
		r.toolErrors++
	}
	if m.opts.includeContent {
		b := contentBudget{left: m.opts.maxContentLength}
		if call != nil && call.Text != "" {
			text, _ := b.take(call.Text)
			a.PutStr(attrToolCallArgs, text)
		}
		b = contentBudget{left: m.opts.maxContentLength}
		if res != nil && res.Text != "" {
			text, _ := b.take(res.Text)
			a.PutStr(attrToolCallResult, text)
		}
	}
	r.toolCalls++
	r.addTool(call, res, attrs, filePath, agentevent.FileOp(fileOp), exit, errType, status == agentevent.ToolError)
}

// runStatus is agent.turn.status of a run, and error.type when it failed.
func runStatus(evs []agentevent.Event, reason closeReason) (status, errType string) {
	interrupted := false
	lastTool, lastAPIError, lastAnswer := -1, -1, -1
	ended, endErr := "", ""
	for i := range evs {
		ev := &evs[i]
		if end, ok := ev.Attributes[agentevent.AttrTurnEnd].(string); ok && end != "" {
			ended, endErr = end, ev.ErrorType // the vendor's own end marker: the last one holds
		}
		switch ev.Status {
		case statusError:
			if errType == "" {
				errType = textutil.FirstNonEmpty(ev.ErrorType, errorTypeAgent)
			}
		case statusInterrupted:
			interrupted = true
		}
		switch {
		case ev.Type == agentevent.TypeToolCall || ev.Type == agentevent.TypeToolResult:
			lastTool = i
		case ev.ErrorType != "":
			lastAPIError = i
		case ev.Type == agentevent.TypeAssistantMessage:
			lastAnswer = i
		}
	}
	if errType == "" && lastAPIError >= 0 && lastAnswer < lastAPIError {
		errType = evs[lastAPIError].ErrorType
	}
	switch {
	case errType != "":
		return statusError, errType
	case interrupted:
		return statusInterrupted, ""
	case ended == agentevent.TurnEndError:
		return statusError, textutil.FirstNonEmpty(endErr, errorTypeAgent)
	case ended == agentevent.TurnEndInterrupted:
		return statusInterrupted, ""
	case ended == agentevent.TurnEndCompleted:
		return statusCompleted, ""
	case reason == closedByShutdown:
		return statusInProgress, ""
	case reason == closedByIdle && (lastAnswer < 0 || lastAnswer < lastTool):
		// Nothing answered the prompt, or the last tool output.
		return statusAbandoned, ""
	}
	return statusCompleted, ""
}

// addSpanEvent records an event that is neither a prompt, a model response
// nor a tool call on the span it belongs to.
func addSpanEvent(sp ptrace.Span, ev *agentevent.Event) {
	e := sp.Events().AppendEmpty()
	e.SetName(spanEventName(ev))
	e.SetTimestamp(pcommon.NewTimestampFromTime(ev.Timestamp))
	a := e.Attributes()
	putAttrs(a, ev.Attributes)
	a.PutStr(agentevent.AttrEventType, string(ev.Type))
	putStr(a, agentevent.AttrEventID, ev.EventID)
	putStr(a, agentevent.AttrErrorType, ev.ErrorType)
	putStr(a, agentevent.AttrStatus, ev.Status)
	putStr(a, agentevent.AttrFilePath, ev.FilePath)
	if ev.Type == agentevent.TypeReasoning && ev.TokensThinking != nil {
		// A breakdown of its chat span's reasoning tokens, which that span
		// carries summed.
		a.PutInt(agentevent.AttrTokensThinking, *ev.TokensThinking)
	}
}

func spanEventName(ev *agentevent.Event) string {
	switch {
	case ev.Type == agentevent.TypeReasoning:
		return eventReasoning
	case ev.ErrorType != "":
		return eventAPIError
	case ev.Type == agentevent.TypeFileSnapshot:
		return eventFileSnapshot
	case ev.Type == agentevent.TypeSessionSummary:
		return eventSummary
	}
	for k := range ev.Attributes {
		if strings.HasPrefix(k, "agent.compaction.") {
			return eventCompaction
		}
	}
	return agentevent.EventNamePrefix + string(ev.Type)
}

// Usage attribute prefixes: every token count, cost and carrier of a model
// response in the event model (agentevent's gen_ai.usage.* and agent.usage.*
// keys, typed fields and attributes alike) is under one of them.
const (
	usagePrefixGenAI = "gen_ai.usage."
	usagePrefixAgent = "agent.usage."
)

// isUsageAttr reports whether an attribute key is part of a model
// response's usage. A chat span carries all of its response's; no other
// span, and no span event but a reasoning block's own reasoning tokens,
// carries any.
func isUsageAttr(k string) bool {
	return strings.HasPrefix(k, usagePrefixGenAI) || strings.HasPrefix(k, usagePrefixAgent)
}

func putStr(a pcommon.Map, k, v string) {
	if v != "" {
		a.PutStr(k, v)
	}
}

// putAttrs copies vendor facts (agent.* keys) onto a span or span event.
// Usage is not among them: it goes on the response's chat span only, so
// that whatever sums or prices spans counts each token once.
func putAttrs(a pcommon.Map, attrs map[string]any) {
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		if k == agentevent.AttrSubagentLink || k == agentevent.AttrSubagentAnchor || isUsageAttr(k) {
			continue // instructions to the connector, or usage
		}
		agentevent.PutValue(a, k, attrs[k])
	}
}

// newSpan appends a span "<op> <name>" (just "<op>" without a name) of the
// mapped trace, ending no earlier than it starts.
func (m *mapper) newSpan(id, parent pcommon.SpanID, op, name string, kind ptrace.SpanKind, start, end time.Time) ptrace.Span {
	sp := m.spans.AppendEmpty()
	sp.SetTraceID(m.traceID)
	sp.SetSpanID(id)
	sp.SetParentSpanID(parent)
	if name != "" {
		op += " " + name
	}
	sp.SetName(op)
	sp.SetKind(kind)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(maxTime(start, end)))
	return sp
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
