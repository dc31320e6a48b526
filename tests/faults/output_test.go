// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package faults

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// eventKey names an event: the agent, its session and its event id (a resumed Claude Code session
// repeats the records, and their ids, of the one it resumes).
type eventKey struct{ agent, session, id string }

func (k eventKey) String() string { return k.agent + "/" + k.session + "/" + k.id }

// spanKey names a span.
type spanKey struct{ trace, span string }

func (k spanKey) String() string { return k.trace + "/" + k.span }

// spanContent is what must be the same in both runs for a span id.
type spanContent struct {
	name, parent, status string
	start, end           pcommon.Timestamp
}

func (c spanContent) String() string {
	return fmt.Sprintf("%q parent=%s start=%s end=%s status=%s", c.name, c.parent,
		c.start.AsTime().UTC().Format("15:04:05.000000"), c.end.AsTime().UTC().Format("15:04:05.000000"), c.status)
}

// loc is where a copy was written: which run, which line of the run's file (from 0).
type loc struct{ run, line int }

type spanCopy struct {
	loc
	content spanContent
}

// group is what a process hands on in one batch, and so what one kill can leave unacknowledged:
// events come per session file (the receiver emits each file's batch on its own), spans per
// session (the connector emits what a batch of the session's events closed).
type group struct {
	signal string // event or span
	run    int
	name   string // the session file (events) or the session (spans)
}

// output is everything a deployment's runs wrote, read incrementally: each file is read up to its
// last complete line while its run goes on, and to its end once the run is over.
type output struct {
	events      map[eventKey][]loc // the copies, in the order written
	eventKind   map[eventKey]string
	eventFile   map[eventKey]string
	spans       map[spanKey][]spanCopy
	spanAgent   map[spanKey]string
	spanSession map[spanKey]string
	groupLines  map[group][]int // the lines of a run's file that hold the group, in order
	runEvents   map[int]int     // events written per run
	runLines    map[group]int   // lines per run and signal (group.name empty)
	runSpans    map[int]int     // spans written per run
	lines       map[string]int  // complete lines read of each file
	torn        []string
	read        map[string]int64 // bytes of each file consumed
	exports     *exports         // the agent_event files, read once the last run is over
}

func newOutput() *output {
	return &output{
		events:      map[eventKey][]loc{},
		eventKind:   map[eventKey]string{},
		eventFile:   map[eventKey]string{},
		spans:       map[spanKey][]spanCopy{},
		spanAgent:   map[spanKey]string{},
		spanSession: map[spanKey]string{},
		groupLines:  map[group][]int{},
		runEvents:   map[int]int{},
		runLines:    map[group]int{},
		runSpans:    map[int]int{},
		lines:       map[string]int{},
		read:        map[string]int64{},
	}
}

// inGroup notes that line of run holds data of the group.
func (o *output) inGroup(g group, line int) {
	if all := (group{signal: g.signal, run: g.run}); o.runLines[all] < line+1 {
		o.runLines[all] = line + 1
	}
	ls := o.groupLines[g]
	if len(ls) == 0 || ls[len(ls)-1] != line {
		o.groupLines[g] = append(ls, line)
	}
}

// scan reads what the deployment's runs wrote since the last scan.
func (o *output) scan(t *testing.T, d *deployment) {
	t.Helper()
	for _, p := range d.runs {
		over := p.exited()
		o.scanFile(t, p.n, filepath.Join(p.out, "events.jsonl"), over, o.addEvents)
		o.scanFile(t, p.n, filepath.Join(p.out, "traces.jsonl"), over, o.addSpans)
	}
}

