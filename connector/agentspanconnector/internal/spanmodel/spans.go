// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package spanmodel

import (
	"maps"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/textutil"
)

// chat emits the span of one model response. It returns false (and emits
// nothing) for a group that is an error notice rather than a model call.
func (m *mapper) chat(t *Tree, g *chatGroup, parent pcommon.SpanID, r *rollup) bool {
	evs := t.Events
	// The span carries all of the response's usage, whichever of its events
	// (a tool call, when the response's last row starts with one) the
	// parser put it on: gen_ai_cost prices the span from it.
	var u usage
	rest := m.rest
	clear(rest)
	var cost float64
	hasCost := false
	model, provider, responseID, errType := "", "", "", ""
	var finish []string
	end := time.Time{}
	chatAttrs := m.chatAttrs
	clear(chatAttrs)
	stated := int64(-1)
	for _, i := range g.members {
		ev := &evs[i]
		u.addEvent(ev)
		rest.addEvent(ev)
		for k, v := range ev.Attributes {
			if _, seen := chatAttrs[k]; !seen && strings.HasPrefix(k, agentevent.AttrChatPrefix) {
				chatAttrs[k] = v
			}
		}
		if d, ok := ev.Attributes[agentevent.AttrChatDurationMs].(int64); ok && d > stated {
			stated = d
		}
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
	if stated >= 0 && !end.IsZero() {
		// The agent measured the call: that, not the gap to the event
		// before, is how long the model took.
		start = end.Add(-time.Duration(stated) * time.Millisecond)
	}

	key := g.key
	if t.Late {
		// More of a unit that went out: its response may be one already
		// emitted (usage written after the turn closed). A span id of its
		// own keeps both — each event's tokens on exactly one chat span.
		key += "\x00late\x00" + evs[g.members[0]].EventID
	}
	sp := m.newSpan(ChatSpanID(t.Key.Thread, key), parent, OpChat, model, ptrace.SpanKindClient, start, end)
	b := &m.attrs
	b.add(strAttr(agentevent.AttrOperationName, OpChat))
	b.addStr(agentevent.AttrProvider, provider)
	b.addStr(agentevent.AttrRequestModel, model)
	b.addStr(agentevent.AttrModel, model)
	b.addStr(agentevent.AttrResponseID, responseID)
	b.add(strAttr(agentevent.AttrSessionID, t.session()))
	if len(finish) > 0 {
		b.add(attr{key: agentevent.AttrFinishReasons, kind: attrStrs, strs: finish})
	}
	u.put(b, agentevent.AttrGenAIUsagePrefix)
	// The keys from here on come from the events: put as pcommon.Map.Put
	// would, in case one is a key already there.
	for _, k := range b.sortedKeys(rest) {
		b.set(rawAttr(k, rest[k]))
	}
	for _, k := range b.sortedKeys(chatAttrs) {
		b.set(rawAttr(k, chatAttrs[k]))
	}
	if t.Late {
		// Say so: the turn's root went out before this span.
		b.set(trueAttr(agentevent.AttrSpanLate))
	}
	if hasCost {
		b.set(doubleAttr(agentevent.AttrCostUSD, cost))
	}
	if errType != "" {
		b.set(strAttr(agentevent.AttrErrorType, errType))
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage(errType)
	}
	if m.opts.IncludeContent {
		if out := m.outputMessage(evs, g.members, finish); out != "" {
			b.set(strAttr(agentevent.AttrOutputMessages, out))
		}
	}
	b.into(sp.Attributes())
	for _, i := range g.members {
		if evs[i].Type == agentevent.TypeReasoning {
			m.addSpanEvent(sp, &evs[i])
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
	b := contentBudget{left: m.opts.MaxContentLength}
	msg := Message{Role: "assistant"}
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
			msg.Parts = append(msg.Parts, MessagePart{Type: typ, Content: text})
		case agentevent.TypeToolCall:
			part := MessagePart{Type: "tool_call", ID: ev.ToolCallID, Name: ev.ToolName}
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
	return messagesJSON([]Message{msg})
}

// tool emits the execute_tool span of a call and its result.
func (m *mapper) tool(t *Tree, p *toolPair, parent pcommon.SpanID, r *rollup) {
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
		for i := range t.Events {
			end = maxTime(end, t.Events[i].Timestamp)
		}
	}

	name, callID := "", ""
	var exit *int64
	var filePath, fileOp, fileLang, errType, spawned string
	attrs := m.toolAttrs
	clear(attrs)
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
		maps.Copy(attrs, ev.Attributes)
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

	sp := m.newSpan(ToolSpanID(t.Key.Thread, p.key), parent, opExecuteTool, name, ptrace.SpanKindInternal, start, end)
	b := &m.attrs
	m.putAttrs(attrs)
	// The keys below are distinct; one of the events' attributes may have
	// one of them already.
	put := func(a attr) {
		if _, had := attrs[a.key]; had {
			b.set(a)
		} else {
			b.add(a)
		}
	}
	putStr := func(k, v string) {
		if v != "" {
			put(strAttr(k, v))
		}
	}
	put(strAttr(agentevent.AttrOperationName, opExecuteTool))
	putStr(agentevent.AttrToolName, name)
	putStr(agentevent.AttrToolCallID, callID)
	put(strAttr(agentevent.AttrToolType, toolTypeFunction))
	put(strAttr(agentevent.AttrSessionID, t.session()))
	put(strAttr(agentevent.AttrToolStatus, string(status)))
	if latency != nil {
		put(intAttr(agentevent.AttrToolLatencyMs, *latency))
	}
	if exit != nil {
		put(intAttr(agentevent.AttrExitCode, *exit))
	}
	putStr(agentevent.AttrFilePath, filePath)
	putStr(agentevent.AttrFileOp, fileOp)
	putStr(agentevent.AttrFileLanguage, fileLang)
	putStr(agentevent.AttrSpawnedAgentID, spawned)
	if status == agentevent.ToolError {
		if errType == "" {
			errType = agentevent.ErrorTypeTool
		}
		put(strAttr(agentevent.AttrErrorType, errType))
		sp.Status().SetCode(ptrace.StatusCodeError)
		sp.Status().SetMessage(errType)
		r.toolErrors++
	}
	if m.opts.IncludeContent {
		cb := contentBudget{left: m.opts.MaxContentLength}
		if call != nil && call.Text != "" {
			text, _ := cb.take(call.Text)
			put(strAttr(agentevent.AttrToolCallArguments, text))
		}
		cb = contentBudget{left: m.opts.MaxContentLength}
		if res != nil && res.Text != "" {
			text, _ := cb.take(res.Text)
			put(strAttr(agentevent.AttrToolCallResult, text))
		}
	}
	b.into(sp.Attributes())
	r.toolCalls++
	r.addTool(call, res, attrs, filePath, agentevent.FileOp(fileOp), exit, errType, status == agentevent.ToolError)
}

// runStatus is agent.turn.status of a run, and error.type when it failed.
func runStatus(evs []agentevent.Event, reason CloseReason) (status, errType string) {
	interrupted := false
	lastTool, lastAPIError, lastAnswer := -1, -1, -1
	ended, endErr := "", ""
	for i := range evs {
		ev := &evs[i]
		if end, ok := ev.Attributes[agentevent.AttrTurnEnd].(string); ok && end != "" {
			ended, endErr = end, ev.ErrorType // the vendor's own end marker: the last one holds
		}
		switch ev.Status {
		case StatusError:
			if errType == "" {
				errType = textutil.FirstNonEmpty(ev.ErrorType, agentevent.ErrorTypeAgent)
			}
		case StatusInterrupted:
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
		return StatusError, errType
	case interrupted:
		return StatusInterrupted, ""
	case ended == agentevent.TurnEndError:
		return StatusError, textutil.FirstNonEmpty(endErr, agentevent.ErrorTypeAgent)
	case ended == agentevent.TurnEndInterrupted:
		return StatusInterrupted, ""
	case ended == agentevent.TurnEndCompleted:
		return StatusCompleted, ""
	case reason == ClosedByShutdown:
		return StatusInProgress, ""
	case reason == ClosedByIdle && (lastAnswer < 0 || lastAnswer < lastTool):
		// Nothing answered the prompt, or the last tool output.
		return StatusAbandoned, ""
	}
	return StatusCompleted, ""
}

// addSpanEvent records an event that is neither a prompt, a model response
// nor a tool call on the span it belongs to.
func (m *mapper) addSpanEvent(sp ptrace.Span, ev *agentevent.Event) {
	e := sp.Events().AppendEmpty()
	e.SetName(spanEventName(ev))
	e.SetTimestamp(pcommon.NewTimestampFromTime(ev.Timestamp))
	b := &m.attrs
	m.putAttrs(ev.Attributes)
	// The keys below are distinct; the event's attributes may have one of
	// them already.
	put := func(a attr) {
		if _, had := ev.Attributes[a.key]; had {
			b.set(a)
		} else {
			b.add(a)
		}
	}
	put(strAttr(agentevent.AttrEventType, string(ev.Type)))
	for _, kv := range [...][2]string{
		{agentevent.AttrEventID, ev.EventID},
		{agentevent.AttrErrorType, ev.ErrorType},
		{agentevent.AttrStatus, ev.Status},
		{agentevent.AttrFilePath, ev.FilePath},
	} {
		if kv[1] != "" {
			put(strAttr(kv[0], kv[1]))
		}
	}
	if ev.Type == agentevent.TypeReasoning && ev.TokensThinking != nil {
		// A breakdown of its chat span's reasoning tokens, which that span
		// carries summed.
		put(intAttr(agentevent.AttrTokensThinking, *ev.TokensThinking))
	}
	b.into(e.Attributes())
}

func spanEventName(ev *agentevent.Event) string {
	switch {
	case ev.Type == agentevent.TypeReasoning:
		return agentevent.SpanEventReasoning
	case ev.ErrorType != "":
		return agentevent.SpanEventAPIError
	case ev.Type == agentevent.TypeFileSnapshot:
		return agentevent.SpanEventFileSnapshot
	case ev.Type == agentevent.TypeSessionSummary:
		return agentevent.SpanEventSessionSummary
	}
	for k := range ev.Attributes {
		if strings.HasPrefix(k, agentevent.AttrCompactionPrefix) {
			return agentevent.SpanEventCompaction
		}
	}
	return agentevent.EventNamePrefix + string(ev.Type)
}

// putAttrs adds vendor facts (agent.* keys) to the span or span event being
// built, the first of its attributes. Usage is not among them: it goes on
// the response's chat span only, so that whatever sums or prices spans
// counts each token once.
func (m *mapper) putAttrs(attrs map[string]any) {
	for _, k := range m.attrs.sortedKeys(attrs) {
		if k == agentevent.AttrSubagentLink || k == agentevent.AttrSubagentAnchor || IsUsageAttr(k) {
			continue // instructions to the connector, or usage
		}
		m.attrs.add(rawAttr(k, attrs[k]))
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
