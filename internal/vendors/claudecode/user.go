// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"regexp"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
)

// Values of agent.meta.kind on meta events that do not come from a system
// subtype or a session metadata record type.
const (
	metaKindInjected   = "injected_context" // isMeta user rows
	metaKindAttachment = "attachment"
)

// mapUser maps a user row: a prompt, tool results, or one of the rows
// Claude Code writes as "user" without the user having typed anything
// (compact summaries, injected context, interrupt notices, local command
// output).
func (p *Parser) mapUser(r *record, c *rowCtx) ([]pending, string) {
	if _, ok := r.message(); !ok {
		return nil, ReasonUnexpectedShape
	}
	kind, str, blocks := r.content()
	if kind == contentAbsent || kind == contentOther {
		return nil, ReasonUnexpectedShape
	}
	text := str
	if kind == contentBlocks {
		text = blocksText(blocks, false)
	}

	if r.IsCompactSummary {
		// The summary the model wrote of the conversation before a compaction.
		ev := p.base(c, agentevent.TypeSessionSummary, agentevent.RoleAssistant, agentevent.ChannelSystem)
		ev.Text = text
		ev.Attributes = map[string]any{agentevent.AttrSummaryKind: "compaction"}
		return []pending{{ev: ev}}, ""
	}
	for i := range blocks {
		b := &blocks[i]
		if b.Type == "tool_result" {
			return p.toolResults(r, c, blocks), ""
		}
	}
	if o, ok := peerOrigin(r); ok {
		// Another agent's message (a Claude Code session's SendMessage):
		// Claude Code answers it in a turn of its own, as it does a prompt.
		ev := p.base(c, agentevent.TypeUserMessage, agentevent.RoleUser, agentevent.ChannelChat)
		ev.Text = o.Body
		if ev.Text == "" {
			ev.Text = text
		}
		for k, v := range map[string]string{
			agentevent.AttrAgentMessageFrom:     o.From,
			agentevent.AttrAgentMessageFromName: o.Name,
			agentevent.AttrAgentMessageID:       o.MsgID,
		} {
			if v != "" {
				agentevent.SetAttr(&ev, k, v)
			}
		}
		return []pending{{ev: ev}}, ""
	}
	if r.IsMeta {
		// Injected context (local command caveats, expanded slash command or
		// skill prompts, reminders): not typed by the user.
		ev := p.base(c, agentevent.TypeMeta, agentevent.RoleSystem, agentevent.ChannelSystem)
		ev.Text = text
		ev.Attributes = map[string]any{agentevent.AttrMetaKind: metaKindInjected}
		return []pending{{ev: ev}}, ""
	}
	trimmed := strings.TrimSpace(text)
	switch {
	case strings.HasPrefix(trimmed, interruptNotice):
		return []pending{{ev: p.interrupt(c, trimmed)}}, ""
	case strings.HasPrefix(trimmed, "<command-"):
		if name := tagText(trimmed, "command-name"); name != "" {
			// A slash command the user typed. It starts a turn like a prompt:
			// commands such as /init expand into a prompt the model works on.
			ev := p.base(c, agentevent.TypeUserMessage, agentevent.RoleUser, agentevent.ChannelChat)
			ev.Text = strings.TrimSpace(name + " " + tagText(trimmed, "command-args"))
			ev.Attributes = map[string]any{agentevent.AttrCommandName: name}
			return []pending{{ev: ev}}, ""
		}
	case strings.HasPrefix(trimmed, "<local-command-stdout>"), strings.HasPrefix(trimmed, "<local-command-stderr>"),
		strings.HasPrefix(trimmed, "<bash-input>"), strings.HasPrefix(trimmed, "<bash-stdout>"),
		strings.HasPrefix(trimmed, "<bash-stderr>"):
		// Output of a local slash command, or the user's own shell command
		// (! bash mode) and its output: terminal activity, no model involved.
		ev := p.base(c, agentevent.TypeLog, agentevent.RoleCLI, agentevent.ChannelTerminal)
		ev.Text = stripTags(trimmed)
		return []pending{{ev: ev}}, ""
	}
	ev := p.base(c, agentevent.TypeUserMessage, agentevent.RoleUser, agentevent.ChannelChat)
	if kind == contentBlocks {
		ev.Text = promptText(blocks)
	} else {
		ev.Text = str
	}
	return []pending{{ev: ev}}, ""
}

// origin is what a user row's origin says of who sent it.
type origin struct {
	Kind  string `json:"kind"`
	From  string `json:"from"`
	Name  string `json:"name"`
	MsgID string `json:"msg_id"`
	Body  string `json:"body"`
}

// peerOrigin reads the origin of a row another agent sent (kind "peer").
// Such rows are rare: both decode paths read it with the typed decoder.
func peerOrigin(r *record) (origin, bool) {
	var o origin
	if len(r.Origin) == 0 || r.Origin[0] != '{' || jsonx.Unmarshal(r.Origin, &o) != nil || o.Kind != "peer" {
		return origin{}, false
	}
	return o, true
}

