// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentevent

import (
	"strings"
	"unicode/utf8"
)

// Facts: keys of the always-on attributes the parsers put in
// Event.Attributes about what a tool did. They are not content (no prompt or
// output text), so they are kept whether or not content is; the connector's
// turn rollup and the exporters are built from them, vendor-neutrally.
const (
	// AttrToolCommand is the shell command line of a tool call (cut at
	// MaxCommandLength by CommandLine).
	AttrToolCommand = "agent.tool.command"
	// AttrFileChangeType is the change a file tool made: created, modified,
	// deleted or moved (on its result).
	AttrFileChangeType = "agent.file.change_type"
	// AttrFileLinesAdded and AttrFileLinesRemoved count the lines the change
	// added and removed, when the log tells.
	AttrFileLinesAdded   = "agent.file.lines_added"
	AttrFileLinesRemoved = "agent.file.lines_removed"
	// AttrTestRunner names the test runner of a command that ran tests (on its
	// result); AttrTestRun, AttrTestPassed and AttrTestFailed are its counts
	// when the output says so (see internal/testrun).
	AttrTestRunner = "agent.test.runner"
	AttrTestRun    = "agent.test.run"
	AttrTestPassed = "agent.test.passed"
	AttrTestFailed = "agent.test.failed"
	// AttrTokensCacheCreation1h is the part of the cache-creation tokens
	// written with a 1-hour lifetime (Claude's ephemeral_1h_input_tokens),
	// which is priced higher than the default 5-minute write.
	AttrTokensCacheCreation1h = "agent.usage.cache_creation.1h.input_tokens"
)

// Values of AttrFileChangeType.
const (
	ChangeCreated  = "created"
	ChangeModified = "modified"
	ChangeDeleted  = "deleted"
	ChangeMoved    = "moved"
)

// MaxCommandLength bounds AttrToolCommand: a command may carry a whole file
// in a here-document, and the attribute goes on every span and event that
// carries the call.
const MaxCommandLength = 4096

// SetAttr adds one attribute to an event, creating the map on first use.
func SetAttr(ev *Event, k string, v any) {
	if ev.Attributes == nil {
		ev.Attributes = map[string]any{}
	}
	ev.Attributes[k] = v
}

// CommandLine trims a command and cuts it to MaxCommandLength bytes at a
// character boundary, marking the cut with "…".
func CommandLine(cmd string) string {
	cmd = strings.TrimSpace(cmd)
	if len(cmd) <= MaxCommandLength {
		return cmd
	}
	cut := MaxCommandLength
	for cut > 0 && !utf8.RuneStart(cmd[cut]) {
		cut--
	}
	return cmd[:cut] + "…"
}

// CountLines is the number of lines of a text: a last line without a newline
// counts, an empty text has none.
func CountLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}
