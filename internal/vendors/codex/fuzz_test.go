// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// addCaseLines seeds f with every line shorter than 2 KiB of the golden
// cases' files.
func addCaseLines(f *testing.F) {
	root := filepath.Join(repoRoot(f), "testdata", "codex")
	cases, err := os.ReadDir(root)
	require.NoError(f, err)
	var paths []string
	for _, c := range cases {
		dir := filepath.Join(root, c.Name())
		for _, name := range caseFilesOf(f, dir) {
			paths = append(paths, filepath.Join(dir, name))
		}
	}
	vendortest.AddLines(f, paths, 2048)
}

// FuzzParse feeds arbitrary lines after a session's first records: Parse
// never panics (no parser_error, which is a recovered panic), every event
// is normalized and carries the line as Raw.
func FuzzParse(f *testing.F) {
	addCaseLines(f)
	f.Fuzz(func(t *testing.T, line []byte) {
		p := NewParser("f.jsonl")
		p.Parse([]byte(meta), 1, 0)
		vendortest.RequireSoundEvents(t, line, p.Parse(line, 2, int64(len(meta)+1)))
	})
}

// FuzzOmitContent feeds arbitrary lines after a session's first records to
// a full parser and to one without content and raw records: the latter's
// events are always the former's, stripped.
func FuzzOmitContent(f *testing.F) {
	addCaseLines(f)
	vendortest.FuzzLeanParse(f, func(data []byte, lean bool) []agentevent.Event {
		p := NewParserWithOptions("f.jsonl", Options{OmitContent: lean, OmitRaw: lean})
		events := p.Parse([]byte(meta), 1, 0)
		for _, l := range splitLines(data) {
			events = append(events, p.Parse(l.Data, l.No+1, l.Offset+int64(len(meta)+1))...)
		}
		return events
	})
}
