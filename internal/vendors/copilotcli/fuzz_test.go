// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package copilotcli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

const startLine = `{"type":"session.start","data":{"sessionId":"s-1","copilotVersion":"1.0.10","context":{"cwd":"/w"}},"id":"r-1","timestamp":"2026-03-20T20:37:18.960Z","parentId":null}`

// FuzzParse feeds arbitrary lines after a session's first record: Parse
// never panics (no parser_error, which is a recovered panic), every event
// is normalized and carries the line as Raw.
func FuzzParse(f *testing.F) {
	jsonl, _ := sessionFiles(f, filepath.Join(repoRoot(f), "testdata", "copilot_cli"))
	vendortest.AddLines(f, jsonl, 4096)
	f.Fuzz(func(t *testing.T, line []byte) {
		p := NewParser("session-state/s-1/events.jsonl")
		p.Parse([]byte(startLine), 1, 0)
		vendortest.RequireSoundEvents(t, line, p.Parse(line, 2, int64(len(startLine)+1)))
	})
}

// FuzzHistory: any bytes either fail to decode with a *DecodeError or map
// to valid events; never a panic.
func FuzzHistory(f *testing.F) {
	_, history := sessionFiles(f, filepath.Join(repoRoot(f), "testdata", "copilot_cli"))
	for _, path := range history {
		data, err := os.ReadFile(path)
		require.NoError(f, err)
		f.Add(data)
	}
	f.Add([]byte(`{"sessionId":"s","timeline":[{"type":"tool_call_completed","result":"x"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := DecodeHistory(data)
		if err != nil {
			var de *DecodeError
			require.ErrorAs(t, err, &de)
			return
		}
		r := MapHistory(HistoryContext{LogFile: "h.json"}, h, nil)
		for i := range r.Events {
			ev := &r.Events[i]
			require.Contains(t, agentevent.AllowedRoles(ev.Type), ev.Role)
			require.NotEmpty(t, ev.EventID)
		}
	})
}
