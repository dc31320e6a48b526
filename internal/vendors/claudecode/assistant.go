// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
	"github.com/agentotel/agentotel/internal/testrun"
)

// mapAssistant maps an assistant row: one event per content block; the
// response's final usage goes on the first event of its last row (see
// rowUsage).
func (p *Parser) mapAssistant(r *record, c *rowCtx) ([]pending, string) {
	m, ok := r.message()
	if !ok {
		return nil, ReasonUnexpectedShape
	}
	kind, str, blocks := r.content()
	switch kind {
	case contentOther:
		return nil, ReasonUnexpectedShape
	case contentString:
		blocks = []block{{Type: "text", Text: str}}
	}
	if m.Model == syntheticModel || r.IsAPIErrorMessage {
		return []pending{{ev: p.apiError(r, c, blocks)}}, ""
	}

	var out []pending
	for i := range blocks {
		b := &blocks[i]
		var ev agentevent.Event
		switch b.Type {
		case "thinking", "redacted_thinking":
			ev = p.base(c, agentevent.TypeReasoning, agentevent.RoleAssistant, agentevent.ChannelChat)
			ev.Text = b.Thinking
		case "text":
			ev = p.base(c, agentevent.TypeAssistantMessage, agentevent.RoleAssistant, agentevent.ChannelChat)
			ev.Text = b.Text
		case "tool_use", "server_tool_use", "mcp_tool_use":
			ev = p.toolCall(c, *b)
		default:
			if b.ToolUseID == "" || !strings.HasSuffix(b.Type, "_tool_result") {
				continue // images and unknown blocks: kept in Raw only
			}
			// A server tool's result (web search, code execution) arrives
			// inside the assistant message that called it.
			ev = p.toolResult(c, b.ToolUseID, b.Content, serverToolFailed(b.Content), &toolUseResult{})
		}
		out = append(out, pending{ev: ev, idx: i})
	}
	if len(out) == 0 {
		// Nothing mappable (no content, images only): one empty message still
		// carries the usage, so no token is lost.
		out = append(out, pending{ev: p.base(c, agentevent.TypeAssistantMessage, agentevent.RoleAssistant, agentevent.ChannelChat)})
	}
	for i := range out {
		ev := &out[i].ev
		ev.Model = m.Model
		ev.Provider = providerAnthropic
		ev.ResponseID = m.ID
	}
	if m.StopReason != nil && *m.StopReason != "" {
		out[len(out)-1].ev.FinishReason = *m.StopReason
	}
	if m.Usage != nil {
		p.rowUsage(c, m, out)
	}
	return out, ""
}

