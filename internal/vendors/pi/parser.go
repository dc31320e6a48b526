// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package pi maps the records of Pi coding agent session files
// (~/.pi/agent/sessions/--<cwd>--/<ISO>_<uuid>.jsonl) to agentevent events.
// It is pure: it never reads a file, it is handed one line at a time and
// keeps, per file, only the state the mapping needs (see MarshalState).
// README.md holds the mapping table.
package pi

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
	"github.com/agentotel/agentotel/internal/textutil"
)

// Unparsed reasons (the shared ones of agentevent's parser skeleton).
const (
	// ReasonMalformedJSON: the line is not JSON (e.g. cut mid-write).
	ReasonMalformedJSON = agentevent.ReasonMalformedJSON
	// ReasonUnknownType: an entry type or message role this parser does not know.
	ReasonUnknownType = agentevent.ReasonUnknownType
	// ReasonUnexpectedShape: JSON of a known type whose fields do not have
	// the expected shape.
	ReasonUnexpectedShape = agentevent.ReasonUnexpectedShape
	// ReasonParserError: the mapping failed on an internal error; the record
	// is kept rather than lost.
	ReasonParserError = agentevent.ReasonParserError
)

// Options tune what a Parser builds. The zero value builds everything.
type Options struct {
	// OmitContent: the caller drops content (agentevent.StripContent), so
	// the parser does not render tool call arguments or tool result text it
	// reads no fact from. Facts read from content (exit codes, test counts,
	// line counts) are still read.
	OmitContent bool
	// OmitRaw: the caller drops Event.Raw, so the parser does not copy the
	// record into it.
	OmitRaw bool
	// Source is the source of the events ("": Pi's own). Agents built on
	// Pi's session format (OpenClaw) read their files with this parser
	// under their own source.
	Source agentevent.Source
}

// Parser maps the records of one session file. It is not safe for
// concurrent use; each file gets its own Parser.
type Parser struct {
	path string
	opts Options
	// fileSessionID is the session id the file name carries
	// (<ISO>_<uuid>.jsonl), used until the header is seen.
	fileSessionID string
	st            state
	// typedOnly decodes every line with decodeEntry, never scanEntry: the
	// tests' reference.
	typedOnly bool
	// known: what scanEntry takes from the lines before.
	known known
	// hashedRoot and rootHash cache ProjectHash(st.Cwd).
	hashedRoot, rootHash string
}

// NewParser returns the parser for one Pi session file. path is the file's
// path; it is the file identity for stable ids and goes into Event.LogFile.
// NewParser does no I/O.
func NewParser(path string) *Parser {
	return NewParserWithOptions(path, Options{})
}

// NewParserWithOptions is NewParser with options (see Options).
func NewParserWithOptions(path string, opts Options) *Parser {
	if opts.Source == "" {
		opts.Source = Source
	}
	return &Parser{path: path, opts: opts, fileSessionID: fileSessionID(path, opts.Source), st: newState()}
}

// fileSessionID is the session id a file's name carries, the fallback of a
// file whose header is missing: the name up to ".jsonl" (an archived
// OpenClaw transcript goes on with ".reset.<time>" or ".deleted.<time>"),
// and for Pi the part of it after the last "_" (<ISO>_<id>.jsonl).
func fileSessionID(path string, src agentevent.Source) string {
	base := filepath.Base(path)
	if i := strings.Index(base, ".jsonl"); i > 0 {
		base = base[:i]
	}
	if src != Source {
		return base
	}
	if i := strings.LastIndexByte(base, '_'); i >= 0 && i+1 < len(base) {
		base = base[i+1:]
	}
	return base
}

// rowCtx is what a record shares with every event it yields.
type rowCtx struct {
	lineNo, offset int64
	line           []byte
	raw            []byte
	entryID        string
	ts             time.Time
}

// pending is an event under construction and its index among the events of
// its record.
type pending struct {
	ev  agentevent.Event
	idx int
}

