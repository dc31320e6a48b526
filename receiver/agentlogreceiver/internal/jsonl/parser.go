// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package jsonl

import (
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// Parser maps the records of one session file to events. It is what every
// internal/vendors package of an agent with JSONL files provides, one
// instance per file path.
type Parser interface {
	// Parse maps one line (without its "\n"); lineNo is 1-based, offset is
	// the byte offset of the line's start. Records at or before the last
	// offset parsed (after UnmarshalState) yield nothing. The line is the
	// tailer's read buffer, valid until the batch is delivered
	// (tailer.Batch): the events returned may share its memory, but what
	// the parser keeps past the call (its state, events held back for
	// Flush) is copied.
	Parse(line []byte, lineNo, offset int64) []agentevent.Event
	MarshalState() ([]byte, error)
	UnmarshalState(b []byte) error
}

// Flusher is a Parser that holds some events back until the end of the
// file's data (Claude Code: the usage of a response whose last row has no
// stop_reason, the rows of a /btw side-question file). The source calls
// Flush when a batch ends where the file ends (caught up) and the file has
// not changed for the settle delay; a file still being written is flushed
// once it has settled (see Source.flushSettled), so what comes out depends
// on the file's content, never on when the reader caught up.
type Flusher interface {
	Flush() []agentevent.Event
	// HeldAt tells whether anything is held and the time of the newest
	// record it comes from (zero when unknown).
	HeldAt() (at time.Time, holding bool)
}

// ParseOptions tell a Parser what the emitter drops from every event, so
// that the parser need not build it: content without include_content, the
// raw record without include_raw. A parser given them yields the events it
// would otherwise, less what is dropped.
type ParseOptions struct {
	OmitContent, OmitRaw bool
}
