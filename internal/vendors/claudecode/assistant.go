// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode // import "github.com/agentotel/agentotel/internal/vendors/claudecode"

import (
	"strings"

	"github.com/goccy/go-json"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/testrun"
)

// mapAssistant maps an assistant row: one event per content block, the
// row's usage on the first of them.
//
// Claude Code streams one API response as several rows (one content block
// each) that share message.id and all repeat the usage; early rows of older
// versions carry a partial output_tokens. Usage is therefore counted once per
// message.id: input and cache tokens on the first row, output tokens as the
// growth of the largest output_tokens seen. Each row's first event carries
// only its increment, so the session sum is exact without buffering rows.
func (p *Parser) mapAssistant(r *record, c *rowCtx) ([]pending, string) {
	var m message
	if len(r.Message) == 0 || json.Unmarshal(r.Message, &m) != nil {
		return nil, ReasonUnexpectedShape
	}
	kind, str, blocks := decodeContent(m.Content)
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
	for i, b := range blocks {
		var ev agentevent.Event
		switch b.Type {
		case "thinking", "redacted_thinking":
			ev = p.base(c, agentevent.TypeReasoning, agentevent.RoleAssistant, agentevent.ChannelChat)
			ev.Text = b.Thinking
		case "text":
			ev = p.base(c, agentevent.TypeAssistantMessage, agentevent.RoleAssistant, agentevent.ChannelChat)
			ev.Text = b.Text
		case "tool_use", "server_tool_use", "mcp_tool_use":
			ev = p.toolCall(c, b)
		default:
			if b.ToolUseID == "" || !strings.HasSuffix(b.Type, "_tool_result") {
				continue // images and unknown blocks: kept in Raw only
			}
			// A server tool's result (web search, code execution) arrives
			// inside the assistant message that called it.
			ev = p.toolResult(c, b.ToolUseID, b.Content, serverToolFailed(b.Content), nil)
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
	if u := m.Usage; u != nil {
		in, read, create, o, first := p.st.countUsage(m.ID, u.InputTokens.V, u.CacheReadInputTokens.V,
			u.CacheCreationInputTokens.V, u.OutputTokens.V)
		if first || in+read+create+o > 0 {
			ev := &out[0].ev
			input := in + read + create
			ev.TokensInput = agentevent.Int(input)
			ev.TokensCached = agentevent.Int(read)
			ev.TokensCacheCreation = agentevent.Int(create)
			ev.TokensOutput = agentevent.Int(o)
			ev.TokensTotal = agentevent.Int(input + o)
		}
	}
	return out, ""
}

// toolCall maps a tool_use block and opens the call.
func (p *Parser) toolCall(c *rowCtx, b block) agentevent.Event {
	var in toolInput
	_ = json.Unmarshal(b.Input, &in) // an input we cannot read names no file
	ev := p.base(c, agentevent.TypeToolCall, agentevent.RoleAssistant, channel(b.Name))
	ev.ToolName = b.Name
	ev.ToolCallID = b.ID
	ev.Text = strings.TrimSpace(string(b.Input))
	ev.FilePath = filePath(in)
	ev.FileOp = fileOp(b.Name)
	if ev.FilePath != "" {
		ev.FileLanguage = fileLanguage(ev.FilePath)
	}
	call := &openCall{
		ID:        strings.Clone(b.ID), // the state must not pin the record's buffer
		Name:      strings.Clone(b.Name),
		Timestamp: c.ts,
		FilePath:  strings.Clone(ev.FilePath),
		Seq:       p.st.nextCallSeq(),
	}
	if isSubagentTool(b.Name) {
		ev.SubagentType = in.SubagentType
		call.Prompt = strings.Clone(strings.TrimSpace(in.Prompt))
	}
	if b.Name == toolBash {
		if cmd := rawString(in.Command); strings.TrimSpace(cmd) != "" {
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
	ev.ErrorType = ErrAPIError
	ev.Status = "error"
	// Claude Code gave up on the model call: the turn ends here.
	attrs := map[string]any{agentevent.AttrTurnEnd: agentevent.TurnEndError}
	if code := rawString(r.Error); code != "" {
		attrs[attrAPIError] = code
	}
	if r.APIErrorStatus.Set {
		attrs[attrAPIStatusCode] = r.APIErrorStatus.V
	}
	ev.Attributes = attrs
	return ev
}

// serverToolFailed tells whether a server tool result's content is an error
// object ({"type": "web_search_tool_result_error", ...}).
func serverToolFailed(content json.RawMessage) bool {
	var v struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(content, &v) != nil {
		return false
	}
	return strings.HasSuffix(v.Type, "_error")
}
