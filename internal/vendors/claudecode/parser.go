// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package claudecode maps the records of Claude Code session files
// (~/.claude/projects/<project>/<session>.jsonl and its subagent files) to
// agentevent events. Its parser is pure: it never reads a file, it is handed
// one line at a time and keeps, per file, only the state the mapping needs
// (see MarshalState); whether a subagent's session transcript is missing
// (SubagentOwner) is the reader's to tell it. README.md holds the mapping
// table.
package claudecode

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
)

// Unparsed reasons.
const (
	// ReasonMalformedJSON: the line is not JSON (e.g. cut mid-write).
	ReasonMalformedJSON = agentevent.ReasonMalformedJSON
	// ReasonUnknownType: a record type this parser does not know.
	ReasonUnknownType = agentevent.ReasonUnknownType
	// ReasonUnexpectedShape: JSON of a known type whose fields do not have
	// the expected shape (not an object, no message, content of a wrong type).
	ReasonUnexpectedShape = agentevent.ReasonUnexpectedShape
	// ReasonParserError: the mapping failed on an internal error; the record
	// is kept rather than lost.
	ReasonParserError = agentevent.ReasonParserError
)

const (
	providerAnthropic = "anthropic"
	syntheticModel    = "<synthetic>"
	// sidechainPrefix prefixes the agent id given to a 1.0.x inline sidechain.
	sidechainPrefix = "sidechain-"
	// warmupPrompt is the whole prompt of a warmup subagent (warmupRow).
	warmupPrompt = "Warmup"
)

// Options tune what a Parser builds. The zero value builds everything.
type Options struct {
	// OmitContent: the caller drops content (agentevent.StripContent), so
	// the parser does not render what it would drop (tool results' text,
	// tool call arguments, file diffs). Every other field of every event is
	// what it is without it: facts read from content (exit codes, test
	// counts, line counts, failure classes) are still read.
	OmitContent bool
	// OmitRaw: the caller drops Event.Raw, so the parser does not copy the
	// record into it.
	OmitRaw bool
	// Orphan: the file is a subagent file whose session has no main
	// transcript (the caller looked, see OrphanSubagent). No call will claim
	// the subagent: its events say so (agent.subagent.orphan, and the link
	// "none"), and it is a session of its own.
	Orphan bool
}

// Parser maps the records of one session file. It is not safe for
// concurrent use; each file gets its own Parser.
type Parser struct {
	path string
	opts Options
	// fileAgentID is the subagent id the file name carries
	// (agent-<id>.jsonl), "" for a main session file.
	fileAgentID string
	// fileSessionID is the session the path names: <session>.jsonl or
	// <session>/subagents/agent-<id>.jsonl. "" for a flat agent file.
	fileSessionID string
	// aside: a /btw side-question file (agent-aside_question-*.jsonl),
	// whose rows are held until the end of its data (see aside.go).
	aside bool
	st    state
	// typedOnly decodes every line with decodeRecord, never fastDecode: the
	// tests' reference.
	typedOnly bool
	// known: what fastDecode takes from the rows before.
	known known
	// hashedRoot and rootHash cache ProjectHash(st.Cwd).
	hashedRoot, rootHash string
}

// NewParser returns the parser for one Claude Code session file (main
// transcript or subagent file). path is the file's path; it is the file
// identity for stable ids, goes into Event.LogFile, and its shape tells the
// layout (`<dir>/<session>.jsonl`, flat `agent-<id>.jsonl`, nested
// `<session>/subagents/agent-<id>.jsonl`). NewParser does no I/O.
func NewParser(path string) *Parser {
	return NewParserWithOptions(path, Options{})
}

// NewParserWithOptions is NewParser with options (see Options).
func NewParserWithOptions(path string, opts Options) *Parser {
	p := &Parser{path: path, opts: opts, st: newState()}
	base := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if id, ok := strings.CutPrefix(base, "agent-"); ok && id != "" {
		p.fileAgentID = id
		p.aside = strings.HasPrefix(id, asidePrefix)
		dir := filepath.Dir(path)
		if filepath.Base(dir) == "subagents" {
			p.fileSessionID = filepath.Base(filepath.Dir(dir))
		}
	} else {
		p.fileSessionID = base
	}
	return p
}

