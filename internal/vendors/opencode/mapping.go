// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package opencode maps OpenCode's stored objects — sessions, messages and
// their parts, as written to the JSON storage tree (≤1.1.x), to the SQLite
// database (≥1.2) or returned by the server API — to agentevent events.
// It is pure: readers decode the objects (DecodeMessage, DecodePart, ...),
// decide when a message is final (Finished) and hand it over with its parts
// (MapMessage). README.md holds the mapping table.
package opencode

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
	"github.com/agentotel/agentotel/internal/textutil"
)

// Message roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Context is what the events of one message share beyond the message itself;
// the reader resolves it from the session tree.
type Context struct {
	// Source is the agent whose data this is: OpenCode, or an agent that
	// keeps its data in OpenCode's layout (Kilo CLI). "" is OpenCode.
	Source agentevent.Source
	// RootSessionID is the SessionID of every event: the session at the top
	// of the message's parentID chain, so that a child session's events
	// nest in the traces of the session that spawned it. "" = Session.ID.
	RootSessionID string
	// Session is the message's own session (id, parentID, version, directory).
	// For the server API, only its ID may be known.
	Session Session
	// ProjectRoot is the project the session works in. "" = the message's
	// path.root (unless "/"), else path.cwd, else Session.Directory.
	ProjectRoot string
	// ParentToolCallID is, for a child session, the callID of the task tool
	// call that created it, when the reader knows it.
	ParentToolCallID string
	// LogFile is where the message was read: its file, or the database.
	LogFile string
	// Sequence is the Sequence of the message's first event; the others
	// count up from it.
	Sequence int64
}

// source is the Source of the events: Context.Source, else OpenCode's.
func (c *Context) source() agentevent.Source {
	if c.Source == "" {
		return Source
	}
	return c.Source
}

// Finished reports whether a message is in its final state and may be
// mapped once and for all: an assistant message once it has completed or
// failed, a user message once its text part is written. later says that the
// session already holds a later message, so that OpenCode has moved on
// (a message left unfinished by a crash is then taken as it is).
func Finished(m Message, parts []Part, later bool) bool {
	if later {
		return true
	}
	switch m.Role {
	case RoleUser:
		// The message is written before its parts, the prompt's text part
		// with attachments around it; one without text (a compaction or
		// subtask request) is final once its answer exists.
		for i := range parts {
			p := &parts[i]
			if p.Type == "text" {
				return true
			}
		}
		return false
	case RoleAssistant:
		return m.Time.Completed != nil || m.Error != nil
	}
	return true
}

// builder accumulates the events of one message.
type builder struct {
	c       Context
	m       Message
	session string // the message's own session
	root    string
	child   bool
	project string
	// prompt is the event id of the user message the events belong to.
	prompt string
	events []agentevent.Event
}

// MapMessage maps one final message and its parts to events, in order:
// parts are sorted by id (OpenCode ids ascend in creation order). It never
// panics: an object it cannot map becomes an event with Unparsed set.
func MapMessage(c Context, m Message, parts []Part) (events []agentevent.Event) {
	b := newBuilder(c, m)
	defer agentevent.RecoverRecord(&events, func(reason, detail string) []agentevent.Event {
		return []agentevent.Event{Unparsed(c, m.ID+":error", b.prompt, m.Raw, reason, detail)}
	})
	parts = slices.Clone(parts)
	slices.SortStableFunc(parts, func(a, b Part) int { return strings.Compare(a.ID, b.ID) })
	switch m.Role {
	case RoleUser:
		b.user(parts)
	case RoleAssistant:
		b.assistant(parts)
	default:
		b.unparsed(m.ID, m.Raw, ReasonUnknownType, "message role "+m.Role)
	}
	return b.finish()
}

