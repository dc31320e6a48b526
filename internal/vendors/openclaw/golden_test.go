// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package openclaw

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/pi"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

var update = flag.Bool("update", false, "regenerate testdata/openclaw/*/events.yaml")

// TestGoldenEvents: every case of testdata/openclaw maps to its
// events.yaml (-update regenerates). A case holds its transcripts laid out
// as a state directory's agents/<agent>/sessions/; the case "openclaw_corpus" is the
// fixture corpus (testdata/corpus/openclaw), read in place.
func TestGoldenEvents(t *testing.T) {
	vendortest.GoldenEvents(t, "openclaw", *update, func(t *testing.T, dir string) []agentevent.Event {
		if filepath.Base(dir) == "openclaw_corpus" {
			dir = corpusDir(t)
		}
		var events []agentevent.Event
		for _, rel := range transcripts(t, dir) {
			events = append(events, parseFile(t, dir, rel, pi.Options{})...)
		}
		return events
	}, nil)
}
