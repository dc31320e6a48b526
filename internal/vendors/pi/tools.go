// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package pi

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
	"github.com/agentotel/agentotel/internal/testrun"
	"github.com/agentotel/agentotel/internal/textutil"
)

// Structured facts about what a tool did, the keys every parser uses (the
// connector's turn rollup reads them). Not content: always emitted.
const (
	changeModified = "modified"
)

// Pi's built-in tools, and OpenClaw's shell tool (exec), which records the
// command's exit code and duration in its result's details.
const (
	toolBash  = "bash"
	toolExec  = "exec"
	toolRead  = "read"
	toolWrite = "write"
	toolEdit  = "edit"
)

// shellTool tells the tools that run a shell command.
func shellTool(name string) bool { return name == toolBash || name == toolExec }

var fileOps = map[string]agentevent.FileOp{
	toolRead:  agentevent.FileRead,
	toolWrite: agentevent.FileWrite,
	toolEdit:  agentevent.FileModify,
	"ls":      agentevent.FileRead,
	"grep":    "",
	"find":    "",
}

func channel(tool string) agentevent.Channel {
	if shellTool(tool) {
		return agentevent.ChannelTerminal
	}
	if op := fileOps[tool]; op != "" {
		return agentevent.ChannelEditor
	}
	return agentevent.ChannelChat
}

// toolCall fills a tool_call event from a toolCall block and opens the call.
func (p *Parser) toolCall(ev *agentevent.Event, b *block, c *rowCtx, replayed bool) {
	ev.ToolName = b.Name
	ev.ToolCallID = b.ID
	if !p.opts.OmitContent {
		ev.Text = string(b.Arguments)
	}
	ev.Channel = channel(b.Name)
	oc := &openCall{Name: strings.Clone(b.Name), Time: c.ts, WriteLines: -1, Channel: string(ev.Channel)}
	var args toolArgs
	if len(b.Arguments) > 0 && b.Arguments[0] == '{' && jsonx.Unmarshal(b.Arguments, &args) == nil {
		if op := fileOps[b.Name]; op != "" {
			path := textutil.FirstNonEmpty(args.Path, args.FilePath)
			ev.FilePath = path
			ev.FileOp = op
			ev.FileLanguage = agentevent.FileLanguage(path)
			oc.FilePath, oc.FileOp, oc.Language = strings.Clone(path), string(op), ev.FileLanguage
		}
		if shellTool(b.Name) && args.Command != "" {
			cmd := agentevent.CommandLine(args.Command)
			agentevent.SetAttr(ev, agentevent.AttrToolCommand, cmd)
			oc.Command = strings.Clone(cmd)
			if runner, ok := testrun.Detect(args.Command); ok {
				oc.Runner = runner
			}
		}
		if b.Name == toolWrite && args.Content != nil {
			oc.WriteLines = int64(agentevent.CountLines(*args.Content))
		}
	}
	if !replayed && b.ID != "" {
		p.st.addCall(strings.Clone(b.ID), oc)
	}
}

// toolResultFromCall copies what the open call knows to its result and
// closes the call.
func (p *Parser) toolResultFromCall(ev *agentevent.Event, id string, c *rowCtx) *openCall {
	ev.ToolCallID = id
	oc := p.st.Calls[id]
	if oc == nil {
		return nil
	}
	delete(p.st.Calls, id)
	ev.ToolName = oc.Name
	ev.FilePath = oc.FilePath
	ev.FileOp = agentevent.FileOp(oc.FileOp)
	ev.FileLanguage = oc.Language
	ev.Channel = agentevent.Channel(oc.Channel)
	if !oc.Time.IsZero() && !c.ts.IsZero() {
		if d := c.ts.Sub(oc.Time).Milliseconds(); d >= 0 {
			ev.ToolLatencyMs = agentevent.Int(d)
		}
	}
	return oc
}

// exitCodeRE finds the exit code Pi's bash tool appends to a failed
// command's output ("Command exited with code N").
var exitCodeRE = regexp.MustCompile(`Command exited with code (-?\d+)`)

// mapToolResult maps a toolResult message: the result of the open call of
// the same id.
func (p *Parser) mapToolResult(m *message, c *rowCtx, replayed bool) ([]pending, string, string) {
	str, blocks, ok := m.content()
	if !ok {
		return nil, ReasonUnexpectedShape, "toolResult content"
	}
	ev := p.base(c, agentevent.TypeToolResult, agentevent.RoleTool, channel(m.ToolName))
	text := contentText(str, blocks)
	if !p.opts.OmitContent {
		ev.Text = text
	}
	var oc *openCall
	switch {
	case replayed:
	case p.st.Calls[m.ToolCallID] == nil && p.st.notRun(m.ToolCallID):
		// The call was closed as never run when its response failed; a
		// result for it after all must not answer it twice: it is kept
		// as a result whose call is not identified.
		agentevent.SetAttr(&ev, agentevent.AttrToolLateCallID, m.ToolCallID)
	default:
		oc = p.toolResultFromCall(&ev, m.ToolCallID, c)
	}
	if m.ToolName != "" {
		ev.ToolName = m.ToolName
	}
	ev.ToolStatus = agentevent.ToolSuccess
	if m.IsError {
		ev.ToolStatus = agentevent.ToolError
		ev.ErrorType = agentevent.ErrorTypeTool
	}
	if shellTool(ev.ToolName) {
		if ev.ToolName == toolExec {
			execFacts(&ev, m, text)
		} else {
			bashFacts(&ev, text, m.IsError)
		}
		if oc != nil && oc.Runner != "" {
			agentevent.SetAttr(&ev, agentevent.AttrTestRunner, oc.Runner)
			if run, passed, failed, ok := testrun.Counts(oc.Runner, text); ok {
				agentevent.SetAttr(&ev, agentevent.AttrTestRun, int64(run))
				agentevent.SetAttr(&ev, agentevent.AttrTestPassed, int64(passed))
				agentevent.SetAttr(&ev, agentevent.AttrTestFailed, int64(failed))
			}
		}
	}
	if !m.IsError && (ev.ToolName == toolWrite || ev.ToolName == toolEdit) {
		fileFacts(&ev, m, oc)
	}
	return []pending{{ev: ev}}, "", ""
}