// SubagentOwner is the main transcript (<session>.jsonl beside the
// <session> directory) a nested subagent file
// (<session>/subagents/agent-<id>.jsonl) belongs to; "" for any other file.
// Claude Code writes the main transcript before it spawns any subagent, so
// a missing one is gone, not late: the subagent is an orphan.
func SubagentOwner(path string) string {
	dir := filepath.Dir(path)
	if filepath.Base(dir) != "subagents" || !strings.HasPrefix(filepath.Base(path), "agent-") {
		return ""
	}
	return filepath.Dir(dir) + ".jsonl"
}

// rowCtx is what a record shares with every event it yields.
type rowCtx struct {
	lineNo, offset   int64
	line             []byte // the caller's buffer, valid during Parse only
	raw              []byte // a copy of line, made once the line yields events
	uuid             string
	ts               time.Time
	sessionID        string
	agentID          string
	sidechain        bool
	parentToolCallID string
}

// pending is an event under construction and the position (content block
// index) it comes from, which makes its id.
type pending struct {
	ev  agentevent.Event
	idx int
	id  string // the event id when it is not made from the row's uuid and idx
}

// Parse maps one record (the line without its trailing "\n"). lineNo is
// 1-based, offset is the byte offset of the line's start. Returns 0..N fully
// normalized events. A record at or before the last offset already parsed
// (after UnmarshalState) yields nothing: replays after a restart are dropped
// here. Never panics: a malformed line or an unknown record type yields one
// event with Unparsed set, Type log, Role system, Raw = line.
func (p *Parser) Parse(line []byte, lineNo, offset int64) []agentevent.Event {
	if !p.st.Admit(offset) {
		return nil
	}
	events := p.parse(line, lineNo, offset)
	p.known.release() // the row's records hold pieces of the line
	return p.release(events)
}

// Flush returns what the parser holds back until the end of the file's data:
// the usage of a response whose last row had no stop_reason, and the rows of
// a /btw side-question file since its latest prompt. The receiver calls it
// when it has read all the file has for now; calling it at any other time
// only emits earlier what would have come later (a response that then goes
// on carries the growth of its output as a correction).
func (p *Parser) Flush() []agentevent.Event {
	held := p.flushHeld()
	if !p.aside {
		return held
	}
	p.hold(held)
	out := p.st.Aside
	p.st.Aside = nil
	return out
}

// HeldAt tells whether the parser holds events back for Flush and the time
// of the newest record they come from (zero when the records have none). A
// record written long ago is not being completed by a live writer: the
// receiver flushes at the end of the data when that time is older than its
// settle delay, even in a file that was just copied and so looks freshly
// written.
func (p *Parser) HeldAt() (at time.Time, holding bool) {
	if h := p.st.Held; h != nil {
		at, holding = h.Timestamp, true
	}
	if n := len(p.st.Aside); n > 0 {
		holding = true
		if ts := p.st.Aside[n-1].Timestamp; ts.After(at) {
			at = ts
		}
	}
	return at, holding
}