func (o *output) scanFile(t *testing.T, run int, path string, over bool, add func(at loc, line []byte) error) {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return
	}
	require.NoError(t, err)
	defer f.Close()
	from := o.read[path]
	if from < 0 {
		return // read to its end after its run was over
	}
	_, err = f.Seek(from, io.SeekStart)
	require.NoError(t, err)
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		if len(bytes.TrimSpace(b[:i])) > 0 {
			require.NoError(t, add(loc{run, o.lines[path]}, b[:i]), "%s at byte %d: a complete line that is not OTLP JSON", path, from)
			o.lines[path]++
		}
		from += int64(i) + 1
		b = b[i+1:]
	}
	o.read[path] = from
	if !over {
		return
	}
	o.read[path] = -1
	if len(bytes.TrimSpace(b)) == 0 {
		return
	}
	// A torn last line: the file exporter was killed between writing a batch and its newline, or in
	// the middle of the batch. The batch was never acknowledged; count it if it is whole.
	if err := add(loc{run, o.lines[path]}, b); err != nil {
		o.torn = append(o.torn, fmt.Sprintf("run %d %s: torn last line of %d bytes, unreadable (skipped)", run, filepath.Base(path), len(b)))
	} else {
		o.torn = append(o.torn, fmt.Sprintf("run %d %s: last line of %d bytes without its newline, whole (counted)", run, filepath.Base(path), len(b)))
	}
}

func (o *output) addEvents(at loc, line []byte) error {
	var u plog.JSONUnmarshaler
	logs, err := u.UnmarshalLogs(line)
	if err != nil {
		return err
	}
	rls := logs.ResourceLogs()
	for i := 0; i < rls.Len(); i++ {
		agent := attr(rls.At(i).Resource().Attributes(), "service.name")
		sls := rls.At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				a := lrs.At(k).Attributes()
				key := eventKey{agent, attr(a, "gen_ai.conversation.id"), attr(a, "agent.event.id")}
				if key.id == "" {
					return fmt.Errorf("a log record without agent.event.id: %v", a.AsRaw())
				}
				o.putEvent(key, attr(a, "agent.event.type"), attr(a, "log.file.path"), at)
			}
		}
	}
	return nil
}

func (o *output) addSpans(at loc, line []byte) error {
	var u ptrace.JSONUnmarshaler
	td, err := u.UnmarshalTraces(line)
	if err != nil {
		return err
	}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		agent := attr(rss.At(i).Resource().Attributes(), "service.name")
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				sp := spans.At(k)
				key := spanKey{sp.TraceID().String(), sp.SpanID().String()}
				c := spanContent{name: sp.Name(), start: sp.StartTimestamp(), end: sp.EndTimestamp(), status: sp.Status().Code().String()}
				if msg := sp.Status().Message(); msg != "" {
					c.status += ": " + msg
				}
				if !sp.ParentSpanID().IsEmpty() {
					c.parent = sp.ParentSpanID().String()
				}
				o.putSpan(key, agent, attr(sp.Attributes(), "gen_ai.conversation.id"), c, at)
			}
		}
	}
	return nil
}

// putEvent records a copy of an event of the given type from a session file.
func (o *output) putEvent(key eventKey, kind, file string, at loc) {
	o.events[key] = append(o.events[key], at)
	o.runEvents[at.run]++
	o.eventKind[key] = kind
	o.eventFile[key] = file
	o.inGroup(group{"event", at.run, file}, at.line)
}

// putSpan records a copy of a span of the given agent and session.
func (o *output) putSpan(key spanKey, agent, session string, c spanContent, at loc) {
	o.spans[key] = append(o.spans[key], spanCopy{at, c})
	o.runSpans[at.run]++
	o.spanAgent[key] = agent
	o.spanSession[key] = session
	o.inGroup(group{"span", at.run, session}, at.line)
}

func attr(m pcommon.Map, key string) string {
	v, ok := m.Get(key)
	if !ok {
		return ""
	}
	return v.AsString()
}

// size is how much the runs have written: it changes while anything is still coming.
func (o *output) size() (events, spans int) {
	for _, runs := range o.events {
		events += len(runs)
	}
	for _, copies := range o.spans {
		spans += len(copies)
	}
	return events, spans
}

// covers reports whether every event and span of ref has a copy here.
func (o *output) covers(ref *output) bool {
	for k := range ref.events {
		if len(o.events[k]) == 0 {
			return false
		}
	}
	for k := range ref.spans {
		if len(o.spans[k]) == 0 {
			return false
		}
	}
	return true
}