// bashFacts reads the exit code of a bash result: N from "Command exited
// with code N" on a failure, 0 on a success. Aborts and timeouts are
// classified apart.
func bashFacts(ev *agentevent.Event, text string, isError bool) {
	if !isError {
		ev.ToolExitCode = agentevent.Int(0)
		return
	}
	// The last match: the command's own output may hold the phrase too.
	if all := exitCodeRE.FindAllStringSubmatch(text, -1); len(all) > 0 {
		m := all[len(all)-1]
		if n, err := strconv.ParseInt(m[1], 10, 64); err == nil {
			ev.ToolExitCode = agentevent.Int(n)
			ev.ErrorType = agentevent.ErrorTypeExitCode
			return
		}
	}
	lower := strings.ToLower(text)
	switch {
	case strings.Contains(lower, "command aborted") || strings.Contains(lower, "operation aborted"):
		ev.ErrorType = agentevent.ErrorTypeInterrupted
	case strings.Contains(lower, "timed out"):
		ev.ErrorType = agentevent.ErrorTypeTimeout
	}
}

// execDetails are the details of an OpenClaw exec result.
type execDetails struct {
	// Status is "completed" (the command exited, with any code), "failed"
	// (it was killed, timed out, or could not run) or "running" (sent to
	// the background).
	Status     string   `json:"status"`
	ExitCode   *float64 `json:"exitCode"`
	DurationMs *float64 `json:"durationMs"`
	TimedOut   bool     `json:"timedOut"`
}

// execFacts reads the exit code and duration of an OpenClaw exec result
// from its details. OpenClaw returns a command that exited non-zero as a
// normal result (not isError), its text ending "(Command exited with code
// N)": the exit code fails it. Without details, the code is read from that
// text.
func execFacts(ev *agentevent.Event, m *message, text string) {
	var d execDetails
	if len(m.Details) == 0 || m.Details[0] != '{' || jsonx.Unmarshal(m.Details, &d) != nil {
		d = execDetails{}
		if all := exitCodeRE.FindAllStringSubmatch(text, -1); len(all) > 0 {
			if n, err := strconv.ParseFloat(all[len(all)-1][1], 64); err == nil {
				d.ExitCode = &n
			}
		}
	}
	if d.Status == "running" {
		// Sent to the background: the call is over, the command is not.
		agentevent.SetAttr(ev, agentevent.AttrToolBackground, true)
		return
	}
	if d.DurationMs != nil && *d.DurationMs >= 0 {
		// Measured by the tool itself, more exact than the entries' times.
		ev.ToolLatencyMs = agentevent.Int(int64(*d.DurationMs))
	}
	if d.ExitCode != nil {
		code := int64(*d.ExitCode)
		ev.ToolExitCode = agentevent.Int(code)
		if code != 0 {
			ev.ToolStatus = agentevent.ToolError
			ev.ErrorType = agentevent.ErrorTypeExitCode
		}
	}
	if d.Status != "failed" && !m.IsError {
		return
	}
	ev.ToolStatus = agentevent.ToolError
	switch lower := strings.ToLower(text); {
	case d.TimedOut || strings.Contains(lower, "timed out"):
		ev.ErrorType = agentevent.ErrorTypeTimeout
	case ev.ErrorType == agentevent.ErrorTypeExitCode:
	case strings.Contains(lower, "command aborted"):
		ev.ErrorType = agentevent.ErrorTypeInterrupted
	default:
		ev.ErrorType = agentevent.ErrorTypeTool
	}
}

// fileFacts adds the change a successful write or edit made: edit lines
// from Pi's rendered diff (details.diff), write lines from the content the
// call wrote. Pi does not record whether a write created the file.
func fileFacts(ev *agentevent.Event, m *message, oc *openCall) {
	agentevent.SetAttr(ev, agentevent.AttrFileChangeType, changeModified)
	if ev.ToolName == toolWrite {
		if oc != nil && oc.WriteLines >= 0 {
			agentevent.SetAttr(ev, agentevent.AttrFileLinesAdded, oc.WriteLines)
		}
		return
	}
	var d editDetails
	if len(m.Details) == 0 || m.Details[0] != '{' || jsonx.Unmarshal(m.Details, &d) != nil || d.Diff == "" {
		return
	}
	added, removed := 0, 0
	for l := range strings.SplitSeq(d.Diff, "\n") {
		switch {
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		}
	}
	agentevent.SetAttr(ev, agentevent.AttrFileLinesAdded, int64(added))
	agentevent.SetAttr(ev, agentevent.AttrFileLinesRemoved, int64(removed))
	agentevent.SetAttr(ev, agentevent.AttrFileDiff, d.Diff) // content: dropped unless asked for
}