// Parse maps one record (the line without its trailing "\n"). lineNo is
// 1-based, offset is the byte offset of the line's start. Returns 0..N fully
// normalized events. A record at or before the last offset already parsed
// (after UnmarshalState) yields nothing. Never panics: a malformed line, an
// unknown entry type or message role yields one event with Unparsed set,
// Type log, Role system, Raw = line.
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
	e, fast := (*entry)(nil), false
	if p.opts.OmitContent && !p.typedOnly {
		e, fast = scanEntry(trimmed, &p.known)
	}
	var err error
	if !fast {
		e, err = decodeEntry(trimmed)
	}
	if err != nil {
		reason, detail := agentevent.DecodeFailure(trimmed, err)
		return p.unparsed(c, reason, detail)
	}
	if t, ok := parseTime(e.Timestamp); ok {
		c.ts = t
	}
	if e.Type == "session" {
		p.header(e, c)
		return nil
	}
	if p.st.SessionID == "" {
		p.st.SessionID = p.fileSessionID
	}
	c.entryID = strings.Clone(e.ID)
	if e.Timestamp != "" && !c.ts.IsZero() {
		p.st.Timestamp = c.ts
	}

	var out []pending
	// The tree (v2+): an entry whose parent is not the current leaf starts
	// a new branch; the entries between the old leaf and the fork point are
	// abandoned. A meta event says so before the entry's own events.
	// OpenClaw says where the branch goes instead: its leaf control moves
	// the leaf (mapLeaf), and an entry appended on the side ("side") leaves
	// it where it is.
	if e.ID != "" {
		parent := ""
		if e.ParentID != nil {
			parent = *e.ParentID
		}
		onBranch := e.Type != entryLeaf && e.AppendMode != appendSide
		if onBranch {
			if ev, ok := p.branch(c, parent); ok {
				out = append(out, pending{ev: ev, idx: -1})
			}
		}
		p.st.addEntry(c.entryID, strings.Clone(parent))
		if onBranch {
			p.st.Leaf = c.entryID
		}
	}
	// A forked session (v2+ header with parentSession) starts with a copy
	// of the parent's path: entries older than the header are that copy,
	// already read in the parent's file. They update the state, never
	// emit (their tokens would be counted twice).
	replayed := p.st.FormatVersion >= 2 && p.st.ParentSession != "" && !p.st.HeaderTime.IsZero() &&
		e.Timestamp != "" && c.ts.Before(p.st.HeaderTime)

	reason, detail := "", ""
	switch e.Type {
	case "message":
		var more []pending
		more, reason, detail = p.mapMessage(e, c, replayed)
		out = append(out, more...)
	case "model_change":
		out = append(out, p.mapModelChange(e, c))
	case "thinking_level_change":
		ev := p.meta(c, "thinking_level_change")
		agentevent.SetAttr(&ev, agentevent.AttrThinkingLevel, e.ThinkingLevel)
		out = append(out, pending{ev: ev})
	case "compaction":
		out = append(out, p.mapCompaction(e, c))
	case "branch_summary":
		ev := p.base(c, agentevent.TypeSessionSummary, agentevent.RoleSystem, agentevent.ChannelSystem)
		ev.Text = e.Summary
		agentevent.SetAttr(&ev, agentevent.AttrSummaryKind, "branch")
		if e.FromID != "" {
			agentevent.SetAttr(&ev, agentevent.AttrBranchFromEntry, e.FromID)
		}
		if e.FromHook != nil && *e.FromHook {
			agentevent.SetAttr(&ev, agentevent.AttrSummaryFromExtension, true)
		}
		out = append(out, pending{ev: ev})
	case "session_info":
		ev := p.meta(c, "session_info")
		if e.Name != nil {
			agentevent.SetAttr(&ev, agentevent.AttrSessionName, *e.Name)
		}
		out = append(out, pending{ev: ev})
	case "label":
		ev := p.meta(c, "label")
		agentevent.SetAttr(&ev, agentevent.AttrLabelTarget, e.TargetID)
		if e.Label != nil {
			agentevent.SetAttr(&ev, agentevent.AttrLabel, *e.Label)
		}
		out = append(out, pending{ev: ev})
	case "custom":
		if e.CustomType == customModelSnapshot {
			out = append(out, p.mapModelSnapshot(e, c))
			break
		}
		// Extension state, not part of the model's context: only its kind.
		ev := p.meta(c, "custom")
		agentevent.SetAttr(&ev, agentevent.AttrCustomType, e.CustomType)
		out = append(out, pending{ev: ev})
	case entryLeaf:
		out = append(out, p.mapLeaf(e, c)...)
	case "reset":
		// OpenClaw's reset boundary (/new, /reset, an idle or daily reset):
		// the model's context starts again after it.
		ev := p.meta(c, "reset")
		agentevent.SetAttr(&ev, agentevent.AttrResetReason, e.Reason)
		if e.FirstKeptEntryID != "" {
			agentevent.SetAttr(&ev, agentevent.AttrResetFirstKeptEntry, e.FirstKeptEntryID)
		}
		out = append(out, pending{ev: ev})
	case "custom_message":
		ev := p.meta(c, "custom_message")
		agentevent.SetAttr(&ev, agentevent.AttrCustomType, e.CustomType)
		str, blocks, ok := decodeBlocks(e.Content)
		if !ok {
			reason, detail = ReasonUnexpectedShape, "custom_message content"
			break
		}
		ev.Text = contentText(str, blocks)
		out = append(out, pending{ev: ev})
	case "":
		reason, detail = ReasonUnexpectedShape, "record has no type"
	default:
		reason, detail = ReasonUnknownType, "entry type "+e.Type
	}
	if reason != "" {
		return p.unparsed(c, reason, detail)
	}
	if replayed {
		return nil
	}
	return p.finish(c, out)
}

