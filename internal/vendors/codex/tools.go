// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
	"github.com/agentotel/agentotel/internal/testrun"
	"github.com/agentotel/agentotel/internal/textutil"
)

func isShellTool(name string) bool {
	switch name {
	case "shell", "shell_command", "exec_command", "local_shell", "container.exec":
		return true
	}
	return false
}

// shellCommand extracts the command line of a shell call's arguments:
// command as a string (shell_command), as an argv (shell, local_shell:
// ["bash","-lc","…"]) or cmd (exec_command).
func shellCommand(args string) string {
	var a struct {
		Command jsonx.Raw `json:"command"`
		Cmd     jsonx.Raw `json:"cmd"`
	}
	if jsonx.Unmarshal([]byte(args), &a) != nil {
		return ""
	}
	for _, raw := range []jsonx.Raw{a.Command, a.Cmd} {
		if s, ok := jsonString(raw); ok {
			return s
		}
		var argv []string
		if jsonx.Unmarshal(raw, &argv) == nil && len(argv) > 0 {
			if len(argv) >= 3 && (argv[1] == "-lc" || argv[1] == "-c") {
				return argv[2]
			}
			return strings.Join(argv, " ")
		}
	}
	return ""
}

// patchFacts reads an apply_patch input: the first file it touches, the
// change type and the lines added and removed.
func patchFacts(patch string) (path, change string, added, removed int64) {
	for l := range strings.SplitSeq(patch, "\n") {
		switch {
		case strings.HasPrefix(l, "*** Add File: "):
			if path == "" {
				path, change = strings.TrimSpace(l[len("*** Add File: "):]), "created"
			}
		case strings.HasPrefix(l, "*** Update File: "):
			if path == "" {
				path, change = strings.TrimSpace(l[len("*** Update File: "):]), "modified"
			}
		case strings.HasPrefix(l, "*** Delete File: "):
			if path == "" {
				path, change = strings.TrimSpace(l[len("*** Delete File: "):]), "deleted"
			}
		case strings.HasPrefix(l, "***"):
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		}
	}
	return path, change, added, removed
}

// toolCall maps function_call, custom_tool_call and local_shell_call.
func (p *Parser) toolCall(it *item, c *rowCtx) agentevent.Event {
	ev := p.base(c, agentevent.TypeToolCall, agentevent.RoleAssistant, agentevent.ChannelChat)
	p.model(&ev)
	name := it.Name
	args := it.Arguments
	switch it.Type {
	case "custom_tool_call":
		args = it.Input
	case "local_shell_call":
		name = "local_shell"
		args = string(it.Action)
	}
	id := textutil.FirstNonEmpty(it.CallID, it.ID)
	if id == "" {
		id = agentevent.StableID(p.path, c.offset, 0)
	}
	ev.ToolName, ev.ToolCallID, ev.Text = name, id, args
	oc := &openCall{Name: name, Timestamp: c.ts}
	switch {
	case isShellTool(name):
		ev.Channel = agentevent.ChannelTerminal
		cmd := shellCommand(args)
		if it.Type == "local_shell_call" {
			cmd = shellCommand(string(it.Action))
		}
		if cmd != "" {
			cmd = agentevent.CommandLine(cmd)
			agentevent.SetAttr(&ev, agentevent.AttrToolCommand, cmd)
			if r, ok := testrun.Detect(cmd); ok {
				oc.TestRunner = r
			}
		}
	case name == "apply_patch":
		ev.Channel = agentevent.ChannelEditor
		patch := args
		if it.Type == "function_call" {
			var a struct {
				Input string `json:"input"`
			}
			if jsonx.Unmarshal([]byte(args), &a) == nil && a.Input != "" {
				patch = a.Input
			}
		}
		path, change, added, removed := patchFacts(patch)
		ev.FilePath, ev.FileLanguage = path, agentevent.FileLanguage(path)
		switch change {
		case "created":
			ev.FileOp = agentevent.FileCreate
		case "deleted":
			ev.FileOp = agentevent.FileDelete
		case "modified":
			ev.FileOp = agentevent.FileModify
		}
		oc.FilePath, oc.ChangeType, oc.Added, oc.Removed = path, change, added, removed
		if change != "" {
			agentevent.SetAttr(&ev, agentevent.AttrFileDiff, patch) // content
		}
	}
	p.st.addCall(id, oc)
	return ev
}

