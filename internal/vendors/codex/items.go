// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/textutil"
)

// responseItem maps a response_item record.
func (p *Parser) responseItem(it *item, c *rowCtx) ([]agentevent.Event, string, string) {
	if p.st.Replaying {
		p.st.ReplayItems = true
		return nil, "", ""
	}
	switch it.Type {
	case "message":
		if it.Role == "user" && p.decoder != decodeTyped {
			if evs, ok := p.userItem(it, c); ok {
				return evs, "", ""
			}
		}
		text := ""
		if it.Role == "user" || (it.Role == "assistant" && !p.opts.OmitContent) {
			text = partsText(it.Content) // a prompt's text tells injected context apart
		}
		switch it.Role {
		case "user":
			if isInjected(text) || text == "" {
				return nil, "", "" // context Codex injected, not a prompt
			}
			return p.prompt(c, text, "item"), "", ""
		case "assistant":
			p.assistantItem()
			ev := p.base(c, agentevent.TypeAssistantMessage, agentevent.RoleAssistant, agentevent.ChannelChat)
			p.model(&ev)
			ev.Text = text
			if it.Phase != "" {
				agentevent.SetAttr(&ev, agentevent.AttrMessagePhase, it.Phase)
			}
			return []agentevent.Event{ev}, "", ""
		case "developer", "system":
			return nil, "", "" // instructions Codex injected
		}
		return nil, ReasonUnexpectedShape, "message with role " + it.Role
	case "reasoning":
		p.assistantItem()
		ev := p.base(c, agentevent.TypeReasoning, agentevent.RoleAssistant, agentevent.ChannelChat)
		p.model(&ev)
		if !p.opts.OmitContent {
			ev.Text = partsText(it.Summary)
			if t := partsText(it.Content); t != "" {
				if ev.Text != "" {
					ev.Text += "\n"
				}
				ev.Text += t
			}
		}
		return []agentevent.Event{ev}, "", ""
	case "function_call", "custom_tool_call", "local_shell_call":
		p.assistantItem()
		return []agentevent.Event{p.toolCall(it, c)}, "", ""
	case "function_call_output", "custom_tool_call_output":
		p.closeResponse()
		return []agentevent.Event{p.toolResult(it, c)}, "", ""
	case "web_search_call", "image_generation_call":
		p.assistantItem()
		return p.webSearch(it, c), "", ""
	case "tool_search_call":
		p.assistantItem()
		it.Name = textutil.FirstNonEmpty(it.Name, "tool_search")
		ev := p.toolCall(it, c)
		if it.Execution != "" {
			agentevent.SetAttr(&ev, agentevent.AttrCodexToolSearchExecution, it.Execution)
		}
		return []agentevent.Event{ev}, "", ""
	case "tool_search_output":
		p.closeResponse()
		return []agentevent.Event{p.toolSearchResult(it, c)}, "", ""
	case "agent_message":
		// An inter-agent message delivered into this thread's context.
		text := ""
		if !p.opts.OmitContent {
			text = partsText(it.Content)
		}
		return []agentevent.Event{p.agentMessage(c, it.Author, it.Recipient, text)}, "", ""
	case "compaction", "context_compaction":
		// Remote compaction: the summary is encrypted.
		p.st.NoCarrier = true
		ev := p.base(c, agentevent.TypeMeta, agentevent.RoleSystem, agentevent.ChannelSystem)
		agentevent.SetAttr(&ev, agentevent.AttrCompactionTrigger, it.Type)
		return []agentevent.Event{ev}, "", ""
	case "additional_tools", "compaction_trigger", "other":
		return nil, "", "" // request bookkeeping, no conversation content
	case "ghost_snapshot":
		ev := p.base(c, agentevent.TypeFileSnapshot, agentevent.RoleSystem, agentevent.ChannelFilesystem)
		if it.GhostCommit != nil {
			ev.Text = "ghost commit " + it.GhostCommit.ID
			agentevent.SetAttr(&ev, agentevent.AttrSnapshotCommit, it.GhostCommit.ID)
		}
		return []agentevent.Event{ev}, "", ""
	case "":
		return nil, ReasonUnexpectedShape, "response_item without a type"
	}
	return nil, ReasonUnknownType, "response_item type " + it.Type
}

