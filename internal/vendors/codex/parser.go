// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package codex maps the records of Codex CLI rollout files
// (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl and
// ~/.codex/archived_sessions/*.jsonl) to agentevent events. It is pure: it
// is handed one line at a time and keeps only the state the mapping needs
// (MarshalState). README.md holds the mapping table.
package codex

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

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

// Options tune what a Parser builds. The zero value builds everything.
type Options struct {
	// OmitContent: the caller drops content (agentevent.StripContent), so
	// the parser does not render what it would drop (assistant and
	// reasoning text, web search actions). Facts read from content (exit
	// codes, durations, test counts, patch line counts) are still read.
	OmitContent bool
	// OmitRaw: the caller drops Event.Raw, so the parser does not copy the
	// record into it.
	OmitRaw bool
}

// Parser maps the records of one rollout file. Not safe for concurrent use.
type Parser struct {
	path   string
	opts   Options
	fileID string // the session id the file name carries
	st     state
	buf    []byte // scratch of scanLine
	// decoder picks how response_item / event_msg lines are decoded;
	// tests set it to compare the decoders.
	decoder decoder
}

type decoder uint8

const (
	// decodeAuto: in place (scanLine) without content, where it is
	// faster; typed with content, where unescaping every content member
	// makes it no faster than goccy (README.md: Decoding).
	decodeAuto decoder = iota
	decodeTyped
	decodeScan
)

var fileIDRe = regexp.MustCompile(`([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$`)

// NewParser returns the parser for one rollout file. path is the file
// identity for stable ids and goes into Event.LogFile. No I/O.
func NewParser(path string) *Parser {
	return NewParserWithOptions(path, Options{})
}

// NewParserWithOptions is NewParser with options (see Options).
func NewParserWithOptions(path string, opts Options) *Parser {
	base := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	id := base
	if m := fileIDRe.FindString(base); m != "" {
		id = m
	}
	return &Parser{path: path, opts: opts, fileID: id, st: newState()}
}

// rowCtx is what one record shares with the events it yields.
type rowCtx struct {
	lineNo, offset int64
	line           []byte
	ts             time.Time
}

// Parse maps one record (the line without its trailing "\n"). lineNo is
// 1-based, offset is the byte offset of the line's start. A record at or
// before the last offset already parsed yields nothing. Never panics: a
// malformed line or an unknown record type yields one Unparsed event.
func (p *Parser) Parse(line []byte, lineNo, offset int64) (events []agentevent.Event) {
	if !p.st.Admit(offset) {
		return nil
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return nil
	}
	c := &rowCtx{lineNo: lineNo, offset: offset, line: line, ts: p.st.Timestamp}
	defer agentevent.RecoverRecord(&events, func(reason, detail string) []agentevent.Event {
		return p.unparsed(c, reason, detail)
	})
	// In place first; the typed one-pass decode for what the scanner
	// leaves to it; the envelope, then the payload, for other records.
	fl, ok := fastLine{}, false
	if p.decoder == decodeScan || (p.decoder == decodeAuto && p.opts.OmitContent) {
		fl, ok = p.scanLine(line)
	}
	if !ok && fl.Payload == nil {
		fl, ok = decodeFast(line)
	}
	if ok {
		p.timestamp(c, fl.Timestamp)
		p.forkOrSpawn(fl.Type)
		var out []agentevent.Event
		var reason, detail string
		if fl.Type == "response_item" {
			out, reason, detail = p.responseItem(&fl.item, c)
		} else {
			out, reason, detail = p.eventMsg(&fl.msg, c)
		}
		return p.result(c, fl.Type, out, reason, detail)
	}
	var r record
	if fl.Payload != nil {
		r = record{Timestamp: fl.Timestamp, Type: fl.Type, Payload: fl.Payload}
	} else if err := jsonx.Unmarshal(line, &r); err != nil {
		reason, detail := agentevent.DecodeFailure(line, err)
		return p.unparsed(c, reason, detail)
	}
	p.timestamp(c, r.Timestamp)
	if len(r.Payload) == 0 || r.Payload[0] != '{' {
		if r.Type == "" {
			return p.unparsed(c, ReasonUnexpectedShape, "record has no type")
		}
		return p.unparsed(c, ReasonUnexpectedShape, r.Type+" record without an object payload")
	}
	p.forkOrSpawn(r.Type)
	var out []agentevent.Event
	var reason, detail string
	switch r.Type {
	case "session_meta":
		out, reason = p.sessionMeta(r.Payload, c)
	case "turn_context":
		reason = p.turnContext(r.Payload)
	case "response_item":
		it, ok := decodeItem(r.Payload)
		if !ok {
			reason = ReasonUnexpectedShape
			break
		}
		out, reason, detail = p.responseItem(&it, c)
	case "event_msg":
		var m eventMsg
		if jsonx.Unmarshal(r.Payload, &m) != nil {
			reason = ReasonUnexpectedShape
			break
		}
		out, reason, detail = p.eventMsg(&m, c)
	case "compacted":
		out, reason = p.compacted(r.Payload, c)
	case "world_state":
		out, reason = p.worldState(r.Payload, c)
	case "inter_agent_communication":
		out, reason = p.interAgentMessage(r.Payload, c)
	case "inter_agent_communication_metadata":
		reason = p.interAgentMetadata(r.Payload)
	case "":
		reason, detail = ReasonUnexpectedShape, "record has no type"
	default:
		reason, detail = ReasonUnknownType, "record type "+r.Type
	}
	return p.result(c, r.Type, out, reason, detail)
}