var (
	exitRe = regexp.MustCompile(`(?m)^(?:Exit code: |Process exited with code )(-?\d+)`)
	wallRe = regexp.MustCompile(`(?m)^Wall time: ([0-9.]+) seconds`)
)

// jsonOutput is the 0.34 (and apply_patch) output dialect: a JSON string
// {"output": …, "metadata": {"exit_code": N, "duration_seconds": S}}.
type jsonOutput struct {
	Output   *string `json:"output"`
	Metadata *struct {
		ExitCode        *int64   `json:"exit_code"`
		DurationSeconds *float64 `json:"duration_seconds"`
	} `json:"metadata"`
}

// toolResult maps function_call_output and custom_tool_call_output. Exit
// code and duration: the structured *_end event when one came, else the
// JSON metadata dialect, else the text dialect, else the time since the call.
func (p *Parser) toolResult(it *item, c *rowCtx) agentevent.Event {
	ev := p.base(c, agentevent.TypeToolResult, agentevent.RoleTool, agentevent.ChannelChat)
	ev.ToolCallID = it.CallID
	out, isString := it.output, it.outputDecoded
	if !isString {
		out, isString = jsonString(it.Output)
	}
	if !isString {
		// Newer outputs may be an object or a list of content items.
		var obj struct {
			Content jsonx.Raw `json:"content"`
		}
		if len(it.Output) > 0 && it.Output[0] == '{' && jsonx.Unmarshal(it.Output, &obj) == nil && len(obj.Content) > 0 {
			out = partsText(obj.Content)
		} else {
			out = partsText(it.Output)
		}
	}
	text := out
	var exit, dur *int64
	var jo jsonOutput
	if strings.HasPrefix(strings.TrimSpace(out), "{") && jsonx.Unmarshal([]byte(out), &jo) == nil && jo.Metadata != nil {
		exit = jo.Metadata.ExitCode
		if jo.Metadata.DurationSeconds != nil {
			dur = agentevent.Int(int64(math.Round(*jo.Metadata.DurationSeconds * 1000)))
		}
		if jo.Output != nil {
			text = *jo.Output
		}
	} else {
		head := out
		if len(head) > 512 {
			head = head[:512]
		}
		if m := exitRe.FindStringSubmatch(head); m != nil {
			if n, err := strconv.ParseInt(m[1], 10, 64); err == nil {
				exit = agentevent.Int(n)
			}
		}
		if m := wallRe.FindStringSubmatch(head); m != nil {
			if f, err := strconv.ParseFloat(m[1], 64); err == nil {
				dur = agentevent.Int(int64(math.Round(f * 1000)))
			}
		}
	}
	ev.Text = text
	oc := p.st.Calls[it.CallID]
	delete(p.st.Calls, it.CallID)
	failed := false
	if oc != nil {
		ev.ToolName = oc.Name
		if isShellTool(oc.Name) {
			ev.Channel = agentevent.ChannelTerminal
		} else if oc.Name == "apply_patch" {
			ev.Channel = agentevent.ChannelEditor
			ev.FilePath, ev.FileLanguage = oc.FilePath, agentevent.FileLanguage(oc.FilePath)
		}
		if oc.EndSeen {
			if oc.ExitCode != nil {
				exit = oc.ExitCode
			}
			if oc.DurationMs != nil {
				dur = oc.DurationMs
			}
			failed = oc.Failed
		}
		if dur == nil && !oc.Timestamp.IsZero() && !c.ts.IsZero() {
			if d := c.ts.Sub(oc.Timestamp).Milliseconds(); d >= 0 {
				dur = agentevent.Int(d)
			}
		}
	}
	ev.ToolExitCode, ev.ToolLatencyMs = exit, dur
	ev.ToolStatus = agentevent.ToolSuccess
	switch {
	case exit != nil && *exit != 0:
		ev.ToolStatus, ev.ErrorType = agentevent.ToolError, agentevent.ErrorTypeExitCode
	case failed:
		ev.ToolStatus, ev.ErrorType = agentevent.ToolError, agentevent.ErrorTypeTool
	case strings.HasPrefix(out, "aborted"):
		ev.ToolStatus, ev.ErrorType = agentevent.ToolError, agentevent.ErrorTypeInterrupted
	}
	if oc == nil {
		return ev
	}
	if oc.Name == "apply_patch" && ev.ToolStatus == agentevent.ToolSuccess && oc.ChangeType != "" {
		agentevent.SetAttr(&ev, agentevent.AttrFileChangeType, oc.ChangeType)
		agentevent.SetAttr(&ev, agentevent.AttrFileLinesAdded, oc.Added)
		agentevent.SetAttr(&ev, agentevent.AttrFileLinesRemoved, oc.Removed)
	}
	if isSpawnTool(oc.Name) {
		ev.SpawnedAgentID = spawnedAgent(out)
	}
	if oc.TestRunner != "" {
		agentevent.SetAttr(&ev, agentevent.AttrTestRunner, oc.TestRunner)
		if run, passed, failedN, ok := testrun.Counts(oc.TestRunner, out); ok {
			agentevent.SetAttr(&ev, agentevent.AttrTestRun, int64(run))
			agentevent.SetAttr(&ev, agentevent.AttrTestPassed, int64(passed))
			agentevent.SetAttr(&ev, agentevent.AttrTestFailed, int64(failedN))
		}
	}
	return ev
}