func (p *Parser) parse(line []byte, lineNo, offset int64) (events []agentevent.Event) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return nil
	}
	c := &rowCtx{lineNo: lineNo, offset: offset, line: line}
	defer agentevent.RecoverRecord(&events, func(reason, detail string) []agentevent.Event {
		return p.unparsed(c, reason, detail)
	})
	if trimmed[0] != '{' {
		pre := p.flushHeld()
		reason, detail := agentevent.NotAnObject(trimmed)
		return append(pre, p.unparsed(c, reason, detail)...)
	}
	r, fast := (*record)(nil), false
	if !p.typedOnly {
		p.known.st = &p.st
		r, fast = fastDecode(line, p.opts.OmitContent, &p.known)
	}
	var err error
	if !fast {
		p.known.usedTyped = true
		r, err = decodeRecordInto(line, &p.known.typed)
	}
	if err != nil {
		pre := p.flushHeld()
		reason, detail := agentevent.DecodeFailure(line, err)
		return append(pre, p.unparsed(c, reason, detail)...)
	}
	// A record that is not a row of the response whose usage is held ends
	// that response: its usage goes out first, in its own turn.
	var pre []agentevent.Event
	if p.st.Held != nil && !p.continuesHeld(r) {
		pre = p.flushHeld()
	}
	p.envelope(r, c)
	if r.Type == "fork-context-ref" {
		f := &forkRef{
			ParentSessionID: strings.Clone(r.ParentSessionID), ParentLastUUID: strings.Clone(r.ParentLastUUID),
			LineNo: lineNo, Offset: offset,
		}
		if r.ContextLength.Set {
			n := r.ContextLength.V // r is reused for the next line
			f.ContextLength = &n
		}
		if !p.opts.OmitRaw {
			f.Raw = string(trimmed)
		}
		p.st.Fork = f
		return pre
	}
	if p.st.Fork != nil {
		pre = append(pre, p.forkEvent(c)...)
	}

	var out []pending
	reason := ""
	switch r.Type {
	case "user":
		out, reason = p.mapUser(r, c)
	case "assistant":
		out, reason = p.mapAssistant(r, c)
	case "system":
		out = p.mapSystem(r, c)
	case "summary":
		out = p.mapSummary(r, c)
	case "file-history-snapshot":
		out = p.mapSnapshot(r, c)
	case "file-history-delta":
		out = p.mapSnapshotDelta(r, c)
	case "attachment":
		out, reason = p.mapAttachment(r, c)
	case "ai-title", "custom-title", "agent-name", "permission-mode", "mode", "pr-link", "teleported-from":
		out = p.mapSessionMeta(r, c)
	case "progress", "queue-operation", "last-prompt", "bridge-session":
		// Deliberately skipped, see README.md: progress mirrors the subagent
		// file (agent_progress) or only announces a hook; queue operations
		// and last-prompt repeat prompts the user rows carry; bridge-session
		// repeats, after every turn, the remote-control session that the
		// system bridge_status row announces once.
		return nil
	case "":
		reason = ReasonUnexpectedShape
	default:
		reason = ReasonUnknownType
	}
	switch {
	case reason == ReasonUnknownType:
		return append(pre, p.unparsed(c, reason, "record type "+r.Type)...)
	case reason != "" && r.Type == "":
		return append(pre, p.unparsed(c, reason, "record has no type")...)
	case reason != "":
		return append(pre, p.unparsed(c, reason, r.Type+" record of an unexpected shape")...)
	}
	evs := p.finish(c, out)
	if len(pre) == 0 {
		return evs // most rows: no copy
	}
	return append(pre, evs...)
}

// forkEvent is the event of the held fork-context-ref record: a meta event
// of the fork's thread, with the envelope of the record after it (c) and the
// place of its own line.
func (p *Parser) forkEvent(c *rowCtx) []agentevent.Event {
	f := p.st.Fork
	p.st.Fork = nil
	fc := *c
	fc.lineNo, fc.offset, fc.uuid, fc.line, fc.raw = f.LineNo, f.Offset, "", nil, nil
	if f.Raw != "" {
		fc.raw = []byte(f.Raw)
	}
	r := &record{Type: "fork-context-ref", ParentSessionID: f.ParentSessionID, ParentLastUUID: f.ParentLastUUID}
	if f.ContextLength != nil {
		r.ContextLength = num{V: *f.ContextLength, Set: true}
	}
	return p.finish(&fc, p.mapSessionMeta(r, &fc))
}

// decodeRecord decodes one line in one pass when its message and
// toolUseResult have the usual shapes (fastRecord: content blocks, an
// object), else in one pass with its content and toolUseResult raw
// (msgRecord), else as a record whose message is decoded when used. The
// record's events are the same whichever way it was decoded: each way reads
// the same fields into the same types.
func decodeRecord(line []byte) (*record, error) {
	return decodeRecordInto(line, new(fastRecord))
}

// decodeRecordInto is decodeRecord into f, which it empties first: the
// record returned is f's, unless the line needs another shape.
func decodeRecordInto(line []byte, f *fastRecord) (*record, error) {
	*f = fastRecord{}
	if jsonx.Unmarshal(line, f) == nil {
		r := &f.record
		if f.ToolUseResult != nil {
			r.decoded.turDone, r.decoded.tur = true, f.ToolUseResult.result()
		}
		switch {
		case f.Message != nil:
			d := &r.decoded
			d.msgDone, d.msgOK, d.msg = true, true, f.Message.message
			d.contentDone = true
			if f.Message.Content != nil {
				d.contentKind, d.contentBlocks = contentBlocks, f.Message.Content
			}
			return r, nil
		case r.Type != "user" && r.Type != "assistant":
			// Only user and assistant rows read their message.
			return r, nil
		}
		// A user or assistant row whose message is absent or null: the
		// two are told apart below.
	}
	var m msgRecord
	if jsonx.Unmarshal(line, &m) == nil && m.Message != nil {
		r := &m.record
		r.decoded.msgDone, r.decoded.msgOK, r.decoded.msg = true, true, *m.Message
		return r, nil
	}
	r := new(record)
	if err := jsonx.Unmarshal(line, r); err != nil {
		return nil, err
	}
	return r, nil
}