// fastLine is a response_item or event_msg line decoded in one pass.
type fastLine struct {
	Timestamp, Type string
	item            item
	msg             eventMsg
	// Payload is, for a line of another type scanLine read the envelope
	// of, its payload object in place.
	Payload []byte
}

// decodeFast decodes a response_item or event_msg line in one pass, its
// tool output as a string (fastOutputRecord) or raw (fastRecord). ok is
// false for a line of another type, or one neither can decode.
func decodeFast(line []byte) (r fastLine, ok bool) {
	fast := func(typ string) bool { return typ == "response_item" || typ == "event_msg" }
	var so fastOutputRecord
	if jsonx.Unmarshal(line, &so) == nil {
		if so.Payload == nil || !fast(so.Type) {
			return r, false
		}
		r = fastLine{Timestamp: so.Timestamp, Type: so.Type}
		if so.Type == "response_item" {
			r.item = so.Payload.withOutput()
		} else {
			r.msg = so.Payload.eventMsg()
		}
		return r, true
	}
	var f fastRecord
	if jsonx.Unmarshal(line, &f) == nil && f.Payload != nil && fast(f.Type) {
		r = fastLine{Timestamp: f.Timestamp, Type: f.Type}
		if f.Type == "response_item" {
			r.item = f.Payload.item
		} else {
			r.msg = f.Payload.eventMsg()
		}
		return r, true
	}
	return r, false
}

// timestamp takes the record's time when it has one.
func (p *Parser) timestamp(c *rowCtx, ts string) {
	if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
		p.st.Timestamp = t
		c.ts = t
	}
}

// result finishes the events of a record of type typ, or reports it
// unparsed.
func (p *Parser) result(c *rowCtx, typ string, out []agentevent.Event, reason, detail string) []agentevent.Event {
	if reason != "" {
		if detail == "" {
			detail = typ + " record of an unexpected shape"
		}
		return p.unparsed(c, reason, detail)
	}
	return p.finish(c, out)
}

// base starts an event with the session envelope.
func (p *Parser) base(c *rowCtx, typ agentevent.EventType, role agentevent.Role, ch agentevent.Channel) agentevent.Event {
	s := &p.st
	ev := agentevent.Event{
		Source:       Source,
		SessionID:    s.SessionID,
		ProjectRoot:  s.Cwd,
		ProjectHash:  agentevent.ProjectHash(s.Cwd),
		Timestamp:    c.ts,
		Type:         typ,
		Role:         role,
		Channel:      ch,
		AgentID:      s.AgentID,
		IsSidechain:  s.AgentID != "",
		SubagentType: s.SubagentType,
		AgentVersion: s.AgentVer,
		GitBranch:    s.GitBranch,
		Entrypoint:   s.Originator,
	}
	if ev.SessionID == "" {
		ev.SessionID = p.fileID
	}
	if s.AgentID != "" && s.OwnID != "" && s.SessionID != s.OwnID {
		// A child with a thread id of its own keeps it; it names the
		// session it was spawned from (agentevent.AttrRootSessionID).
		ev.SessionID = s.OwnID
		ev.Attributes = map[string]any{agentevent.AttrParentSessionID: s.SessionID, agentevent.AttrRootSessionID: s.SessionID}
	}
	switch {
	case s.TurnLink:
		agentevent.SetAttr(&ev, agentevent.AttrSubagentLink, agentevent.SubagentLinkTurn)
	case s.Anchor != "":
		agentevent.SetAttr(&ev, agentevent.AttrSubagentLink, agentevent.SubagentLinkAnchor)
		agentevent.SetAttr(&ev, agentevent.AttrSubagentAnchor, s.Anchor)
	}
	return ev
}

