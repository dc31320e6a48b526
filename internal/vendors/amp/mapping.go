// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package amp

import (
	"bytes"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
	"github.com/agentotel/agentotel/internal/testrun"
	"github.com/agentotel/agentotel/internal/textutil"
)

// Context locates a thread: the file it was read from. Sequence is the last
// sequence number the thread used (0 at first): events are numbered from
// Sequence+1 (the caller stores the last one with its watermark).
type Context struct {
	LogFile  string
	Sequence int64
}

// Result is what MapThread made of a snapshot.
type Result struct {
	Events []agentevent.Event
	// Emitted lists the keys of what is in Events: the caller adds them to
	// its watermark once the events are sent.
	Emitted []string
	// Held is the id of the last message when it was held back because it
	// may still change; -1 otherwise.
	Held int64
}

// Watermark is what a reader stores per thread (keyed by the thread id):
// the keys MapThread reported as emitted.
type Watermark = agentevent.Watermark

// UnmarshalState decodes what Watermark.MarshalState stored; empty data is
// an empty watermark.
func UnmarshalState(data []byte) (Watermark, error) {
	w, err := agentevent.UnmarshalWatermark(data)
	if err != nil {
		return nil, fmt.Errorf("amp watermark: %w", err)
	}
	return w, nil
}

// Run statuses: a result is final once its run is done, failed or stopped.
func finalStatus(s string) bool {
	switch s {
	case "done", "error", "cancelled", "canceled", "rejected-by-user":
		return true
	}
	return false
}

// MapThread maps what of a thread snapshot is not in emitted.
//
// Keys: "m<id>" stands for a message's own events (prompt, thinking, text,
// usage), "call:<tool use id>" and "result:<tool use id>" for each tool
// call and result, "ledger:<id>" for a usage-ledger call that is not a
// message's (title generation). A tool result is emitted once its run is
// final (done, error, cancelled, rejected-by-user); until then the call is
// open. The last message is held back while it may still change — an
// assistant message not yet complete — unless settled (the file has been
// idle for a while, or on shutdown). Later rewrites of emitted parts are
// ignored: nothing is emitted twice.
func MapThread(c Context, th Thread, emitted map[string]bool, settled bool) Result {
	m := mapper{c: c, th: th, seq: c.Sequence, emitted: emitted}
	m.prepare()
	r := Result{Held: -1}
	prompt := ""
	// The ledger's extra calls go after the first answer that follows the
	// message they were made for: the turn's own model comes first.
	extra := m.extraCalls()
	for i := range th.Messages {
		msg := &th.Messages[i]
		last := i == len(th.Messages)-1
		if last && !settled && msg.Bad == nil && msg.Role == "assistant" && (msg.State == nil || msg.State.Type != "complete") {
			r.Held = msg.MessageID
			break
		}
		// A user message's tool results answer the previous turn's calls:
		// they are emitted under its prompt, before the new prompt.
		m.prompt = prompt
		m.guard(*msg, prompt, func() { m.message(*msg, prompt) })
		if msg.Bad == nil && msg.Role == "user" && hasText(*msg) {
			prompt = m.eventID(*msg, "")
		}
		if msg.Bad == nil && msg.Role == "assistant" {
			extra = m.ledger(extra, msg.MessageID, prompt)
		}
	}
	if settled && r.Held < 0 {
		m.ledger(extra, -1, prompt) // every call still pending goes out: -1 holds none back
	}
	r.Events, r.Emitted = m.events, m.keys
	return r
}

type mapper struct {
	c       Context
	th      Thread
	seq     int64
	emitted map[string]bool
	events  []agentevent.Event
	keys    []string
	prompt  string

	root, hash, branch, version string
	// at is the time of each message: a prompt's sentAt, an answer's
	// ledger time; else the last time before it.
	at map[int64]time.Time
	// calls are the tool_use blocks by id (for their results).
	calls map[string]*Block
	// callMsg is the message holding each tool_use.
	callMsg map[string]Message
}

