// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package opencode

import (
	"bytes"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
	"github.com/agentotel/agentotel/internal/testrun"
	"github.com/agentotel/agentotel/internal/textutil"
)

// Tool part states.
const (
	statusPending   = "pending"
	statusRunning   = "running"
	statusCompleted = "completed"
	statusError     = "error"
)

// toolInput holds the input fields the mapping reads. OpenCode's tools take
// camelCase arguments (filePath); snake_case is accepted too (MCP tools).
type toolInput struct {
	FilePath     string `json:"filePath"`
	FilePathAlt  string `json:"file_path"`
	Path         string `json:"path"`
	Command      string `json:"command"`
	SubagentType string `json:"subagent_type"`
}

// toolMetadata holds the state.metadata fields the mapping reads.
type toolMetadata struct {
	Exit      *int64 `json:"exit"`
	SessionID string `json:"sessionId"`
	Exists    *bool  `json:"exists"`
	FileDiff  *struct {
		Additions *int64 `json:"additions"`
		Deletions *int64 `json:"deletions"`
	} `json:"filediff"`
}

// fileOps are the file operations of OpenCode's built-in file tools.
var fileOps = map[string]agentevent.FileOp{
	"read":        agentevent.FileRead,
	"write":       agentevent.FileWrite,
	"edit":        agentevent.FileModify,
	"multiedit":   agentevent.FileModify,
	"patch":       agentevent.FileModify,
	"apply_patch": agentevent.FileModify,
}

func channel(tool string) agentevent.Channel {
	if tool == "bash" {
		return agentevent.ChannelTerminal
	}
	if _, ok := fileOps[tool]; ok {
		return agentevent.ChannelEditor
	}
	return agentevent.ChannelChat
}

// tool maps a tool part: a tool_call as soon as the part exists, and a
// tool_result once it has completed or failed.
func (b *builder) tool(p Part) {
	st := p.State
	if st == nil {
		st = &ToolState{Status: statusPending}
	}
	var in toolInput
	if len(st.Input) > 0 {
		_ = jsonx.Unmarshal(st.Input, &in) // a non-object input has no fields to read
	}
	var md toolMetadata
	if len(st.Metadata) > 0 {
		_ = jsonx.Unmarshal(st.Metadata, &md)
	}
	callID := p.CallID
	if callID == "" {
		callID = p.ID
	}
	path := textutil.FirstNonEmpty(in.FilePath, in.FilePathAlt, in.Path)
	start, end := msp(st.Time.Start), msp(st.Time.End)

	call := b.modelEvent(p.ID, agentevent.TypeToolCall, start, p.Raw)
	call.ToolName = p.Tool
	call.ToolCallID = callID
	call.Channel = channel(p.Tool)
	call.FilePath = path
	call.FileOp = fileOps[p.Tool]
	call.FileLanguage = agentevent.FileLanguage(path)
	if len(st.Input) > 0 && string(st.Input) != "{}" {
		// Compact: the storage tree indents its files, the database does
		// not; the same call reads the same either way.
		var buf bytes.Buffer
		if jsonx.Compact(&buf, st.Input) == nil {
			call.Text = buf.String()
		} else {
			call.Text = string(st.Input)
		}
	}
	runner := ""
	if p.Tool == "bash" && strings.TrimSpace(in.Command) != "" {
		agentevent.SetAttr(call, agentevent.AttrToolCommand, agentevent.CommandLine(in.Command))
		runner, _ = testrun.Detect(in.Command)
	}
	if p.Tool == "task" {
		call.SubagentType = in.SubagentType
	}
	if st.Status != statusCompleted && st.Status != statusError {
		return // still pending or running: the call stays open
	}

	at := end
	if at == 0 {
		at = start
	}
	res := b.event(p.ID+":result", agentevent.TypeToolResult, at, p.Raw)
	res.ToolName = p.Tool
	res.ToolCallID = callID
	res.Channel = call.Channel
	res.FilePath = call.FilePath
	res.FileOp = call.FileOp
	res.FileLanguage = call.FileLanguage
	if start > 0 && end >= start {
		res.ToolLatencyMs = agentevent.Int(end - start)
	}
	if p.Tool == "task" && md.SessionID != "" {
		res.SpawnedAgentID = md.SessionID
	}
	if st.Time.Compacted != nil {
		// OpenCode pruned the output from the model's context.
		agentevent.SetAttr(res, agentevent.AttrToolOutputCompacted, true)
	}
	if st.Status == statusError {
		res.ToolStatus = agentevent.ToolError
		res.Text = st.Error
		res.ErrorType = classifyError(st.Error)
		return
	}
	res.ToolStatus = agentevent.ToolSuccess
	res.Text = st.Output
	if md.Exit != nil {
		res.ToolExitCode = agentevent.Int(*md.Exit)
		if *md.Exit != 0 {
			res.ToolStatus = agentevent.ToolError
			res.ErrorType = agentevent.ErrorTypeExitCode
		}
	}
	if res.ToolStatus == agentevent.ToolSuccess {
		fileFacts(res, p.Tool, md)
	}
	if runner != "" {
		agentevent.SetAttr(res, agentevent.AttrTestRunner, runner)
		if run, passed, failed, ok := testrun.Counts(runner, st.Output); ok {
			agentevent.SetAttr(res, agentevent.AttrTestRun, int64(run))
			agentevent.SetAttr(res, agentevent.AttrTestPassed, int64(passed))
			agentevent.SetAttr(res, agentevent.AttrTestFailed, int64(failed))
		}
	}
}

