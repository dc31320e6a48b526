// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package copilotcli

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
	"github.com/agentotel/agentotel/internal/testrun"
	"github.com/agentotel/agentotel/internal/textutil"
)

// Tools of the CLI the mapping knows.
const (
	toolReportIntent = "report_intent"
	toolTask         = "task"
	toolView         = "view"
	toolCreate       = "create"
	toolEdit         = "edit"
	toolStrReplace   = "str_replace_editor" // older CLIs: one tool, a command argument
)

// shellTools run a command line.
var shellTools = map[string]bool{"powershell": true, "bash": true, "shell": true}

// fileOp is the file operation of a file tool call ("" for other tools).
func fileOp(name, command string) agentevent.FileOp {
	switch name {
	case toolView:
		return agentevent.FileRead
	case toolCreate:
		return agentevent.FileCreate
	case toolEdit:
		return agentevent.FileModify
	case toolStrReplace:
		switch command {
		case "view":
			return agentevent.FileRead
		case "create":
			return agentevent.FileCreate
		case "str_replace", "insert", "undo_edit":
			return agentevent.FileModify
		}
	}
	return ""
}

// toolCall fills a tool_call event and opens the call.
func (p *Parser) toolCall(ev *agentevent.Event, id, name string, args jsonx.Raw, c *rowCtx) {
	ev.ToolCallID = strings.Clone(id)
	ev.ToolName = strings.Clone(name)
	if !p.opts.OmitContent {
		ev.Text = compactJSON(args)
	}
	oc := &openCall{Name: ev.ToolName, Time: c.ts, CreateLines: -1}
	var a toolArgs
	if len(args) > 0 && args[0] == '{' && jsonx.Unmarshal(args, &a) == nil {
		switch {
		case shellTools[name]:
			ev.Channel = agentevent.ChannelTerminal
			if a.Command != "" {
				agentevent.SetAttr(ev, agentevent.AttrToolCommand, agentevent.CommandLine(a.Command))
				if runner, ok := testrun.Detect(a.Command); ok {
					oc.Runner = runner
				}
			}
		case fileOp(name, a.Command) != "":
			ev.Channel = agentevent.ChannelEditor
			ev.FileOp = fileOp(name, a.Command)
			ev.FilePath = a.Path
			ev.FileLanguage = agentevent.FileLanguage(a.Path)
			if ev.FileOp == agentevent.FileCreate {
				oc.CreateLines = int64(agentevent.CountLines(a.FileText))
			}
		case name == toolTask:
			oc.Prompt = strings.Clone(textutil.FirstNonEmpty(a.Prompt, a.Description))
			oc.AgentType = strings.Clone(a.AgentType)
		}
	}
	if name == toolReportIntent {
		// The model states what it is about to do; the CLI shows it as a
		// status line. Kept as the tool call it is, marked.
		agentevent.SetAttr(ev, agentevent.AttrCopilotBookkeeping, true)
	}
	oc.Channel = string(ev.Channel)
	oc.FilePath, oc.FileOp, oc.Language = strings.Clone(ev.FilePath), string(ev.FileOp), ev.FileLanguage
	if ev.ToolCallID != "" {
		p.st.addCall(ev.ToolCallID, oc)
	}
}

// toolStart records when the call began; a call no assistant.message
// requested (not seen in the corpus) is emitted here.
func (p *Parser) toolStart(d *data, c *rowCtx) []agentevent.Event {
	if oc := p.st.Calls[d.ToolCallID]; oc != nil && d.ToolCallID != "" {
		oc.Started = c.ts
		return nil
	}
	ev := p.base(c, agentevent.TypeToolCall, agentevent.RoleAssistant, agentevent.ChannelChat)
	p.toolCall(&ev, d.ToolCallID, d.ToolName, d.Arguments, c)
	p.model(&ev, "")
	if oc := p.st.Calls[d.ToolCallID]; oc != nil {
		oc.Started = c.ts
	}
	return []agentevent.Event{ev}
}

// exitCodeRE finds the exit code the shell tools append to their output.
var exitCodeRE = regexp.MustCompile(`<exited with exit code (-?\d+)>`)

