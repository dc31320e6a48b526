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

// FuzzParse feeds arbitrary lines after a session's first records: Parse
// never panics (no parser_error, which is a recovered panic), every event
// is normalized and carries the line as Raw.
func FuzzParse(f *testing.F) {
	root := filepath.Join(repoRoot(f), "testdata", "codex")
	cases, err := os.ReadDir(root)
	require.NoError(f, err)
	for _, c := range cases {
		dir := filepath.Join(root, c.Name())
		for _, name := range caseFilesOf(f, dir) {
			data, err := os.ReadFile(filepath.Join(dir, name))
			require.NoError(f, err)
			for _, l := range splitLines(data) {
				if len(l.Data) < 2048 {
					f.Add(l.Data)
				}
			}
		}
	}
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
	root := filepath.Join(repoRoot(f), "testdata", "codex")
	cases, err := os.ReadDir(root)
	require.NoError(f, err)
	for _, c := range cases {
		dir := filepath.Join(root, c.Name())
		for _, name := range caseFilesOf(f, dir) {
			data, err := os.ReadFile(filepath.Join(dir, name))
			require.NoError(f, err)
			for _, l := range splitLines(data) {
				if len(l.Data) < 2048 {
					f.Add(l.Data)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		full := NewParser("f.jsonl")
		lean := NewParserWithOptions("f.jsonl", Options{OmitContent: true, OmitRaw: true})
		var fullEvents, leanEvents []agentevent.Event
		for _, p := range []*Parser{full, lean} {
			events := p.Parse([]byte(meta), 1, 0)
			for _, l := range splitLines(data) {
				events = append(events, p.Parse(l.Data, l.No+1, l.Offset+int64(len(meta)+1))...)
			}
			if p == full {
				fullEvents = events
			} else {
				leanEvents = events
			}
		}
		require.Equal(t, vendortest.Stripped(fullEvents), vendortest.Stripped(leanEvents))
	})
}
