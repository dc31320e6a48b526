// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package gemini

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentotel/agentotel/internal/agentevent"
)

var update = flag.Bool("update", false, "regenerate testdata/gemini/*/events.yaml")

// TestGoldenEvents maps every directory of testdata/gemini (a ~/.gemini-like
// tree: tmp/<dir>/chats/…, tmp/<dir>/logs.json) to events.yaml; the
// expected events decode and pass agentevent.Validate with no open tool
// call. -update regenerates.
func TestGoldenEvents(t *testing.T) {
	root := filepath.Join(repoRoot(t), "testdata", "gemini")
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	n := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		n++
		t.Run(e.Name(), func(t *testing.T) {
			dir := filepath.Join(root, e.Name())
			events := mapDir(t, dir)
			require.NotEmpty(t, events)
			for i := range events {
				require.Empty(t, events[i].Unparsed, "event %s", events[i].EventID)
				events[i].Raw = nil
			}
			actual := agentevent.EncodeLogs(events, "")
			sortAttributes(actual)
			path := filepath.Join(dir, "events.yaml")
			if *update {
				require.NoError(t, golden.WriteLogsToFile(path, actual))
				t.Logf("wrote %s", path)
			}
			expected, err := golden.ReadLogs(path)
			require.NoError(t, err, "run `go test ./internal/vendors/gemini -run TestGoldenEvents -update` to create it")
			require.NoError(t, plogtest.CompareLogs(expected, actual))

			decoded, skipped := agentevent.DecodeLogs(expected)
			require.Zero(t, skipped)
			require.Len(t, decoded, len(events))
			report := agentevent.Validate(decoded)
			require.Empty(t, report.Violations)
			require.Empty(t, report.OpenToolCalls)
		})
	}
	require.NotZero(t, n)
}

// sortAttributes puts every record's attributes in key order, so that a
// regenerated golden file does not churn (Event.Attributes is a map).
func sortAttributes(logs plog.Logs) {
	for _, rl := range logs.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				attrs := lr.Attributes()
				raw := attrs.AsRaw()
				keys := make([]string, 0, len(raw))
				for k := range raw {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				attrs.Clear()
				for _, k := range keys {
					if err := attrs.PutEmpty(k).FromRaw(raw[k]); err != nil {
						panic(err)
					}
				}
			}
		}
	}
}
