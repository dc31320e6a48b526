// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package pi

import (
	"flag"
	"testing"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

var update = flag.Bool("update", false, "regenerate testdata/pi/*/events.yaml")

// TestGoldenEvents: every case of testdata/pi maps to its events.yaml
// (-update regenerates), which satisfies the spec's invariants.
func TestGoldenEvents(t *testing.T) {
	vendortest.GoldenEvents(t, "pi", *update, func(t *testing.T, dir string) []agentevent.Event { return parseDir(t, dir) }, nil)
}
