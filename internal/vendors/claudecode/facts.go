// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
	"github.com/agentotel/agentotel/internal/testrun"
)

// Structured facts about what a tool did go in Event.Attributes. They are not
// content (no prompt or output text) and are always emitted: the connector's
// turn rollup is built from them. agentevent.AttrToolCommand is the command
// line of a Bash call (on the tool_call); agentevent.AttrFileChangeType,
// AttrFileLinesAdded and AttrFileLinesRemoved describe the change a
// successful file tool made (on the tool_result); agentevent.AttrTestRunner,
// AttrTestRun, AttrTestPassed and AttrTestFailed mark the result of a command
// that ran tests (on the tool_result), the counts only when its output says
// so.

// Values of agent.file.change_type.
const (
	changeCreated  = "created"
	changeModified = "modified"
)

// agentevent.MaxCommandLength bounds agent.tool.command: a command may carry a whole
// file in a here-document, and the attribute goes on every span and event
// that carries the call.

// fileEditResult holds the toolUseResult fields of Write, Edit and MultiEdit
// results. Content and StructuredPatch stay raw: they are decoded only when
// present, and a shape we do not expect costs the line counts, not the
// event.
type fileEditResult struct {
	// Type is "create" or "update" on Write results.
	Type string `json:"type"`
	// Content is the text a Write put in the file.
	Content jsonx.Raw `json:"content"`
	// StructuredPatch is the diff the tool applied, as hunks of lines
	// prefixed with " ", "-" or "+".
	StructuredPatch jsonx.Raw `json:"structuredPatch"`
}

type patchHunk struct {
	OldStart int      `json:"oldStart"`
	OldLines int      `json:"oldLines"`
	NewStart int      `json:"newStart"`
	NewLines int      `json:"newLines"`
	Lines    []string `json:"lines"`
}

// fileFacts adds the change a successful file tool made to its result:
// change type from the tool (Write's create/update), lines added and removed
// from the patch Claude Code recorded (for a created file: the lines of its
// content). Lines are left out when the record does not tell them (several
// results in one row, an older or unexpected toolUseResult).
func fileFacts(ev *agentevent.Event, tool string, t *toolUseResult, withDiff, typed bool) {
	r := &t.edit
	readable := t.object && t.editOK
	change := changeModified
	if tool == toolWrite && r.Type == "create" {
		change = changeCreated
	}
	agentevent.SetAttr(ev, agentevent.AttrFileChangeType, change)
	if !readable || tool == toolNotebookEdit {
		return
	}
	added, removed, ok := patchLines(r.StructuredPatch, typed)
	if withDiff {
		if diff := unifiedDiff(ev.FilePath, r.StructuredPatch); diff != "" {
			agentevent.SetAttr(ev, agentevent.AttrFileDiff, diff) // content: dropped unless asked for
		}
	}
	if change == changeCreated && added == 0 && removed == 0 {
		// A created file's patch is empty: its lines are all added.
		if content, isString := jsonString(r.Content, typed); isString {
			added, removed, ok = agentevent.CountLines(content), 0, true
		}
	}
	if !ok {
		return
	}
	agentevent.SetAttr(ev, agentevent.AttrFileLinesAdded, int64(added))
	agentevent.SetAttr(ev, agentevent.AttrFileLinesRemoved, int64(removed))
}

// unifiedDiff renders a structuredPatch as a unified diff of path ("" when
// there is no readable, non-empty patch).
func unifiedDiff(path string, raw jsonx.Raw) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return ""
	}
	var hunks []patchHunk
	if jsonx.Unmarshal(raw, &hunks) != nil || len(hunks) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("--- a/" + strings.TrimPrefix(path, "/") + "\n+++ b/" + strings.TrimPrefix(path, "/") + "\n")
	for _, h := range hunks {
		fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", h.OldStart, h.OldLines, h.NewStart, h.NewLines)
		for _, l := range h.Lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// bashOutput holds the output fields of a Bash toolUseResult.
type bashOutput struct {
	Stdout jsonx.Raw `json:"stdout"`
	Stderr jsonx.Raw `json:"stderr"`
}

// testFacts marks the result of a command that ran tests: the runner, and
// the counts its output shows. The output is the result content (what the
// model saw, text), else the toolUseResult's stdout and stderr.
func testFacts(ev *agentevent.Event, runner, text string, t *toolUseResult, typed bool) {
	agentevent.SetAttr(ev, agentevent.AttrTestRunner, runner)
	output := text
	if strings.TrimSpace(output) == "" && t.object && t.bashOK {
		stdout, _ := jsonString(t.bash.Stdout, typed)
		stderr, _ := jsonString(t.bash.Stderr, typed)
		output = stdout + "\n" + stderr
	}
	run, passed, failed, ok := testrun.Counts(runner, output)
	if !ok {
		return
	}
	agentevent.SetAttr(ev, agentevent.AttrTestRun, int64(run))
	agentevent.SetAttr(ev, agentevent.AttrTestPassed, int64(passed))
	agentevent.SetAttr(ev, agentevent.AttrTestFailed, int64(failed))
}

// changesFile tells whether a tool writes the file it names.
func changesFile(tool string) bool {
	switch fileOp(tool) {
	case agentevent.FileWrite, agentevent.FileModify:
		return true
	}
	return false
}