// header reads the session line: v1 carries the model, v3 only the session.
func (p *Parser) header(e *entry, c *rowCtx) {
	s := &p.st
	if s.HeaderSeen {
		return // a second header (concatenated files): the first one wins
	}
	s.HeaderSeen = true
	if e.ID != "" {
		s.SessionID = strings.Clone(e.ID)
	}
	s.FormatVersion = 1
	if e.Version != nil {
		s.FormatVersion = *e.Version
	}
	if e.Cwd != nil {
		s.Cwd = strings.Clone(*e.Cwd)
	}
	s.ParentSession = strings.Clone(textutil.FirstNonEmpty(e.ParentSession, e.BranchedFrom))
	s.HeaderTime = c.ts
	if e.ModelID != "" {
		s.Model = strings.Clone(e.ModelID)
	}
	if e.Provider != "" {
		s.Provider = strings.Clone(e.Provider)
	}
	if s.Timestamp.IsZero() {
		// v1 headers can be timestamped after the first messages: the time
		// is only a fallback for records that have none.
		s.Timestamp = c.ts
	}
}

// branch reports a switch of branch: the new entry's parent is not the
// entry written last.
func (p *Parser) branch(c *rowCtx, parent string) (agentevent.Event, bool) {
	s := &p.st
	if s.Leaf == "" || parent == s.Leaf {
		return agentevent.Event{}, false
	}
	// The ancestors of the fork point, then the old leaf's path up to the
	// first of them: those entries are abandoned.
	onPath := map[string]bool{}
	for id, n := parent, 0; id != "" && n <= maxEntries; n++ {
		onPath[id] = true
		next, ok := s.Parents[id]
		if !ok {
			break
		}
		id = next
	}
	abandoned := int64(0)
	for id, n := s.Leaf, 0; id != "" && !onPath[id] && n <= maxEntries; n++ {
		abandoned++
		next, ok := s.Parents[id]
		if !ok {
			break
		}
		id = next
	}
	ev := p.meta(c, "branch")
	agentevent.SetAttr(&ev, agentevent.AttrBranchFromEntry, s.Leaf)
	agentevent.SetAttr(&ev, agentevent.AttrBranchToEntry, parent)
	agentevent.SetAttr(&ev, agentevent.AttrBranchAbandonedEntries, abandoned)
	return ev, true
}

