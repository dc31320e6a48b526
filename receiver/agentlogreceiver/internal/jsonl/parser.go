// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package jsonl

import "github.com/agentotel/agentotel/internal/agents"

// Parser maps the records of one session file to events: the parser an
// agent registers for its appended JSONL files (agents.Reader.NewParser),
// one instance per file path.
type Parser = agents.LineParser

// Flusher is a Parser that holds some events back until the end of the
// file's data. The source calls Flush when a batch ends where the file ends
// (caught up) and the file has not changed for the settle delay; a file
// still being written is flushed once it has settled (see
// Source.flushSettled).
type Flusher = agents.LineFlusher

// ParseOptions tell a Parser what the emitter drops from every event, so
// that the parser need not build it: content without include_content, the
// raw record without include_raw.
type ParseOptions = agents.ParseOptions
