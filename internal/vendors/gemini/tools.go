// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package gemini

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

// Tool names of the Gemini CLI's built-in tools.
const (
	toolShell         = "run_shell_command"
	toolReadFile      = "read_file"
	toolReadManyFiles = "read_many_files"
	toolWriteFile     = "write_file"
	toolReplace       = "replace"
	toolEdit          = "edit"
	toolCompleteTask  = "complete_task"
)

type toolArgs struct {
	Command      string `json:"command"`
	FilePath     string `json:"file_path"`
	AbsolutePath string `json:"absolute_path"`
	Path         string `json:"path"`
}

type resultDisplay struct {
	FilePath  string `json:"filePath"`
	FileDiff  string `json:"fileDiff"`
	IsNewFile *bool  `json:"isNewFile"`
	DiffStat  *struct {
		ModelAddedLines   int64 `json:"model_added_lines"`
		ModelRemovedLines int64 `json:"model_removed_lines"`
		UserAddedLines    int64 `json:"user_added_lines"`
		UserRemovedLines  int64 `json:"user_removed_lines"`
	} `json:"diffStat"`
}

func fileOp(tool string) agentevent.FileOp {
	switch tool {
	case toolReadFile, toolReadManyFiles:
		return agentevent.FileRead
	case toolWriteFile:
		return agentevent.FileWrite
	case toolReplace, toolEdit:
		return agentevent.FileModify
	}
	return ""
}

func channel(tool string) agentevent.Channel {
	switch {
	case tool == toolShell:
		return agentevent.ChannelTerminal
	case fileOp(tool) != "":
		return agentevent.ChannelEditor
	}
	return agentevent.ChannelChat
}

// tool maps one tool call to its tool_call and, when it has a result or a
// final status, its tool_result.
func (m *mapper) tool(msg Message, i int, tc ToolCall) (agentevent.Event, *agentevent.Event) {
	id := tc.ID
	if id == "" {
		id = msg.ID + ":" + itoa(i)
	}
	call := m.base(msg, msg.ID+":tool:"+id, agentevent.TypeToolCall, agentevent.RoleAssistant, channel(tc.Name))
	call.ToolName = tc.Name
	call.ToolCallID = id
	call.Raw = nil
	if len(tc.Args) > 0 {
		var buf bytes.Buffer
		if jsonx.Compact(&buf, tc.Args) == nil {
			call.Text = buf.String()
		}
	}
	var args toolArgs
	_ = jsonx.Unmarshal(tc.Args, &args)
	call.FileOp = fileOp(tc.Name)
	if call.FileOp != "" {
		call.FilePath = textutil.FirstNonEmpty(args.FilePath, args.AbsolutePath, args.Path)
	}
	if tc.Name == toolShell && args.Command != "" {
		agentevent.SetAttr(&call, agentevent.AttrToolCommand, agentevent.CommandLine(args.Command))
	}
	doneAt := parseTime(tc.Timestamp, msg.Timestamp)
	if doneAt.Before(call.Timestamp) {
		call.Timestamp = doneAt
	}
	if len(tc.Result) == 0 && !terminalStatus(tc.Status) {
		return call, nil // still running: the call stays open
	}

	res := m.base(msg, msg.ID+":tool:"+id+":result", agentevent.TypeToolResult, agentevent.RoleTool, call.Channel)
	res.Raw = nil
	res.Timestamp = doneAt
	res.ToolName, res.ToolCallID = tc.Name, id
	res.FilePath, res.FileOp = call.FilePath, call.FileOp
	output, errText := resultText(tc.Result)
	res.Text = textutil.FirstNonEmpty(errText, output)
	if tc.Status != "" {
		agentevent.SetAttr(&res, agentevent.AttrGeminiToolStatus, tc.Status)
	}
	var exit *int64
	if code, ok := parseExitCode(output); ok {
		exit = agentevent.Int(code)
	} else if tc.Name == toolShell && tc.Status == "success" && errText == "" && strings.HasPrefix(strings.TrimSpace(output), "Command:") {
		// Newer CLIs leave out "Exit Code: 0".
		exit = agentevent.Int(0)
	}
	res.ToolExitCode = exit
	switch {
	case tc.Status == "cancelled":
		res.ToolStatus = agentevent.ToolError
		res.ErrorType = agentevent.ErrorTypeInterrupted
		if strings.Contains(strings.ToLower(errText), "denied") {
			res.ErrorType = agentevent.ErrorTypeRejected
		}
	case tc.Status == "error" || errText != "":
		res.ToolStatus = agentevent.ToolError
		res.ErrorType = agentevent.ErrorTypeTool
	case exit != nil && *exit != 0:
		res.ToolStatus = agentevent.ToolError
		res.ErrorType = agentevent.ErrorTypeExitCode
	default:
		res.ToolStatus = agentevent.ToolSuccess
	}
	if res.ToolStatus == agentevent.ToolSuccess {
		switch tc.Name {
		case toolWriteFile, toolReplace, toolEdit:
			fileFacts(&res, tc, output)
		}
	}
	if tc.Name == toolShell && args.Command != "" {
		if runner, ok := testrun.Detect(args.Command); ok {
			agentevent.SetAttr(&res, agentevent.AttrTestRunner, runner)
			if run, passed, failed, ok := testrun.Counts(runner, output); ok {
				agentevent.SetAttr(&res, agentevent.AttrTestRun, int64(run))
				agentevent.SetAttr(&res, agentevent.AttrTestPassed, int64(passed))
				agentevent.SetAttr(&res, agentevent.AttrTestFailed, int64(failed))
			}
		}
	}
	return call, &res
}

