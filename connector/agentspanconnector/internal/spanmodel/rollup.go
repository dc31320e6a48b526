// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package spanmodel

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/textutil"
)

// This file is the turn rollup (seed: the canonical task event): what a run
// and the subagents it spawned did, summed onto its invoke_agent span.

// Values of the files' change_type.
const (
	changeCreated  = "created"
	changeModified = "modified"
	changeDeleted  = "deleted"
	changeMoved    = "moved"
)

// Values of the tests' status.
const (
	testPassed = "passed"
	testFailed = "failed"
)

// rollup sums what a run and its subagents did, for the invoke_agent span.
// Lists keep the order facts were collected in; they are put in time order
// when written, once a parent has added its subagents' facts.
type rollup struct {
	end          time.Time
	modelCalls   int64
	toolCalls    int64
	toolErrors   int64
	apiErrors    int64
	subagents    int64
	changes      []fileChange
	commands     []commandRun
	tests        []testRun
	usage        usage
	costUSD      float64
	hasCost      bool
	firstModel   string
	firstProvide string
}

// fileChange is one successful change of a file by a tool.
type fileChange struct {
	at             time.Time
	path, change   string
	added, removed int64
}

type commandRun struct {
	at      time.Time
	command string
	exit    *int64
}

type testRun struct {
	at          time.Time
	command     string
	runner      string
	status      string
	run, passed *int64
	exit        *int64
}

func (r *rollup) add(o rollup) {
	if o.end.After(r.end) {
		r.end = o.end
	}
	r.modelCalls += o.modelCalls
	r.toolCalls += o.toolCalls
	r.toolErrors += o.toolErrors
	r.apiErrors += o.apiErrors
	r.subagents += o.subagents
	r.changes = append(r.changes, o.changes...)
	r.commands = append(r.commands, o.commands...)
	r.tests = append(r.tests, o.tests...)
	r.usage.add(o.usage)
	r.costUSD += o.costUSD
	r.hasCost = r.hasCost || o.hasCost
}

// addTool collects the facts of one tool call and its result (nil while
// the call runs). failed is the outcome the tool span shows.
func (r *rollup) addTool(call, res *agentevent.Event, attrs map[string]any, filePath string, fileOp agentevent.FileOp, exit *int64, errType string, failed bool) {
	var at time.Time
	switch {
	case call != nil:
		at = call.Timestamp
	case res != nil:
		at = res.Timestamp
	}
	declined := agentevent.ToolDeclined(errType) // the command never ran
	cmd, isCommand := attrs[agentevent.AttrToolCommand].(string)
	if isCommand && !declined {
		r.commands = append(r.commands, commandRun{at: at, command: cmd, exit: exit})
	}
	if runner, ok := attrs[agentevent.AttrTestRunner].(string); ok && runner != "" && res != nil {
		t := testRun{
			at: at, command: cmd, runner: runner, exit: exit, status: testPassed,
			run: intFact(attrs, agentevent.AttrTestRun), passed: intFact(attrs, agentevent.AttrTestPassed),
		}
		if failed || (t.run != nil && t.passed != nil && *t.passed < *t.run) {
			t.status = testFailed
		}
		r.tests = append(r.tests, t)
	}
	if res == nil || failed || filePath == "" {
		return // a change is known once the tool reports it done
	}
	change, _ := attrs[agentevent.AttrFileChangeType].(string)
	if change == "" {
		change = changeFromOp(fileOp)
	}
	if change == "" {
		return
	}
	r.changes = append(r.changes, fileChange{
		at: res.Timestamp, path: filePath, change: change,
		added: agentevent.Value(intFact(attrs, agentevent.AttrFileLinesAdded)), removed: agentevent.Value(intFact(attrs, agentevent.AttrFileLinesRemoved)),
	})
}

// changeFromOp is the change type of a file operation, for events that
// carry no agent.file.change_type; "" for reads.
func changeFromOp(op agentevent.FileOp) string {
	switch op {
	case agentevent.FileCreate:
		return changeCreated
	case agentevent.FileWrite, agentevent.FileModify:
		return changeModified
	case agentevent.FileDelete:
		return changeDeleted
	case agentevent.FileMove:
		return changeMoved
	}
	return ""
}

func intFact(attrs map[string]any, k string) *int64 {
	switch v := attrs[k].(type) {
	case int64:
		return &v
	case float64:
		i := int64(v)
		return &i
	}
	return nil
}

// mergeChange is the net change of a file over a turn, given its change so
// far and the next one: created then edited stays created, anything then
// deleted is deleted, deleted then written again is modified.
func mergeChange(prev, next string) string {
	switch {
	case prev == "" || next == changeDeleted:
		return next
	case prev == changeCreated:
		return changeCreated
	case prev == changeDeleted:
		return changeModified
	case prev == changeMoved || next == changeMoved:
		return changeMoved
	}
	return next
}

// JSON shapes of the list attributes (the connector README, "Turn rollup").
type fileJSON struct {
	Path         string `json:"path"`
	ChangeType   string `json:"change_type"`
	LinesAdded   int64  `json:"lines_added"`
	LinesRemoved int64  `json:"lines_removed"`
	EditCount    int64  `json:"edit_count"`
}

type commandJSON struct {
	Command   string  `json:"command"`
	ExitCode  *int64  `json:"exit_code"`
	Timestamp *string `json:"timestamp"`
}

