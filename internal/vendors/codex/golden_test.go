// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/plogtest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentotel/agentotel/internal/agentevent"
)

var update = flag.Bool("update", false, "regenerate testdata/codex/*/events.yaml")

// caseFiles lists the rollout files of one golden case, sorted: a parent
// rollout sorts before the child rollouts that fork from it when named so.
func caseFiles(t *testing.T, dir string) []string {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var files []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".jsonl") {
			files = append(files, e.Name())
		}
	}
	slices.Sort(files)
	require.NotEmpty(t, files)
	return files
}

func TestGoldenEvents(t *testing.T) {
	root := filepath.Join(repoRoot(t), "testdata", "codex")
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
			var events []agentevent.Event
			for _, f := range caseFiles(t, dir) {
				events = append(events, parseFile(t, dir, f)...)
			}
			require.NotEmpty(t, events)
			for i := range events {
				events[i].Raw = nil
			}
			actual := agentevent.EncodeLogs(events, "")
			sortAttributes(actual)
			path := filepath.Join(dir, "events.yaml")
			if *update {
				require.NoError(t, golden.WriteLogsToFile(path, actual))
			}
			expected, err := golden.ReadLogs(path)
			require.NoError(t, err, "run `go test ./internal/vendors/codex -run TestGoldenEvents -update` to create it")
			require.NoError(t, plogtest.CompareLogs(expected, actual))
			decoded, skipped := agentevent.DecodeLogs(expected)
			require.Zero(t, skipped)
			require.Len(t, decoded, len(events))
			require.Empty(t, agentevent.Validate(decoded).Violations)
		})
	}
	require.NotZero(t, n)
}

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