// fileFacts describes the change a successful write or edit made: write's
// metadata says whether the file existed, edit's filediff counts lines.
func fileFacts(ev *agentevent.Event, tool string, md toolMetadata) {
	switch tool {
	case "write":
		if md.Exists != nil && !*md.Exists {
			agentevent.SetAttr(ev, agentevent.AttrFileChangeType, "created")
		} else {
			agentevent.SetAttr(ev, agentevent.AttrFileChangeType, "modified")
		}
	case "edit", "multiedit", "patch", "apply_patch":
		agentevent.SetAttr(ev, agentevent.AttrFileChangeType, "modified")
	default:
		return
	}
	if d := md.FileDiff; d != nil && d.Additions != nil && d.Deletions != nil {
		agentevent.SetAttr(ev, agentevent.AttrFileLinesAdded, *d.Additions)
		agentevent.SetAttr(ev, agentevent.AttrFileLinesRemoved, *d.Deletions)
	}
}

// classifyError maps the error text of a failed tool part to a low
// cardinality error.type (the classes the other agents' parsers use).
func classifyError(msg string) string {
	switch {
	case strings.Contains(msg, "aborted"):
		return agentevent.ErrorTypeInterrupted
	case strings.Contains(msg, "user rejected permission"), strings.Contains(msg, "user dismissed"):
		return agentevent.ErrorTypeRejected
	case strings.Contains(msg, "specified a rule which prevents you"):
		return agentevent.ErrorTypePermissionDenied
	}
	return agentevent.ErrorTypeTool
}

// SpawnedSessions returns, for the task tool parts among parts that name
// the child session they run (state.metadata.sessionId, set as soon as the
// task starts), child session id → the part's callID. Readers use it to set
// Context.ParentToolCallID of a child session's events while the task call
// is still running.
func SpawnedSessions(parts []Part) map[string]string {
	var out map[string]string
	for i := range parts {
		p := &parts[i]
		if p.Type != "tool" || p.Tool != "task" || p.State == nil || len(p.State.Metadata) == 0 {
			continue
		}
		var md toolMetadata
		if jsonx.Unmarshal(p.State.Metadata, &md) != nil || md.SessionID == "" {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[md.SessionID] = textutil.FirstNonEmpty(p.CallID, p.ID)
	}
	return out
}