// OpenClaw's leaf control, and the entries it appends beside the branch.
const (
	entryLeaf  = "leaf"
	appendSide = "side"
)

// mapLeaf maps OpenClaw's leaf control, which moves the end of the current
// branch to its target (null: before the first entry): the entries between
// the old leaf and the target are abandoned, as when a new entry forks (a
// branch notice says so first). The entries after it hang from its append
// parent (the target unless it says otherwise); in side mode they are
// appended beside the branch, whose leaf stays the target.
func (p *Parser) mapLeaf(e *entry, c *rowCtx) []pending {
	var out []pending
	if ev, ok := p.branch(c, e.TargetID); ok {
		out = append(out, pending{ev: ev, idx: -1})
	}
	p.st.Leaf = strings.Clone(e.TargetID)
	if e.AppendParentID != nil && e.AppendMode != appendSide {
		p.st.Leaf = strings.Clone(*e.AppendParentID)
	}
	ev := p.meta(c, entryLeaf)
	agentevent.SetAttr(&ev, agentevent.AttrLeafTarget, e.TargetID)
	if e.AppendParentID != nil {
		agentevent.SetAttr(&ev, agentevent.AttrLeafAppendParent, *e.AppendParentID)
	}
	if e.AppendMode != "" {
		agentevent.SetAttr(&ev, agentevent.AttrLeafAppendMode, e.AppendMode)
	}
	return append(out, pending{ev: ev})
}

func (p *Parser) mapModelChange(e *entry, c *rowCtx) pending {
	s := &p.st
	if e.ModelID != "" {
		s.Model = strings.Clone(e.ModelID)
	}
	if e.Provider != "" {
		s.Provider = strings.Clone(e.Provider)
	}
	ev := p.meta(c, "model_change")
	agentevent.SetAttr(&ev, agentevent.AttrModelChangeModel, e.ModelID)
	agentevent.SetAttr(&ev, agentevent.AttrModelChangeProvider, Provider(e.Provider))
	return pending{ev: ev}
}

// mapModelSnapshot maps OpenClaw's model-snapshot custom entry as the model
// change it is: the model it names is the model of the responses after it
// that name none. Its data holds the model; a snapshot without a data
// object is read from the entry itself, as ccusage reads it.
func (p *Parser) mapModelSnapshot(e *entry, c *rowCtx) pending {
	var d modelSnapshot
	if data := bytes.TrimSpace(e.Data); len(data) == 0 || data[0] != '{' || jsonx.Unmarshal(data, &d) != nil {
		d = modelSnapshot{Provider: e.Provider, ModelID: e.ModelID}
	}
	model := textutil.FirstNonEmpty(d.ModelID, d.Model)
	s := &p.st
	if model != "" {
		s.Model = strings.Clone(model)
	}
	if d.Provider != "" {
		s.Provider = strings.Clone(d.Provider)
	}
	ev := p.meta(c, "model_change")
	agentevent.SetAttr(&ev, agentevent.AttrCustomType, e.CustomType)
	if model != "" {
		agentevent.SetAttr(&ev, agentevent.AttrModelChangeModel, model)
	}
	if d.Provider != "" {
		agentevent.SetAttr(&ev, agentevent.AttrModelChangeProvider, Provider(d.Provider))
	}
	if d.ModelAPI != nil && *d.ModelAPI != "" {
		agentevent.SetAttr(&ev, agentevent.AttrAPI, *d.ModelAPI)
	}
	return pending{ev: ev}
}

