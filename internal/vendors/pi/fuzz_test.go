// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package pi

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// FuzzParse feeds arbitrary lines after a v3 header: Parse never panics and
// every event it returns is normalized and carries an id and the line.
func FuzzParse(f *testing.F) {
	root := filepath.Join(repoRoot(f), "testdata", "pi")
	for _, rel := range sessionFiles(f, root) {
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range splitLines(data) {
			if len(l.Data) < 4096 {
				f.Add(string(l.Data))
			}
		}
	}
	f.Fuzz(func(t *testing.T, line string) {
		p := NewParser(testPath)
		p.Parse([]byte(headerV3), 1, 0)
		evs := p.Parse([]byte(line), 2, int64(len(headerV3)+1))
		for i := range evs {
			ev := &evs[i]
			if ev.SchemaVersion != agentevent.SchemaVersion || ev.Source != Source || ev.EventID == "" {
				t.Fatalf("event %d not normalized: %+v", i, *ev)
			}
			if string(ev.Raw) != line {
				t.Fatalf("event %d: Raw is not the line", i)
			}
		}
		if _, err := p.MarshalState(); err != nil {
			t.Fatal(err)
		}
	})
}