// eventMsg maps an event_msg record.
func (p *Parser) eventMsg(m *eventMsg, c *rowCtx) ([]agentevent.Event, string, string) {
	s := &p.st
	if m.Type == "task_started" {
		if m.TurnID != "" {
			own(&s.TurnID, m.TurnID)
		}
		if s.Replaying && !p.replayEnds() {
			s.ReplayTurns++
			s.ReplayTurnOpen = true
		}
		return nil, "", ""
	}
	if s.Replaying {
		switch m.Type {
		case "token_count":
			if m.Info != nil && m.Info.Total != nil {
				// The parent's cumulative totals: inherited, never counted.
				s.Total = *m.Info.Total
			}
		case "task_complete", "turn_aborted":
			s.ReplayTurnOpen = false
		}
		s.ReplayItems = true
		return nil, "", ""
	}
	switch m.Type {
	case "user_message":
		if m.Message == "" || isInjected(m.Message) {
			return nil, "", ""
		}
		return p.prompt(c, m.Message, "event"), "", ""
	case "token_count":
		return p.tokenCount(m, c), "", ""
	case "task_complete":
		p.closeResponse()
		s.NoCarrier = true
		ev := p.base(c, agentevent.TypeMeta, agentevent.RoleSystem, agentevent.ChannelSystem)
		ev.Status = "completed"
		agentevent.SetAttr(&ev, agentevent.AttrTurnEnd, agentevent.TurnEndCompleted)
		p.turnAttrs(&ev, m)
		return []agentevent.Event{ev}, "", ""
	case "turn_aborted":
		p.closeResponse()
		s.NoCarrier = true
		ev := p.base(c, agentevent.TypeMeta, agentevent.RoleSystem, agentevent.ChannelSystem)
		ev.Status = "interrupted" // not an error notice: no ErrorType
		agentevent.SetAttr(&ev, agentevent.AttrTurnEnd, agentevent.TurnEndInterrupted)
		if m.Reason != "" {
			agentevent.SetAttr(&ev, agentevent.AttrTurnAbortReason, m.Reason)
		}
		p.turnAttrs(&ev, m)
		return []agentevent.Event{ev}, "", ""
	case "error", "stream_error":
		ev := p.base(c, agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
		ev.Text = m.Message
		if m.Type == "error" {
			ev.Status = "error"
			ev.ErrorType = agentevent.ErrorTypeAPI
		} else {
			ev.ErrorType = agentevent.ErrorTypeStream // retried by Codex: the turn goes on
		}
		return []agentevent.Event{ev}, "", ""
	case "thread_settings_applied":
		return []agentevent.Event{p.threadSettingsApplied(m, c)}, "", ""
	case "thread_rolled_back":
		return []agentevent.Event{p.threadRolledBack(m, c)}, "", ""
	case "sub_agent_activity":
		return []agentevent.Event{p.subAgentActivity(m, c)}, "", ""
	case "context_compacted", "entered_review_mode", "exited_review_mode":
		if m.Type == "context_compacted" {
			s.NoCarrier = true
		}
		ev := p.base(c, agentevent.TypeMeta, agentevent.RoleSystem, agentevent.ChannelSystem)
		agentevent.SetAttr(&ev, agentevent.AttrCodexEvent, m.Type)
		if m.Type == "entered_review_mode" {
			// The /review rollout that starts now nests under this turn.
			agentevent.SetAttr(&ev, agentevent.AttrSubagentAnchor, anchorReview)
		}
		return []agentevent.Event{ev}, "", ""
	case "exec_command_end", "patch_apply_end", "mcp_tool_call_end":
		p.toolEnd(m)
		return nil, "", ""
	case "agent_message", "agent_reasoning", "agent_reasoning_raw_content", "agent_reasoning_section_break",
		"exec_command_begin", "exec_command_output_delta", "terminal_interaction", "patch_apply_begin",
		"mcp_tool_call_begin", "web_search_begin", "web_search_end", "item_completed", "item_started",
		"plan_update", "turn_diff", "view_image_tool_call", "background_event", "session_configured",
		"shutdown_complete", "get_history_entry_response", "mcp_list_tools_response",
		"list_custom_prompts_response", "undo_started", "undo_completed", "turn_context",
		"collab_agent_spawn_begin", "collab_agent_spawn_end", "collab_agent_interaction_begin",
		"collab_agent_interaction_end", "collab_waiting_begin", "collab_waiting_end",
		"thread_name_updated", "deprecation_notice", "warning", "raw_response_item", "rate_limits",
		"thread_goal_updated", "image_generation_end",
		"realtime_conversation_closed", "exec_approval_request", "apply_patch_approval_request",
		"request_user_input", "elicitation_request", "mcp_startup_update", "mcp_startup_complete":
		// Deliberately skipped: duplicates of response items (agent_message,
		// agent_reasoning), streaming deltas, begin halves of the *_end
		// events, and UI bookkeeping (README.md).
		return nil, "", ""
	case "":
		return nil, ReasonUnexpectedShape, "event_msg without a type"
	}
	return nil, ReasonUnknownType, "event_msg type " + m.Type
}

func (*Parser) turnAttrs(ev *agentevent.Event, m *eventMsg) {
	if m.TurnID != "" {
		agentevent.SetAttr(ev, agentevent.AttrTurnID, m.TurnID)
	}
	if m.DurationMs != nil {
		agentevent.SetAttr(ev, agentevent.AttrTurnDurationMs, *m.DurationMs)
	}
	if m.TimeToFirstTokenMs != nil {
		agentevent.SetAttr(ev, agentevent.AttrTurnTimeToFirstTokenMs, *m.TimeToFirstTokenMs)
	}
}

// tokenCount attributes usage to the model response it belongs to, only
// when the cumulative total advances: the increment over the total already
// attributed. An unchanged re-emission, or info null, yields nothing.
func (p *Parser) tokenCount(m *eventMsg, c *rowCtx) []agentevent.Event {
	s := &p.st
	if m.Info == nil {
		return nil
	}
	var inc usage
	switch {
	case m.Info.Total != nil:
		inc = m.Info.Total.sub(s.Total)
		if inc.negative() {
			// The total went back (a reset): count the last request.
			if m.Info.Last == nil {
				s.Total = *m.Info.Total
				return nil
			}
			inc = *m.Info.Last
		}
		s.Total = *m.Info.Total
	case m.Info.Last != nil:
		inc = *m.Info.Last
	}
	if inc.zero() {
		return nil
	}
	// A second advance within one response, or one after a turn end or a
	// compaction with no model output since, has no response to carry it.
	own := (s.RespOpen && s.RespHasUsage) || s.NoCarrier
	if !s.RespOpen || s.RespHasUsage {
		s.RespN++
		s.RespOpen = true
	}
	s.RespHasUsage = true
	ev := p.base(c, agentevent.TypeMeta, agentevent.RoleSystem, agentevent.ChannelSystem)
	p.model(&ev)
	if own {
		// No response item is there to carry this advance (after
		// turn_aborted, around a compaction, at the end of a turn): the event
		// stands for a model call of its own.
		agentevent.SetAttr(&ev, agentevent.AttrUsageCarrier, agentevent.UsageCarrierOwn)
	}
	ev.TokensInput = agentevent.Int(inc.Input)
	ev.TokensCached = agentevent.Int(inc.Cached)
	ev.TokensOutput = agentevent.Int(inc.Output)
	ev.TokensThinking = agentevent.Int(inc.Reasoning)
	ev.TokensTotal = agentevent.Int(inc.Input + inc.Output)
	if m.Info.ModelContextWindow != nil {
		agentevent.SetAttr(&ev, agentevent.AttrModelContextWindow, *m.Info.ModelContextWindow)
	}
	return []agentevent.Event{ev}
}

// replayEnds tells, at a task_started of a forked child still replaying
// its parent's history, whether this is the child's own turn (and ends the
// replay). The replay holds the parent's turns up to the spawning one, which
// is still open at the fork instant: the task_started that comes while a
// replayed turn is open is the child's. A replay without any task_started
// (only items) ends at the first one.
func (p *Parser) replayEnds() bool {
	s := &p.st
	if s.ReplayTurnOpen || (s.ReplayTurns == 0 && s.ReplayItems) {
		s.Replaying = false
		return true
	}
	return false
}