func (m *mapper) prepare() {
	th := &m.th
	if th.Env != nil {
		if trees := th.Env.Initial.Trees; len(trees) > 0 { // the first tree is the thread's
			t := trees[0]
			if u, err := url.Parse(t.URI); err == nil && u.Scheme == "file" && u.Path != "" {
				m.root = u.Path
			}
			if t.Repository != nil {
				m.branch = strings.TrimPrefix(t.Repository.Ref, "refs/heads/")
			}
		}
		m.version = th.Env.Initial.Platform.ClientVersion
	}
	m.hash = agentevent.ProjectHash(m.root)
	ledgerAt := map[int64]time.Time{}
	if th.Ledger != nil {
		for _, e := range th.Ledger.Events {
			if e.OperationType == "inference" && e.ToMessageID != nil {
				if t, err := time.Parse(time.RFC3339Nano, e.Timestamp); err == nil {
					ledgerAt[*e.ToMessageID] = t
				}
			}
		}
	}
	m.at = map[int64]time.Time{}
	last := time.Time{}
	if th.Created > 0 {
		last = time.UnixMilli(th.Created)
	}
	m.calls, m.callMsg = map[string]*Block{}, map[string]Message{}
	for k := range th.Messages {
		msg := &th.Messages[k]
		switch {
		case msg.Meta != nil && msg.Meta.SentAt != nil:
			last = time.UnixMilli(*msg.Meta.SentAt)
		case !ledgerAt[msg.MessageID].IsZero():
			last = ledgerAt[msg.MessageID]
		}
		m.at[msg.MessageID] = last
		for i := range msg.Content {
			if b := &msg.Content[i]; b.Type == "tool_use" && b.ID != "" {
				m.calls[b.ID], m.callMsg[b.ID] = b, *msg
			}
		}
	}
}

func hasText(msg Message) bool {
	for i := range msg.Content {
		b := &msg.Content[i]
		if b.Type == "text" {
			return true
		}
	}
	return false
}

func (m *mapper) eventID(msg Message, suffix string) string {
	id := m.th.ID + ":" + strconv.FormatInt(msg.MessageID, 10)
	if suffix != "" {
		id += ":" + suffix
	}
	return id
}

func (m *mapper) base(msg Message, id string, typ agentevent.EventType, role agentevent.Role, ch agentevent.Channel) agentevent.Event {
	return agentevent.Event{
		Source:        Source,
		SessionID:     m.th.ID,
		EventID:       id,
		ParentEventID: m.prompt,
		Timestamp:     m.at[msg.MessageID],
		Type:          typ,
		Role:          role,
		Channel:       ch,
		ProjectRoot:   m.root,
		ProjectHash:   m.hash,
		GitBranch:     m.branch,
		AgentVersion:  m.version,
		LogFile:       m.c.LogFile,
		LogLine:       msg.MessageID + 1,
	}
}

func (m *mapper) emit(ev agentevent.Event, raw []byte) {
	m.seq++
	ev.Sequence = m.seq
	ev.Raw = raw
	agentevent.Normalize(&ev)
	m.events = append(m.events, ev)
}

