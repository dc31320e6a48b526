// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// finding is one id that differs between the interrupted run and the uninterrupted one.
type finding struct {
	class  string // lost, duplicated, redelivered, unexpected, changed
	signal string // event or span
	group  string // agent and event type / span kind
	id     string
	detail string
	back   int // redelivered: how many lines before the end of the killed run's output the copy was
}

// verdict is the comparison of an interrupted deployment's output with the reference.
type verdict struct {
	refEvents, refSpans int
	refLines            map[string]int // agent_event lines, by signal
	findings            []finding
}

// Classes of difference. Every class but redelivered fails the suite.
//
// redelivered: a copy written again, identical, because the process that wrote it was killed
// (kill -9) before it acknowledged the batch. No component can make a write to a plain file and
// the commit of its own read position one atomic step, so exactly-once into a file exporter is not
// possible under kill -9; at-least-once for the batch in flight, with the same ids, is (a backend
// keyed by span id takes the copy for the same span). A repetition counts as a redelivery only if
// the earlier copy is in what the killed run was handing on when it died — the last batch of its
// session file for an event (the receiver emits a file's batches one at a time), one of the last
// inFlightSpanBatches batches holding spans of its session for a span — and, for an event, the
// copy again is in the next run that reads that file. Any other repetition (two copies from one
// run, a copy again after a graceful stop, a copy of a batch acknowledged long before) is
// duplicated.
const (
	classLost        = "lost"
	classDuplicated  = "duplicated"
	classRedelivered = "redelivered"
	classUnexpected  = "unexpected"
	classChanged     = "changed"
)

// inFlightSpanBatches is how many emissions of one session's spans can be unacknowledged at a
// kill: the connector emits outside its lock, once per batch of events, and a session's main file
// and its subagent files are read in parallel.
const inFlightSpanBatches = 3

// compare checks got (the runs of the interrupted deployment d) against ref.
func compare(ref, got *output, d *deployment) verdict {
	v := verdict{}
	ended := map[int]string{}
	for _, p := range d.runs {
		ended[p.n] = p.end
	}
	for _, runs := range ref.events {
		v.refEvents += len(runs)
	}
	for _, copies := range ref.spans {
		v.refSpans += len(copies)
	}
	keys := map[eventKey]bool{}
	for k := range ref.events {
		keys[k] = true
	}
	for k := range got.events {
		keys[k] = true
	}
	for k := range keys {
		want, copies := len(ref.events[k]), got.events[k]
		kind := ref.eventKind[k]
		if kind == "" {
			kind = got.eventKind[k]
		}
		f := finding{signal: "event", group: k.agent + " " + kind, id: k.String(), detail: locsText(copies, ended)}
		v.findings = append(v.findings, classify(f, want, copies, func() bool {
			return redelivery(got, "event", got.eventFile[k], copies, ended, 1, true)
		}, got.back("event"))...)
	}
	skeys := map[spanKey]bool{}
	for k := range ref.spans {
		skeys[k] = true
	}
	for k := range got.spans {
		skeys[k] = true
	}
	for k := range skeys {
		wantCopies, gotCopies := ref.spans[k], got.spans[k]
		agent := ref.spanAgent[k]
		if agent == "" {
			agent = got.spanAgent[k]
		}
		var name string
		if len(wantCopies) > 0 {
			name = wantCopies[0].content.name
		} else {
			name = gotCopies[0].content.name
		}
		locs := make([]loc, len(gotCopies))
		for i, c := range gotCopies {
			locs[i] = c.loc
		}
		f := finding{signal: "span", group: agent + " " + spanKind(name), id: k.String() + " " + name, detail: locsText(locs, ended)}
		v.findings = append(v.findings, classify(f, len(wantCopies), locs, func() bool {
			return redelivery(got, "span", got.spanSession[k], locs, ended, inFlightSpanBatches, false)
		}, got.back("span"))...)
		if len(wantCopies) == 0 {
			continue
		}
		for _, c := range gotCopies {
			if !hasContent(wantCopies, c.content) {
				f := f
				f.class = classChanged
				f.detail = fmt.Sprintf("run %d line %d wrote %s; uninterrupted: %s", c.run, c.line, c.content, wantCopies[0].content)
				v.findings = append(v.findings, f)
			}
		}
	}
	if ref.exports != nil && got.exports != nil {
		v.refLines = ref.exports.count
		v.findings = append(v.findings, compareExports(ref.exports, got.exports)...)
	}
	sort.Slice(v.findings, func(i, j int) bool {
		a, b := v.findings[i], v.findings[j]
		if a.class != b.class {
			return a.class < b.class
		}
		if a.signal != b.signal {
			return a.signal < b.signal
		}
		if a.group != b.group {
			return a.group < b.group
		}
		return a.id < b.id
	})
	return v
}