// model sets the model call fields (model, provider, response id).
func (p *Parser) model(ev *agentevent.Event) {
	ev.Model = p.st.Model
	ev.Provider = p.st.Provider
	ev.ResponseID = p.responseID()
}

func (p *Parser) responseID() string {
	id := p.st.OwnID
	if id == "" {
		id = p.fileID
	}
	return fmt.Sprintf("%s#%d", id, p.st.RespN)
}

// assistantItem opens a model response when none is open.
func (p *Parser) assistantItem() {
	s := &p.st
	if !s.RespOpen {
		s.RespN++
		s.RespOpen, s.RespHasUsage = true, false
	}
	s.NoCarrier = false
}

// closeResponse ends the open model response (a tool output or a prompt
// follows it).
func (p *Parser) closeResponse() { p.st.RespOpen = false }

// finish gives events their ids, turn parent, sequence and location.
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
		ev.EventID = agentevent.StableID(p.path, c.offset, i)
		p.st.Chain(ev)
		if ev.Type == agentevent.TypeUserMessage {
			p.st.notePrompt(ev.EventID)
		}
		ev.LogFile = p.path
		ev.LogLine = c.lineNo
		ev.Raw = raw
		agentevent.Normalize(ev)
	}
	return out
}

func (p *Parser) unparsed(c *rowCtx, reason, detail string) []agentevent.Event {
	ev := p.base(c, agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
	ev.Unparsed = reason
	if detail != "" {
		agentevent.SetAttr(&ev, agentevent.AttrUnparsedDetail, detail)
	}
	return p.finish(c, []agentevent.Event{ev})
}

// providerName maps Codex's model_provider to gen_ai.provider.name.
func providerName(p string) string {
	switch lp := strings.ToLower(p); {
	case lp == "" || lp == "openai":
		// 0.34 records no provider: OpenAI is Codex's default.
		return "openai"
	case strings.HasPrefix(lp, "ollama"):
		return "ollama"
	case strings.Contains(lp, "azure"):
		return "azure.ai.openai"
	case lp == "lmstudio":
		return "lmstudio"
	default:
		return lp
	}
}

func (p *Parser) sessionMeta(raw []byte, c *rowCtx) ([]agentevent.Event, string) {
	var m sessionMeta
	if jsonx.Unmarshal(raw, &m) != nil {
		return nil, ReasonUnexpectedShape
	}
	s := &p.st
	s.MetaSeen++
	if s.MetaSeen > 1 {
		// A forked child repeats its parent's session_meta after its own:
		// the replayed history that follows is skipped (state.Replaying).
		return nil, ""
	}
	// The state keeps copies: a decoded string shares the memory of the
	// whole record (a session_meta holds the instructions, kilobytes).
	s.OwnID = strings.Clone(m.ID)
	s.SessionID = s.OwnID
	s.Cwd = strings.Clone(m.Cwd)
	s.AgentVer = strings.Clone(m.CLIVersion)
	s.Originator = strings.Clone(m.Originator)
	s.Provider = strings.Clone(providerName(m.ModelProvider))
	if m.Git != nil {
		s.GitBranch, s.GitCommit = strings.Clone(m.Git.Branch), strings.Clone(m.Git.CommitHash)
	}
	source := ""
	var src subagentSource
	if len(m.Source) > 0 && m.Source[0] == '{' && jsonx.Unmarshal(m.Source, &src) == nil && len(src.Subagent) > 0 {
		if kind, ok := jsonString(src.Subagent); ok {
			// {"subagent":"review"} and the like: no parent id is recorded.
			source = "subagent:" + kind
			s.SubagentType = kind
		} else {
			var ts threadSpawn
			if jsonx.Unmarshal(src.Subagent, &ts) == nil && ts.ThreadSpawn != nil {
				source = "subagent:thread_spawn"
				s.SubagentType = textutil.FirstNonEmpty(ts.ThreadSpawn.AgentRole, m.AgentRole, "thread_spawn")
				if ts.ThreadSpawn.ParentThreadID != "" {
					s.SessionID = ts.ThreadSpawn.ParentThreadID
					s.AgentID = m.ID
					s.TurnLink = true
				}
				// A fork (forked_from_id, or a second session_meta next) replays
				// its parent; a fresh spawn does not (forkOrSpawn).
				if m.ForkedFromID != "" {
					s.Replaying = true
				} else {
					s.SpawnPending = true
				}
			}
		}
	} else if str, ok := jsonString(m.Source); ok {
		source = str
	}
	if s.AgentID == "" && m.ForkedFromID != "" && s.SubagentType != "" {
		s.SessionID, s.AgentID, s.TurnLink = m.ForkedFromID, m.ID, true
	}
	if s.AgentID == "" && source == "subagent:"+anchorReview {
		// A /review rollout records no parent: it is a subagent of the
		// rollout, in the same project, whose entered_review_mode came
		// just before it started (the connector matches them).
		s.AgentID, s.Anchor = m.ID, anchorReview
	}
	s.SessionID, s.AgentID, s.SubagentType = strings.Clone(s.SessionID), strings.Clone(s.AgentID), strings.Clone(s.SubagentType)
	p.applyParentHint()
	ev := p.base(c, agentevent.TypeMeta, agentevent.RoleSystem, agentevent.ChannelSystem)
	agentevent.SetAttr(&ev, agentevent.AttrSessionStart, true)
	if source != "" {
		agentevent.SetAttr(&ev, agentevent.AttrCodexSource, source)
	}
	if s.GitCommit != "" {
		agentevent.SetAttr(&ev, agentevent.AttrGitCommit, s.GitCommit)
	}
	if m.ModelProvider != "" {
		agentevent.SetAttr(&ev, agentevent.AttrCodexModelProvider, m.ModelProvider)
	}
	return []agentevent.Event{ev}, ""
}

// forkOrSpawn tells, at the record after a thread_spawn child's own
// session_meta, a fork from a fresh spawn. In the Codex source a
// spawn_agent child is a fork only when the call asks for one (a fork mode):
// its rollout is its own session_meta (forked_from_id = the parent's
// thread id) followed by the parent's rollout items, filtered (the parent's
// session_meta first, its turns' task and token_count events with the
// parent's cumulative totals, user/developer messages and final answers),
// then its own turn. A last-N-turns fork starts the copy at a parent
// prompt instead of the parent's session_meta; it still names
// forked_from_id. Without a fork mode the child is a new thread: its
// session_meta (no forked_from_id) is followed by its own task_started and
// messages, nothing of the parent, and its token_count totals start at
// zero. So a child whose meta names no forked_from_id replays only when a
// second session_meta comes next.
func (p *Parser) forkOrSpawn(typ string) {
	s := &p.st
	if !s.SpawnPending || typ == "" {
		return
	}
	s.SpawnPending = false
	s.Replaying = typ == "session_meta"
}

// own sets *dst to a copy of v when it differs: the state must not keep a
// decoded string, which shares the memory of its whole record.
func own(dst *string, v string) {
	if *dst != v {
		*dst = strings.Clone(v)
	}
}

func (p *Parser) turnContext(raw []byte) string {
	var tc turnContext
	if jsonx.Unmarshal(raw, &tc) != nil {
		return ReasonUnexpectedShape
	}
	if tc.Model != "" {
		own(&p.st.Model, tc.Model)
	}
	if tc.Cwd != "" {
		own(&p.st.Cwd, tc.Cwd)
	}
	if tc.TurnID != "" {
		own(&p.st.TurnID, tc.TurnID)
	}
	return ""
}

func (p *Parser) compacted(raw []byte, c *rowCtx) ([]agentevent.Event, string) {
	if p.st.Replaying {
		return nil, ""
	}
	p.st.NoCarrier = true
	var m struct {
		Message string `json:"message"`
	}
	if jsonx.Unmarshal(raw, &m) != nil {
		return nil, ReasonUnexpectedShape
	}
	ev := p.base(c, agentevent.TypeSessionSummary, agentevent.RoleSystem, agentevent.ChannelSystem)
	ev.Text = m.Message
	agentevent.SetAttr(&ev, agentevent.AttrCompactionTrigger, "compacted")
	return []agentevent.Event{ev}, ""
}

// injectedPrefixes start the user/developer messages Codex writes itself
// (context, instructions, notices): never prompts.
var injectedPrefixes = []string{
	"<environment_context>", "<user_instructions>", "<permissions instructions>",
	"<collaboration_mode>", "<turn_aborted>", "<developer_instructions>",
	"# AGENTS.md instructions", "<INSTRUCTIONS>", "<user_shell_command>",
	"<personality_spec>", "<skill>", "<subagent_notification>",
}

// isInjected tells whether text, trimmed of white space, starts with one of
// injectedPrefixes. It copies nothing of text.
func isInjected[T string | []byte](text T) bool {
	i := 0
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(string(text[i:min(i+utf8.UTFMax, len(text))]))
		if !unicode.IsSpace(r) {
			break
		}
		i += n
	}
	t := text[i:]
	for _, pre := range injectedPrefixes {
		if len(t) >= len(pre) && string(t[:len(pre)]) == pre {
			return true
		}
	}
	return false
}

