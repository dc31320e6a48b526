// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package state

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
)

// AppendJSON appends rec as json.Marshal writes it, byte for byte, without
// its reflection: a session's record is rewritten whenever the session
// changes, and encoding/json (with the markers' and calls' own
// MarshalJSON, whose output it parses again) was most of the cost of
// saving it. A value this writer does not take on (a string that would be
// escaped, a time json.Marshal refuses) makes it fall back to json.Marshal
// for the whole record.
func (rec *SessionRecord) AppendJSON(b []byte) ([]byte, error) {
	n0 := len(b)
	w := recordWriter{b: b}
	w.record(rec)
	if w.bad {
		out, err := json.Marshal(rec)
		return append(b[:n0], out...), err
	}
	return w.b, nil
}

// maxClosedSkip is how many span ids of a marker are encoded without an
// allocation (a marker has a few).
const maxClosedSkip = 16

// recordWriter appends a record's JSON; bad is set at the first value it
// leaves to encoding/json.
type recordWriter struct {
	b   []byte
	bad bool
}

func (w *recordWriter) record(rec *SessionRecord) {
	w.b = append(w.b, `{"version":`...)
	w.b = strconv.AppendInt(w.b, int64(rec.Version), 10)
	if len(rec.CaughtUp) > 0 {
		w.b = append(w.b, `,"caught_up":{`...)
		for i, f := range slices.Sorted(maps.Keys(rec.CaughtUp)) {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.str(f)
			w.b = append(w.b, ':')
			w.b = strconv.AppendBool(w.b, rec.CaughtUp[f])
		}
		w.b = append(w.b, '}')
	}
	if len(rec.Threads) > 0 {
		w.b = append(w.b, `,"threads":[`...)
		for i := range rec.Threads {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.thread(&rec.Threads[i])
		}
		w.b = append(w.b, ']')
	}
	if len(rec.Units) > 0 {
		w.b = append(w.b, `,"units":[`...)
		for i := range rec.Units {
			u := &rec.Units[i]
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, `{"key":`...)
			w.unitKey(u.Key)
			w.optStr(`,"prev_prompt":`, u.PrevPrompt)
			w.optStr(`,"host":`, u.Host)
			w.b = append(w.b, `,"last_arrival":`...)
			w.b = strconv.AppendInt(w.b, u.LastArrival, 10)
			w.b = append(w.b, `,"events":`...)
			w.b = strconv.AppendInt(w.b, int64(u.Events), 10)
			w.b = append(w.b, '}')
		}
		w.b = append(w.b, ']')
	}
	if len(rec.Links) > 0 {
		w.b = append(w.b, `,"links":[`...)
		for i := range rec.Links {
			l := &rec.Links[i]
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, `{"thread":`...)
			w.threadKey(l.Thread)
			w.b = append(w.b, `,"link":{"call_id":`...)
			w.str(l.Link.CallID)
			w.b = append(w.b, `,"parent":`...)
			w.unitKey(l.Link.Parent)
			w.b = append(w.b, `,"resolved":`...)
			w.b = strconv.AppendBool(w.b, l.Link.Resolved)
			if l.Link.Turn {
				w.b = append(w.b, `,"turn":true`...)
			}
			if !l.Link.At.IsZero() {
				w.b = append(w.b, `,"at":`...)
				w.time(l.Link.At)
			}
			w.optStr(`,"anchor":`, l.Link.Anchor)
			w.optStr(`,"project":`, l.Link.Project)
			w.b = append(w.b, "}}"...)
		}
		w.b = append(w.b, ']')
	}
	if len(rec.Calls) > 0 {
		w.b = append(w.b, `,"calls":[`...)
		for i := range rec.Calls {
			c := &rec.Calls[i]
			if i > 0 {
				w.b = append(w.b, ',')
			}
			// SavedCall.MarshalJSON: trailing empty fields left out.
			f := [...]string{c.Call.CallID, c.Ref.Unit.Thread.Agent, c.Ref.Unit.Prompt, c.Ref.SubagentType}
			n := len(f)
			for n > 1 && f[n-1] == "" {
				n--
			}
			w.b = append(w.b, '[')
			for j, s := range f[:n] {
				if j > 0 {
					w.b = append(w.b, ',')
				}
				w.str(s)
			}
			w.b = append(w.b, ']')
		}
		w.b = append(w.b, ']')
	}
	w.b = append(w.b, '}')
}

