// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package amp

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

var update = flag.Bool("update", false, "regenerate testdata/amp/*/events.yaml")

// TestGoldenEvents: every case of testdata/amp maps to its events.yaml
// (-update regenerates), which satisfies the spec's invariants. A case
// with snapshots/ holds successive versions of one thread file (as the CLI
// rewrote it; named <n>_T-<id>.json) and is mapped version by version with
// one watermark; otherwise each threads/T-*.json is mapped settled.
func TestGoldenEvents(t *testing.T) {
	vendortest.GoldenEvents(t, "amp", *update, caseEvents, nil)
}

func caseEvents(t *testing.T, dir string) []agentevent.Event {
	if snaps := filepath.Join(dir, "snapshots"); exists(snaps) {
		files, err := filepath.Glob(filepath.Join(snaps, "*.json"))
		require.NoError(t, err)
		require.NotEmpty(t, files)
		return mapSnapshots(t, "threads/"+filepath.Base(files[0])[2:], files)
	}
	var events []agentevent.Event
	for _, f := range threadFiles(t, filepath.Join(dir, "threads")) {
		r := MapThread(Context{LogFile: "threads/" + filepath.Base(f)}, decodeFile(t, f), nil, true)
		events = append(events, r.Events...)
	}
	return events
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
