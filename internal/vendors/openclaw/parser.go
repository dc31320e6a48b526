// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package openclaw reads OpenClaw's session transcripts. OpenClaw runs its
// agents on Pi's agent core and keeps each session in Pi's session format,
// so its files are mapped by the pi package's parser under OpenClaw's own
// source; what OpenClaw writes beyond Pi (model snapshots, its exec tool,
// the messages it copies into a transcript itself, its archives) is mapped
// there too. README.md holds the facts and the decisions.
package openclaw

import (
	"path/filepath"
	"regexp"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/internal/vendors/pi"
)

// NewParser returns the parser of one OpenClaw file: Pi's, with OpenClaw's
// source; for a file derived from a transcript (see Derived), one that maps
// nothing.
func NewParser(path string, opts pi.Options) agents.LineParser {
	if Derived(filepath.Base(path)) {
		return noParser{}
	}
	opts.Source = Source
	return pi.NewParserWithOptions(path, opts)
}

// checkpointRE matches the twin OpenClaw copies a transcript to before it
// compacts it: <session id>.checkpoint.<uuid>.jsonl.
var checkpointRE = regexp.MustCompile(`(?i)\.checkpoint\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// Derived tells, by its name, a file of a sessions folder that the include
// patterns match but that is derived from a transcript, not one of its
// own: a compaction's checkpoint twin (a byte copy of the transcript as it
// was before: its entries are the transcript's, read there) or a run's
// trajectory sidecar (<session id>.trajectory.jsonl: runtime trace events,
// another format). Either, archived, is still derived.
func Derived(name string) bool {
	stem := name
	if i := strings.Index(stem, ".jsonl"); i > 0 {
		stem = stem[:i]
	}
	return strings.HasSuffix(stem, ".trajectory") || checkpointRE.MatchString(stem)
}

// Transcript tells the name of a session transcript OpenClaw counts: a
// live one (.jsonl) or one archived by a reset or a deletion, and not
// Derived.
func Transcript(name string) bool {
	i := strings.Index(name, ".jsonl")
	if i <= 0 || Derived(name) {
		return false
	}
	rest := name[i+len(".jsonl"):]
	return rest == "" || strings.HasPrefix(rest, ".reset.") || strings.HasPrefix(rest, ".deleted.")
}

// noParser maps nothing: the parser of a file that is no transcript.
type noParser struct{}

func (noParser) Parse([]byte, int64, int64) []agentevent.Event { return nil }
func (noParser) MarshalState() ([]byte, error)                 { return []byte("{}"), nil }
func (noParser) UnmarshalState([]byte) error                   { return nil }
