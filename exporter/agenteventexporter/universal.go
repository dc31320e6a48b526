// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agenteventexporter

import (
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
)

// universalEvent is the UniversalEvent envelope (seeds 002 and 004).
type universalEvent struct {
	EventID         string          `json:"event_id"`
	Sequence        int64           `json:"sequence"`
	Time            string          `json:"time"`
	SessionID       string          `json:"session_id"`
	NativeSessionID *string         `json:"native_session_id"`
	Synthetic       bool            `json:"synthetic"`
	Source          string          `json:"source"`
	Type            string          `json:"type"`
	Data            any             `json:"data"`
	Raw             json.RawMessage `json:"raw"`
}

// Event sources.
const (
	sourceAgent  = "agent"
	sourceDaemon = "daemon"
)

// universalItem is a UniversalItem.
type universalItem struct {
	ItemID       string  `json:"item_id"`
	NativeItemID *string `json:"native_item_id"`
	ParentID     *string `json:"parent_id"`
	Kind         string  `json:"kind"`
	Role         *string `json:"role"`
	Content      []any   `json:"content"`
	Status       string  `json:"status"`
}

type itemData struct {
	Item *universalItem `json:"item"`
}

type deltaData struct {
	ItemID       string  `json:"item_id"`
	NativeItemID *string `json:"native_item_id"`
	Delta        string  `json:"delta"`
}

type sessionStartedData struct {
	Metadata map[string]any `json:"metadata"`
}

type sessionEndedData struct {
	Reason       string `json:"reason"`
	TerminatedBy string `json:"terminated_by"`
	Message      string `json:"message,omitempty"`
}

type errorData struct {
	Message string         `json:"message"`
	Code    string         `json:"code,omitempty"`
	Details map[string]any `json:"details,omitempty"`
}

type unparsedData struct {
	Error    string `json:"error"`
	Location string `json:"location"`
	RawHash  string `json:"raw_hash,omitempty"`
}

type permissionData struct {
	PermissionID string         `json:"permission_id"`
	Action       string         `json:"action"`
	Status       string         `json:"status"`
	Metadata     map[string]any `json:"metadata,omitempty"`
}

type questionData struct {
	QuestionID string   `json:"question_id"`
	Prompt     string   `json:"prompt"`
	Options    []string `json:"options"`
	Response   *string  `json:"response,omitempty"`
	Status     string   `json:"status"`
}

