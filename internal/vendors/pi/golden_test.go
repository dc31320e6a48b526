// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package pi

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

var update = flag.Bool("update", false, "regenerate testdata/pi/*/events.yaml")

// goldenCases are the directories of testdata/pi. Each holds the
// session file(s) of one case laid out as on disk and events.yaml, the
// expected agentevent.EncodeLogs of their events (Raw cleared).
func goldenCases(t *testing.T) (root string, cases []string) {
	root = filepath.Join(repoRoot(t), "testdata", "pi")
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	for _, e := range entries {
		if e.IsDir() {
			cases = append(cases, e.Name())
		}
	}
	require.NotEmpty(t, cases)
	return root, cases
}

func TestGoldenEvents(t *testing.T) {
	root, cases := goldenCases(t)
	for _, name := range cases {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(root, name)
			events := parseDir(t, dir)
			require.NotEmpty(t, events)
			for i := range events {
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
			require.NoError(t, err, "run `go test ./internal/vendors/pi -run TestGoldenEvents -update` to create it")
			require.NoError(t, plogtest.CompareLogs(expected, actual))

			// The golden files are what the connector's tests start from:
			// they must satisfy the spec's invariants themselves.
			decoded, skipped := agentevent.DecodeLogs(expected)
			require.Zero(t, skipped)
			require.Len(t, decoded, len(events))
			require.Empty(t, agentevent.Validate(decoded).Violations)
		})
	}
}

// sortAttributes puts every record's attributes in key order. Comparison
// ignores attribute order; sorting keeps a regenerated golden file free of
// churn (Event.Attributes is a map).
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