func (w *recordWriter) thread(t *SavedThread) {
	w.b = append(w.b, `{"key":`...)
	w.threadKey(t.Key)
	w.optStr(`,"last_prompt":`, t.LastPrompt)
	if t.LastPromptSeq != 0 {
		w.b = append(w.b, `,"last_prompt_seq":`...)
		w.b = strconv.AppendInt(w.b, t.LastPromptSeq, 10)
	}
	if len(t.Preamble) > 0 {
		w.b = append(w.b, `,"preamble":`...)
		w.bytes(t.Preamble)
	}
	w.optStr(`,"preamble_host":`, t.PreambleHost)
	w.b = append(w.b, `,"last_arrival":`...)
	w.b = strconv.AppendInt(w.b, t.LastArrival, 10)
	if len(t.Prompts) > 0 {
		w.b = append(w.b, `,"prompts":[`...)
		for i, p := range t.Prompts {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, `{"at":`...)
			w.time(p.At)
			w.b = append(w.b, `,"id":`...)
			w.str(p.ID)
			w.b = append(w.b, '}')
		}
		w.b = append(w.b, ']')
	}
	if len(t.Closed) > 0 {
		w.b = append(w.b, `,"closed":[`...)
		for i := range t.Closed {
			c := &t.Closed[i]
			if i > 0 {
				w.b = append(w.b, ',')
			}
			// ClosedUnit.MarshalJSON: the ids as base64 bytes.
			w.b = append(w.b, '{')
			if c.Prompt != "" {
				w.b = append(w.b, `"prompt":`...)
				w.str(c.Prompt)
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, `"t":`...)
			w.bytes(c.Trace[:])
			if len(c.Skip) > 0 {
				var buf [maxClosedSkip * len(pcommon.SpanID{})]byte
				raw := buf[:0]
				for _, id := range c.Skip {
					raw = append(raw, id[:]...)
				}
				w.b = append(w.b, `,"s":`...)
				w.bytes(raw)
			}
			w.b = append(w.b, '}')
		}
		w.b = append(w.b, ']')
	}
	if t.ClosedSeq != 0 {
		w.b = append(w.b, `,"closed_seq":`...)
		w.b = strconv.AppendInt(w.b, t.ClosedSeq, 10)
	}
	w.b = append(w.b, '}')
}

func (w *recordWriter) threadKey(k spanmodel.ThreadKey) {
	w.b = append(w.b, `{"source":`...)
	w.str(string(k.Source))
	w.b = append(w.b, `,"session":`...)
	w.str(k.Session)
	w.optStr(`,"agent":`, k.Agent)
	w.b = append(w.b, '}')
}

func (w *recordWriter) unitKey(k spanmodel.UnitKey) {
	w.b = append(w.b, `{"thread":`...)
	w.threadKey(k.Thread)
	w.optStr(`,"prompt":`, k.Prompt)
	w.b = append(w.b, '}')
}

// optStr appends name and s, unless s is empty (omitempty).
func (w *recordWriter) optStr(name, s string) {
	if s != "" {
		w.b = append(w.b, name...)
		w.str(s)
	}
}

// str appends s quoted. Only strings encoding/json writes as they are
// (printable ASCII but for ", \ and its HTML escapes) are taken on.
func (w *recordWriter) str(s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			w.bad = true
			return
		}
	}
	w.b = append(w.b, '"')
	w.b = append(w.b, s...)
	w.b = append(w.b, '"')
}

// bytes appends b as encoding/json writes a []byte: base64, quoted.
func (w *recordWriter) bytes(b []byte) {
	w.b = append(w.b, '"')
	w.b = base64.StdEncoding.AppendEncode(w.b, b)
	w.b = append(w.b, '"')
}

// time appends t as its MarshalJSON does; the times it refuses are left to
// encoding/json (and its error).
func (w *recordWriter) time(t time.Time) {
	w.b = append(w.b, '"')
	n := len(w.b)
	w.b = t.AppendFormat(w.b, time.RFC3339Nano)
	s := w.b[n:]
	if len(s) < len("2006-01-02T15:04:05Z") || s[4] != '-' {
		w.bad = true // a year of other than four digits
		return
	}
	if s[len(s)-1] != 'Z' {
		c := s[len(s)-len("Z07:00")]
		if ('0' <= c && c <= '9') || 10*(s[len(s)-5]-'0')+(s[len(s)-4]-'0') >= 24 {
			w.bad = true
			return
		}
	}
	w.b = append(w.b, '"')
}