// envelope resolves what the record shares with its events: session,
// thread, timestamp, and the per-row context fields carried forward.
func (p *Parser) envelope(r *record, c *rowCtx) {
	s := &p.st
	// The decoder's strings point into the record's buffer: what the state
	// keeps is copied (own), or one kept string would pin a multi-MB line.
	own := func(dst *string, v string) {
		if *dst != v {
			*dst = strings.Clone(v)
		}
	}
	if r.SessionID != "" {
		own(&s.SessionID, r.SessionID)
	}
	if s.SessionID == "" {
		s.SessionID = p.fileSessionID
	}
	c.sessionID = s.SessionID
	if r.Cwd != nil {
		own(&s.Cwd, *r.Cwd)
	}
	if r.Version != nil {
		own(&s.AgentVer, *r.Version)
	}
	if r.GitBranch != nil {
		own(&s.GitBranch, *r.GitBranch)
	}
	if r.Entrypoint != nil {
		own(&s.Entrypoint, *r.Entrypoint)
	}
	if r.Timestamp.Set {
		s.Timestamp = r.Timestamp.T
	}
	c.ts = s.Timestamp
	c.uuid = r.UUID

	c.agentID = r.AgentID
	if c.agentID == "" {
		c.agentID = p.fileAgentID
	}
	c.sidechain = r.IsSidechain || p.fileAgentID != ""
	if c.agentID == "" && r.IsSidechain {
		c.agentID, c.parentToolCallID = p.inlineSidechain(r)
	}
	if p.fileAgentID != "" && !s.Warmup && warmupRow(r) {
		s.Warmup = true
	}
}

// warmupRow tells whether a record is the prompt of a warmup subagent:
// Claude Code 2.0 starts a session by sending "Warmup" to its built-in
// subagents (Explore, Plan) to fill their prompt caches, each in an
// agent-<id>.jsonl file of its own whose root user row is that word. No
// tool call spawns them and none ever names them.
func warmupRow(r *record) bool {
	if r.Type != "user" || (r.ParentUUID != nil && *r.ParentUUID != "") {
		return false
	}
	if _, ok := r.message(); !ok {
		return false
	}
	_, str, blocks := r.content()
	return strings.TrimSpace(str+blocksText(blocks, false)) == warmupPrompt
}

// unspawned tells whether the events of the row belong to a subagent that
// no tool call spawned, now or later: a warmup file, or a 1.0.x inline
// sidechain no Task call explained.
func (p *Parser) unspawned(c *rowCtx) bool {
	if !c.sidechain {
		return false
	}
	if p.fileAgentID != "" {
		return p.st.Warmup
	}
	return slices.Contains(p.st.Unspawned, c.agentID)
}

// inlineSidechain resolves the thread of a 1.0.x sidechain row: Task
// subagents were written into the main file, isSidechain set, with no agent
// id. A sidechain starts with a root user row (parentUuid null) holding the
// Task prompt; it is matched to the open Task call with that prompt (else
// the oldest open Task call with no sidechain yet), and its id becomes
// "sidechain-<tool call id>". Later rows follow their parentUuid. A root no
// open Task call explains (a warmup) gets "sidechain-<row uuid>", unlinked.
func (p *Parser) inlineSidechain(r *record) (agentID, parentCall string) {
	s := &p.st
	if r.ParentUUID != nil {
		if a, ok := s.Sidechains[*r.ParentUUID]; ok {
			agentID = a
		}
	}
	if agentID == "" && (r.Type != "user" || (r.ParentUUID != nil && *r.ParentUUID != "")) {
		// Not a root and its parent is unknown (state bound reached):
		// most likely the sidechain seen last.
		agentID = s.LastSidechain
	}
	if agentID == "" {
		prompt := ""
		if r.Type == "user" {
			if _, ok := r.message(); ok {
				_, str, blocks := r.content()
				prompt = strings.TrimSpace(str + blocksText(blocks, false))
			}
		}
		best := p.sidechainCall(prompt, true)
		if best == nil {
			best = p.sidechainCall(prompt, false)
		}
		if best != nil {
			agentID = sidechainPrefix + best.ID
			best.Sidechain = agentID
		} else {
			agentID = sidechainPrefix + r.UUID
			s.addUnspawned(agentID)
		}
	}
	if r.UUID != "" {
		s.addSidechainRow(r.UUID, agentID)
	}
	s.LastSidechain = agentID
	if call, ok := strings.CutPrefix(agentID, sidechainPrefix); ok {
		if oc := s.Calls[call]; oc != nil && oc.Sidechain == agentID {
			parentCall = call
		}
	}
	return agentID, parentCall
}