// resultText is the output and the error of a tool result: the
// functionResponse response's output / error, and text parts (added to the
// output).
func resultText(parts []ResultPart) (output, errText string) {
	var outs, errs []string
	for _, p := range parts {
		if p.Text != nil {
			outs = append(outs, *p.Text)
		}
		if p.FunctionResponse == nil || len(p.FunctionResponse.Response) == 0 {
			continue
		}
		var r struct {
			Output jsonx.RawMessage `json:"output"`
			Error  jsonx.RawMessage `json:"error"`
		}
		if jsonx.Unmarshal(p.FunctionResponse.Response, &r) != nil {
			continue
		}
		if s := rawText(r.Output); s != "" {
			outs = append(outs, s)
		}
		if s := rawText(r.Error); s != "" {
			errs = append(errs, s)
		}
	}
	return strings.Join(outs, "\n"), strings.Join(errs, "\n")
}

// rawText is a JSON string's value, or any other JSON value as written.
func rawText(raw jsonx.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if jsonx.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

var exitCodeRE = regexp.MustCompile(`(?m)^Exit Code: (-?\d+)\s*$`)

// parseExitCode finds the "Exit Code: N" line of a shell tool's output.
func parseExitCode(output string) (int64, bool) {
	if !strings.Contains(output, "Exit Code: ") {
		return 0, false // what the expression needs, found faster than by it
	}
	ms := exitCodeRE.FindAllStringSubmatch(output, -1)
	if len(ms) == 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(ms[len(ms)-1][1], 10, 64)
	return n, err == nil
}

// fileFacts adds the change a successful file tool made: from the
// resultDisplay object newer CLIs write (isNewFile, diffStat, fileDiff),
// else from the result text ("created and wrote to new file").
func fileFacts(ev *agentevent.Event, tc ToolCall, output string) {
	var rd resultDisplay
	isObj := len(tc.ResultDisplay) > 0 && tc.ResultDisplay[0] == '{' && jsonx.Unmarshal(tc.ResultDisplay, &rd) == nil
	change := "modified"
	switch {
	case isObj && rd.IsNewFile != nil:
		if *rd.IsNewFile {
			change = "created"
		}
	case strings.Contains(output, "created and wrote to new file"):
		change = "created"
	}
	agentevent.SetAttr(ev, agentevent.AttrFileChangeType, change)
	if !isObj {
		return
	}
	if rd.DiffStat != nil {
		agentevent.SetAttr(ev, agentevent.AttrFileLinesAdded, rd.DiffStat.ModelAddedLines+rd.DiffStat.UserAddedLines)
		agentevent.SetAttr(ev, agentevent.AttrFileLinesRemoved, rd.DiffStat.ModelRemovedLines+rd.DiffStat.UserRemovedLines)
	}
	if rd.FileDiff != "" {
		agentevent.SetAttr(ev, agentevent.AttrFileDiff, rd.FileDiff) // content: dropped unless asked for
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// subagentAnswer is the answer a subagent returns with its complete_task
// call: args.result as a string, its "response" field, or else the result
// as JSON.
func subagentAnswer(tc ToolCall) (string, bool) {
	if tc.Name != toolCompleteTask {
		return "", false
	}
	var a struct {
		Result jsonx.RawMessage `json:"result"`
	}
	if jsonx.Unmarshal(tc.Args, &a) != nil || len(a.Result) == 0 {
		return "", true
	}
	var r struct {
		Response *string `json:"response"`
	}
	if a.Result[0] == '{' && jsonx.Unmarshal(a.Result, &r) == nil && r.Response != nil {
		return *r.Response, true
	}
	return rawText(a.Result), true
}
