// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package opencode

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
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

// TestGoldenEvents: every case of testdata/opencode maps to its events.yaml
// (-update regenerates), which satisfies the spec's invariants.
func TestGoldenEvents(t *testing.T) {
	vendortest.GoldenEvents(t, "opencode", *update, func(t *testing.T, dir string) []agentevent.Event {
		events := caseEvents(t, dir)
		for _, ev := range events {
			require.Empty(t, ev.Unparsed, "event %s", ev.EventID)
		}
		return events
	}, func(t *testing.T, r agentevent.Report) {
		require.Empty(t, r.OpenToolCalls, "every tool call of a case is answered")
	})
}