// Content parts.
type (
	textPart struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	toolCallPart struct {
		Type      string `json:"type"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
		CallID    string `json:"call_id"`
	}
	toolResultPart struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Output string `json:"output"`
	}
	fileRefPart struct {
		Type   string `json:"type"`
		Path   string `json:"path"`
		Action string `json:"action"`
		Diff   string `json:"diff,omitempty"`
	}
	reasoningPart struct {
		Type       string `json:"type"`
		Text       string `json:"text"`
		Visibility string `json:"visibility"`
	}
	imagePart struct {
		Type string `json:"type"`
		Path string `json:"path"`
		Mime string `json:"mime,omitempty"`
	}
	statusPart struct {
		Type   string `json:"type"`
		Label  string `json:"label"`
		Detail string `json:"detail,omitempty"`
	}
)

// Tools whose call asks the user something (question.requested) and whose
// result is the answer (question.resolved): Claude Code's AskUserQuestion,
// and ExitPlanMode, which asks the user to approve a plan.
var questionTools = map[string]bool{"AskUserQuestion": true, "ExitPlanMode": true}

// imageTypes are the MIME types of image files a Read-like tool returns as
// an image (a fixed table: the system's MIME database varies by host).
var imageTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
	".webp": "image/webp", ".bmp": "image/bmp", ".svg": "image/svg+xml",
}

// maxOpenCalls bounds the tool calls a session remembers while their
// results are outstanding.
const maxOpenCalls = 1024

// universalFormat writes the sandbox-agent universal event stream. The
// agent_log receiver is the "daemon" of the seed: what the agent's own log
// holds is source agent; what is synthesized to keep the stream uniform
// (session start and end, item start, the single delta) is source daemon,
// synthetic true.
type universalFormat struct {
	includeContent bool
	includeRaw     bool
}

type universalState struct {
	started bool
	// The latest message item of the current model response: tool calls of
	// that response point to it (parent_id).
	responseID, messageItem string
	calls                   map[string]*openCall
	callOrder               []string
	// lastError is the error class of the latest failure that no answer or
	// prompt followed; it makes session.ended's reason "error".
	lastError string
}

type openCall struct {
	parent   *string
	question *questionData
}

type universalTail struct {
	Sequence int64     `json:"sequence"`
	Type     string    `json:"type"`
	Time     time.Time `json:"time"`
}

func (*universalFormat) closes() bool { return true }

func (*universalFormat) lineTime(line []byte) time.Time {
	var tail universalTail
	_ = jsonx.Unmarshal(line, &tail)
	return tail.Time
}

func (*universalFormat) begin(s *session, last []byte) {
	st := &universalState{calls: map[string]*openCall{}}
	s.state = st
	s.next = 1 // the sequence starts at 1
	if last == nil {
		return
	}
	var tail universalTail
	if jsonx.Unmarshal(last, &tail) == nil && tail.Sequence > 0 {
		s.next = tail.Sequence + 1
	}
	st.started = true
	s.ended = tail.Type == "session.ended"
}

func (f *universalFormat) end(s *session, out *lineBuffer) {
	st := s.state.(*universalState)
	if !st.started {
		return
	}
	data := sessionEndedData{Reason: "completed", TerminatedBy: "agent"}
	if st.lastError != "" {
		data.Reason, data.Message = "error", st.lastError
	}
	f.emit(s, out, s.newest, sourceDaemon, "session.ended", data, nil)
	st.started = false
	st.calls = map[string]*openCall{}
	st.callOrder = nil
	st.responseID, st.messageItem, st.lastError = "", "", ""
}

// emit adds one event to out.
func (f *universalFormat) emit(s *session, out *lineBuffer, t time.Time, source, typ string, data any, raw []byte) {
	seq := s.next
	s.next++
	ev := &universalEvent{
		EventID:         "evt_" + hashHex(s.key.agent, s.key.session, strconv.FormatInt(seq, 10))[:24],
		Sequence:        seq,
		Time:            formatTime(t),
		SessionID:       universalSessionID(s.key),
		NativeSessionID: nullable(s.key.session),
		Synthetic:       source == sourceDaemon,
		Source:          source,
		Type:            typ,
		Data:            data,
		Raw:             nullJSON,
	}
	if f.includeRaw && len(raw) > 0 {
		ev.Raw = rawJSON(raw)
	}
	out.add(ev)
}

// universalSessionID is the daemon's session id: a hash of the agent and its
// session id (which is native_session_id), stable across runs.
func universalSessionID(k sessionKey) string {
	return "sess_" + hashHex(k.agent, k.session)[:24]
}

func (f *universalFormat) event(s *session, ev *agentevent.Event, out *lineBuffer) {
	st := s.state.(*universalState)
	if !st.started || s.ended {
		f.emit(s, out, ev.Timestamp, sourceDaemon, "session.started", sessionStartedData{Metadata: sessionMetadata(ev)}, nil)
		st.started = true
	}
	switch {
	case ev.Unparsed != "":
		f.unparsed(s, ev, out)
		return
	case isErrorEvent(ev):
		f.error(s, ev, out)
		return
	}
	switch ev.Type {
	case agentevent.TypeUserMessage, agentevent.TypeAssistantMessage:
		st.lastError = ""
	}
	item := f.item(s, st, ev)
	f.emit(s, out, ev.Timestamp, sourceDaemon, "item.started", itemData{Item: startedItem(item)}, ev.Raw)
	if item.Kind == "message" {
		if text := itemText(item); text != "" {
			f.emit(s, out, ev.Timestamp, sourceDaemon, "item.delta",
				deltaData{ItemID: item.ItemID, NativeItemID: item.NativeItemID, Delta: text}, ev.Raw)
		}
	}
	f.emit(s, out, ev.Timestamp, sourceAgent, "item.completed", itemData{Item: item}, ev.Raw)

	switch ev.Type {
	case agentevent.TypeToolCall:
		if c := st.calls[ev.ToolCallID]; c != nil && c.question != nil {
			f.emit(s, out, ev.Timestamp, sourceDaemon, "question.requested", c.question, ev.Raw)
		}
	case agentevent.TypeToolResult:
		f.hitlResolved(s, st, ev, out)
	}
}

// sessionMetadata is what session.started tells about the session: the
// facts of its first event that describe the session rather than the event.
func sessionMetadata(ev *agentevent.Event) map[string]any {
	m := map[string]any{"agent": ev.Source.ServiceName(), "source": string(ev.Source)}
	for k, v := range map[string]string{
		"agent_version": ev.AgentVersion, "project_root": ev.ProjectRoot, "git_branch": ev.GitBranch,
		"entrypoint": ev.Entrypoint, "native_session_id": ev.SessionID,
	} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}

// startedItem is the item as item.started shows it: a message still without
// its text (that comes as the delta), anything else as it will complete.
func startedItem(it *universalItem) *universalItem {
	started := *it
	started.Status = "in_progress"
	if it.Kind == "message" {
		started.Content = []any{}
	}
	return &started
}

func itemText(it *universalItem) string {
	var b strings.Builder
	for _, p := range it.Content {
		switch p := p.(type) {
		case textPart:
			b.WriteString(p.Text)
		case reasoningPart:
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func (f *universalFormat) text(ev *agentevent.Event) string {
	if !f.includeContent {
		return ""
	}
	return ev.Text
}

// item maps an event to its UniversalItem.
func (f *universalFormat) item(s *session, st *universalState, ev *agentevent.Event) *universalItem {
	it := &universalItem{
		ItemID:       "itm_" + hashHex(s.key.agent, s.key.session, ev.EventID, strconv.FormatInt(ev.Sequence, 10))[:24],
		NativeItemID: nullable(ev.EventID),
		Content:      []any{},
		Status:       "completed",
	}
	role := func(r string) { it.Role = &r }
	text := f.text(ev)
	addText := func() {
		if text != "" {
			it.Content = append(it.Content, textPart{Type: "text", Text: text})
		}
	}
	switch ev.Type {
	case agentevent.TypeUserMessage:
		it.Kind = "message"
		role("user")
		addText()
	case agentevent.TypeAssistantMessage, agentevent.TypeReasoning:
		it.Kind = "message"
		role("assistant")
		if ev.Type == agentevent.TypeReasoning {
			// Thinking the agent shows its user is public; redacted or
			// hidden thinking (no text even with content on) is private.
			visibility := "public"
			if ev.Text == "" {
				visibility = "private"
			}
			it.Content = append(it.Content, reasoningPart{Type: "reasoning", Text: text, Visibility: visibility})
		} else {
			addText()
		}
		if ev.ResponseID != "" {
			st.responseID, st.messageItem = ev.ResponseID, it.ItemID
		}
	case agentevent.TypeSystemMessage:
		it.Kind = "system"
		role("system")
		addText()
	case agentevent.TypeToolCall:
		f.toolCall(st, ev, it, text)
	case agentevent.TypeToolResult:
		f.toolResult(st, ev, it, text)
	case agentevent.TypeSessionSummary:
		if ev.Role == agentevent.RoleAssistant { // the model's summary after a compaction
			it.Kind = "message"
			role("assistant")
			addText()
			break
		}
		it.Kind = "status"
		role("system")
		it.Content = append(it.Content, statusPart{Type: "status", Label: "session_summary", Detail: text})
	case agentevent.TypeFileSnapshot:
		it.Kind = "status"
		role("system")
		it.Content = append(it.Content, statusPart{Type: "status", Label: "file_snapshot", Detail: text})
	case agentevent.TypeMeta:
		it.Kind = "status"
		role("system")
		label := attrString(ev, agentevent.AttrMetaKind)
		if label == "" {
			label = "meta"
		}
		it.Content = append(it.Content, statusPart{Type: "status", Label: label, Detail: text})
	case agentevent.TypeLog:
		it.Kind = "system"
		role("system")
		addText()
		if ev.Status != "" {
			it.Content = append(it.Content, statusPart{Type: "status", Label: ev.Status})
		}
	default:
		it.Kind = "unknown"
		addText()
	}
	return it
}

func (f *universalFormat) toolCall(st *universalState, ev *agentevent.Event, it *universalItem, text string) {
	it.Kind = "tool_call"
	role := "assistant"
	it.Role = &role
	if st.responseID != "" && st.responseID == ev.ResponseID {
		parent := st.messageItem
		it.ParentID = &parent
	}
	it.Content = append(it.Content, toolCallPart{Type: "tool_call", Name: ev.ToolName, Arguments: text, CallID: ev.ToolCallID})
	if ev.ToolCallID == "" {
		return
	}
	c := &openCall{parent: it.ParentID}
	if questionTools[ev.ToolName] {
		c.question = &questionData{QuestionID: ev.ToolCallID, Options: []string{}, Status: "requested"}
		if f.includeContent {
			c.question.Prompt, c.question.Options = questionFromInput(ev.ToolName, ev.Text)
		}
	}
	if _, ok := st.calls[ev.ToolCallID]; !ok {
		st.callOrder = append(st.callOrder, ev.ToolCallID)
	}
	st.calls[ev.ToolCallID] = c
	for len(st.callOrder) > maxOpenCalls {
		delete(st.calls, st.callOrder[0])
		st.callOrder = st.callOrder[1:]
	}
}

func (f *universalFormat) toolResult(st *universalState, ev *agentevent.Event, it *universalItem, text string) {
	it.Kind = "tool_result"
	role := "tool"
	it.Role = &role
	if c := st.calls[ev.ToolCallID]; c != nil {
		it.ParentID = c.parent
	}
	switch ev.ToolStatus {
	case agentevent.ToolError:
		it.Status = "failed"
	case agentevent.ToolInProgress:
		it.Status = "in_progress"
	}
	it.Content = append(it.Content, toolResultPart{Type: "tool_result", CallID: ev.ToolCallID, Output: text})
	if ev.FilePath != "" && ev.ToolStatus != agentevent.ToolError {
		action := "read"
		switch ev.FileOp {
		case agentevent.FileModify:
			action = "patch"
		case agentevent.FileWrite, agentevent.FileCreate, agentevent.FileDelete, agentevent.FileMove:
			action = "write"
		}
		ref := fileRefPart{Type: "file_ref", Path: ev.FilePath, Action: action}
		if f.includeContent {
			ref.Diff = attrString(ev, agentevent.AttrFileDiff)
		}
		it.Content = append(it.Content, ref)
		if mime, ok := imageTypes[strings.ToLower(path.Ext(ev.FilePath))]; ok && action == "read" {
			it.Content = append(it.Content, imagePart{Type: "image", Path: ev.FilePath, Mime: mime})
		}
	}
	if runner := attrString(ev, agentevent.AttrTestRunner); runner != "" {
		label := "tests passed"
		if failed, _ := attrInt(ev, agentevent.AttrTestFailed); failed > 0 || ev.ToolStatus == agentevent.ToolError {
			label = "tests failed"
		}
		detail := runner
		if run, ok := attrInt(ev, agentevent.AttrTestRun); ok {
			passed, _ := attrInt(ev, agentevent.AttrTestPassed)
			detail = fmt.Sprintf("%s: %d of %d passed", runner, passed, run)
		}
		it.Content = append(it.Content, statusPart{Type: "status", Label: label, Detail: detail})
	}
	if ev.ToolStatus == agentevent.ToolError {
		label := ev.ErrorType
		if label == "" {
			label = agentevent.ErrorTypeTool
		}
		var detail string
		if ev.ToolExitCode != nil {
			detail = fmt.Sprintf("exit code %d", *ev.ToolExitCode)
		}
		it.Content = append(it.Content, statusPart{Type: "status", Label: label, Detail: detail})
	}
}

// hitlResolved writes question.resolved for the answer to a question tool,
// and permission.requested / permission.resolved (denied) for a call the
// user or a permission rule refused: the logs record a refusal only when
// its result comes back, so both are written then. Like every HITL event
// made from Claude Code's tool items (seed 004 lists question.* among the
// synthetics), they are source daemon; the tool items stay source agent.
func (f *universalFormat) hitlResolved(s *session, st *universalState, ev *agentevent.Event, out *lineBuffer) {
	c := st.calls[ev.ToolCallID]
	if c != nil {
		delete(st.calls, ev.ToolCallID) // the order slice forgets it when it ages out
	}
	if c != nil && c.question != nil {
		q := *c.question
		q.Status = "answered"
		if ev.ToolStatus == agentevent.ToolError {
			q.Status = "rejected"
		}
		if f.includeContent && ev.Text != "" {
			resp := ev.Text
			q.Response = &resp
		}
		f.emit(s, out, ev.Timestamp, sourceDaemon, "question.resolved", &q, ev.Raw)
		return
	}
	if !agentevent.ToolDeclined(ev.ErrorType) {
		return
	}
	meta := map[string]any{"tool_name": ev.ToolName, "call_id": ev.ToolCallID, "reason": ev.ErrorType}
	if ev.FilePath != "" {
		meta["file_path"] = ev.FilePath
	}
	if cmd := attrString(ev, agentevent.AttrToolCommand); cmd != "" {
		meta["command"] = cmd
	}
	f.emit(s, out, ev.Timestamp, sourceDaemon, "permission.requested",
		permissionData{PermissionID: ev.ToolCallID, Action: ev.ToolName, Status: "requested", Metadata: meta}, ev.Raw)
	f.emit(s, out, ev.Timestamp, sourceDaemon, "permission.resolved",
		permissionData{PermissionID: ev.ToolCallID, Action: ev.ToolName, Status: "denied", Metadata: meta}, ev.Raw)
}

// questionFromInput reads the question and its options from the tool's
// input: AskUserQuestion's questions[].question / options[].label (several
// questions are joined), ExitPlanMode's plan.
func questionFromInput(tool, input string) (prompt string, options []string) {
	options = []string{}
	var in struct {
		Plan      string `json:"plan"`
		Questions []struct {
			Question string `json:"question"`
			Options  []struct {
				Label string `json:"label"`
			} `json:"options"`
		} `json:"questions"`
	}
	if jsonx.Unmarshal([]byte(input), &in) != nil {
		return input, options
	}
	if tool == "ExitPlanMode" {
		return in.Plan, options
	}
	var prompts []string
	for _, q := range in.Questions {
		prompts = append(prompts, q.Question)
		for _, o := range q.Options {
			options = append(options, o.Label)
		}
	}
	return strings.Join(prompts, "\n"), options
}

// error writes an agent failure that is not a tool's (an API error, a
// retried call, a failing hook) as an error event.
func (f *universalFormat) error(s *session, ev *agentevent.Event, out *lineBuffer) {
	st := s.state.(*universalState)
	if ev.ErrorType != agentevent.ErrorTypeAPIRetry { // a retried call may still succeed
		st.lastError = ev.ErrorType
	}
	msg := f.text(ev)
	if msg == "" {
		msg = ev.ErrorType
	}
	details := map[string]any{"event_type": string(ev.Type)}
	if ev.EventID != "" {
		details["event_id"] = ev.EventID
	}
	maps.Copy(details, ev.Attributes)
	f.emit(s, out, ev.Timestamp, sourceAgent, "error", errorData{Message: msg, Code: ev.ErrorType, Details: details}, ev.Raw)
}

// unparsed writes a record the parser could not map as agent.unparsed.
func (f *universalFormat) unparsed(s *session, ev *agentevent.Event, out *lineBuffer) {
	msg := ev.Unparsed
	if d := attrString(ev, agentevent.AttrUnparsedDetail); d != "" {
		msg += ": " + d
	}
	if ev.LogFile != "" {
		msg += fmt.Sprintf(" (%s line %d)", ev.LogFile, ev.LogLine)
	}
	data := unparsedData{Error: msg, Location: string(ev.Source)}
	if len(ev.Raw) > 0 {
		data.RawHash = hashHex(string(ev.Raw))
	}
	f.emit(s, out, ev.Timestamp, sourceDaemon, "agent.unparsed", data, ev.Raw)
}
