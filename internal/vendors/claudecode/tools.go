// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
)

const (
	toolBash         = "Bash"
	toolRead         = "Read"
	toolWrite        = "Write"
	toolEdit         = "Edit"
	toolMultiEdit    = "MultiEdit"
	toolNotebookEdit = "NotebookEdit"
	toolNotebookRead = "NotebookRead"
	toolTask         = "Task"  // ≤2.0 name of the subagent tool
	toolAgent        = "Agent" // ≥2.1 name of the subagent tool
	// toolSendMessage sends another agent (a session of Claude Code on the
	// same machine, a teammate) a message.
	toolSendMessage = "SendMessage"
)

// isSubagentTool tells whether a tool call spawns a subagent.
func isSubagentTool(name string) bool { return name == toolTask || name == toolAgent }

// fileOp is the file operation a tool performs, "" for tools that do not
// work on one file.
func fileOp(tool string) agentevent.FileOp {
	switch tool {
	case toolRead, toolNotebookRead:
		return agentevent.FileRead
	case toolWrite:
		return agentevent.FileWrite
	case toolEdit, toolMultiEdit, toolNotebookEdit:
		return agentevent.FileModify
	}
	return ""
}

// channel is where a tool acts: the terminal for Bash, the editor for the
// file tools, the chat for everything else (search, web, todo, subagents).
func channel(tool string) agentevent.Channel {
	if tool == toolBash {
		return agentevent.ChannelTerminal
	}
	if fileOp(tool) != "" {
		return agentevent.ChannelEditor
	}
	return agentevent.ChannelChat
}

// filePath picks the file a tool call names: file_path, notebook_path, or
// path (a directory for Glob/Grep/LS).
func filePath(in toolInput) string {
	switch {
	case in.FilePath != "":
		return in.FilePath
	case in.NotebookPath != "":
		return in.NotebookPath
	}
	return in.Path
}

// exitCodePattern finds Claude Code's exit code line. The text of a failed
// Bash result starts with it ("Exit code 2\n..."), or with "Error: Exit
// code 2" in toolUseResult.
var exitCodePattern = regexp.MustCompile(`^(?:Error: )?Exit code (-?\d+)`)

// parseExitCode reads the exit code at the start of a Bash failure text.
func parseExitCode(texts ...string) (int64, bool) {
	for _, t := range texts {
		m := exitCodePattern.FindStringSubmatch(strings.TrimLeft(t, " \t\r\n"))
		if m == nil {
			continue
		}
		if v, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			return v, true
		}
	}
	return 0, false
}

// Phrases Claude Code writes into tool results (and user rows) for outcomes
// that are not the tool's own failure.
const (
	interruptNotice     = "[Request interrupted by user"
	rejectedPrefix      = "The user doesn't want to proceed with this tool use"
	rejectedTakePrefix  = "The user doesn't want to take this action"
	permissionRequested = "Claude requested permissions to"
	permissionDenied    = "Permission to use "
)

// classifyFailure gives the error class of a failed tool result from its
// texts (content, then toolUseResult) and, for Bash, its exit code.
func classifyFailure(tool string, interrupted bool, texts ...string) (errType string, exitCode *int64) {
	if tool == toolBash {
		if code, ok := parseExitCode(texts...); ok {
			return agentevent.ErrorTypeExitCode, agentevent.Int(code)
		}
	}
	if interrupted {
		return agentevent.ErrorTypeInterrupted, nil
	}
	for _, t := range texts {
		t = strings.TrimPrefix(strings.TrimLeft(t, " \t\r\n"), "Error: ")
		switch {
		case strings.HasPrefix(t, interruptNotice), strings.HasPrefix(t, "Interrupted by user"):
			return agentevent.ErrorTypeInterrupted, nil
		case strings.HasPrefix(t, rejectedPrefix), strings.HasPrefix(t, rejectedTakePrefix):
			return agentevent.ErrorTypeRejected, nil
		case strings.HasPrefix(t, permissionRequested), strings.HasPrefix(t, permissionDenied):
			return agentevent.ErrorTypePermissionDenied, nil
		}
	}
	return agentevent.ErrorTypeTool, nil
}
