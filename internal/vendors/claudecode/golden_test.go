// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

var update = flag.Bool("update", false, "regenerate testdata/claude_code/*/events.yaml")

// goldenCases are the directories of testdata/claude_code. Each holds the
// session file(s) of one case laid out as on disk and events.yaml, the
// expected agentevent.EncodeLogs of their events (Raw cleared).
func goldenCases(t *testing.T) (root string, cases []string) {
	root = filepath.Join(repoRoot(t), "testdata", "claude_code")
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

// TestGoldenEvents: every case of testdata/claude_code maps to its events.yaml
// (-update regenerates), which satisfies the spec's invariants.
func TestGoldenEvents(t *testing.T) {
	vendortest.GoldenEvents(t, "claude_code", *update, func(t *testing.T, dir string) []agentevent.Event { return parseDir(t, dir) }, nil)
}
