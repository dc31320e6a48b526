// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"flag"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

var update = flag.Bool("update", false, "regenerate testdata/codex/*/events.yaml")

// caseFiles lists the rollout files of one golden case, sorted: a parent
// rollout sorts before the child rollouts that fork from it when named so.
func caseFiles(tb testing.TB, dir string) []string {
	entries, err := os.ReadDir(dir)
	require.NoError(tb, err)
	var files []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".jsonl") {
			files = append(files, e.Name())
		}
	}
	slices.Sort(files)
	require.NotEmpty(tb, files)
	return files
}

// TestGoldenEvents: every case of testdata/codex maps to its events.yaml
// (-update regenerates), which satisfies the spec's invariants.
func TestGoldenEvents(t *testing.T) {
	vendortest.GoldenEvents(t, "codex", *update, func(t *testing.T, dir string) []agentevent.Event {
		var events []agentevent.Event
		for _, f := range caseFiles(t, dir) {
			events = append(events, parseFile(t, dir, f)...)
		}
		return events
	}, nil)
}
