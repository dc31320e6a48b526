// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCompareClassifies checks the judge itself on made-up output, so that a suite that passes
// means the collector passed: every class of difference is found, and a repetition counts as a
// redelivery only where a kill explains it.
func TestCompareClassifies(t *testing.T) {
	// Run 0 was killed, run 1 stopped with SIGTERM, run 2 killed, run 3 is the last.
	d := &deployment{runs: []*process{{n: 0, end: endKill}, {n: 1, end: endTerm}, {n: 2, end: endKill}, {n: 3, end: endTerm}}}
	ref, got := newOutput(), newOutput()
	ev := func(id string) eventKey { return eventKey{"claude-code", "s1", id} }
	for _, id := range []string{"same", "lost", "redelivered", "not-last-batch", "after-sigterm", "twice-in-a-run", "not-next-reader"} {
		ref.putEvent(ev(id), "tool_call", "/a.jsonl", loc{0, 0})
	}
	ref.putEvent(ev("other-file"), "tool_call", "/b.jsonl", loc{0, 0})

	got.putEvent(ev("same"), "tool_call", "/a.jsonl", loc{0, 0})
	got.putEvent(ev("unexpected"), "tool_call", "/a.jsonl", loc{0, 0})
	// Run 0 wrote /a.jsonl in lines 0, 1 and 2 (its last batch of the file) and /b.jsonl in line 3.
	got.putEvent(ev("not-last-batch"), "tool_call", "/a.jsonl", loc{0, 1})
	got.putEvent(ev("redelivered"), "tool_call", "/a.jsonl", loc{0, 2})
	got.putEvent(ev("twice-in-a-run"), "tool_call", "/a.jsonl", loc{0, 2})
	got.putEvent(ev("twice-in-a-run"), "tool_call", "/a.jsonl", loc{0, 2})
	got.putEvent(ev("other-file"), "tool_call", "/b.jsonl", loc{0, 3})
	// Run 1 (after the kill) reads /a.jsonl again; it is stopped gracefully.
	got.putEvent(ev("redelivered"), "tool_call", "/a.jsonl", loc{1, 0})
	got.putEvent(ev("not-last-batch"), "tool_call", "/a.jsonl", loc{1, 0})
	got.putEvent(ev("after-sigterm"), "tool_call", "/a.jsonl", loc{1, 1})
	// Run 2 writes again what the SIGTERMed run 1 had written.
	got.putEvent(ev("after-sigterm"), "tool_call", "/a.jsonl", loc{2, 0})
	// A copy of run 0's last batch of /b.jsonl that skips run 2, which read /b.jsonl first.
	got.putEvent(ev("not-next-reader"), "tool_call", "/b.jsonl", loc{0, 3})
	got.putEvent(ev("x"), "tool_call", "/b.jsonl", loc{2, 1})
	got.putEvent(ev("not-next-reader"), "tool_call", "/b.jsonl", loc{3, 0})
	ref.putEvent(ev("x"), "tool_call", "/b.jsonl", loc{0, 1})

	sp := func(id string) spanKey { return spanKey{"t1", id} }
	c := spanContent{name: "chat m", start: 1, end: 2, status: "Unset"}
	for _, id := range []string{"span-same", "span-changed", "span-redelivered", "span-old"} {
		ref.putSpan(sp(id), "claude-code", "s1", c, loc{0, 0})
	}
	got.putSpan(sp("span-same"), "claude-code", "s1", c, loc{0, 0})
	got.putSpan(sp("span-old"), "claude-code", "s1", c, loc{0, 0})
	changed := c
	changed.end = 3
	got.putSpan(sp("span-changed"), "claude-code", "s1", changed, loc{0, 1})
	got.putSpan(sp("span-redelivered"), "claude-code", "s1", c, loc{0, 4})
	for line := 1; line <= 4; line++ { // run 0 wrote spans of s1 in lines 0–4: line 0 is not in flight
		got.inGroup(group{"span", 0, "s1"}, line)
	}
	got.putSpan(sp("span-redelivered"), "claude-code", "s1", c, loc{2, 0})
	got.putSpan(sp("span-old"), "claude-code", "s1", c, loc{2, 0})

	v := compare(ref, got, d)
	classes := map[string]string{}
	for _, f := range v.findings {
		classes[f.signal+" "+f.id] = f.class
	}
	s1 := "claude-code/s1/"
	assert.Equal(t, map[string]string{
		"event " + s1 + "lost":            classLost,
		"event " + s1 + "unexpected":      classUnexpected,
		"event " + s1 + "redelivered":     classRedelivered,
		"event " + s1 + "not-last-batch":  classDuplicated,
		"event " + s1 + "after-sigterm":   classDuplicated,
		"event " + s1 + "twice-in-a-run":  classDuplicated,
		"event " + s1 + "not-next-reader": classDuplicated,
		"span t1/span-changed chat m":     classChanged,
		"span t1/span-redelivered chat m": classRedelivered,
		"span t1/span-old chat m":         classDuplicated,
	}, classes, v.report(10))
	assert.True(t, v.failed())
}

// TestCompareExportsClassifies checks the judge of the agent_event files: an id must have exactly
// the uninterrupted run's copies, with the same text; a repetition is never excused.
func TestCompareExportsClassifies(t *testing.T) {
	line := func(file, text string) exportLine { return exportLine{file: file, text: text} }
	ref := &exports{lines: map[string]map[string][]exportLine{signalAgtrace: {
		"claude-code/s1/same":    {line("claude-code/s1.jsonl", `{"a":1}`)},
		"claude-code/s1/lost":    {line("claude-code/s1.jsonl", `{"a":2}`)},
		"claude-code/s1/twice":   {line("claude-code/s1.jsonl", `{"a":3}`)},
		"claude-code/s1/changed": {line("claude-code/s1.jsonl", `{"a":4}`)},
	}, signalCanonical: {}}}
	got := &exports{lines: map[string]map[string][]exportLine{signalAgtrace: {
		"claude-code/s1/same":    {line("claude-code/s1.jsonl", `{"a":1}`)},
		"claude-code/s1/twice":   {line("claude-code/s1.jsonl", `{"a":3}`), line("claude-code/s1.jsonl", `{"a":3}`)},
		"claude-code/s1/changed": {line("claude-code/s1.jsonl", `{"a":5}`)},
	}, signalCanonical: {
		"claude-code/s1/agent-task-1": {line("claude-code/s1.jsonl", `{"id":"agent-task-1"}`)},
	}}}
	classes := map[string]string{}
	for _, f := range compareExports(ref, got) {
		classes[f.signal+" "+f.id] = f.class
	}
	assert.Equal(t, map[string]string{
		signalAgtrace + " claude-code/s1/lost":           classLost,
		signalAgtrace + " claude-code/s1/twice":          classDuplicated,
		signalAgtrace + " claude-code/s1/changed":        classChanged,
		signalCanonical + " claude-code/s1/agent-task-1": classUnexpected,
	}, classes)
}