type testJSON struct {
	Command     string  `json:"command"`
	Runner      string  `json:"runner"`
	Status      string  `json:"status"`
	TestsRun    *int64  `json:"tests_run"`
	TestsPassed *int64  `json:"tests_passed"`
	ExitCode    *int64  `json:"exit_code"`
	Timestamp   *string `json:"timestamp"`
}

// turnFacts is the rollup's lists, aggregated and in time order.
type turnFacts struct {
	files                    []fileJSON
	linesAdded, linesRemoved int64
	commands                 []commandJSON
	tests                    []testJSON
	testsRun, testsPassed    int64
}

func (r *rollup) facts() turnFacts {
	byTime := func(a, b time.Time) int { return a.Compare(b) }
	slices.SortStableFunc(r.changes, func(a, b fileChange) int { return byTime(a.at, b.at) })
	slices.SortStableFunc(r.commands, func(a, b commandRun) int { return byTime(a.at, b.at) })
	slices.SortStableFunc(r.tests, func(a, b testRun) int { return byTime(a.at, b.at) })

	var f turnFacts
	index := map[string]int{}
	for _, c := range r.changes {
		i, seen := index[c.path]
		if !seen {
			i = len(f.files)
			index[c.path] = i
			f.files = append(f.files, fileJSON{Path: c.path})
		}
		fj := &f.files[i]
		fj.ChangeType = mergeChange(fj.ChangeType, c.change)
		fj.LinesAdded += c.added
		fj.LinesRemoved += c.removed
		fj.EditCount++
		f.linesAdded += c.added
		f.linesRemoved += c.removed
	}
	slices.SortFunc(f.files, func(a, b fileJSON) int { return cmp.Compare(a.Path, b.Path) })

	f.commands = make([]commandJSON, 0, len(r.commands))
	for _, c := range r.commands {
		f.commands = append(f.commands, commandJSON{Command: c.command, ExitCode: c.exit, Timestamp: timestamp(c.at)})
	}
	f.tests = make([]testJSON, 0, len(r.tests))
	for _, t := range r.tests {
		f.tests = append(f.tests, testJSON{
			Command: t.command, Runner: t.runner, Status: t.status,
			TestsRun: t.run, TestsPassed: t.passed, ExitCode: t.exit, Timestamp: timestamp(t.at),
		})
		// A run whose output gave no counts counts as one test.
		switch {
		case t.run != nil:
			f.testsRun += *t.run
			f.testsPassed += agentevent.Value(t.passed)
		default:
			f.testsRun++
			if t.status == testPassed {
				f.testsPassed++
			}
		}
	}
	return f
}

func timestamp(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}

// putRollup adds the rollup attributes of an invoke_agent span.
func putRollup(b *attrBuilder, r *rollup, start, end time.Time, prevPrompt string) {
	f := r.facts()
	b.add(intAttr(agentevent.AttrTurnModelCalls, r.modelCalls))
	b.add(intAttr(agentevent.AttrTurnToolCalls, r.toolCalls))
	b.add(intAttr(agentevent.AttrTurnToolErrors, r.toolErrors))
	b.add(intAttr(agentevent.AttrTurnErrors, r.toolErrors+r.apiErrors))
	b.add(intAttr(agentevent.AttrTurnFilesChanged, int64(len(f.files))))
	b.add(intAttr(agentevent.AttrTurnLinesAdded, f.linesAdded))
	b.add(intAttr(agentevent.AttrTurnLinesRemoved, f.linesRemoved))
	b.add(strAttr(agentevent.AttrTurnFiles, listJSON(f.files)))
	b.add(intAttr(agentevent.AttrTurnCommandsRun, int64(len(f.commands))))
	b.add(strAttr(agentevent.AttrTurnCommands, listJSON(f.commands)))
	b.add(intAttr(agentevent.AttrTurnTestsRun, f.testsRun))
	b.add(intAttr(agentevent.AttrTurnTestsPassed, f.testsPassed))
	b.add(strAttr(agentevent.AttrTurnTests, listJSON(f.tests)))
	b.add(intAttr(agentevent.AttrTurnSubagents, r.subagents))
	b.add(intAttr(agentevent.AttrTurnDurationMs, maxTime(start, end).Sub(start).Milliseconds()))
	r.usage.put(b, agentevent.AttrTurnUsagePrefix)
	if r.hasCost {
		b.add(doubleAttr(agentevent.AttrTurnUsagePrefix+"cost_usd", r.costUSD))
	}
	b.add(strAttr(agentevent.AttrTurnSummary, summary(f)))
	b.addStr(agentevent.AttrTurnPreviousID, prevPrompt)
}

// listJSON encodes a list attribute. Commands are shown as written: no
// HTML escaping of <, > and &.
func listJSON[T any](v []T) string {
	if v == nil {
		v = []T{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "[]"
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// summary is the one-line description of a turn, worded as seed 003's
// canonical task event: "Modified 2 files, +15 -3 lines, 5/5 tests passed";
// a part is left out when it is zero, "No changes" when all are.
func summary(f turnFacts) string {
	var parts []string
	if n := len(f.files); n > 0 {
		parts = append(parts, "Modified "+textutil.Plural(int64(n), "file"))
	}
	if f.linesAdded > 0 || f.linesRemoved > 0 {
		parts = append(parts, fmt.Sprintf("+%d -%d lines", f.linesAdded, f.linesRemoved))
	}
	if len(f.tests) > 0 {
		parts = append(parts, fmt.Sprintf("%d/%d tests passed", f.testsPassed, f.testsRun))
	}
	if len(parts) == 0 {
		return "No changes"
	}
	return strings.Join(parts, ", ")
}
