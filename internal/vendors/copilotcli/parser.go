// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package copilotcli maps the session logs of GitHub Copilot CLI to
// agentevent events: the append-only events.jsonl
// (~/.copilot/session-state/<id>/events.jsonl, and the older flat
// session-state/<id>.jsonl) through a Parser handed one line at a time, and
// the oldest whole-file history-session-state/*.json through MapHistory. It
// is pure: no I/O. README.md holds the mapping table.
package copilotcli

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
	"github.com/agentotel/agentotel/internal/textutil"
)

// Unparsed reasons (the shared ones of agentevent's parser skeleton).
const (
	ReasonMalformedJSON   = agentevent.ReasonMalformedJSON
	ReasonUnknownType     = agentevent.ReasonUnknownType
	ReasonUnexpectedShape = agentevent.ReasonUnexpectedShape
	ReasonParserError     = agentevent.ReasonParserError
)

// Parser maps the records of one events.jsonl (or flat <id>.jsonl) file. It
// is not safe for concurrent use; each file gets its own Parser.
type Parser struct {
	path string
	opts Options
	// fileSessionID is the session id the path carries (the folder name of
	// session-state/<id>/events.jsonl, or the flat file's name).
	fileSessionID string
	st            state
	// hashedRoot and rootHash cache ProjectHash(root).
	hashedRoot, rootHash string
}

// NewParser returns the parser for one session file. path is the file's
// path; it goes into Event.LogFile and names the session until
// session.start does. NewParser does no I/O.
func NewParser(path string) *Parser {
	return NewParserWithOptions(path, Options{})
}

// Options tune what a Parser builds. The zero value builds everything.
type Options struct {
	// OmitContent: the caller drops content (agentevent.StripContent), so
	// the parser does not render tool call arguments. Every other field is
	// as without it.
	OmitContent bool
	// OmitRaw: the caller drops Event.Raw, so the parser does not copy the
	// record into it.
	OmitRaw bool
}

// NewParserWithOptions is NewParser with options (see Options).
func NewParserWithOptions(path string, opts Options) *Parser {
	return &Parser{path: path, opts: opts, fileSessionID: SessionIDFromPath(path), st: newState()}
}

// SessionIDFromPath is the session id a session file's path carries:
// session-state/<id>/events.jsonl → <id>; session-state/<id>.jsonl → <id>.
func SessionIDFromPath(path string) string {
	base := filepath.Base(path)
	if base == "events.jsonl" {
		return filepath.Base(filepath.Dir(path))
	}
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// SetWorkspace gives the parser what workspace.yaml beside events.jsonl
// says; it fills the project root and branch while session.start has not
// named them (and for files that never do). Call it before Parse; it is
// persisted with the state.
func (p *Parser) SetWorkspace(w Workspace) {
	p.st.WorkspaceRoot = textutil.FirstNonEmpty(w.Cwd, w.GitRoot)
	p.st.WorkspaceBranch = w.Branch
}

// rowCtx is what a record shares with every event it yields.
type rowCtx struct {
	lineNo, offset int64
	line           []byte
	recordID       string
	ts             time.Time
	// agent is the subagent (its spawning tool call id) the record belongs
	// to; "" for the main agent.
	agent string
}

// Parse maps one record (the line without its trailing "\n"). lineNo is
// 1-based, offset is the byte offset of the line's start. Returns 0..N fully
// normalized events. A record at or before the last offset already parsed
// (after UnmarshalState) yields nothing. Never panics: a malformed line or
// an unknown record type yields one event with Unparsed set, Type log, Role
// system, Raw = line.
func (p *Parser) Parse(line []byte, lineNo, offset int64) (events []agentevent.Event) {
	if !p.st.Admit(offset) {
		return nil
	}
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return nil
	}
	c := &rowCtx{lineNo: lineNo, offset: offset, line: line, ts: p.st.Timestamp}
	defer agentevent.RecoverRecord(&events, func(reason, detail string) []agentevent.Event {
		return p.unparsed(c, reason, detail)
	})
	if trimmed[0] != '{' {
		reason, detail := agentevent.NotAnObject(trimmed)
		return p.unparsed(c, reason, detail)
	}
	var r *record
	var d data
	var f fastRecord
	if jsonx.Unmarshal(trimmed, &f) == nil {
		r = &f.record
		if f.Data != nil {
			d = *f.Data
		}
	} else {
		r = new(record)
		if err := jsonx.Unmarshal(trimmed, r); err != nil {
			reason, detail := agentevent.DecodeFailure(trimmed, err)
			return p.unparsed(c, reason, detail)
		}
		if len(r.Data) > 0 && !bytes.Equal(r.Data, []byte("null")) {
			if err := jsonx.Unmarshal(r.Data, &d); err != nil {
				p.recordTime(c, r)
				return p.unparsed(c, ReasonUnexpectedShape, r.Type+": "+err.Error())
			}
		}
	}
	p.recordTime(c, r)
	if p.st.SessionID == "" {
		p.st.SessionID = p.fileSessionID
	}
	if d.ParentToolCallID != "" {
		c.agent = strings.Clone(d.ParentToolCallID)
		if _, known := p.st.Subagents[c.agent]; !known {
			// A subagent's record before (or without) its
			// subagent.started: the thread exists all the same, and the
			// call's result will name it.
			p.st.addSubagent(c.agent, "")
		}
	}
	out, reason, detail := p.mapRecord(r, &d, c)
	if reason != "" {
		return p.unparsed(c, reason, detail)
	}
	return p.finish(c, out)
}