// toolEnd records what a structured *_end event says about an open call;
// the call's output record (which follows) carries it.
func (p *Parser) toolEnd(m *eventMsg) {
	oc := p.st.Calls[m.CallID]
	if oc == nil {
		return
	}
	oc.EndSeen = true
	var d duration
	if len(m.Duration) > 0 && m.Duration[0] == '{' && jsonx.Unmarshal(m.Duration, &d) == nil {
		oc.DurationMs = agentevent.Int(d.millis())
	}
	switch m.Type {
	case "exec_command_end":
		oc.ExitCode = m.ExitCode
		oc.Failed = m.Status == "failed" || m.Status == "declined"
	case "patch_apply_end":
		oc.Failed = m.Success != nil && !*m.Success
	case "mcp_tool_call_end":
		var r struct {
			Err jsonx.Raw `json:"Err"`
			Ok  *struct {
				IsError bool `json:"isError"`
			} `json:"Ok"`
		}
		if len(m.Result) > 0 && jsonx.Unmarshal(m.Result, &r) == nil {
			oc.Failed = len(r.Err) > 0 || (r.Ok != nil && r.Ok.IsError)
		}
	}
}

// webSearch maps a web_search_call or image_generation_call: the call and
// its (already known) outcome at once.
func (p *Parser) webSearch(it *item, c *rowCtx) []agentevent.Event {
	id := textutil.FirstNonEmpty(it.ID, it.CallID)
	if id == "" {
		id = agentevent.StableID(p.path, c.offset, 0)
	}
	call := p.base(c, agentevent.TypeToolCall, agentevent.RoleAssistant, agentevent.ChannelChat)
	p.model(&call)
	name := "web_search"
	if it.Type == "image_generation_call" {
		name = "image_generation"
	}
	call.ToolName, call.ToolCallID = name, id
	if !p.opts.OmitContent {
		call.Text = string(it.Action)
	}
	res := p.base(c, agentevent.TypeToolResult, agentevent.RoleTool, agentevent.ChannelChat)
	res.ToolName, res.ToolCallID = name, id
	res.ToolStatus = agentevent.ToolSuccess
	switch it.Status {
	case "failed":
		res.ToolStatus, res.ErrorType = agentevent.ToolError, agentevent.ErrorTypeTool
	case "in_progress", "searching", "generating":
		return []agentevent.Event{call}
	}
	return []agentevent.Event{call, res}
}

// isSpawnTool names the tools that start a thread_spawn subagent.
func isSpawnTool(name string) bool {
	return name == "spawn_agent" || name == "spawn_subagent"
}

// spawnedAgent reads the child thread id from a spawn tool's output
// ({"agent_id": …} or {"thread_id": …}); "" when it names none.
func spawnedAgent(out string) string {
	var o struct {
		AgentID  string `json:"agent_id"`
		ThreadID string `json:"thread_id"`
	}
	if !strings.HasPrefix(strings.TrimSpace(out), "{") || jsonx.Unmarshal([]byte(out), &o) != nil {
		return ""
	}
	return textutil.FirstNonEmpty(o.AgentID, o.ThreadID)
}
