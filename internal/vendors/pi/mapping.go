// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package pi

import (
	"bytes"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
	"github.com/agentotel/agentotel/internal/textutil"
)

// maxErrorAttrBytes bounds the error message kept in agentevent.AttrAPIError.
const maxErrorAttrBytes = 1024

// customModelSnapshot is the custom type of OpenClaw's model snapshots.
const customModelSnapshot = "model-snapshot"

// transcriptOnly tells an assistant message OpenClaw wrote into the
// transcript itself from a model's answer: provider "openclaw" with model
// "delivery-mirror" (the text a channel was sent, mirrored) or
// "gateway-injected" (a message added through the gateway). Such a row
// always has zero usage; one that reports usage is read as a response, so
// no token it names is lost.
func transcriptOnly(m *message) bool {
	return m.Provider == "openclaw" && (m.Model == "delivery-mirror" || m.Model == "gateway-injected") && m.Usage.zero()
}

// Stop reasons of an assistant message.
const (
	stopAborted = "aborted"
	stopStop    = "stop"
	stopError   = "error"
)

// Turn statuses (Event.Status).
const (
	statusInterrupted = "interrupted"
	statusError       = "error"
)

// mapMessage maps a message entry by its role.
func (p *Parser) mapMessage(e *entry, c *rowCtx, replayed bool) (out []pending, reason, detail string) {
	m := e.msg
	if m == nil {
		raw := bytes.TrimSpace(e.Message)
		if len(raw) == 0 || raw[0] != '{' {
			return nil, ReasonUnexpectedShape, "message entry without a message object"
		}
		m = new(message)
		if err := jsonx.Unmarshal(raw, m); err != nil {
			return nil, ReasonUnexpectedShape, "message: " + err.Error()
		}
	}
	if e.Timestamp == "" {
		if t, ok := msTime(m.Timestamp); ok {
			c.ts = t
		}
	}
	switch m.Role {
	case "user":
		str, blocks, ok := m.content()
		if !ok {
			return nil, ReasonUnexpectedShape, "user content"
		}
		ev := p.base(c, agentevent.TypeUserMessage, agentevent.RoleUser, agentevent.ChannelChat)
		ev.Text = contentText(str, blocks)
		return []pending{{ev: ev}}, "", ""
	case "assistant":
		return p.mapAssistant(m, c, replayed)
	case "toolResult":
		return p.mapToolResult(m, c, replayed)
	case "bashExecution":
		return []pending{{ev: p.mapBashExecution(m, c)}}, "", ""
	case "custom", "hookMessage":
		ev := p.meta(c, "custom_message")
		agentevent.SetAttr(&ev, agentevent.AttrCustomType, m.CustomType)
		str, blocks, ok := m.content()
		if !ok {
			return nil, ReasonUnexpectedShape, m.Role + " content"
		}
		ev.Text = contentText(str, blocks)
		return []pending{{ev: ev}}, "", ""
	case "branchSummary", "compactionSummary":
		ev := p.base(c, agentevent.TypeSessionSummary, agentevent.RoleSystem, agentevent.ChannelSystem)
		ev.Text = m.Summary
		if m.Role == "branchSummary" {
			agentevent.SetAttr(&ev, agentevent.AttrSummaryKind, "branch")
			if m.FromID != "" {
				agentevent.SetAttr(&ev, agentevent.AttrBranchFromEntry, m.FromID)
			}
		} else {
			agentevent.SetAttr(&ev, agentevent.AttrSummaryKind, "compaction")
			if m.TokensBefore != nil {
				agentevent.SetAttr(&ev, agentevent.AttrCompactionPreTokens, *m.TokensBefore)
			}
		}
		return []pending{{ev: ev}}, "", ""
	case "":
		return nil, ReasonUnexpectedShape, "message without a role"
	}
	return nil, ReasonUnknownType, "message role " + m.Role
}