// skipped are record types that carry nothing a trace needs: bookkeeping
// around a model request, and streaming deltas (not persisted by the CLIs
// seen, listed so that a CLI that does persist them is not reported).
var skipped = map[string]bool{
	"assistant.turn_start":          true, // a model request of the agent loop begins; its messages follow
	"assistant.turn_end":            true,
	"hook.start":                    true, // its time is kept for hook.end
	"assistant.message_delta":       true,
	"assistant.reasoning_delta":     true,
	"assistant.streaming_delta":     true,
	"tool.execution_progress":       true,
	"tool.execution_partial_result": true,
	"session.idle":                  true,
}

func (p *Parser) mapRecord(r *record, d *data, c *rowCtx) (out []agentevent.Event, reason, detail string) {
	s := &p.st
	switch r.Type {
	case "session.start":
		return p.sessionStart(d, c), "", ""
	case "session.resume":
		// The resumed run goes on with the model it names (a resume may
		// switch models without a session.model_change).
		s.setModel(d.SelectedModel, r.Type)
		ev := p.meta(c, r.Type)
		if d.EventCount != nil {
			agentevent.SetAttr(&ev, agentevent.AttrCopilotResumeEventCount, *d.EventCount)
		}
		return []agentevent.Event{ev}, "", ""
	case "session.model_change":
		s.setModel(d.NewModel, r.Type)
		ev := p.meta(c, r.Type)
		agentevent.SetAttr(&ev, agentevent.AttrModelChangeModel, d.NewModel)
		if d.PreviousModel != "" {
			agentevent.SetAttr(&ev, agentevent.AttrModelChangePreviousModel, d.PreviousModel)
		}
		if d.ReasoningEffort != "" {
			agentevent.SetAttr(&ev, agentevent.AttrCopilotReasoningEffort, d.ReasoningEffort)
		}
		return []agentevent.Event{ev}, "", ""
	case "session.mode_changed":
		ev := p.meta(c, r.Type)
		agentevent.SetAttr(&ev, agentevent.AttrCopilotMode, d.NewMode)
		agentevent.SetAttr(&ev, agentevent.AttrCopilotPreviousMode, d.PreviousMode)
		return []agentevent.Event{ev}, "", ""
	case "session.info", "session.warning":
		ev := p.base(c, agentevent.TypeLog, agentevent.RoleCLI, agentevent.ChannelSystem)
		ev.Text = d.Message
		agentevent.SetAttr(&ev, agentevent.AttrCopilotEvent, r.Type)
		agentevent.SetAttr(&ev, agentevent.AttrCopilotInfoType, textutil.FirstNonEmpty(d.InfoType, d.WarningType))
		return []agentevent.Event{ev}, "", ""
	case "session.error":
		// A failed request (a lost connection, a rate limit, an API
		// error). Not an end of turn by itself: the CLI can go on (the
		// corpus has a turn that answered after a lost connection). An
		// error notice: the turn ends in error when nothing answered after
		// it.
		ev := p.base(c, agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
		ev.Text = d.Message
		ev.ErrorType = textutil.FirstNonEmpty(d.ErrorType, agentevent.ErrorTypeSession)
		agentevent.SetAttr(&ev, agentevent.AttrCopilotEvent, r.Type)
		return []agentevent.Event{ev}, "", ""
	case "session.truncation":
		ev := p.meta(c, r.Type)
		for k, v := range map[string]*int64{
			"token_limit": d.TokenLimit, "pre_tokens": d.PreTruncationTokensInMessages,
			"post_tokens": d.PostTruncationTokensInMessages, "tokens_removed": d.TokensRemovedDuringTruncation,
			"messages_removed": d.MessagesRemovedDuringTruncation,
		} {
			if v != nil {
				agentevent.SetAttr(&ev, agentevent.AttrTruncationPrefix+k, *v)
			}
		}
		if d.PerformedBy != "" {
			agentevent.SetAttr(&ev, agentevent.AttrTruncationPrefix+"performed_by", d.PerformedBy)
		}
		return []agentevent.Event{ev}, "", ""
	case "session.compaction_start":
		ev := p.meta(c, r.Type)
		return []agentevent.Event{ev}, "", ""
	case "session.compaction_complete":
		ev := p.base(c, agentevent.TypeSessionSummary, agentevent.RoleSystem, agentevent.ChannelSystem)
		ev.Text = d.SummaryContent
		agentevent.SetAttr(&ev, agentevent.AttrCompactionTrigger, "compaction")
		if d.PreCompactionTokens != nil {
			agentevent.SetAttr(&ev, agentevent.AttrCompactionPreTokens, *d.PreCompactionTokens)
		}
		if d.Success != nil && !*d.Success {
			agentevent.SetAttr(&ev, agentevent.AttrCompactionFailed, true)
		}
		return []agentevent.Event{ev}, "", ""
	case "session.task_complete":
		// The agent declared the task done (autopilot and task_complete):
		// the turn's own end marker.
		ev := p.meta(c, r.Type)
		ev.Text = d.Summary
		ev.Status = "completed"
		agentevent.SetAttr(&ev, agentevent.AttrTurnEnd, agentevent.TurnEndCompleted)
		return []agentevent.Event{ev}, "", ""
	case "session.shutdown":
		return p.shutdown(d, c), "", ""
	case "skill.invoked":
		// The CLI loaded a skill's SKILL.md into the conversation: a fact
		// of the session, not a call of the model's (the skill tool's call,
		// when the model asked for it, is its own record).
		ev := p.meta(c, r.Type)
		if d.SkillName != "" {
			agentevent.SetAttr(&ev, agentevent.AttrSkillName, d.SkillName)
		}
		if d.PluginName != "" {
			agentevent.SetAttr(&ev, agentevent.AttrSkillSource, d.PluginName)
		}
		return []agentevent.Event{ev}, "", ""
	case "abort":
		ev := p.meta(c, r.Type)
		ev.Status = "interrupted"
		agentevent.SetAttr(&ev, agentevent.AttrTurnEnd, agentevent.TurnEndInterrupted)
		return []agentevent.Event{ev}, "", ""
	case "user.message":
		ev := p.base(c, agentevent.TypeUserMessage, agentevent.RoleUser, agentevent.ChannelChat)
		ev.Text = d.Content
		if d.AgentMode != "" {
			agentevent.SetAttr(&ev, agentevent.AttrCopilotMode, d.AgentMode)
		}
		return []agentevent.Event{ev}, "", ""
	case "system.notification":
		return []agentevent.Event{p.notification(d, c)}, "", ""
	case "system.message":
		ev := p.base(c, agentevent.TypeSystemMessage, agentevent.RoleSystem, agentevent.ChannelSystem)
		ev.Text = d.Content
		return []agentevent.Event{ev}, "", ""
	case "assistant.message":
		return p.assistant(d, c), "", ""
	case "assistant.reasoning":
		ev := p.base(c, agentevent.TypeReasoning, agentevent.RoleAssistant, agentevent.ChannelChat)
		ev.Text = d.Content
		p.model(&ev, "")
		return []agentevent.Event{ev}, "", ""
	case "tool.execution_start":
		return p.toolStart(d, c), "", ""
	case "tool.execution_complete":
		return p.toolComplete(d, c), "", ""
	case "hook.end":
		return []agentevent.Event{p.hookEnd(d, c)}, "", ""
	case "subagent.started":
		return p.subagentStarted(d, c), "", ""
	case "subagent.completed", "subagent.failed":
		return p.subagentEnded(r.Type, d, c), "", ""
	case "":
		return nil, ReasonUnexpectedShape, "record has no type"
	}
	if r.Type == "hook.start" {
		if d.HookInvocationID != "" {
			s.addHook(strings.Clone(d.HookInvocationID), c.ts)
		}
		return nil, "", ""
	}
	if skipped[r.Type] {
		return nil, "", ""
	}
	return nil, ReasonUnknownType, "record type " + r.Type
}

func (p *Parser) sessionStart(d *data, c *rowCtx) []agentevent.Event {
	s := &p.st
	if d.SessionID != "" && !s.Started {
		s.SessionID = strings.Clone(d.SessionID)
	}
	s.Started = true
	if v := d.CopilotVersion; v != "" && v != "unknown" {
		s.CLIVersion = strings.Clone(v)
	}
	s.setModel(d.SelectedModel, "session.start")
	if d.Producer != "" {
		s.Producer = strings.Clone(d.Producer)
	}
	if ctx := d.Context; ctx != nil {
		s.Cwd = strings.Clone(textutil.FirstNonEmpty(ctx.Cwd, ctx.GitRoot))
		s.Branch = strings.Clone(ctx.Branch)
	}
	ev := p.meta(c, "session.start")
	agentevent.SetAttr(&ev, agentevent.AttrSessionStart, true)
	if d.ReasoningEffort != "" {
		agentevent.SetAttr(&ev, agentevent.AttrCopilotReasoningEffort, d.ReasoningEffort)
	}
	if ctx := d.Context; ctx != nil {
		if ctx.HeadCommit != "" {
			agentevent.SetAttr(&ev, agentevent.AttrGitCommit, ctx.HeadCommit)
		}
		if ctx.Repository != "" {
			agentevent.SetAttr(&ev, agentevent.AttrGitRepository, ctx.Repository)
		}
	}
	return []agentevent.Event{ev}
}

// assistant maps one model response: its reasoning text, its text, its
// tool requests. They share ResponseID = messageId; the response's
// outputTokens go on its first event.
func (p *Parser) assistant(d *data, c *rowCtx) []agentevent.Event {
	var out []agentevent.Event
	responseID := strings.Clone(d.MessageID)
	if responseID == "" {
		responseID = c.recordID
	}
	// Newer CLIs name the response's model; it is the name its shutdown's
	// metrics use, where the session's current model may not be.
	model := strings.Clone(d.Model)
	add := func(ev agentevent.Event) {
		ev.ResponseID = responseID
		if from := p.model(&ev, model); from != "" {
			agentevent.SetAttr(&ev, agentevent.AttrChatModelSource, from)
		}
		out = append(out, ev)
	}
	if strings.TrimSpace(d.ReasoningText) != "" {
		ev := p.base(c, agentevent.TypeReasoning, agentevent.RoleAssistant, agentevent.ChannelChat)
		ev.Text = d.ReasoningText
		add(ev)
	}
	if strings.TrimSpace(d.Content) != "" || len(d.ToolRequests) == 0 {
		ev := p.base(c, agentevent.TypeAssistantMessage, agentevent.RoleAssistant, agentevent.ChannelChat)
		ev.Text = d.Content
		add(ev)
	}
	for i := range d.ToolRequests {
		tr := &d.ToolRequests[i]
		if tr.ToolCallID != "" && p.st.Calls[tr.ToolCallID] != nil {
			continue // asked twice: the first request stands
		}
		ev := p.base(c, agentevent.TypeToolCall, agentevent.RoleAssistant, agentevent.ChannelChat)
		p.toolCall(&ev, tr.ToolCallID, tr.Name, tr.Arguments, c)
		add(ev)
	}
	if len(d.ToolRequests) == 0 && len(out) > 0 {
		// An answer that asks for no tool ends the agent loop: the turn
		// is over (autopilot may still add session.task_complete).
		agentevent.SetAttr(&out[len(out)-1], agentevent.AttrTurnEnd, agentevent.TurnEndCompleted)
	}
	if d.OutputTokens != nil && len(out) > 0 {
		n := *d.OutputTokens
		out[0].TokensOutput = agentevent.Int(n)
		out[0].TokensTotal = agentevent.Int(n)
		p.st.addOutput(out[0].Model, n)
	}
	if c.agent == "" {
		p.st.setModel(model, "assistant.message")
	}
	return out
}

// notification maps system.notification: the notice the CLI gives the model
// that work it ran in the background is done (a background agent finished
// or went idle, a shell command exited). A notice like session.info, not an
// error: a failed agent or command is reported by its own records (its
// subagent.failed, the tool result that reads it), and a notice must not
// end a turn in error.
func (p *Parser) notification(d *data, c *rowCtx) agentevent.Event {
	ev := p.base(c, agentevent.TypeLog, agentevent.RoleCLI, agentevent.ChannelSystem)
	ev.Text = d.Content
	agentevent.SetAttr(&ev, agentevent.AttrCopilotEvent, "system.notification")
	var k notificationKind
	if jsonx.Kind(d.Kind) != '{' || jsonx.Unmarshal(d.Kind, &k) != nil {
		return ev // a kind of another shape: the notice without its facts
	}
	for key, v := range map[string]string{
		agentevent.AttrCopilotNotificationKind: k.Type, agentevent.AttrCopilotNotificationAgentID: k.AgentID, agentevent.AttrCopilotNotificationAgentType: k.AgentType,
		agentevent.AttrCopilotNotificationStatus: k.Status, agentevent.AttrCopilotNotificationShellID: k.ShellID,
	} {
		if v != "" {
			agentevent.SetAttr(&ev, key, v)
		}
	}
	if k.ExitCode != nil {
		if n, err := k.ExitCode.Int64(); err == nil {
			agentevent.SetAttr(&ev, agentevent.AttrCopilotNotificationExitCode, n)
		}
	}
	return ev
}

// byCommonPrefix returns models (sorted) ordered by the length of the
// prefix each shares with name, longest first; ties keep name order.
func byCommonPrefix(models []string, name string) []string {
	common := func(m string) int {
		n := 0
		for n < len(m) && n < len(name) && m[n] == name[n] {
			n++
		}
		return n
	}
	out := slices.Clone(models)
	slices.SortStableFunc(out, func(a, b string) int { return common(b) - common(a) })
	return out
}

// model fills the model and provider and says where the model was read
// (ModelSourceOwn, else a record type; "" for none): the model the record
// names, else the subagent's (when subagent.started named one), else the
// model of the nearest earlier record of the main thread that names one —
// session.start / session.resume (selectedModel), session.model_change,
// assistant.message (model), tool.execution_complete (model: the model
// that asked for the call), session.shutdown (currentModel, which the
// resumed run goes on with). Only earlier records: the response's events
// go out as its line is read, before the records after it.
func (p *Parser) model(ev *agentevent.Event, model string) string {
	from := ModelSourceOwn
	switch {
	case model != "":
	case p.st.SubagentModels[ev.AgentID] != "":
		model, from = p.st.SubagentModels[ev.AgentID], "subagent.started"
	default:
		model, from = p.st.Model, p.st.ModelFrom
	}
	ev.Model = model
	ev.Provider = Provider(ev.Model)
	if model == "" {
		return ""
	}
	return from
}

// ModelSourceOwn is agentevent.AttrChatModelSource on a response that
// names its model.
const ModelSourceOwn = "own"

// shutdown maps session.shutdown: the CLI's per-model usage of the run
// (segment) that ends here; a resumed session writes one per run, each
// with that run's usage only. Its output tokens were already counted per
// response (assistant.message outputTokens) where the log has them: only
// the rest is added, so the segment's total equals the shutdown's, counted
// once. What was counted per response is taken off the model it was
// counted under; what was counted under a name the shutdown's metrics do
// not use is taken off the metrics' models, the one whose name shares the
// longest prefix with it first ("claude-opus-4.6" → "claude-opus-4.6-1m"),
// so that the segment never counts its responses on top of the shutdown's
// totals and each model keeps its own output as far as the names tell.
func (p *Parser) shutdown(d *data, c *rowCtx) []agentevent.Event {
	s := &p.st
	ev := p.meta(c, "session.shutdown")
	if d.ShutdownType != "" {
		agentevent.SetAttr(&ev, agentevent.AttrCopilotShutdownType, d.ShutdownType)
	}
	if d.TotalPremiumRequests != nil {
		agentevent.SetAttr(&ev, agentevent.AttrCopilotPremiumRequests, *d.TotalPremiumRequests)
	}
	if d.TotalAPIDurationMs != nil {
		agentevent.SetAttr(&ev, agentevent.AttrCopilotAPIDurationMs, *d.TotalAPIDurationMs)
	}
	if cc := d.CodeChanges; cc != nil {
		if cc.LinesAdded != nil {
			agentevent.SetAttr(&ev, agentevent.AttrCopilotLinesAdded, *cc.LinesAdded)
		}
		if cc.LinesRemoved != nil {
			agentevent.SetAttr(&ev, agentevent.AttrCopilotLinesRemoved, *cc.LinesRemoved)
		}
		agentevent.SetAttr(&ev, agentevent.AttrCopilotFilesModified, int64(len(cc.FilesModified)))
	}
	out := []agentevent.Event{ev}
	models := make([]string, 0, len(d.ModelMetrics))
	for m := range d.ModelMetrics {
		models = append(models, m)
	}
	slices.Sort(models)
	// counted is the output already counted per response in this segment,
	// by the shutdown model it is taken off.
	counted := make(map[string]int64, len(models))
	var unmatched []string
	for m, n := range s.Output {
		if _, ok := d.ModelMetrics[m]; ok {
			counted[m] = n
		} else {
			unmatched = append(unmatched, m)
		}
	}
	slices.Sort(unmatched)
	for _, name := range unmatched {
		left := s.Output[name]
		for _, m := range byCommonPrefix(models, name) {
			if left <= 0 {
				break
			}
			take := min(left, max(d.ModelMetrics[m].Usage.OutputTokens-counted[m], 0))
			counted[m] += take
			left -= take
		}
	}
	for _, m := range models {
		mm := d.ModelMetrics[m]
		u := mm.Usage
		ue := p.meta(c, "session.shutdown.usage")
		p.model(&ue, m)
		// A response of its own: the chat span that carries the usage the
		// per-response records do not.
		ue.ResponseID = s.SessionID + ":shutdown:" + strconv64(c.offset) + ":" + m
		agentevent.SetAttr(&ue, agentevent.AttrCopilotUsageScope, "session")
		agentevent.SetAttr(&ue, agentevent.AttrUsageCarrier, agentevent.UsageCarrierOwn)
		if mm.Requests.Count != nil {
			agentevent.SetAttr(&ue, agentevent.AttrCopilotRequests, *mm.Requests.Count)
		}
		if mm.Requests.Cost != nil {
			agentevent.SetAttr(&ue, agentevent.AttrCopilotPremiumRequests, *mm.Requests.Cost)
		}
		// More was counted per response than the CLI sums: keep what was counted.
		output := max(u.OutputTokens-counted[m], 0)
		ue.TokensInput = agentevent.Int(u.InputTokens)
		ue.TokensCached = agentevent.Int(u.CacheReadTokens)
		ue.TokensCacheCreation = agentevent.Int(u.CacheWriteTokens)
		ue.TokensOutput = agentevent.Int(output)
		ue.TokensTotal = agentevent.Int(u.InputTokens + output)
		out = append(out, ue)
	}
	// The next run of a resumed session reports its own usage.
	clear(s.Output)
	// The run after a resume goes on with the model the CLI exited with.
	if d.CurrentModel != "" {
		s.setModel(d.CurrentModel, "session.shutdown")
	} else if len(models) == 1 {
		s.setModel(models[0], "session.shutdown")
	}
	return out
}

func (p *Parser) hookEnd(d *data, c *rowCtx) agentevent.Event {
	ev := p.meta(c, "hook")
	agentevent.SetAttr(&ev, agentevent.AttrHookType, d.HookType)
	if t, ok := p.st.takeHook(d.HookInvocationID); ok && !c.ts.IsZero() {
		if ms := c.ts.Sub(t).Milliseconds(); ms >= 0 {
			agentevent.SetAttr(&ev, agentevent.AttrHookDurationMs, ms)
		}
	}
	if d.Success != nil && !*d.Success {
		ev.ErrorType = agentevent.ErrorTypeHook
		if msg := errorMessage(d.Error); msg != "" {
			ev.Text = msg
		}
	}
	return ev
}

// subagentStarted opens the thread of a subagent (a task tool call): its
// prompt is the call's prompt argument.
func (p *Parser) subagentStarted(d *data, c *rowCtx) []agentevent.Event {
	if d.ToolCallID == "" {
		ev := p.meta(c, "subagent.started")
		return []agentevent.Event{ev}
	}
	c.agent = strings.Clone(d.ToolCallID)
	name := strings.Clone(textutil.FirstNonEmpty(d.AgentName, d.AgentDisplayName))
	prompt := ""
	if oc := p.st.Calls[d.ToolCallID]; oc != nil {
		prompt = oc.Prompt
		name = textutil.FirstNonEmpty(name, oc.AgentType)
	}
	p.st.addSubagent(c.agent, name)
	if d.Model != "" {
		p.st.SubagentModels[c.agent] = strings.Clone(d.Model)
	}
	ev := p.base(c, agentevent.TypeUserMessage, agentevent.RoleUser, agentevent.ChannelChat)
	ev.Text = prompt
	return []agentevent.Event{ev}
}

func (p *Parser) subagentEnded(typ string, d *data, c *rowCtx) []agentevent.Event {
	if d.ToolCallID != "" {
		c.agent = strings.Clone(d.ToolCallID)
	}
	ev := p.meta(c, typ)
	ev.Status = "completed"
	agentevent.SetAttr(&ev, agentevent.AttrTurnEnd, agentevent.TurnEndCompleted)
	if typ == "subagent.failed" {
		ev.Status = "error"
		agentevent.SetAttr(&ev, agentevent.AttrTurnEnd, agentevent.TurnEndError)
		ev.ErrorType = agentevent.ErrorTypeSubagent
		ev.Text = errorMessage(d.Error)
	}
	return []agentevent.Event{ev}
}

// base starts an event with the envelope of the record.
func (p *Parser) base(c *rowCtx, typ agentevent.EventType, role agentevent.Role, ch agentevent.Channel) agentevent.Event {
	s := &p.st
	root := textutil.FirstNonEmpty(s.Cwd, s.WorkspaceRoot)
	ev := agentevent.Event{
		Source:       Source,
		SessionID:    s.SessionID,
		ProjectRoot:  root,
		ProjectHash:  p.projectHash(root),
		Timestamp:    c.ts,
		Type:         typ,
		Role:         role,
		Channel:      ch,
		AgentVersion: s.CLIVersion,
		GitBranch:    textutil.FirstNonEmpty(s.Branch, s.WorkspaceBranch),
		Entrypoint:   s.Producer,
	}
	if c.agent != "" {
		ev.AgentID = c.agent
		ev.IsSidechain = true
		ev.ParentToolCallID = c.agent
		ev.SubagentType = s.Subagents[c.agent]
	}
	return ev
}

func (p *Parser) meta(c *rowCtx, kind string) agentevent.Event {
	ev := p.base(c, agentevent.TypeMeta, agentevent.RoleSystem, agentevent.ChannelSystem)
	agentevent.SetAttr(&ev, agentevent.AttrCopilotEvent, kind)
	return ev
}

func (p *Parser) projectHash(root string) string {
	if root != p.hashedRoot || (p.rootHash == "" && root != "") {
		p.hashedRoot, p.rootHash = root, agentevent.ProjectHash(root)
	}
	return p.rootHash
}

// eventID is the id of the idx-th of n events of a record: the record's id
// (a uuid), "#<idx>" added when it yields several; a stable hash of file
// and offset for a record without id.
func (p *Parser) eventID(c *rowCtx, idx, n int) string {
	if c.recordID == "" {
		return agentevent.StableID(p.path, c.offset, idx)
	}
	if n > 1 {
		return fmt.Sprintf("%s#%d", c.recordID, idx)
	}
	return c.recordID
}

// recordTime takes the record's time and id into the row.
func (p *Parser) recordTime(c *rowCtx, r *record) {
	if t, ok := parseTime(r.Timestamp); ok {
		c.ts = t
		p.st.Timestamp = t
	}
	c.recordID = strings.Clone(r.ID)
}

// finish gives the events of one record their ids, turn parents, sequence
// and location, and normalizes them.
func (p *Parser) finish(c *rowCtx, out []agentevent.Event) []agentevent.Event {
	if len(out) == 0 {
		return nil
	}
	var raw []byte
	if !p.opts.OmitRaw {
		raw = bytes.Clone(c.line)
	}
	for i := range out {
		ev := &out[i]
		if ev.EventID == "" {
			ev.EventID = p.eventID(c, i, len(out))
		}
		p.st.ChainIn(ev, p.st.Prompts, ev.AgentID)
		ev.LogFile = p.path
		ev.LogLine = c.lineNo
		ev.Raw = raw
		agentevent.Normalize(ev)
	}
	return out
}

// unparsed reports a record that could not be mapped: one log event that
// carries the line.
func (p *Parser) unparsed(c *rowCtx, reason, detail string) []agentevent.Event {
	if p.st.SessionID == "" {
		p.st.SessionID = p.fileSessionID
	}
	c.recordID = ""
	ev := p.base(c, agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
	ev.Unparsed = reason
	if detail != "" {
		agentevent.SetAttr(&ev, agentevent.AttrUnparsedDetail, detail)
	}
	return p.finish(c, []agentevent.Event{ev})
}

func parseTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// Provider is the gen_ai.provider.name of the vendor behind a model Copilot
// served (Copilot routes to several; the log names only the model).
func Provider(model string) string {
	m := strings.ToLower(model)
	switch {
	case m == "":
		return ""
	case strings.HasPrefix(m, "claude"):
		return "anthropic"
	case strings.HasPrefix(m, "gpt"), strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"),
		strings.HasPrefix(m, "o4"), strings.Contains(m, "codex"):
		return "openai"
	case strings.HasPrefix(m, "gemini"):
		return "gcp.gemini"
	case strings.HasPrefix(m, "grok"):
		return "x_ai"
	}
	return ""
}

func strconv64(n int64) string { return fmt.Sprint(n) }