// sidechainCall picks the oldest open Task call with no sidechain yet;
// with samePrompt, only one whose prompt is prompt.
func (p *Parser) sidechainCall(prompt string, samePrompt bool) *openCall {
	var best *openCall
	for _, call := range p.st.Calls {
		if !isSubagentTool(call.Name) || call.Sidechain != "" {
			continue
		}
		if samePrompt && (prompt == "" || call.Prompt != prompt) {
			continue
		}
		if best == nil || call.Seq < best.Seq {
			best = call
		}
	}
	return best
}

// base starts an event with the envelope of the row.
func (p *Parser) base(c *rowCtx, typ agentevent.EventType, role agentevent.Role, ch agentevent.Channel) agentevent.Event {
	s := &p.st
	return agentevent.Event{
		Source:           Source,
		SessionID:        c.sessionID,
		ProjectRoot:      s.Cwd,
		ProjectHash:      p.projectHash(),
		Timestamp:        c.ts,
		Type:             typ,
		Role:             role,
		Channel:          ch,
		AgentID:          c.agentID,
		IsSidechain:      c.sidechain,
		ParentToolCallID: c.parentToolCallID,
		AgentVersion:     s.AgentVer,
		GitBranch:        s.GitBranch,
		Entrypoint:       s.Entrypoint,
	}
}

func (p *Parser) projectHash() string {
	if p.st.Cwd != p.hashedRoot || (p.rootHash == "" && p.st.Cwd != "") {
		p.hashedRoot, p.rootHash = p.st.Cwd, agentevent.ProjectHash(p.st.Cwd)
	}
	return p.rootHash
}

// finish gives the events of one row their ids, turn parents, sequence and
// location, and normalizes them.
func (p *Parser) finish(c *rowCtx, out []pending) []agentevent.Event {
	if len(out) == 0 {
		return nil
	}
	if c.raw == nil && c.line != nil && !p.opts.OmitRaw {
		c.raw = bytes.Clone(c.line)
	}
	events := make([]agentevent.Event, 0, len(out))
	unspawned := p.unspawned(c)
	orphan := p.opts.Orphan && p.fileAgentID != ""
	for i := range out {
		pe := &out[i]
		ev := pe.ev
		if unspawned || orphan {
			// Said on every event, so that the connector need not wait for
			// a claim that cannot come, whichever event it sees first.
			if ev.Attributes == nil {
				ev.Attributes = map[string]any{}
			}
			ev.Attributes[agentevent.AttrSubagentLink] = agentevent.SubagentLinkNone
			if orphan {
				ev.Attributes[agentevent.AttrSubagentOrphan] = true
			}
		}
		switch {
		case pe.id != "":
			ev.EventID = pe.id
		case c.uuid != "" && len(out) == 1:
			ev.EventID = c.uuid
		case c.uuid != "":
			ev.EventID = fmt.Sprintf("%s#%d", c.uuid, pe.idx)
		default:
			ev.EventID = agentevent.StableID(p.path, c.offset, pe.idx)
		}
		p.st.ChainIn(&ev, p.st.Prompts, threadKey(ev.SessionID, ev.AgentID))
		ev.LogFile = p.path
		ev.LogLine = c.lineNo
		ev.Raw = c.raw
		agentevent.Normalize(&ev)
		events = append(events, ev)
	}
	return events
}

// unparsed reports a record that could not be mapped: one log event that
// carries the line, in the thread of the file.
func (p *Parser) unparsed(c *rowCtx, reason, detail string) []agentevent.Event {
	s := &p.st
	if c.sessionID == "" {
		if s.SessionID == "" {
			s.SessionID = p.fileSessionID
		}
		c.sessionID = s.SessionID
		c.ts = s.Timestamp
		c.agentID = p.fileAgentID
		c.sidechain = p.fileAgentID != ""
		c.parentToolCallID = ""
	}
	c.uuid = ""
	ev := p.base(c, agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
	ev.Unparsed = reason
	if detail != "" {
		ev.Attributes = map[string]any{agentevent.AttrUnparsedDetail: detail}
	}
	return p.finish(c, []pending{{ev: ev}})
}

func threadKey(session, agent string) string { return session + "\x00" + agent }
