// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package opencode

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

var update = flag.Bool("update", false, "regenerate testdata/opencode/*/events.yaml")

// caseEvents maps one directory of testdata/opencode: a storage tree
// (storage/) or a server API dump (messages.json).
func caseEvents(t *testing.T, dir string) []agentevent.Event {
	if _, err := os.Stat(filepath.Join(dir, "storage")); err == nil {
		return mapTree(t, dir)
	}
	return mapAPI(t, filepath.Join(dir, "messages.json"), "messages.json")
}

func TestGoldenEvents(t *testing.T) {
	root := filepath.Join(repoRoot(t), "testdata", "opencode")
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
			events := caseEvents(t, dir)
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
			require.NoError(t, err, "run `go test ./internal/vendors/opencode -run TestGoldenEvents -update` to create it")
			require.NoError(t, plogtest.CompareLogs(expected, actual))

			// The connector's golden trace tests start from these files.
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
