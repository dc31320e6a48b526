// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package gemini

import (
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
	"github.com/agentotel/agentotel/internal/textutil"
)

// Provider is gen_ai.provider.name of every Gemini CLI model call. The chat
// does not say whether the Gemini API or Vertex AI answered; the Gemini API
// (gcp.gemini) is the CLI's default.
const Provider = "gcp.gemini"

// Context locates a chat: the file it was read from and its place among
// sessions. Sequence is the first Sequence the events get.
type Context struct {
	LogFile string
	// ParentSessionID is the session a nested chat belongs to (see
	// Placement); "" for a top-level chat.
	ParentSessionID string
	// SkillExtraction marks a chats/skill-extraction-*/ chat.
	SkillExtraction bool
	// ProjectRoot, when the reader knows it (the chat records only its hash).
	ProjectRoot string
	Sequence    int64
}

// Result is what MapChat made of a snapshot.
type Result struct {
	Events []agentevent.Event
	// Emitted lists the keys of what is in Events (message ids, and the
	// event ids of tool calls and results, see MapChat): the caller adds
	// them to its watermark (the emitted set) once the events are sent.
	Emitted []string
	// Held is the id of the last message when it was held back because it
	// may still change (see MapChat); "" otherwise.
	Held string
}

// MapChat maps what of a chat snapshot is not in emitted, the caller's
// watermark: the keys of what earlier calls emitted (Result.Emitted).
//
// The CLI only ever changes its last message: a gemini message is written
// with its text, then gets its tokens, and gets its tool calls (each with
// its result) as they finish — the calls of later model steps too, when
// those steps write no text or thoughts. So every message followed by
// another one is final, and so is a last user, info, error or warning
// message; a last gemini message is held back (Result.Held) until another
// message follows it or the caller passes settled — once the file has been
// idle for a while, or on shutdown.
//
// The keys are the message id for a message's own events (its thoughts,
// text and usage), and, for a gemini message's tool calls, the tool_call's
// and the tool_result's event ids: a call emitted before its result (a
// settled file with a call still running) gets its result later, and a call
// added to an emitted message is emitted then. Nothing is emitted twice;
// later rewrites of emitted parts (the CLI can mask old tool outputs) are
// ignored, and a rewind does not retract events already sent.
func MapChat(c Context, chat Chat, emitted map[string]bool, settled bool) Result {
	var r Result
	m := mapper{c: c, chat: chat, seq: c.Sequence, emitted: emitted}
	// A subagent chat keeps its own session id and names its parent
	// session.
	m.sessionID, m.agentID = chat.SessionID, ""
	if c.ParentSessionID != "" {
		m.agentID = chat.SessionID
	}
	// ParentEventID: the latest user message before each message.
	lastUser := ""
	for i := range chat.Messages {
		msg := &chat.Messages[i]
		// turn is the prompt of the turn the message falls in, before the
		// message itself opens one.
		turn := lastUser
		if msg.Type == TypeUser && msg.Bad == nil {
			lastUser = msg.ID
		}
		if i == len(chat.Messages)-1 && !settled && msg.Type == TypeGemini {
			r.Held = msg.ID
			break
		}
		m.parent = lastUser
		if msg.Type == TypeUser && msg.Bad == nil {
			m.parent = ""
		}
		if msg.Bad != nil {
			if !m.emitted[msg.ID] {
				ev := m.base(*msg, msg.ID, agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
				ev.Unparsed = ReasonUnexpectedShape
				agentevent.SetAttr(&ev, agentevent.AttrUnparsedDetail, msg.Bad.Error())
				m.emit(ev)
				m.keys = append(m.keys, msg.ID)
			}
			continue
		}
		m.guard(*msg, turn, func() {
			if msg.Type == TypeGemini {
				m.gemini(*msg)
				return
			}
			if !m.emitted[msg.ID] {
				m.message(*msg)
				m.keys = append(m.keys, msg.ID)
			}
		})
	}
	if r.Held == "" && chat.Summary != "" && !m.emitted[summaryKey] {
		// The CLI writes a one-line summary of the session into the chat's
		// metadata, possibly long after its last message (lastUpdated
		// moves then): it is dated at the last message, so that it does not
		// stretch the last turn.
		at := chat.LastUpdated
		if n := len(chat.Messages); n > 0 && chat.Messages[n-1].Timestamp != "" {
			at = chat.Messages[n-1].Timestamp
		}
		ev := m.base(Message{Timestamp: at}, chat.SessionID+":summary", agentevent.TypeSessionSummary, agentevent.RoleSystem, agentevent.ChannelSystem)
		ev.ParentEventID = lastUser
		ev.Text = chat.Summary
		m.emit(ev)
		m.keys = append(m.keys, summaryKey)
	}
	r.Events, r.Emitted = m.events, m.keys
	return r
}

// summaryKey is the watermark key of the chat's summary.
const summaryKey = "$summary"

func terminalStatus(s string) bool {
	return s == "success" || s == "error" || s == "cancelled"
}

type mapper struct {
	c         Context
	chat      Chat
	sessionID string
	agentID   string
	parent    string
	seq       int64
	events    []agentevent.Event
	emitted   map[string]bool
	keys      []string // emitted by this call
}

func (m *mapper) base(msg Message, id string, typ agentevent.EventType, role agentevent.Role, ch agentevent.Channel) agentevent.Event {
	ev := agentevent.Event{
		SchemaVersion: agentevent.SchemaVersion,
		Source:        Source,
		ProjectHash:   m.chat.ProjectHash,
		ProjectRoot:   m.c.ProjectRoot,
		SessionID:     m.sessionID,
		EventID:       id,
		ParentEventID: m.parent,
		Timestamp:     parseTime(msg.Timestamp, m.chat.StartTime),
		Type:          typ,
		Role:          role,
		Channel:       ch,
		AgentID:       m.agentID,
		Raw:           msg.Raw,
		LogFile:       m.c.LogFile,
	}
	if ev.ProjectHash == "" && m.c.ProjectRoot != "" {
		ev.ProjectHash = agentevent.ProjectHash(m.c.ProjectRoot)
	}
	if m.agentID != "" {
		ev.IsSidechain = true
		agentevent.SetAttr(&ev, agentevent.AttrSubagentLink, agentevent.SubagentLinkTurn)
		agentevent.SetAttr(&ev, agentevent.AttrParentSessionID, m.c.ParentSessionID)
		agentevent.SetAttr(&ev, agentevent.AttrRootSessionID, m.c.ParentSessionID)
		agentevent.SetAttr(&ev, agentevent.AttrGeminiChatKind, textutil.FirstNonEmpty(m.chat.Kind, KindSubagent))
		if m.c.SkillExtraction {
			agentevent.SetAttr(&ev, agentevent.AttrGeminiSkillExtraction, true)
		}
	}
	return ev
}

// guard maps one message with mapMsg. A panic in it (a mapping bug: a
// message that does not decode is Bad, not a panic) costs that message
// only: what mapMsg emitted is rolled back, and the message becomes one
// parser_error event in the turn it falls in, id and watermark key
// "<message id>:error" (reported once, also when parts of the message were
// sent by an earlier read); the rest of the chat maps
// (agentevent.RecoverRecord).
func (m *mapper) guard(msg Message, turn string, mapMsg func()) {
	nEvents, nKeys, seq := len(m.events), len(m.keys), m.seq
	var none []agentevent.Event
	defer agentevent.RecoverRecord(&none, func(reason, detail string) []agentevent.Event {
		m.events, m.keys, m.seq = m.events[:nEvents], m.keys[:nKeys], seq
		key := msg.ID + ":error"
		if !m.emitted[key] {
			ev := m.base(msg, key, agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
			ev.ParentEventID = turn
			ev.Unparsed = reason
			agentevent.SetAttr(&ev, agentevent.AttrUnparsedDetail, detail)
			m.emit(ev)
			m.keys = append(m.keys, key)
		}
		return nil
	})
	mapMsg()
}

func (m *mapper) emit(ev agentevent.Event) {
	ev.Sequence = m.seq
	m.seq++
	m.events = append(m.events, ev)
}

func (m *mapper) message(msg Message) {
	switch msg.Type {
	case TypeUser:
		ev := m.base(msg, msg.ID, agentevent.TypeUserMessage, agentevent.RoleUser, agentevent.ChannelChat)
		text := contentText(msg.DisplayContent)
		if text == "" {
			text = contentText(msg.Content)
		}
		ev.Text = text
		m.emit(ev)
	case TypeGemini:
		m.gemini(msg)
	case TypeInfo, TypeWarning:
		ev := m.base(msg, msg.ID, agentevent.TypeLog, agentevent.RoleCLI, agentevent.ChannelSystem)
		ev.Text = contentText(msg.Content)
		agentevent.SetAttr(&ev, agentevent.AttrGeminiMessageType, msg.Type)
		if strings.HasPrefix(strings.TrimSpace(ev.Text), "Request cancelled") {
			ev.Status = "interrupted"
			agentevent.SetAttr(&ev, agentevent.AttrTurnEnd, agentevent.TurnEndInterrupted)
		}
		m.emit(ev)
	case TypeError:
		ev := m.base(msg, msg.ID, agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
		ev.Text = contentText(msg.Content)
		agentevent.SetAttr(&ev, agentevent.AttrGeminiMessageType, msg.Type)
		ev.ErrorType = agentevent.ErrorTypeAPI
		ev.Status = "error"
		m.emit(ev)
	default:
		ev := m.base(msg, msg.ID, agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
		ev.Unparsed = ReasonUnknownType
		agentevent.SetAttr(&ev, agentevent.AttrUnparsedDetail, "message type "+msg.Type)
		m.emit(ev)
	}
}

// gemini maps what is new of a model message: its own events (thoughts,
// text) once, and each tool call and each result once. The usage goes on
// the first model event emitted with the message's own events.
func (m *mapper) gemini(msg Message) {
	start := len(m.events)
	body := !m.emitted[msg.ID]
	model := func(ev *agentevent.Event) {
		ev.Model = msg.Model
		ev.Provider = Provider
		ev.ResponseID = msg.ID
	}
	if body {
		m.keys = append(m.keys, msg.ID)
		for i, th := range msg.Thoughts {
			ev := m.base(msg, msg.ID+":thought:"+itoa(i), agentevent.TypeReasoning, agentevent.RoleAssistant, agentevent.ChannelChat)
			if th.Timestamp != "" {
				ev.Timestamp = parseTime(th.Timestamp, msg.Timestamp)
			}
			ev.Text = strings.TrimSpace(th.Subject + "\n" + th.Description)
			ev.Raw = nil
			model(&ev)
			m.emit(ev)
		}
		text := contentText(msg.Content)
		if text != "" || (len(msg.Thoughts) == 0 && len(msg.ToolCalls) == 0) {
			ev := m.base(msg, msg.ID, agentevent.TypeAssistantMessage, agentevent.RoleAssistant, agentevent.ChannelChat)
			ev.Text = text
			model(&ev)
			m.emit(ev)
		}
	}
	for i := range msg.ToolCalls {
		tc := &msg.ToolCalls[i]
		call, res := m.tool(msg, i, *tc)
		if !m.emitted[call.EventID] {
			model(&call)
			m.emit(call)
			m.keys = append(m.keys, call.EventID)
		}
		if res == nil || m.emitted[res.EventID] {
			continue
		}
		m.emit(*res)
		m.keys = append(m.keys, res.EventID)
		if ans, ok := subagentAnswer(*tc); ok && res.ToolStatus == agentevent.ToolSuccess {
			// A subagent ends by calling complete_task: its argument is
			// the subagent's answer, the last model output of its turn.
			ev := m.base(msg, call.EventID+":answer", agentevent.TypeAssistantMessage, agentevent.RoleAssistant, agentevent.ChannelChat)
			ev.Timestamp = res.Timestamp
			ev.Text = ans
			ev.Raw = nil
			agentevent.SetAttr(&ev, agentevent.AttrGeminiAnswerTool, tc.Name)
			model(&ev)
			m.emit(ev)
		}
	}
	if !body || msg.Tokens == nil {
		return
	}
	// The usage carrier: the first model event (never a tool result).
	for i := start; i < len(m.events); i++ {
		if m.events[i].Type != agentevent.TypeToolResult {
			usage(&m.events[i], msg.Tokens)
			return
		}
	}
}

// usage sets the token fields from a gemini message's tokens: input
// includes cached, output includes thoughts, total = input + output + tool.
func usage(ev *agentevent.Event, t *Tokens) {
	out := t.Output + t.Thoughts
	ev.TokensInput = agentevent.Int(t.Input)
	ev.TokensOutput = agentevent.Int(out)
	ev.TokensCached = agentevent.Int(t.Cached)
	ev.TokensThinking = agentevent.Int(t.Thoughts)
	ev.TokensTool = agentevent.Int(t.Tool)
	ev.TokensTotal = agentevent.Int(t.Input + out + t.Tool)
}

// contentText is the text of a message's content: a string, or the text of
// its [{text}] parts joined by newlines (other parts, such as inline data or
// function calls, add nothing).
func contentText(raw jsonx.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if jsonx.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text *string `json:"text"`
	}
	if jsonx.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			if p.Text == nil {
				continue
			}
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(*p.Text)
		}
		return b.String()
	}
	var one struct {
		Text string `json:"text"`
	}
	if jsonx.Unmarshal(raw, &one) == nil {
		return one.Text
	}
	return ""
}

// parseTime parses an RFC 3339 timestamp, falling back to fallback and then
// to the zero time.
func parseTime(s, fallback string) time.Time {
	for _, v := range []string{s, fallback} {
		if v == "" {
			continue
		}
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}
