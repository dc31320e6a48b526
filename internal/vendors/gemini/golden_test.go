// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package gemini

import (
	"flag"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

var update = flag.Bool("update", false, "regenerate testdata/gemini/*/events.yaml")

// TestGoldenEvents: every case of testdata/gemini maps to its events.yaml
// (-update regenerates), which satisfies the spec's invariants.
func TestGoldenEvents(t *testing.T) {
	vendortest.GoldenEvents(t, "gemini", *update, func(t *testing.T, dir string) []agentevent.Event {
		events := mapDir(t, dir)
		for _, ev := range events {
			require.Empty(t, ev.Unparsed, "event %s", ev.EventID)
		}
		return events
	}, func(t *testing.T, r agentevent.Report) {
		require.Empty(t, r.OpenToolCalls, "every tool call of a case is answered")
	})
}
