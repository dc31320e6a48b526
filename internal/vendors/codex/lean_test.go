// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"testing"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// parseLean feeds every line of data to a parser for name, made with or
// without content and raw records.
func parseLean(name string, data []byte, lean bool) []agentevent.Event {
	p := NewParserWithOptions(name, Options{OmitContent: lean, OmitRaw: lean})
	var events []agentevent.Event
	for _, l := range splitLines(data) {
		events = append(events, p.Parse(l.Data, l.No, l.Offset)...)
	}
	return events
}

// TestOmitContent: without content and raw records, every golden case and
// every corpus file maps to the events the full parser gives, stripped the
// way the receiver strips them (facts read from content included).
func TestOmitContent(t *testing.T) {
	vendortest.TestOmitContent(t, "codex", caseFiles, parseLean)
}