// mapAssistant maps one model response: one event per content block
// (thinking → reasoning, text → assistant_message, toolCall → tool_call),
// its usage on the first of them. A response that stopped on an error or an
// abort closes its tool calls (Pi never runs them) and ends with a log
// event carrying the turn status.
func (p *Parser) mapAssistant(m *message, c *rowCtx, replayed bool) ([]pending, string, string) {
	_, blocks, ok := m.content()
	if !ok {
		return nil, ReasonUnexpectedShape, "assistant content"
	}
	if transcriptOnly(m) {
		// OpenClaw's own copy of a message, not a model's answer.
		ev := p.base(c, agentevent.TypeSystemMessage, agentevent.RoleSystem, agentevent.ChannelChat)
		ev.Text = contentText("", blocks)
		agentevent.SetAttr(&ev, agentevent.AttrMessageKind, m.Model)
		return []pending{{ev: ev}}, "", ""
	}
	s := &p.st
	model := textutil.FirstNonEmpty(m.Model, s.Model)
	provider := Provider(textutil.FirstNonEmpty(m.Provider, s.Provider))
	responseID := m.ResponseID
	if responseID == "" {
		responseID = p.eventID(c, 0, 1)
	}
	assistant := func(typ agentevent.EventType) agentevent.Event {
		ev := p.base(c, typ, agentevent.RoleAssistant, agentevent.ChannelChat)
		ev.Model = model
		ev.Provider = provider
		ev.ResponseID = responseID
		if m.API != "" {
			agentevent.SetAttr(&ev, agentevent.AttrAPI, m.API)
		}
		return ev
	}
	failed := m.StopReason == stopAborted || m.StopReason == stopError
	var out []pending
	var calls []string
	for i, b := range blocks {
		switch b.Type {
		case "thinking":
			ev := assistant(agentevent.TypeReasoning)
			ev.Text = b.Thinking
			out = append(out, pending{ev: ev, idx: i})
		case "text":
			ev := assistant(agentevent.TypeAssistantMessage)
			ev.Text = b.Text
			out = append(out, pending{ev: ev, idx: i})
		case "toolCall":
			ev := assistant(agentevent.TypeToolCall)
			p.toolCall(&ev, &b, c, replayed)
			out = append(out, pending{ev: ev, idx: i})
			calls = append(calls, b.ID)
		case "image":
			ev := assistant(agentevent.TypeAssistantMessage)
			ev.Text = "[image]"
			out = append(out, pending{ev: ev, idx: i})
		}
	}
	if len(out) == 0 && (!m.Usage.zero() || !failed) {
		// Nothing to show, but a model call happened: keep its usage.
		out = append(out, pending{ev: assistant(agentevent.TypeAssistantMessage), idx: 0})
	}
	if len(out) > 0 {
		if u := m.Usage; !u.zero() {
			ev := &out[0].ev
			read, write := int64(u.CacheRead), int64(u.CacheWrite)
			in := int64(u.Input) + read + write
			outTok := int64(u.Output)
			ev.TokensInput = agentevent.Int(in)
			ev.TokensOutput = agentevent.Int(outTok)
			ev.TokensTotal = agentevent.Int(in + outTok)
			ev.TokensCached = agentevent.Int(read)
			ev.TokensCacheCreation = agentevent.Int(write)
		}
		if u := m.Usage; u != nil && u.Cost != nil && u.Cost.Total != nil && *u.Cost.Total != 0 {
			out[0].ev.CostUSD = agentevent.Float(*u.Cost.Total)
		}
		if m.StopReason != "" {
			out[len(out)-1].ev.FinishReason = m.StopReason
		}
		if m.StopReason == stopStop {
			// The model answered without asking for a tool: Pi's agent loop
			// ends the turn here.
			agentevent.SetAttr(&out[len(out)-1].ev, agentevent.AttrTurnEnd, agentevent.TurnEndCompleted)
		}
	}
	if !failed {
		return out, "", ""
	}
	next := len(blocks)
	for _, id := range calls {
		// Pi does not run the tool calls of a response that failed or was
		// aborted: each is closed here so it is not left open forever.
		ev := p.base(c, agentevent.TypeToolResult, agentevent.RoleTool, agentevent.ChannelChat)
		p.toolResultFromCall(&ev, id, c)
		ev.ToolStatus = agentevent.ToolError
		ev.ErrorType = agentevent.ErrorTypeInterrupted
		ev.ToolLatencyMs = agentevent.Int(0)
		agentevent.SetAttr(&ev, agentevent.AttrToolNotExecuted, true)
		if !replayed {
			p.st.addNotRun(id)
		}
		out = append(out, pending{ev: ev, idx: next})
		next++
	}
	ev := p.base(c, agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
	ev.Text = m.ErrorMessage
	ev.FinishReason = m.StopReason
	if m.StopReason == stopAborted {
		ev.Status = statusInterrupted
		agentevent.SetAttr(&ev, agentevent.AttrTurnEnd, agentevent.TurnEndInterrupted)
	} else {
		ev.Status = statusError
		agentevent.SetAttr(&ev, agentevent.AttrTurnEnd, agentevent.TurnEndError)
		ev.ErrorType = agentevent.ErrorTypeAPI
		if m.ErrorMessage != "" {
			agentevent.SetAttr(&ev, agentevent.AttrAPIError, truncate(m.ErrorMessage, maxErrorAttrBytes))
		}
	}
	out = append(out, pending{ev: ev, idx: next})
	return out, "", ""
}

// mapBashExecution maps a command the user ran himself (`!cmd`): a log
// event of the terminal with the command's exit code and tool status. It
// carries no ErrorType: the command is not the agent's, and its failure
// must not mark the agent's turn as failed.
func (p *Parser) mapBashExecution(m *message, c *rowCtx) agentevent.Event {
	ev := p.base(c, agentevent.TypeLog, agentevent.RoleCLI, agentevent.ChannelTerminal)
	ev.ToolName = "bash"
	ev.Text = m.Output
	agentevent.SetAttr(&ev, agentevent.AttrToolCommand, agentevent.CommandLine(m.Command))
	if m.ExcludeFromContext {
		agentevent.SetAttr(&ev, agentevent.AttrBashExcludedFromContext, true)
	}
	if m.Truncated {
		agentevent.SetAttr(&ev, agentevent.AttrToolOutputTruncated, true)
	}
	switch {
	case m.Cancelled:
		ev.ToolStatus = agentevent.ToolError
		agentevent.SetAttr(&ev, agentevent.AttrToolCancelled, true)
	case m.ExitCode != nil:
		code := int64(*m.ExitCode)
		ev.ToolExitCode = agentevent.Int(code)
		ev.ToolStatus = agentevent.ToolSuccess
		if code != 0 {
			ev.ToolStatus = agentevent.ToolError
		}
	default:
		ev.ToolStatus = agentevent.ToolUnknown
	}
	return ev
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// providers maps Pi provider ids to gen_ai.provider.name values; ids the
// conventions do not name (ollama, fireworks, openrouter, ...) are kept.
var providers = map[string]string{
	"anthropic":              "anthropic",
	"openai":                 "openai",
	"openai-codex":           "openai",
	"azure-openai-responses": "azure.ai.openai",
	"google":                 "gcp.gemini",
	"google-gemini-cli":      "gcp.gemini",
	"google-vertex":          "gcp.vertex_ai",
	"google-antigravity":     "gcp.gemini",
	"amazon-bedrock":         "aws.bedrock",
	"mistral":                "mistral_ai",
	"groq":                   "groq",
	"deepseek":               "deepseek",
	"xai":                    "x_ai",
	"cohere":                 "cohere",
	"perplexity":             "perplexity",
}

// Provider is the gen_ai.provider.name of a Pi provider id.
func Provider(id string) string {
	if p, ok := providers[id]; ok {
		return p
	}
	return id
}
