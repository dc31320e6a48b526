// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agenteventexporter

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
)

// sessionKey names one output file: the agent (its service.name) and the
// agent's session id.
type sessionKey struct {
	agent   string
	session string
}

// session is what the exporter remembers of one session between batches.
type session struct {
	key sessionKey
	// next is the sequence number of the next line (formats that number
	// their lines).
	next int64
	// resumed is set when the session's file already held lines when the
	// session was first seen by this process (a restart, or a session that
	// went idle and came back).
	resumed bool
	// ended is set once the session went idle and its closing lines (if the
	// format has any) were written. A later event opens it again.
	ended bool
	// newest is the newest event timestamp, arrived the wall-clock time the
	// last event arrived: both decide when the session is idle.
	newest  time.Time
	arrived time.Time
	// last is the timestamp of the session's latest event, for events that
	// carry none.
	last time.Time
	// pending holds the events that came before any event of the session
	// with a timestamp.
	pending []decoded
	// threads is, per thread of the session (threadOf), the highest
	// Sequence of an event written or held in pending: an event at or below
	// it was handled before (a batch delivered again) and is skipped.
	threads map[string]int64
	// unplaced are the ids of the events without a Sequence handled, in
	// the order they came.
	unplaced []string
	// state is the format's own state of the session.
	state any
}

// decoded is an event with the time the receiver read its record.
type decoded struct {
	ev       agentevent.Event
	observed time.Time
}

// logsFormat turns the agent events of a session into lines.
type logsFormat interface {
	// begin starts the session's state when this process first sees the
	// session; last is the last line of its file, nil when there is none.
	begin(s *session, last []byte)
	// event writes the lines of one event.
	event(s *session, ev *agentevent.Event, out *lineBuffer)
	// end writes the lines that close a session that went idle.
	end(s *session, out *lineBuffer)
	// closes reports whether the format writes closing lines; only then are
	// the sessions a previous run left open picked up at start.
	closes() bool
	// lineTime is the time of a line the format wrote (zero if unknown).
	lineTime(line []byte) time.Time
}

// lineBuffer collects the encoded lines of one session.
type lineBuffer struct {
	lines [][]byte
	err   error
}

func (b *lineBuffer) add(v any) {
	line, err := marshal(v)
	if err != nil {
		if b.err == nil {
			b.err = err
		}
		return
	}
	b.lines = append(b.lines, line)
}

func (b *lineBuffer) reset() {
	b.lines = b.lines[:0]
	b.err = nil
}

// marshal encodes v as one line of JSON, without escaping <, > and & (text
// from agent logs is full of them). It is encoding/json rather than the
// goccy/go-json the house prefers: goccy's encoder corrupted the heap under
// Go 1.26 in this package's tests ("found bad pointer in Go heap").
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// timeLayout is RFC 3339 in UTC with milliseconds, as the seeds' examples
// ("2025-11-26T12:51:28.093Z").
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// hashHex is the hex sha256 of the parts, NUL-separated.
func hashHex(parts ...string) string {
	h := sha256.New()
	for i, p := range parts {
		if i > 0 {
			h.Write([]byte{0})
		}
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// nullable is nil for "", else a pointer to s: the seeds' "string | null".
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// rawJSON is the vendor record as a JSON value: the record itself when it is
// valid JSON (every agent writes JSON), else the bytes as a JSON string.
func rawJSON(b []byte) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	if jsonx.Valid(b) {
		return json.RawMessage(b)
	}
	s, _ := json.Marshal(strings.ToValidUTF8(string(b), "\uFFFD"))
	return s
}

// nullJSON is a JSON null, for fields that must be present.
var nullJSON = json.RawMessage("null")

// attrString reads a string fact from an event's vendor attributes.
func attrString(ev *agentevent.Event, key string) string {
	if v, ok := ev.Attributes[key].(string); ok {
		return v
	}
	return ""
}

// attrInt reads an integer fact from an event's vendor attributes.
func attrInt(ev *agentevent.Event, key string) (int64, bool) {
	switch v := ev.Attributes[key].(type) {
	case int64:
		return v, true
	case int:
		return int64(v), true
	case float64:
		return int64(v), true
	}
	return 0, false
}

// isErrorEvent reports whether an event reports a failure of the agent
// itself (an API error, a retried call, a failing hook) rather than of a tool.
func isErrorEvent(ev *agentevent.Event) bool {
	return ev.ErrorType != "" && ev.Type != agentevent.TypeToolCall && ev.Type != agentevent.TypeToolResult
}