// classify compares the copies an interrupted deployment wrote of one id, in the order written,
// with the number the uninterrupted run wrote.
func classify(f finding, want int, copies []loc, redelivered func() bool, back func([]loc) int) []finding {
	n := len(copies)
	switch {
	case want == 0:
		f.class = classUnexpected
	case n < want:
		f.class = classLost
		if want > 1 {
			f.detail = fmt.Sprintf("%d of %d copies missing; %s", want-n, want, f.detail)
		}
	case n == want:
		return nil
	case want == 1 && redelivered():
		f.class = classRedelivered
		f.back = back(copies)
	default:
		f.class = classDuplicated
	}
	return []finding{f}
}

// redelivery reports whether the copies of an id are one delivery repeated only because the runs
// that wrote the earlier copies were killed with it in flight: each earlier copy is in a killed
// run, among the last `window` batches of that run holding its group; each later copy in a later
// run — with nextReader, the first later run holding the group at all.
func redelivery(o *output, signal, name string, copies []loc, ended map[int]string, window int, nextReader bool) bool {
	for i := 0; i+1 < len(copies); i++ {
		a, b := copies[i], copies[i+1]
		if b.run <= a.run || ended[a.run] != endKill {
			return false
		}
		lines := o.groupLines[group{signal, a.run, name}]
		if len(lines) > window {
			lines = lines[len(lines)-window:]
		}
		if !slices.Contains(lines, a.line) {
			return false
		}
		if nextReader {
			for r := a.run + 1; r < b.run; r++ {
				if len(o.groupLines[group{signal, r, name}]) > 0 {
					return false
				}
			}
		}
	}
	return true
}

// back measures how far from the end of its killed run's output each earlier copy was, in lines.
func (o *output) back(signal string) func([]loc) int {
	return func(copies []loc) int {
		most := 0
		for _, c := range copies[:len(copies)-1] {
			most = max(most, o.runLines[group{signal: signal, run: c.run}]-1-c.line)
		}
		return most
	}
}

func hasContent(copies []spanCopy, c spanContent) bool {
	for _, w := range copies {
		if w.content == c {
			return true
		}
	}
	return false
}

// spanKind is the operation of a span name: invoke_agent, chat, execute_tool.
func spanKind(name string) string {
	if i := strings.IndexByte(name, ' '); i > 0 {
		return name[:i]
	}
	return name
}

func locsText(copies []loc, ended map[int]string) string {
	if len(copies) == 0 {
		return "written by no run"
	}
	parts := make([]string, len(copies))
	for i, c := range copies {
		e := ended[c.run]
		if e == endRunning {
			e = "final"
		}
		parts[i] = fmt.Sprintf("run %d line %d (%s)", c.run, c.line, e)
	}
	return "written by " + strings.Join(parts, ", ")
}

// count is the number of findings of a class and signal.
func (v verdict) count(class, signal string) int {
	n := 0
	for _, f := range v.findings {
		if f.class == class && f.signal == signal {
			n++
		}
	}
	return n
}

// failed reports whether anything but a redelivery after kill -9 differs.
func (v verdict) failed() bool {
	for _, f := range v.findings {
		if f.class != classRedelivered {
			return true
		}
	}
	return false
}

// summary is one line per class and signal with counts, then per agent and kind with counts and
// up to maxIDs ids each.
func (v verdict) report(maxIDs int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "uninterrupted run: %d events, %d spans; agent_event: %d agtrace lines, %d canonical lines\n",
		v.refEvents, v.refSpans, v.refLines[signalAgtrace], v.refLines[signalCanonical])
	for _, class := range []string{classLost, classDuplicated, classUnexpected, classChanged, classRedelivered} {
		for _, signal := range []string{"event", "span", signalAgtrace, signalCanonical} {
			if class == classRedelivered && strings.HasSuffix(signal, " line") {
				continue // agent_event tolerates none
			}
			fmt.Fprintf(&b, "%-11s %-15s: %d", class, signal+"s", v.count(class, signal))
			if class == classRedelivered {
				var backs []int
				for _, f := range v.findings {
					if f.class == class && f.signal == signal {
						backs = append(backs, f.back)
					}
				}
				if len(backs) > 0 {
					slices.Sort(backs)
					fmt.Fprintf(&b, " (written again after a kill; the first copy %d lines before the end of its run's %ss at most, %d at the median)",
						backs[len(backs)-1], signal, backs[len(backs)/2])
				}
			}
			b.WriteByte('\n')
		}
	}
	type groupKey struct{ class, signal, group string }
	groups := map[groupKey][]finding{}
	var order []groupKey
	for _, f := range v.findings {
		k := groupKey{f.class, f.signal, f.group}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], f)
	}
	for _, k := range order {
		fs := groups[k]
		fmt.Fprintf(&b, "-- %s %ss, %s: %d\n", k.class, k.signal, k.group, len(fs))
		for i, f := range fs {
			if i == maxIDs {
				fmt.Fprintf(&b, "   … and %d more\n", len(fs)-maxIDs)
				break
			}
			fmt.Fprintf(&b, "   %s — %s\n", f.id, f.detail)
		}
	}
	return b.String()
}