// interrupt is the notice Claude Code writes when the user stops a turn.
func (p *Parser) interrupt(c *rowCtx, text string) agentevent.Event {
	ev := p.base(c, agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
	ev.Text = text
	ev.Status = "interrupted"
	agentevent.SetAttr(&ev, agentevent.AttrTurnEnd, agentevent.TurnEndInterrupted)
	return ev
}

// toolResults maps the tool_result blocks of a user row. An interrupt notice
// next to them becomes its own log event; other text blocks ride along in
// the raw record only.
func (p *Parser) toolResults(r *record, c *rowCtx, blocks []block) []pending {
	nResults := 0
	for i := range blocks {
		b := &blocks[i]
		if b.Type == "tool_result" {
			nResults++
		}
	}
	var out []pending
	for i := range blocks {
		b := &blocks[i]
		switch b.Type {
		case "tool_result":
			tur := &toolUseResult{}
			if nResults == 1 {
				// toolUseResult describes the row's one result; with several
				// it cannot be told apart.
				tur = r.toolUseResult(p.typedOnly)
			}
			out = append(out, pending{ev: p.toolResult(c, b.ToolUseID, b.Content, b.IsError, tur), idx: i})
		case "text":
			if t := strings.TrimSpace(b.Text); strings.HasPrefix(t, interruptNotice) {
				out = append(out, pending{ev: p.interrupt(c, t), idx: i})
			}
		}
	}
	return out
}

// toolResult maps one tool result, pairing it with its open call. t is
// the row's toolUseResult (empty when it cannot be told which result it
// describes).
func (p *Parser) toolResult(c *rowCtx, callID string, content []byte, isError bool, t *toolUseResult) agentevent.Event {
	s := &p.st
	call := s.Calls[callID]
	name, path := "", ""
	if call != nil {
		name, path = call.Name, call.FilePath
	}
	ev := p.base(c, agentevent.TypeToolResult, agentevent.RoleTool, channel(name))
	ev.ToolCallID = callID
	ev.ToolName = name
	ev.FilePath = path
	ev.FileOp = fileOp(name)
	if path != "" {
		ev.FileLanguage = agentevent.FileLanguage(path)
	}
	// The result's text is content; without content it is rendered only
	// when a fact is read from it (failure class, exit code, test counts).
	text, rendered := "", false
	resultText := func() string {
		if !rendered {
			text, rendered = rawText(content, p.typedOnly), true
		}
		return text
	}
	if !p.opts.OmitContent {
		ev.Text = resultText()
	}

	obj := &t.obj
	if name == toolSendMessage && obj.MsgID != "" {
		agentevent.SetAttr(&ev, agentevent.AttrAgentMessageID, obj.MsgID)
	}
	undelivered := name == toolSendMessage && obj.Success != nil && !*obj.Success
	if isError || obj.Interrupted || undelivered {
		ev.ToolStatus = agentevent.ToolError
		ev.ErrorType, ev.ToolExitCode = classifyFailure(name, obj.Interrupted, resultText(), t.text)
	} else {
		ev.ToolStatus = agentevent.ToolSuccess
		if name == toolBash && obj.ReturnCodeInterpretation == "" && obj.BackgroundTaskID == "" {
			// A Bash result that is no error exited 0; Claude Code writes no
			// code then. (A command it judged fine despite a non-zero code,
			// e.g. grep finding nothing, says so in returnCodeInterpretation;
			// background commands have not exited yet.)
			ev.ToolExitCode = agentevent.Int(0)
		}
	}
	if ev.ToolStatus == agentevent.ToolSuccess && changesFile(name) {
		fileFacts(&ev, name, t, !p.opts.OmitContent, p.typedOnly)
	}
	if call != nil && call.TestRunner != "" && obj.BackgroundTaskID == "" &&
		ev.ErrorType != agentevent.ErrorTypeRejected && ev.ErrorType != agentevent.ErrorTypePermissionDenied {
		// A test command that ran (a declined one did not; a background
		// one has no output yet).
		testFacts(&ev, call.TestRunner, resultText(), t, p.typedOnly)
	}
	if call != nil && !call.Timestamp.IsZero() && !c.ts.IsZero() {
		if ms := c.ts.Sub(call.Timestamp).Milliseconds(); ms >= 0 {
			ev.ToolLatencyMs = agentevent.Int(ms)
		}
	}
	switch {
	case obj.AgentID != "":
		ev.SpawnedAgentID = obj.AgentID
	case call != nil && call.Sidechain != "":
		ev.SpawnedAgentID = call.Sidechain
	}
	if call != nil {
		if call.Sidechain != "" {
			s.endSidechain(call.Sidechain)
			delete(s.Prompts, threadKey(c.sessionID, call.Sidechain))
		}
		delete(s.Calls, callID)
	}
	return ev
}

// ideContextPrefixes mark text blocks the IDE adds to a prompt (the open
// file, the selection) next to what the user typed.
var ideContextPrefixes = []string{"<ide_opened_file>", "<ide_selection>", "<ide_diagnostics>", "<system-reminder>"}

// promptText is the text of a prompt made of blocks: the text blocks, without
// the IDE context blocks unless nothing else is there.
func promptText(blocks []block) string {
	var typed, context []string
	for i := range blocks {
		b := &blocks[i]
		if b.Type != "text" {
			continue
		}
		t := strings.TrimSpace(b.Text)
		isContext := false
		for _, pre := range ideContextPrefixes {
			if strings.HasPrefix(t, pre) {
				isContext = true
				break
			}
		}
		if isContext {
			context = append(context, b.Text)
		} else {
			typed = append(typed, b.Text)
		}
	}
	if len(typed) == 0 {
		typed = context
	}
	return strings.Join(typed, "\n")
}

// tagText returns the text inside <tag>...</tag>, "" when absent.
func tagText(s, tag string) string {
	open, end := "<"+tag+">", "</"+tag+">"
	_, rest, ok := strings.Cut(s, open)
	if !ok {
		return ""
	}
	text, _, ok := strings.Cut(rest, end)
	if !ok {
		return ""
	}
	return strings.TrimSpace(text)
}

var tagPattern = regexp.MustCompile(`</?[a-z][a-z0-9_-]*>`)

// stripTags removes the pseudo-XML tags Claude Code wraps local output in.
func stripTags(s string) string {
	return strings.TrimSpace(tagPattern.ReplaceAllString(s, ""))
}