// prompt emits a user_message unless it is the other copy of the prompt
// just emitted (response_item message and event_msg user_message carry the
// same prompt, in either order).
func (p *Parser) prompt(c *rowCtx, text, from string) []agentevent.Event {
	return p.promptSum(c, text, sha256.Sum256([]byte(text)), from)
}

// textBuffers hold the text of a user message read in place (userItem).
var textBuffers = sync.Pool{New: func() any { return new([]byte) }}

// userItem maps a user message item from its parts read in place
// (appendPartsText), without building its text unless content is kept: an
// injected context is told by its start, a prompt by its digest. ok is
// false when the parts are left to partsText.
func (p *Parser) userItem(it *item, c *rowCtx) (events []agentevent.Event, ok bool) {
	bp := textBuffers.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= 1<<20 {
			textBuffers.Put(bp)
		}
	}()
	text, ok := appendPartsText((*bp)[:0], it.Content)
	*bp = text
	if !ok {
		return nil, false
	}
	if len(text) == 0 || isInjected(text) {
		return nil, true // context Codex injected, not a prompt
	}
	kept := ""
	if !p.opts.OmitContent {
		kept = string(text)
	}
	return p.promptSum(c, kept, sha256.Sum256(text), "item"), true
}

// promptSum is prompt with the sha256 of the prompt's text, text "" when
// content is dropped.
func (p *Parser) promptSum(c *rowCtx, text string, sum [sha256.Size]byte, from string) []agentevent.Event {
	s := &p.st
	s.NoCarrier = false
	hash := hex.EncodeToString(sum[:])
	if s.PromptFrom != "" && s.PromptFrom != from && !s.PromptMatched && s.PromptText == hash {
		s.PromptMatched = true
		return nil
	}
	s.PromptText, s.PromptFrom, s.PromptMatched = hash, from, false
	p.closeResponse()
	ev := p.base(c, agentevent.TypeUserMessage, agentevent.RoleUser, agentevent.ChannelChat)
	ev.Text = text
	return []agentevent.Event{ev}
}

// anchorReview is the anchor kind of /review rollouts: the parent's
// entered_review_mode event carries it, the review rollout's events ask for it.
const anchorReview = "review"

// SetParentSession names the parent session of a subagent rollout that
// records none: a /review rollout (source {"subagent":"review"}) carries no
// parent thread id, so only a caller that sees the other rollouts can tell
// (e.g. the parent's entered_review_mode at the child's start, same cwd).
// The rollout's events then keep their own SessionID, name parentID in
// agentevent.AttrParentSessionID / AttrRootSessionID, and get AgentID = the
// rollout's own id and agent.subagent.link "turn". It applies to the events
// parsed after the call; it is ignored for a rollout that is no subagent or
// already names its parent. The hint is kept in the state.
func (p *Parser) SetParentSession(parentID string) {
	p.st.ParentHint = parentID
	p.applyParentHint()
}

func (p *Parser) applyParentHint() {
	s := &p.st
	if s.ParentHint == "" || s.MetaSeen == 0 || (s.AgentID != "" && s.Anchor == "") || s.SubagentType == "" || s.ParentHint == s.OwnID {
		return
	}
	s.SessionID, s.AgentID, s.TurnLink, s.Anchor = s.ParentHint, s.OwnID, true, ""
}
