// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"bytes"
	"slices"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
)

// maxRecentPrompts bounds the prompts a thread_rolled_back can name: a
// rollback further back than that still marks its event, without the ids.
const maxRecentPrompts = 16

// decodeItem decodes a response_item payload. A tool search's arguments are
// an object where every other item's are a JSON string: a payload the plain
// decode refuses is decoded again with its arguments raw, kept as their
// compact JSON text.
func decodeItem(raw []byte) (item, bool) {
	var it item
	if jsonx.Unmarshal(raw, &it) == nil {
		return it, true
	}
	var o struct {
		item
		Arguments jsonx.Raw `json:"arguments"`
	}
	if jsonx.Unmarshal(raw, &o) != nil {
		return item{}, false
	}
	switch jsonx.Kind(o.Arguments) {
	case '{', '[':
		var b bytes.Buffer
		if jsonx.Compact(&b, o.Arguments) != nil {
			return item{}, false
		}
		o.item.Arguments = b.String()
	default:
		return item{}, false
	}
	return o.item, true
}

// objectKeys lists the member names of a JSON object, sorted and
// comma-separated ("" for anything else).
func objectKeys(raw []byte) string {
	if jsonx.Kind(raw) != '{' {
		return ""
	}
	var m map[string]jsonx.Raw
	if jsonx.Unmarshal(raw, &m) != nil {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return strings.Join(keys, ",")
}

// worldState maps a world_state record (0.14x): the context Codex keeps in
// the model's view, whole or the parts that changed. It becomes a meta
// event naming the parts; the state itself (AGENTS.md, skills, environment)
// is content.
func (p *Parser) worldState(raw []byte, c *rowCtx) ([]agentevent.Event, string) {
	if p.st.Replaying {
		// The parent's, copied into a forked child: a replayed record like
		// its items (Parser.replayEnds).
		p.st.ReplayItems = true
		return nil, ""
	}
	var w worldState
	if jsonx.Unmarshal(raw, &w) != nil {
		return nil, ReasonUnexpectedShape
	}
	ev := p.base(c, agentevent.TypeMeta, agentevent.RoleSystem, agentevent.ChannelSystem)
	agentevent.SetAttr(&ev, agentevent.AttrCodexEvent, "world_state")
	if w.Full != nil {
		agentevent.SetAttr(&ev, agentevent.AttrCodexWorldStateFull, *w.Full)
	}
	if keys := objectKeys(w.State); keys != "" {
		agentevent.SetAttr(&ev, agentevent.AttrCodexWorldStateKeys, keys)
	}
	if !p.opts.OmitContent && jsonx.Kind(w.State) == '{' {
		ev.Text = string(w.State)
	}
	return []agentevent.Event{ev}, ""
}

// interAgentMessage maps an inter_agent_communication record: a message
// one agent of a thread tree sent another, which Codex puts in the
// recipient's context. It becomes a system_message naming both agents.
func (p *Parser) interAgentMessage(raw []byte, c *rowCtx) ([]agentevent.Event, string) {
	if p.st.Replaying {
		p.st.ReplayItems = true
		return nil, ""
	}
	var m interAgentMessage
	if jsonx.Unmarshal(raw, &m) != nil {
		return nil, ReasonUnexpectedShape
	}
	p.st.TriggerTurn = m.TriggerTurn
	text := ""
	if !p.opts.OmitContent {
		text = m.Content
	}
	return []agentevent.Event{p.agentMessage(c, m.Author, m.Recipient, text)}, ""
}

// interAgentMetadata reads an inter_agent_communication_metadata record:
// it says whether the inter-agent agent_message item that follows starts a
// turn of its recipient, and yields no event of its own.
func (p *Parser) interAgentMetadata(raw []byte) string {
	var m struct {
		TriggerTurn *bool `json:"trigger_turn"`
	}
	if jsonx.Unmarshal(raw, &m) != nil {
		return ReasonUnexpectedShape
	}
	if !p.st.Replaying {
		p.st.TriggerTurn = m.TriggerTurn
	}
	return ""
}

// agentMessage is the system_message of an inter-agent message from author
// to recipient (agent paths), with the trigger flag that came before it.
func (p *Parser) agentMessage(c *rowCtx, author, recipient, text string) agentevent.Event {
	s := &p.st
	p.closeResponse()
	ev := p.base(c, agentevent.TypeSystemMessage, agentevent.RoleSystem, agentevent.ChannelChat)
	ev.Text = text
	if author != "" {
		agentevent.SetAttr(&ev, agentevent.AttrCodexMessageAuthor, author)
	}
	if recipient != "" {
		agentevent.SetAttr(&ev, agentevent.AttrCodexMessageRecipient, recipient)
	}
	if s.TriggerTurn != nil {
		agentevent.SetAttr(&ev, agentevent.AttrCodexTriggerTurn, *s.TriggerTurn)
		s.TriggerTurn = nil
	}
	return ev
}

// toolSearchResult maps a tool_search_output: the result of the call of the
// same call_id, with the search's status and how many tools it found (their
// names are content).
func (p *Parser) toolSearchResult(it *item, c *rowCtx) agentevent.Event {
	ev := p.toolResult(it, c)
	ev.ToolExitCode = nil
	ev.ToolStatus, ev.ErrorType = agentevent.ToolSuccess, ""
	switch it.Status {
	case "failed", "incomplete":
		ev.ToolStatus, ev.ErrorType = agentevent.ToolError, agentevent.ErrorTypeTool
	}
	if it.Execution != "" {
		agentevent.SetAttr(&ev, agentevent.AttrCodexToolSearchExecution, it.Execution)
	}
	var tools []struct {
		Name string `json:"name"`
	}
	if jsonx.Kind(it.Tools) == '[' && jsonx.Unmarshal(it.Tools, &tools) == nil {
		agentevent.SetAttr(&ev, agentevent.AttrCodexToolSearchTools, int64(len(tools)))
		if !p.opts.OmitContent {
			names := make([]string, 0, len(tools))
			for _, t := range tools {
				if t.Name != "" {
					names = append(names, t.Name)
				}
			}
			ev.Text = strings.Join(names, "\n")
		}
	}
	return ev
}

// threadSettingsApplied maps a thread_settings_applied: a meta event with
// the settings the next turns run with.
func (p *Parser) threadSettingsApplied(m *eventMsg, c *rowCtx) agentevent.Event {
	ev := p.base(c, agentevent.TypeMeta, agentevent.RoleSystem, agentevent.ChannelSystem)
	agentevent.SetAttr(&ev, agentevent.AttrCodexEvent, m.Type)
	ts := m.ThreadSettings
	if ts == nil {
		return ev
	}
	set := func(k, v string) {
		if v != "" {
			agentevent.SetAttr(&ev, k, v)
		}
	}
	set(agentevent.AttrCodexModel, ts.Model)
	set(agentevent.AttrCodexModelProvider, ts.ModelProvider)
	set(agentevent.AttrCodexServiceTier, ts.ServiceTier)
	set(agentevent.AttrCodexApprovalPolicy, ts.ApprovalPolicy)
	set(agentevent.AttrCodexReasoningEffort, ts.ReasoningEffort)
	set(agentevent.AttrCodexReasoningSummary, ts.ReasoningSummary)
	set(agentevent.AttrCodexPersonality, ts.Personality)
	if ts.CollaborationMode != nil {
		set(agentevent.AttrCodexCollabMode, ts.CollaborationMode.Mode)
	}
	return ev
}

// threadRolledBack maps a thread_rolled_back: the last num_turns turns were
// taken out of the model's context. They stay in the file and what they
// did stays (their usage counted as spent); the meta event, which belongs
// to the latest of them, says agent.turn.rolled_back and names their
// prompts, which the parser forgets (a later rollback goes further back).
func (p *Parser) threadRolledBack(m *eventMsg, c *rowCtx) agentevent.Event {
	s := &p.st
	ev := p.base(c, agentevent.TypeMeta, agentevent.RoleSystem, agentevent.ChannelSystem)
	agentevent.SetAttr(&ev, agentevent.AttrCodexEvent, m.Type)
	if m.NumTurns == nil || *m.NumTurns <= 0 {
		return ev
	}
	n := *m.NumTurns
	agentevent.SetAttr(&ev, agentevent.AttrCodexRolledBackTurns, n)
	agentevent.SetAttr(&ev, agentevent.AttrTurnRolledBack, true)
	k := int(min(n, int64(len(s.Prompts))))
	if k > 0 {
		gone := s.Prompts[len(s.Prompts)-k:]
		agentevent.SetAttr(&ev, agentevent.AttrCodexRolledBackPrompts, strings.Join(gone, ","))
		s.Prompts = s.Prompts[:len(s.Prompts)-k]
	}
	return ev
}

// subAgentActivity maps a sub_agent_activity (a multi-agent parent's): a
// meta event linking the child agent, by thread id and path, with what
// happened to it.
func (p *Parser) subAgentActivity(m *eventMsg, c *rowCtx) agentevent.Event {
	ev := p.base(c, agentevent.TypeMeta, agentevent.RoleSystem, agentevent.ChannelSystem)
	agentevent.SetAttr(&ev, agentevent.AttrCodexEvent, m.Type)
	if m.Kind != "" {
		agentevent.SetAttr(&ev, agentevent.AttrCodexSubagentActivity, m.Kind)
	}
	if m.AgentThreadID != "" {
		agentevent.SetAttr(&ev, agentevent.AttrCodexAgentThreadID, m.AgentThreadID)
	}
	if m.AgentPath != "" {
		agentevent.SetAttr(&ev, agentevent.AttrCodexAgentPath, m.AgentPath)
	}
	return ev
}

// notePrompt remembers the event id of a prompt, for a rollback to name.
func (s *state) notePrompt(id string) {
	if len(s.Prompts) == maxRecentPrompts {
		s.Prompts = slices.Delete(s.Prompts, 0, 1)
	}
	s.Prompts = append(s.Prompts, id)
}