func newBuilder(c Context, m Message) *builder {
	b := &builder{c: c, m: m}
	b.session = c.Session.ID
	if b.session == "" {
		b.session = m.SessionID
	}
	b.root = c.RootSessionID
	if b.root == "" {
		b.root = b.session
	}
	b.child = b.root != b.session
	b.project = c.ProjectRoot
	if b.project == "" && m.Path != nil {
		if m.Path.Root != "" && m.Path.Root != "/" {
			b.project = m.Path.Root
		} else {
			b.project = m.Path.Cwd
		}
	}
	if b.project == "" {
		b.project = c.Session.Directory
	}
	switch m.Role {
	case RoleAssistant:
		b.prompt = m.ParentID
	case RoleUser:
		b.prompt = m.ID
	}
	return b
}

// ms converts OpenCode's epoch milliseconds; 0 is unknown.
func ms(v int64) time.Time {
	if v <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

func msp(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// event starts an event of the message with the envelope every event carries.
func (b *builder) event(id string, typ agentevent.EventType, at int64, raw []byte) *agentevent.Event {
	if at <= 0 {
		at = b.m.Time.Created
	}
	ev := agentevent.Event{
		Source:       b.c.source(),
		SessionID:    b.session,
		EventID:      id,
		Type:         typ,
		Timestamp:    ms(at),
		Channel:      agentevent.ChannelChat,
		ProjectRoot:  b.project,
		ProjectHash:  agentevent.ProjectHash(b.project),
		AgentVersion: b.c.Session.Version,
		LogFile:      b.c.LogFile,
		Raw:          raw,
	}
	if typ != agentevent.TypeUserMessage {
		ev.ParentEventID = b.prompt
	}
	if b.child {
		ev.AgentID = b.session
		ev.IsSidechain = true
		ev.ParentToolCallID = b.c.ParentToolCallID
		ev.SubagentType = b.m.Agent
		// Where no task call names the child session, nest it under the
		// parent's turn that was open when it started (a task call wins).
		agentevent.SetAttr(&ev, agentevent.AttrSubagentLink, agentevent.SubagentLinkTurn)
		// A child session keeps its own id; it names its parent and the
		// root session whose turn the tree belongs to.
		agentevent.SetAttr(&ev, agentevent.AttrParentSessionID, textutil.FirstNonEmpty(b.c.Session.ParentID, b.root))
		agentevent.SetAttr(&ev, agentevent.AttrRootSessionID, b.root)
	}
	b.events = append(b.events, ev)
	return &b.events[len(b.events)-1]
}

// modelEvent starts an event of the model's response: model, provider and
// response id (the message id: one assistant message is one model call).
func (b *builder) modelEvent(id string, typ agentevent.EventType, at int64, raw []byte) *agentevent.Event {
	ev := b.event(id, typ, at, raw)
	ev.Model = b.m.ModelID
	ev.Provider = Provider(b.m.ProviderID)
	ev.ResponseID = b.m.ID
	return ev
}

func (b *builder) unparsed(id string, raw []byte, reason, detail string) {
	b.events = append(b.events, Unparsed(b.c, id, b.prompt, raw, reason, detail))
}

func (b *builder) user(parts []Part) {
	var typed, synthetic []string
	for i := range parts {
		p := &parts[i]
		if p.Type != "text" || p.Ignored {
			continue
		}
		if p.Synthetic {
			synthetic = append(synthetic, p.Text)
		} else {
			typed = append(typed, p.Text)
		}
	}
	if len(typed) == 0 {
		typed = synthetic
	}
	ev := b.event(b.m.ID, agentevent.TypeUserMessage, b.m.Time.Created, b.m.Raw)
	ev.Role = agentevent.RoleUser
	ev.Text = strings.Join(typed, "\n\n")
	for i := range parts {
		p := &parts[i]
		switch p.Type {
		case "text", "file", "agent", "subtask":
			// The prompt's text is on the user_message; attachments, @agent
			// mentions and subtask requests are part of the prompt.
		case "compaction":
			// A compaction request: the assistant message answering it is
			// the summary.
			mev := b.event(p.ID, agentevent.TypeMeta, b.m.Time.Created, p.Raw)
			mev.Channel = agentevent.ChannelSystem
			trigger := "manual"
			if p.Auto {
				trigger = "auto"
			}
			agentevent.SetAttr(mev, agentevent.AttrCompactionTrigger, trigger)
			agentevent.SetAttr(mev, agentevent.AttrMetaKind, "compaction")
		default:
			b.unparsed(p.ID, p.Raw, ReasonUnknownType, "part type "+p.Type)
		}
	}
}

func (b *builder) assistant(parts []Part) {
	for i := range parts {
		p := &parts[i]
		switch p.Type {
		case "text":
			if p.Ignored {
				b.notice(p)
				continue
			}
			if p.Text == "" && p.Time == nil {
				continue // never streamed
			}
			start := int64(0)
			if p.Time != nil {
				start = msp(p.Time.Start)
			}
			ev := b.modelEvent(p.ID, agentevent.TypeAssistantMessage, start, p.Raw)
			ev.Text = p.Text
			if p.Synthetic {
				agentevent.SetAttr(ev, agentevent.AttrTextSynthetic, true)
			}
		case "reasoning":
			start, end := int64(0), int64(0)
			if p.Time != nil {
				start, end = msp(p.Time.Start), msp(p.Time.End)
			}
			ev := b.modelEvent(p.ID, agentevent.TypeReasoning, start, p.Raw)
			ev.Text = p.Text
			if start > 0 && end >= start {
				agentevent.SetAttr(ev, agentevent.AttrReasoningDurationMs, end-start)
			}
		case "tool":
			b.tool(*p)
		case "patch":
			// A step's patch is taken when the step ends.
			ev := b.event(p.ID, agentevent.TypeFileSnapshot, msp(b.m.Time.Completed), p.Raw)
			ev.Channel = agentevent.ChannelFilesystem
			ev.Text = fmt.Sprintf("patch of %d files", len(p.Files))
			agentevent.SetAttr(ev, agentevent.AttrSnapshotFileCount, int64(len(p.Files)))
		case "retry":
			ev := b.event(p.ID, agentevent.TypeLog, b.m.Time.Created, p.Raw)
			ev.Role = agentevent.RoleSystem
			ev.Channel = agentevent.ChannelSystem
			ev.ErrorType = agentevent.ErrorTypeAPIRetry
			ev.Text = errorMessage(p.Error)
			agentevent.SetAttr(ev, agentevent.AttrAPIRetryAttempt, p.Attempt)
		case "step-start", "step-finish", "snapshot", "agent", "subtask", "file", "compaction":
			// Steps: the message's tokens already cover its steps (counted
			// once, on the message). Snapshots are git tree hashes.
		default:
			b.unparsed(p.ID, p.Raw, ReasonUnknownType, "part type "+p.Type)
		}
	}
	b.usage(parts)
	b.messageError()
}

// notice maps an assistant text part marked ignored: a notice the agent
// showed its user and keeps out of the model's context (Kilo CLI's warning
// that a step stopped at the output limit), not the model's words. It is
// written when the step ends.
func (b *builder) notice(p *Part) {
	if p.Text == "" {
		return
	}
	ev := b.event(p.ID, agentevent.TypeLog, msp(b.m.Time.Completed), p.Raw)
	ev.Role = agentevent.RoleSystem
	ev.Channel = agentevent.ChannelSystem
	ev.Text = p.Text
	agentevent.SetAttr(ev, agentevent.AttrTextIgnored, true)
}

// usage puts the message's tokens and cost on its first model event (one
// carrier per message: summing over events never double counts), or on an
// empty assistant_message when no part made one.
func (b *builder) usage(parts []Part) {
	m := b.m
	var carrier *agentevent.Event
	var last *agentevent.Event
	for i := range b.events {
		if b.events[i].ResponseID == m.ID {
			if carrier == nil {
				carrier = &b.events[i]
			}
			last = &b.events[i]
		}
	}
	t := m.Tokens
	hasUsage := t != nil && t.Input+t.Output+t.Reasoning+t.Cache.Read+t.Cache.Write > 0
	if carrier == nil {
		if !hasUsage {
			return
		}
		carrier = b.modelEvent(m.ID, agentevent.TypeAssistantMessage, m.Time.Created, m.Raw)
		last = carrier
	}
	last.FinishReason = m.Finish
	if m.Finish == "stop" && m.Error == nil {
		// The model answered without asking for a tool: OpenCode's loop
		// ends the turn here.
		agentevent.SetAttr(last, agentevent.AttrTurnEnd, agentevent.TurnEndCompleted)
	}
	if t != nil {
		in := t.Input + t.Cache.Read + t.Cache.Write
		out := t.Output + t.Reasoning
		carrier.TokensInput = agentevent.Int(in)
		carrier.TokensOutput = agentevent.Int(out)
		carrier.TokensTotal = agentevent.Int(in + out)
		carrier.TokensCached = agentevent.Int(t.Cache.Read)
		carrier.TokensCacheCreation = agentevent.Int(t.Cache.Write)
		carrier.TokensThinking = agentevent.Int(t.Reasoning)
	}
	if m.Cost != nil {
		own, subagents := ownCost(*m.Cost, parts)
		carrier.CostUSD = agentevent.Float(own)
		if subagents > 0 {
			agentevent.SetAttr(carrier, agentevent.AttrSubagentsCostUSD, subagents)
		}
	}
	if m.Mode != "" {
		agentevent.SetAttr(carrier, agentevent.AttrMode, m.Mode)
	}
}

// costRounding bounds the difference between two float sums of the same step
// costs (the agent's running total and ours).
const costRounding = 1e-9

// ownCost splits an assistant message's cost into the cost of its own model
// calls and what the agent added for the subagents it ran. Kilo CLI adds a
// child session's cost to the assistant message whose task tool ran it, also
// when a background task ends after the message; the child's own messages
// carry that cost too. The message's step-finish parts hold only the cost
// of each of its steps, so a message that ran a task tool counts at their
// sum. Elsewhere (OpenCode) the message's cost is that sum already and is
// kept as it is.
func ownCost(cost float64, parts []Part) (own, subagents float64) {
	var steps float64
	task, stepped := false, false
	for i := range parts {
		p := &parts[i]
		switch {
		case p.Type == "tool" && p.Tool == "task":
			task = true
		case p.Type == "step-finish" && p.Cost != nil:
			steps += *p.Cost
			stepped = true
		}
	}
	if task && stepped && cost-steps > costRounding {
		return steps, cost - steps
	}
	return cost, 0
}

// messageError adds the error an assistant message ended with, as a log
// event after its parts.
func (b *builder) messageError() {
	e := b.m.Error
	if e == nil {
		return
	}
	at := msp(b.m.Time.Completed)
	ev := b.event(b.m.ID+":error", agentevent.TypeLog, at, b.m.Raw)
	ev.Role = agentevent.RoleSystem
	ev.Channel = agentevent.ChannelSystem
	ev.Text = errorMessage(e.Data)
	agentevent.SetAttr(ev, agentevent.AttrAPIError, e.Name)
	if e.Name == "MessageAbortedError" {
		// The user stopped the turn: not a failure (no error.type), as a
		// Claude Code "[Request interrupted by user]" notice.
		ev.Status = "interrupted"
		agentevent.SetAttr(ev, agentevent.AttrTurnEnd, agentevent.TurnEndInterrupted)
		return
	}
	ev.ErrorType = agentevent.ErrorTypeAPI
	ev.Status = "error"
	agentevent.SetAttr(ev, agentevent.AttrTurnEnd, agentevent.TurnEndError)
}

// errorMessage is the message of an error's data ({message: ...}), else
// the data as it is.
func errorMessage(data jsonx.RawMessage) string {
	if len(data) == 0 || string(data) == "null" {
		return ""
	}
	var d struct {
		Message string `json:"message"`
	}
	if jsonx.Unmarshal(data, &d) == nil && d.Message != "" {
		return d.Message
	}
	var s string
	if jsonx.Unmarshal(data, &s) == nil {
		return s
	}
	return string(data)
}

// finish numbers and normalizes the events.
func (b *builder) finish() []agentevent.Event {
	for i := range b.events {
		b.events[i].Sequence = b.c.Sequence + int64(i)
		agentevent.Normalize(&b.events[i])
	}
	return b.events
}

// Unparsed is the event standing for an object that could not be mapped: a
// log event, role system, with Unparsed = reason, Raw = the object and
// agent.unparsed.detail saying why. prompt is the user message it belongs
// to, if known. The reader counts it and reports it once.
func Unparsed(c Context, id, prompt string, raw []byte, reason, detail string) agentevent.Event {
	if id == "" {
		id = agentevent.StableID(c.LogFile, 0, 0)
	}
	session := c.RootSessionID
	if session == "" {
		session = c.Session.ID
	}
	ev := agentevent.Event{
		Source:        c.source(),
		SessionID:     textutil.FirstNonEmpty(c.Session.ID, session),
		EventID:       id,
		ParentEventID: prompt,
		Type:          agentevent.TypeLog,
		Role:          agentevent.RoleSystem,
		Channel:       agentevent.ChannelSystem,
		LogFile:       c.LogFile,
		Raw:           raw,
		Unparsed:      reason,
		Sequence:      c.Sequence,
		Attributes:    map[string]any{agentevent.AttrUnparsedDetail: detail},
	}
	if c.Session.ID != "" && c.Session.ID != session {
		ev.AgentID = c.Session.ID
		ev.IsSidechain = true
		ev.Attributes[agentevent.AttrParentSessionID] = textutil.FirstNonEmpty(c.Session.ParentID, session)
		ev.Attributes[agentevent.AttrRootSessionID] = session
	}
	agentevent.Normalize(&ev)
	return ev
}

// providers maps OpenCode provider ids (models.dev ids) to
// gen_ai.provider.name values where the semantic conventions name them.
var providers = map[string]string{
	"anthropic":      "anthropic",
	"openai":         "openai",
	"google":         "gcp.gemini",
	"google-vertex":  "gcp.vertex_ai",
	"amazon-bedrock": "aws.bedrock",
	"azure":          "azure.ai.openai",
	"mistral":        "mistral_ai",
	"groq":           "groq",
	"deepseek":       "deepseek",
	"perplexity":     "perplexity",
	"xai":            "x_ai",
	"cohere":         "cohere",
}

// Provider is the gen_ai.provider.name of an OpenCode provider id; ids the
// conventions do not name (opencode, openrouter, github-copilot, ...) are
// kept as they are.
func Provider(id string) string {
	if p, ok := providers[id]; ok {
		return p
	}
	return id
}

// ResolveContext derives a session's Context from the session tree:
// RootSessionID by following parentID (a missing parent or a cycle stops
// the walk), ProjectRoot from the project's worktree (git projects) or the
// session's directory (the "global" project of non-git directories, whose
// worktree is "/"). lookupSession and lookupProject return what the reader
// knows; either may be nil.
func ResolveContext(s Session, lookupSession func(id string) (Session, bool), lookupProject func(id string) (Project, bool)) Context {
	c := Context{Session: s, RootSessionID: s.ID, ProjectRoot: s.Directory}
	if lookupProject != nil && s.ProjectID != "" && s.ProjectID != "global" {
		if p, ok := lookupProject(s.ProjectID); ok && p.Worktree != "" && p.Worktree != "/" {
			c.ProjectRoot = p.Worktree
		}
	}
	seen := map[string]bool{s.ID: true}
	for cur := s; cur.ParentID != "" && lookupSession != nil && !seen[cur.ParentID]; {
		seen[cur.ParentID] = true
		parent, ok := lookupSession(cur.ParentID)
		if !ok {
			// The parent is unknown (yet): its id is still the right
			// conversation for a direct child.
			c.RootSessionID = cur.ParentID
			break
		}
		c.RootSessionID = parent.ID
		cur = parent
	}
	if lookupSession == nil && s.ParentID != "" {
		c.RootSessionID = s.ParentID
	}
	return c
}