// rowUsage puts a model response's final usage on exactly one event.
//
// Claude Code streams one API response as several rows (one content block
// each) that share message.id and all repeat the usage; early rows of older
// versions carry a partial output_tokens. The usage is held (in the state)
// until the response's last row: a row with a stop_reason (≥2.1 writes it on
// the last row only) carries it on its first event. When a response ends
// without one (≤2.0 rows have none), the next record of the file that is not
// a row of it, or the end of the file's data (Flush), emits it on an event of
// its own (flushHeld). Rows without a message id count in full: there is
// nothing to deduplicate them by.
func (p *Parser) rowUsage(c *rowCtx, m *message, out []pending) {
	u := m.Usage
	in, read, create, o := u.InputTokens.V, u.CacheReadInputTokens.V, u.CacheCreationInputTokens.V, u.OutputTokens.V
	s := &p.st
	create1h := u.cacheCreation1h()
	if m.ID == "" {
		setUsage(&out[0].ev, in, read, create, o)
		setCacheCreation1h(&out[0].ev, create1h, create)
		return
	}
	if cu, ok := s.counted(m.ID); ok {
		// The final usage went out (a stop_reason row, or the reader reached
		// the end of a live file between two rows of the response): a later
		// row with more output carries the growth, marked as a correction.
		if o > cu.Output {
			setUsage(&out[0].ev, 0, 0, 0, o-cu.Output)
			agentevent.SetAttr(&out[0].ev, agentevent.AttrUsageCarrier, agentevent.UsageCarrierCorrection)
			cu.Output = o
		}
		return
	}
	h := s.Held
	if h == nil || h.ID != m.ID {
		h = &heldUsage{ID: strings.Clone(m.ID)}
		s.Held = h
	}
	if o >= h.Output {
		// The row with the largest output_tokens is the response's final
		// usage (ccusage keeps the largest too).
		h.Input, h.CacheRead, h.CacheCreation, h.Output = in, read, create, o
		h.CacheCreation1h = create1h
	}
	if h.Model != m.Model {
		h.Model = strings.Clone(m.Model)
	}
	h.SessionID, h.AgentID = strings.Clone(c.sessionID), strings.Clone(c.agentID)
	h.Sidechain, h.ParentToolCallID = c.sidechain, strings.Clone(c.parentToolCallID)
	h.UUID, h.LineNo, h.Offset, h.Timestamp = strings.Clone(c.uuid), c.lineNo, c.offset, c.ts
	if m.StopReason != nil && *m.StopReason != "" {
		setUsage(&out[0].ev, h.Input, h.CacheRead, h.CacheCreation, h.Output)
		setCacheCreation1h(&out[0].ev, h.CacheCreation1h, h.CacheCreation)
		s.markCounted(h.ID, h.Output)
		s.Held = nil
	}
}

// flushHeld emits the usage of a response whose last row carried no
// stop_reason, on an assistant_message of its own: same thread, model and
// response id as the response's rows, at its last row (time and line), event
// id "<that row's uuid>#usage", agent.usage.carrier "deferred".
func (p *Parser) flushHeld() []agentevent.Event {
	h := p.st.Held
	if h == nil {
		return nil
	}
	p.st.Held = nil
	p.st.markCounted(h.ID, h.Output)
	c := &rowCtx{
		lineNo: h.LineNo, offset: h.Offset, ts: h.Timestamp, sessionID: h.SessionID,
		agentID: h.AgentID, sidechain: h.Sidechain, parentToolCallID: h.ParentToolCallID,
	}
	ev := p.base(c, agentevent.TypeAssistantMessage, agentevent.RoleAssistant, agentevent.ChannelChat)
	ev.Model = h.Model
	ev.Provider = providerAnthropic
	ev.ResponseID = h.ID
	setUsage(&ev, h.Input, h.CacheRead, h.CacheCreation, h.Output)
	setCacheCreation1h(&ev, h.CacheCreation1h, h.CacheCreation)
	agentevent.SetAttr(&ev, agentevent.AttrUsageCarrier, agentevent.UsageCarrierDeferred)
	id := ""
	if h.UUID != "" {
		id = h.UUID + "#usage"
	}
	return p.finish(c, []pending{{ev: ev, idx: usageIndex, id: id}})
}

// usageIndex is the position given to a deferred usage event whose row has
// no uuid, for its stable id: beyond any content block index.
const usageIndex = 1 << 20

// continuesHeld tells whether record r is a row of the response whose usage
// is held (or a record that is skipped and so cannot end it).
func (p *Parser) continuesHeld(r *record) bool {
	switch r.Type {
	case "progress", "queue-operation", "last-prompt", "bridge-session":
		return true
	case "assistant":
		id, ok := r.messageID()
		return ok && id == p.st.Held.ID
	}
	return false
}

func setUsage(ev *agentevent.Event, in, read, create, out int64) {
	input := in + read + create
	ev.TokensInput = agentevent.Int(input)
	ev.TokensCached = agentevent.Int(read)
	ev.TokensCacheCreation = agentevent.Int(create)
	ev.TokensOutput = agentevent.Int(out)
	ev.TokensTotal = agentevent.Int(input + out)
}