func (p *Parser) mapCompaction(e *entry, c *rowCtx) pending {
	ev := p.base(c, agentevent.TypeSessionSummary, agentevent.RoleSystem, agentevent.ChannelSystem)
	ev.Text = e.Summary
	agentevent.SetAttr(&ev, agentevent.AttrSummaryKind, "compaction")
	if e.TokensBefore != nil {
		agentevent.SetAttr(&ev, agentevent.AttrCompactionPreTokens, *e.TokensBefore)
	}
	if e.FirstKeptEntryID != "" {
		agentevent.SetAttr(&ev, agentevent.AttrCompactionFirstKeptEntry, e.FirstKeptEntryID)
	}
	if e.FromHook != nil && *e.FromHook {
		agentevent.SetAttr(&ev, agentevent.AttrCompactionTrigger, "extension")
	}
	return pending{ev: ev}
}

// base starts an event with the envelope of the record.
func (p *Parser) base(c *rowCtx, typ agentevent.EventType, role agentevent.Role, ch agentevent.Channel) agentevent.Event {
	return agentevent.Event{
		Source:      p.opts.Source,
		SessionID:   p.st.SessionID,
		ProjectRoot: p.st.Cwd,
		ProjectHash: p.projectHash(),
		Timestamp:   c.ts,
		Type:        typ,
		Role:        role,
		Channel:     ch,
	}
}

func (p *Parser) meta(c *rowCtx, kind string) agentevent.Event {
	ev := p.base(c, agentevent.TypeMeta, agentevent.RoleSystem, agentevent.ChannelSystem)
	agentevent.SetAttr(&ev, agentevent.AttrMetaKind, kind)
	return ev
}

func (p *Parser) projectHash() string {
	if p.st.Cwd != p.hashedRoot || (p.rootHash == "" && p.st.Cwd != "") {
		p.hashedRoot, p.rootHash = p.st.Cwd, agentevent.ProjectHash(p.st.Cwd)
	}
	return p.rootHash
}

// eventID is the id of the idx-th event of a record: <session>:<entry id>
// for tree entries (v2+), with "#<idx>" when the record yields several (the
// branch notice is "#branch"); a stable hash of file and offset otherwise.
func (p *Parser) eventID(c *rowCtx, idx, n int) string {
	if c.entryID == "" {
		return agentevent.StableID(p.path, c.offset, idx)
	}
	id := p.st.SessionID + ":" + c.entryID
	switch {
	case idx < 0:
		return id + "#branch"
	case n > 1:
		return fmt.Sprintf("%s#%d", id, idx)
	}
	return id
}

// finish gives the events of one record their ids, turn parents, sequence
// and location, and normalizes them.
func (p *Parser) finish(c *rowCtx, out []pending) []agentevent.Event {
	if len(out) == 0 {
		return nil
	}
	if c.raw == nil && !p.opts.OmitRaw {
		c.raw = bytes.Clone(c.line)
	}
	n := 0
	for i := range out {
		pe := &out[i]
		if pe.idx >= 0 {
			n++
		}
	}
	events := make([]agentevent.Event, 0, len(out))
	for i := range out {
		pe := &out[i]
		ev := pe.ev
		if ev.EventID == "" {
			ev.EventID = p.eventID(c, pe.idx, n)
		}
		if ev.Type == agentevent.TypeUserMessage && c.entryID != "" && p.st.FormatVersion >= 2 {
			// The turn before this one on its branch, not in the file.
			agentevent.SetAttr(&ev, agentevent.AttrPreviousPrompt, p.st.promptBefore(p.st.Parents[c.entryID]))
			p.st.Prompts[c.entryID] = ev.EventID
		}
		p.st.Chain(&ev)
		ev.LogFile = p.path
		ev.LogLine = c.lineNo
		ev.Raw = c.raw
		agentevent.Normalize(&ev)
		events = append(events, ev)
	}
	return events
}

// unparsed reports a record that could not be mapped: one log event that
// carries the line.
func (p *Parser) unparsed(c *rowCtx, reason, detail string) []agentevent.Event {
	if p.st.SessionID == "" {
		p.st.SessionID = p.fileSessionID
	}
	c.entryID = ""
	ev := p.base(c, agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
	ev.Unparsed = reason
	if detail != "" {
		agentevent.SetAttr(&ev, agentevent.AttrUnparsedDetail, detail)
	}
	return p.finish(c, []pending{{ev: ev}})
}
