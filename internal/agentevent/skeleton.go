// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentevent

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The parser skeleton: what every line-oriented parser in
// internal/vendors shares, so that a parser keeps only what is
// vendor-specific — the reasons a record is unparsed, where a parser is in
// its file, the turn and sequence of a thread, the bounded table of tool
// calls waiting for their result, the recovery of a record whose mapping
// failed, and a versioned state.

// Why a record could not be mapped (Event.Unparsed). Parsers may add
// reasons of their own.
const (
	// ReasonMalformedJSON: the record is not JSON (e.g. cut mid-write).
	ReasonMalformedJSON = "malformed_json"
	// ReasonUnknownType: a record type (or role, item kind) the parser does
	// not know.
	ReasonUnknownType = "unknown_type"
	// ReasonUnexpectedShape: JSON of a known type whose fields do not have
	// the expected shape.
	ReasonUnexpectedShape = "unexpected_shape"
	// ReasonParserError: the mapping failed on an internal error; the
	// record is kept rather than lost.
	ReasonParserError = "parser_error"
)

// AttrUnparsedDetail is the attribute of an unparsed event saying what was
// wrong with the record.
const AttrUnparsedDetail = "agent.unparsed.detail"

// Cursor is where a parser is in its file and in the thread it maps: the
// last record parsed, the last sequence number given, and the prompt that
// opened the current turn. Embedded in a parser's state, it serializes as
// last_offset, sequence and prompt.
type Cursor struct {
	LastOffset int64  `json:"last_offset"`
	Sequence   int64  `json:"sequence"`
	Prompt     string `json:"prompt,omitempty"`
}

// NewCursor is the cursor of a file not read yet.
func NewCursor() Cursor { return Cursor{LastOffset: -1} }

// Admit reports whether the record at offset is new, and moves past it. A
// record at or before the last one parsed (a replay after a restart) is
// not: the parser drops it.
func (c *Cursor) Admit(offset int64) bool {
	if offset <= c.LastOffset {
		return false
	}
	c.LastOffset = offset
	return true
}

// Chain gives an event its place in the thread: the next sequence number,
// and the turn's prompt as parent. A user message opens a turn: it has no
// parent and becomes the prompt of what follows.
func (c *Cursor) Chain(ev *Event) {
	if ev.Type == TypeUserMessage {
		ev.ParentEventID = ""
		c.Prompt = strings.Clone(ev.EventID) // not a view into the record
	} else {
		ev.ParentEventID = c.Prompt
	}
	c.Sequence++
	ev.Sequence = c.Sequence
}

// ChainIn is Chain for a file that holds several threads (a session and
// its subagents): prompts holds the prompt of each thread, by the
// parser's thread key; the sequence is the file's.
func (c *Cursor) ChainIn(ev *Event, prompts map[string]string, thread string) {
	if ev.Type == TypeUserMessage {
		ev.ParentEventID = ""
		prompts[thread] = strings.Clone(ev.EventID)
	} else {
		ev.ParentEventID = prompts[thread]
	}
	c.Sequence++
	ev.Sequence = c.Sequence
}

// Ordered is a tool call waiting for its result that knows when it was
// opened (its place in the parser's call numbering).
type Ordered interface {
	Order() int64
}

// AddOpenCall records a call waiting for its result under id and, while
// more than limit are open, forgets the one opened first (its result then
// maps without what the call said). It returns the id forgotten, if any.
func AddOpenCall[T Ordered](calls map[string]T, id string, call T, limit int) (forgotten string) {
	calls[id] = call
	for len(calls) > limit {
		// A found flag, not oldest == "": a call may have the empty id. Ties
		// go to the smaller id, so that eviction does not depend on the
		// map's iteration order.
		oldest, order, found := "", int64(0), false
		for k, v := range calls {
			if !found || v.Order() < order || (v.Order() == order && k < oldest) {
				oldest, order, found = k, v.Order(), true
			}
		}
		delete(calls, oldest)
		forgotten = oldest
	}
	return forgotten
}

// DecodeFailure says why a record that did not decode into the parser's
// types is unparsed: malformed JSON, or JSON of an unexpected shape.
func DecodeFailure(record []byte, err error) (reason, detail string) {
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) || !json.Valid(record) {
		return ReasonMalformedJSON, err.Error()
	}
	return ReasonUnexpectedShape, err.Error()
}

// NotAnObject says why a record that is not a JSON object is unparsed.
func NotAnObject(record []byte) (reason, detail string) {
	if json.Valid(record) {
		return ReasonUnexpectedShape, "record is not a JSON object"
	}
	return ReasonMalformedJSON, "record is not JSON"
}

// RecoverRecord, deferred in a parser's Parse, turns a panic while mapping
// one record into that record's unparsed events (ReasonParserError, made
// by unparsed from the panic's text): a bad record never stops a file.
func RecoverRecord(events *[]Event, unparsed func(reason, detail string) []Event) {
	if r := recover(); r != nil {
		*events = unparsed(ReasonParserError, fmt.Sprint(r))
	}
}

// CheckStateVersion is the error of a saved parser state of another
// layout than the parser's (the file then continues with a fresh parser).
func CheckStateVersion(vendor string, got, want int) error {
	if got != want {
		return fmt.Errorf("%s parser state: version %d, want %d", vendor, got, want)
	}
	return nil
}