// toolComplete maps tool.execution_complete: the result of the open call
// of the same id.
func (p *Parser) toolComplete(d *data, c *rowCtx) []agentevent.Event {
	ev := p.base(c, agentevent.TypeToolResult, agentevent.RoleTool, agentevent.ChannelChat)
	ev.ToolCallID = strings.Clone(d.ToolCallID)
	if c.agent == "" {
		// The model that asked for the call: the model of the responses
		// that follow it, when nothing names another in between.
		p.st.setModel(d.Model, "tool.execution_complete")
	}
	oc := p.st.Calls[d.ToolCallID]
	if oc != nil {
		delete(p.st.Calls, d.ToolCallID)
		ev.ToolName = oc.Name
		ev.Channel = agentevent.Channel(oc.Channel)
		ev.FilePath, ev.FileOp, ev.FileLanguage = oc.FilePath, agentevent.FileOp(oc.FileOp), oc.Language
	} else {
		// No call of this id was seen (the file read from the middle, or
		// the call forgotten past maxOpenCalls): a result whose call is not
		// identified, rather than a pairing that breaks.
		ev.ToolName = strings.Clone(d.ToolName)
		ev.ToolCallID = ""
		agentevent.SetAttr(&ev, agentevent.AttrToolLateCallID, d.ToolCallID)
	}
	if ev.Channel == "" {
		ev.Channel = agentevent.ChannelChat
	}
	if d.Result != nil {
		ev.Text = d.Result.Content
	}
	// Duration: the tool's own measurement, else start → complete, else
	// request → complete.
	if ms, ok := metricInt(d.ToolTelemetry, "durationMs"); ok && ms >= 0 {
		ev.ToolLatencyMs = agentevent.Int(ms)
	} else if oc != nil && !c.ts.IsZero() {
		from := oc.Started
		if from.IsZero() {
			from = oc.Time
		}
		if !from.IsZero() {
			if ms := c.ts.Sub(from).Milliseconds(); ms >= 0 {
				ev.ToolLatencyMs = agentevent.Int(ms)
			}
		}
	}
	if all := exitCodeRE.FindAllStringSubmatch(ev.Text, -1); len(all) > 0 {
		// The last one: the command's own output may hold the phrase too.
		if n, err := strconv.ParseInt(all[len(all)-1][1], 10, 64); err == nil {
			ev.ToolExitCode = agentevent.Int(n)
		}
	}
	ev.ToolStatus = agentevent.ToolSuccess
	switch {
	case d.Success != nil && !*d.Success:
		ev.ToolStatus = agentevent.ToolError
		ev.ErrorType = agentevent.ErrorTypeTool
		if msg := errorMessage(d.Error); msg != "" && ev.Text == "" {
			ev.Text = msg
		}
		if code := errorCode(d.Error); code != "" {
			agentevent.SetAttr(&ev, agentevent.AttrCopilotErrorCode, code)
		}
	case ev.ToolExitCode != nil && *ev.ToolExitCode != 0:
		ev.ToolStatus = agentevent.ToolError
		ev.ErrorType = agentevent.ErrorTypeExitCode
	}
	if oc != nil {
		p.toolFacts(&ev, d, oc)
		if _, ok := p.st.Subagents[d.ToolCallID]; ok {
			ev.SpawnedAgentID = ev.ToolCallID
		}
	}
	return []agentevent.Event{ev}
}

// toolFacts adds what a successful file or shell tool did.
func (*Parser) toolFacts(ev *agentevent.Event, d *data, oc *openCall) {
	if oc.Runner != "" {
		agentevent.SetAttr(ev, agentevent.AttrTestRunner, oc.Runner)
		if run, passed, failed, ok := testrun.Counts(oc.Runner, ev.Text); ok {
			agentevent.SetAttr(ev, agentevent.AttrTestRun, int64(run))
			agentevent.SetAttr(ev, agentevent.AttrTestPassed, int64(passed))
			agentevent.SetAttr(ev, agentevent.AttrTestFailed, int64(failed))
		}
	}
	if ev.ToolStatus != agentevent.ToolSuccess {
		return
	}
	switch agentevent.FileOp(oc.FileOp) {
	case agentevent.FileCreate:
		agentevent.SetAttr(ev, agentevent.AttrFileChangeType, agentevent.ChangeCreated)
	case agentevent.FileModify:
		agentevent.SetAttr(ev, agentevent.AttrFileChangeType, agentevent.ChangeModified)
	default:
		return
	}
	added, okA := metricInt(d.ToolTelemetry, "linesAdded")
	removed, okR := metricInt(d.ToolTelemetry, "linesRemoved")
	if !okA && agentevent.FileOp(oc.FileOp) == agentevent.FileCreate && oc.CreateLines >= 0 {
		added, okA, removed, okR = oc.CreateLines, true, 0, true
	}
	if okA {
		agentevent.SetAttr(ev, agentevent.AttrFileLinesAdded, added)
	}
	if okR {
		agentevent.SetAttr(ev, agentevent.AttrFileLinesRemoved, removed)
	}
}

// metricInt reads a whole number from toolTelemetry.metrics.
func metricInt(t *toolTelemetry, key string) (int64, bool) {
	if t == nil {
		return 0, false
	}
	raw, ok := t.Metrics[key]
	if !ok {
		return 0, false
	}
	var f float64
	if jsonx.Unmarshal(raw, &f) != nil {
		return 0, false
	}
	return int64(f), true
}

// errorMessage reads data.error: {message, code} or a string.
func errorMessage(raw []byte) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if jsonx.Unmarshal(raw, &s) == nil {
		return s
	}
	var e toolError
	if jsonx.Unmarshal(raw, &e) == nil {
		return e.Message
	}
	return ""
}

func errorCode(raw []byte) string {
	var e toolError
	if len(raw) > 0 && raw[0] == '{' && jsonx.Unmarshal(raw, &e) == nil {
		return e.Code
	}
	return ""
}

// compactJSON renders tool arguments as compact JSON text (a JSON string
// argument as its value).
func compactJSON(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if jsonx.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	var b bytes.Buffer
	if err := jsonx.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}