// setCacheCreation1h records the part of the cache writes made with a
// 1-hour lifetime, which costs more than a 5-minute write.
func setCacheCreation1h(ev *agentevent.Event, create1h, create int64) {
	if create1h > 0 && create > 0 {
		agentevent.SetAttr(ev, agentevent.AttrTokensCacheCreation1h, min(create1h, create))
	}
}

// cacheCreation1h is the usage's 1-hour cache writes (0 when not split).
func (u *usage) cacheCreation1h() int64 {
	if u.CacheCreation == nil {
		return 0
	}
	return u.CacheCreation.Ephemeral1h.V
}

// toolCall maps a tool_use block and opens the call.
func (p *Parser) toolCall(c *rowCtx, b block) agentevent.Event {
	in := decodeToolInput(b.Input, isSubagentTool(b.Name), p.typedOnly)
	ev := p.base(c, agentevent.TypeToolCall, agentevent.RoleAssistant, channel(b.Name))
	ev.ToolName = b.Name
	ev.ToolCallID = b.ID
	if !p.opts.OmitContent {
		ev.Text = strings.TrimSpace(string(b.Input))
	}
	ev.FilePath = in.path
	ev.FileOp = fileOp(b.Name)
	if ev.FilePath != "" {
		ev.FileLanguage = agentevent.FileLanguage(ev.FilePath)
	}
	call := &openCall{
		ID:        strings.Clone(b.ID), // the state must not pin the record's buffer
		Name:      strings.Clone(b.Name),
		Timestamp: c.ts,
		FilePath:  strings.Clone(ev.FilePath),
		Seq:       p.st.nextCallSeq(),
	}
	if isSubagentTool(b.Name) {
		ev.SubagentType = in.subagentType
		call.Prompt = strings.Clone(strings.TrimSpace(in.prompt))
	}
	if b.Name == toolSendMessage {
		// Rare: read with the typed decoder whichever path decoded the row.
		var msg struct {
			To jsonx.Raw `json:"to"`
		}
		if jsonx.Unmarshal(b.Input, &msg) == nil {
			if to := rawString(msg.To, true); to != "" {
				agentevent.SetAttr(&ev, agentevent.AttrAgentMessageTo, to)
			}
		}
	}
	if b.Name == toolBash {
		if cmd := rawString(in.command, p.typedOnly); strings.TrimSpace(cmd) != "" {
			agentevent.SetAttr(&ev, agentevent.AttrToolCommand, agentevent.CommandLine(cmd))
			call.TestRunner, _ = testrun.Detect(cmd)
		}
	}
	if b.ID != "" {
		p.st.addCall(call)
	}
	return ev
}

// apiError maps a row Claude Code wrote itself instead of a model answer
// (model <synthetic>, isApiErrorMessage): prompt too long, usage limits,
// API failures. It is an error, not a model call: no model, no tokens.
func (p *Parser) apiError(r *record, c *rowCtx, blocks []block) agentevent.Event {
	ev := p.base(c, agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
	ev.Text = blocksText(blocks, false)
	ev.ErrorType = agentevent.ErrorTypeAPI
	ev.Status = "error"
	// Claude Code gave up on the model call: the turn ends here.
	attrs := map[string]any{agentevent.AttrTurnEnd: agentevent.TurnEndError}
	if code := rawString(r.Error, p.typedOnly); code != "" {
		attrs[agentevent.AttrAPIError] = code
	}
	if r.APIErrorStatus.Set {
		attrs[agentevent.AttrAPIStatusCode] = r.APIErrorStatus.V
	}
	ev.Attributes = attrs
	return ev
}

// serverToolFailed tells whether a server tool result's content is an error
// object ({"type": "web_search_tool_result_error", ...}).
func serverToolFailed(content []byte) bool {
	var v struct {
		Type string `json:"type"`
	}
	if jsonx.Unmarshal(content, &v) != nil {
		return false
	}
	return strings.HasSuffix(v.Type, "_error")
}