// guard maps one message with mapMsg. A panic in it (a mapping bug: a
// message that does not decode is Bad, not a panic) costs that message
// only: what mapMsg emitted is rolled back, and the message becomes one
// parser_error event under its own key "error:<id>" (reported once, even
// when parts of the message were emitted by an earlier read); the rest of
// the thread maps (agentevent.RecoverRecord).
func (m *mapper) guard(msg Message, prompt string, mapMsg func()) {
	nEvents, nKeys, seq := len(m.events), len(m.keys), m.seq
	var none []agentevent.Event
	defer agentevent.RecoverRecord(&none, func(reason, detail string) []agentevent.Event {
		m.events, m.keys, m.seq = m.events[:nEvents], m.keys[:nKeys], seq
		key := "error:" + strconv.FormatInt(msg.MessageID, 10)
		if !m.emitted[key] {
			ev := m.base(msg, m.eventID(msg, "error"), agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
			ev.ParentEventID = prompt
			ev.Unparsed = reason
			agentevent.SetAttr(&ev, agentevent.AttrUnparsedDetail, detail)
			m.emit(ev, msg.Raw)
			m.keys = append(m.keys, key)
		}
		return nil
	})
	mapMsg()
}

func msgKey(msg Message) string { return "m" + strconv.FormatInt(msg.MessageID, 10) }

// message maps one message: its own events under its key, each tool call
// and tool result under theirs.
func (m *mapper) message(msg Message, prompt string) {
	key := msgKey(msg)
	if msg.Bad != nil {
		if !m.emitted[key] {
			ev := m.base(msg, m.eventID(msg, ""), agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
			ev.ParentEventID = prompt
			ev.Unparsed = ReasonUnexpectedShape
			agentevent.SetAttr(&ev, agentevent.AttrUnparsedDetail, msg.Bad.Error())
			m.emit(ev, msg.Raw)
			m.keys = append(m.keys, key)
		}
		return
	}
	switch msg.Role {
	case "user":
		m.user(msg, key)
	case "assistant":
		m.assistant(msg, key)
	default:
		if !m.emitted[key] {
			ev := m.base(msg, m.eventID(msg, ""), agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
			ev.Unparsed = ReasonUnknownType
			agentevent.SetAttr(&ev, agentevent.AttrUnparsedDetail, "message role "+msg.Role)
			m.emit(ev, msg.Raw)
			m.keys = append(m.keys, key)
		}
	}
}

func (m *mapper) user(msg Message, key string) {
	var texts []string
	var unknown []string
	for i := range msg.Content {
		b := &msg.Content[i]
		switch b.Type {
		case "text":
			texts = append(texts, b.Text)
		case "tool_result":
			m.toolResult(msg, b)
		case "image", "file", "attachment":
			// Attachments: not text the trace carries.
		default:
			unknown = append(unknown, b.Type)
		}
	}
	if m.emitted[key] {
		return
	}
	if len(texts) > 0 {
		ev := m.base(msg, m.eventID(msg, ""), agentevent.TypeUserMessage, agentevent.RoleUser, agentevent.ChannelChat)
		ev.ParentEventID = ""
		ev.Text = strings.Join(texts, "\n")
		if msg.AgentMode != "" {
			agentevent.SetAttr(&ev, agentevent.AttrAmpAgentMode, msg.AgentMode)
		}
		m.emit(ev, msg.Raw)
	}
	m.unknownBlocks(msg, unknown)
	m.keys = append(m.keys, key)
}

func (m *mapper) unknownBlocks(msg Message, types []string) {
	for i, t := range types {
		ev := m.base(msg, m.eventID(msg, "unknown:"+strconv.Itoa(i)), agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
		ev.Unparsed = ReasonUnknownType
		agentevent.SetAttr(&ev, agentevent.AttrUnparsedDetail, "content block type "+t)
		m.emit(ev, msg.Raw)
	}
}

func (m *mapper) assistant(msg Message, key string) {
	own := !m.emitted[key]
	responseID := m.th.ID + ":" + strconv.FormatInt(msg.MessageID, 10)
	model := ""
	if msg.Usage != nil {
		model = msg.Usage.Model
	}
	first := true
	var unknown []string
	set := func(ev *agentevent.Event) {
		ev.ResponseID = responseID
		ev.Model = model
		ev.Provider = Provider(model)
		if first && msg.Usage != nil {
			u := msg.Usage
			in := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
			ev.TokensInput = agentevent.Int(in)
			ev.TokensCached = agentevent.Int(u.CacheReadInputTokens)
			ev.TokensCacheCreation = agentevent.Int(u.CacheCreationInputTokens)
			ev.TokensOutput = agentevent.Int(u.OutputTokens)
			ev.TokensTotal = agentevent.Int(in + u.OutputTokens)
			if u.Credits != nil {
				agentevent.SetAttr(ev, agentevent.AttrAmpCredits, *u.Credits)
			}
		}
		first = false
	}
	nText := 0
	for i := range msg.Content {
		b := &msg.Content[i]
		switch b.Type {
		case "thinking", "redacted_thinking":
			if !own {
				continue
			}
			ev := m.base(msg, m.eventID(msg, "thinking:"+strconv.Itoa(i)), agentevent.TypeReasoning, agentevent.RoleAssistant, agentevent.ChannelChat)
			ev.Text = b.Thinking
			set(&ev)
			m.emit(ev, msg.Raw)
		case "text":
			if !own {
				continue
			}
			nText++
			ev := m.base(msg, m.eventID(msg, "text:"+strconv.Itoa(i)), agentevent.TypeAssistantMessage, agentevent.RoleAssistant, agentevent.ChannelChat)
			ev.Text = b.Text
			set(&ev)
			m.emit(ev, msg.Raw)
		case "tool_use":
			ck := "call:" + b.ID
			if m.emitted[ck] || b.ID == "" {
				continue
			}
			ev := m.base(msg, m.eventID(msg, "tool:"+b.ID), agentevent.TypeToolCall, agentevent.RoleAssistant, agentevent.ChannelChat)
			toolCall(&ev, b)
			set(&ev)
			m.emit(ev, msg.Raw)
			m.keys = append(m.keys, ck)
		default:
			unknown = append(unknown, b.Type)
		}
	}
	if !own {
		return
	}
	if first {
		// No block carried the usage (an empty answer): the answer itself.
		ev := m.base(msg, m.eventID(msg, ""), agentevent.TypeAssistantMessage, agentevent.RoleAssistant, agentevent.ChannelChat)
		set(&ev)
		m.emit(ev, msg.Raw)
	}
	if msg.State != nil && msg.State.StopReason != "" && len(m.events) > 0 {
		last := &m.events[len(m.events)-1]
		if last.ResponseID == responseID {
			last.FinishReason = msg.State.StopReason
			if msg.State.StopReason == "end_turn" {
				// The model answered without asking for a tool: Amp's
				// agent loop ends the turn here.
				agentevent.SetAttr(last, agentevent.AttrTurnEnd, agentevent.TurnEndCompleted)
			}
		}
	}
	m.unknownBlocks(msg, unknown)
	m.keys = append(m.keys, key)
}

// extraCalls are the ledger's calls that are not an assistant message's
// inference (title generation), in ledger order.
func (m *mapper) extraCalls() []LedgerEvent {
	if m.th.Ledger == nil {
		return nil
	}
	var out []LedgerEvent
	for _, e := range m.th.Ledger.Events {
		if e.OperationType != "inference" {
			out = append(out, e)
		}
	}
	return out
}

// ledger emits the pending extra calls made for a message before msgID
// (all of them when msgID < 0) and returns the rest.
func (m *mapper) ledger(pending []LedgerEvent, msgID int64, prompt string) []LedgerEvent {
	rest := pending[:0:0]
	for _, e := range pending {
		if msgID >= 0 && (e.ToMessageID == nil || *e.ToMessageID >= msgID) {
			rest = append(rest, e)
			continue
		}
		key := "ledger:" + e.ID
		if m.emitted[key] || e.ID == "" {
			continue
		}
		ts, _ := time.Parse(time.RFC3339Nano, e.Timestamp)
		ev := agentevent.Event{
			Source: Source, SessionID: m.th.ID, EventID: m.th.ID + ":ledger:" + e.ID,
			ParentEventID: prompt, Timestamp: ts, Type: agentevent.TypeMeta, Role: agentevent.RoleSystem,
			Channel: agentevent.ChannelSystem, ProjectRoot: m.root, ProjectHash: m.hash, GitBranch: m.branch,
			AgentVersion: m.version, LogFile: m.c.LogFile,
			// A model call of its own, not the turn's answer: a chat span
			// marked with its operation.
			ResponseID: m.th.ID + ":ledger:" + e.ID,
			Model:      e.Model, Provider: Provider(e.Model),
			TokensInput:  agentevent.Int(e.Tokens.Input),
			TokensOutput: agentevent.Int(e.Tokens.Output),
			TokensTotal:  agentevent.Int(e.Tokens.Input + e.Tokens.Output),
		}
		agentevent.SetAttr(&ev, agentevent.AttrAmpOperation, e.OperationType)
		if e.OperationType == "title-generation" && m.th.Title != "" {
			// The title it made (it can be regenerated later; this is the
			// title when the call was read).
			agentevent.SetAttr(&ev, agentevent.AttrAmpTitle, m.th.Title)
		}
		agentevent.SetAttr(&ev, agentevent.AttrUsageCarrier, agentevent.UsageCarrierOwn)
		if e.Credits != nil {
			agentevent.SetAttr(&ev, agentevent.AttrAmpCredits, *e.Credits)
		}
		if e.ToMessageID != nil {
			agentevent.SetAttr(&ev, agentevent.AttrAmpMessageID, *e.ToMessageID)
		}
		m.emit(ev, nil)
		m.keys = append(m.keys, key)
	}
	return rest
}

// Amp's built-in tools the mapping reads.
var fileOps = map[string]agentevent.FileOp{
	"Read":        agentevent.FileRead,
	"read_file":   agentevent.FileRead,
	"edit_file":   agentevent.FileModify,
	"create_file": agentevent.FileCreate,
	"undo_edit":   agentevent.FileModify,
	"format_file": agentevent.FileModify,
}

var shellTools = map[string]bool{"Bash": true, "bash": true}

type toolInput struct {
	Cmd     string `json:"cmd"`
	Command string `json:"command"`
	Path    string `json:"path"`
	Content string `json:"content"`
}

func toolCall(ev *agentevent.Event, b *Block) {
	ev.ToolName = b.Name
	ev.ToolCallID = b.ID
	ev.Text = compact(b.Input)
	var in toolInput
	if len(b.Input) == 0 || b.Input[0] != '{' || jsonx.Unmarshal(b.Input, &in) != nil {
		return
	}
	if shellTools[b.Name] {
		ev.Channel = agentevent.ChannelTerminal
		if cmd := textutil.FirstNonEmpty(in.Cmd, in.Command); cmd != "" {
			agentevent.SetAttr(ev, agentevent.AttrToolCommand, agentevent.CommandLine(cmd))
		}
	}
	if op := fileOps[b.Name]; op != "" {
		ev.Channel = agentevent.ChannelEditor
		ev.FileOp = op
		ev.FilePath = in.Path
		ev.FileLanguage = agentevent.FileLanguage(in.Path)
	}
}

// toolResult emits a tool_result block's result once its run is final.
func (m *mapper) toolResult(msg Message, b *Block) {
	rk := "result:" + b.ToolUseID
	if m.emitted[rk] || b.ToolUseID == "" || b.Run == nil || !finalStatus(b.Run.Status) {
		return
	}
	ev := m.base(msg, m.eventID(msg, "result:"+b.ToolUseID), agentevent.TypeToolResult, agentevent.RoleTool, agentevent.ChannelChat)
	ev.ToolCallID = b.ToolUseID
	var in toolInput
	call := m.calls[b.ToolUseID]
	if call == nil {
		// No tool_use of this id in the thread: a result whose call is not
		// identified, rather than a pairing that breaks.
		ev.ToolCallID = ""
		agentevent.SetAttr(&ev, agentevent.AttrToolLateCallID, b.ToolUseID)
	}
	if call != nil {
		if !m.emitted["call:"+b.ToolUseID] && !slices.Contains(m.keys, "call:"+b.ToolUseID) {
			return // its call is held with its message: the result follows it
		}
		probe := agentevent.Event{}
		toolCall(&probe, call)
		ev.ToolName, ev.Channel = probe.ToolName, probe.Channel
		ev.FilePath, ev.FileOp, ev.FileLanguage = probe.FilePath, probe.FileOp, probe.FileLanguage
		if len(call.Input) > 0 && call.Input[0] == '{' {
			_ = jsonx.Unmarshal(call.Input, &in)
		}
	}
	if ev.Channel == "" {
		ev.Channel = agentevent.ChannelChat
	}
	agentevent.SetAttr(&ev, agentevent.AttrAmpRunStatus, b.Run.Status)
	text, exit := resultText(b.Run.Result)
	ev.Text = text
	ev.ToolExitCode = exit
	ev.ToolStatus = agentevent.ToolSuccess
	switch b.Run.Status {
	case "error":
		ev.ToolStatus, ev.ErrorType = agentevent.ToolError, agentevent.ErrorTypeTool
		if t, _ := resultText(b.Run.Error); t != "" {
			ev.Text = t
		}
	case "cancelled", "canceled":
		// The user stopped the agent while the tool ran: the turn ends
		// interrupted.
		ev.ToolStatus, ev.ErrorType = agentevent.ToolError, agentevent.ErrorTypeInterrupted
		ev.Status = "interrupted"
		agentevent.SetAttr(&ev, agentevent.AttrTurnEnd, agentevent.TurnEndInterrupted)
	case "rejected-by-user":
		ev.ToolStatus, ev.ErrorType = agentevent.ToolError, agentevent.ErrorTypeRejected
	default:
		if exit != nil && *exit != 0 {
			ev.ToolStatus, ev.ErrorType = agentevent.ToolError, agentevent.ErrorTypeExitCode
		}
	}
	if shellTools[ev.ToolName] {
		cmd := textutil.FirstNonEmpty(in.Cmd, in.Command)
		if runner, ok := testrun.Detect(cmd); ok && cmd != "" {
			agentevent.SetAttr(&ev, agentevent.AttrTestRunner, runner)
			if run, passed, failed, ok := testrun.Counts(runner, ev.Text); ok {
				agentevent.SetAttr(&ev, agentevent.AttrTestRun, int64(run))
				agentevent.SetAttr(&ev, agentevent.AttrTestPassed, int64(passed))
				agentevent.SetAttr(&ev, agentevent.AttrTestFailed, int64(failed))
			}
		}
	}
	if ev.ToolStatus == agentevent.ToolSuccess {
		switch ev.FileOp {
		case agentevent.FileCreate:
			agentevent.SetAttr(&ev, agentevent.AttrFileChangeType, agentevent.ChangeCreated)
			if in.Content != "" {
				agentevent.SetAttr(&ev, agentevent.AttrFileLinesAdded, int64(agentevent.CountLines(in.Content)))
				agentevent.SetAttr(&ev, agentevent.AttrFileLinesRemoved, int64(0))
			}
		case agentevent.FileModify:
			agentevent.SetAttr(&ev, agentevent.AttrFileChangeType, agentevent.ChangeModified)
			diffFacts(&ev, b.Run.Result)
		}
	}
	m.emit(ev, msg.Raw)
	m.keys = append(m.keys, rk)
}

// resultText reads a run's result: a string, a list of strings, or an
// object ({output, exitCode} for Bash, {diff} for edits); anything else
// as compact JSON.
func resultText(raw jsonx.RawMessage) (string, *int64) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	var s string
	if raw[0] == '"' && jsonx.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var list []string
	if raw[0] == '[' && jsonx.Unmarshal(raw, &list) == nil {
		return strings.Join(list, "\n"), nil
	}
	var obj struct {
		Output   *string `json:"output"`
		ExitCode *int64  `json:"exitCode"`
	}
	if raw[0] == '{' && jsonx.Unmarshal(raw, &obj) == nil && (obj.Output != nil || obj.ExitCode != nil) {
		out := ""
		if obj.Output != nil {
			out = *obj.Output
		}
		return out, obj.ExitCode
	}
	return compact(raw), nil
}

// diffFacts counts the lines of an edit's unified diff ({diff: …}).
func diffFacts(ev *agentevent.Event, raw jsonx.RawMessage) {
	var obj struct {
		Diff string `json:"diff"`
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || jsonx.Unmarshal(raw, &obj) != nil || obj.Diff == "" {
		return
	}
	added, removed := 0, 0
	for l := range strings.SplitSeq(obj.Diff, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		}
	}
	agentevent.SetAttr(ev, agentevent.AttrFileLinesAdded, int64(added))
	agentevent.SetAttr(ev, agentevent.AttrFileLinesRemoved, int64(removed))
	agentevent.SetAttr(ev, agentevent.AttrFileDiff, obj.Diff)
}

func compact(raw jsonx.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ""
	}
	var b bytes.Buffer
	if err := jsonx.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// Provider is the gen_ai.provider.name of a model Amp used (Amp routes to
// several vendors; the thread names only the model).
func Provider(model string) string {
	m := strings.ToLower(model)
	switch {
	case m == "":
		return ""
	case strings.HasPrefix(m, "claude"):
		return "anthropic"
	case strings.HasPrefix(m, "gpt"), strings.HasPrefix(m, "o1"), strings.HasPrefix(m, "o3"), strings.HasPrefix(m, "o4"):
		return "openai"
	case strings.HasPrefix(m, "gemini"):
		return "gcp.gemini"
	case strings.HasPrefix(m, "grok"):
		return "x_ai"
	}
	return ""
}
