// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
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
		for i, ev := range p.Parse(line, 2, int64(len(meta)+1)) {
			require.NotEqualf(t, ReasonParserError, ev.Unparsed, "event %d: %v", i, ev.Attributes)
			require.Equal(t, agentevent.SchemaVersion, ev.SchemaVersion)
			require.NotEmpty(t, ev.EventID)
			require.True(t, bytes.Equal(line, ev.Raw))
			require.Contains(t, agentevent.AllowedRoles(ev.Type), ev.Role)
		}
	})
}
