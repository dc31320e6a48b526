// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/tests/testenv"
)

// parseBoth parses the lines with the in-place decoder and with the typed
// one only, with or without content, and returns both parsers' events.
func parseBoth(lines []vendortest.Line, omitContent bool) (scanned, typed []agentevent.Event, scanState, typedState []byte) {
	opts := Options{OmitContent: omitContent}
	ps, pt := NewParserWithOptions("f.jsonl", opts), NewParserWithOptions("f.jsonl", opts)
	pt.typedOnly = true
	for _, l := range lines {
		scanned = append(scanned, ps.Parse(l.Data, l.No, l.Offset)...)
		typed = append(typed, pt.Parse(l.Data, l.No, l.Offset)...)
	}
	scanState, _ = ps.MarshalState()
	typedState, _ = pt.MarshalState()
	return scanned, typed, scanState, typedState
}

// requireSameEvents: with content the events are the typed decoder's, byte
// for byte; without, they are once stripped as the receiver strips them
// (the in-place decoder leaves content it would drop unread).
func requireSameEvents(t *testing.T, name string, lines []vendortest.Line) int {
	t.Helper()
	n := 0
	for _, omit := range []bool{false, true} {
		scanned, typed, ss, ts := parseBoth(lines, omit)
		if omit {
			scanned, typed = vendortest.Stripped(scanned), vendortest.Stripped(typed)
		}
		require.Len(t, scanned, len(typed), "%s (omit content %v): event count", name, omit)
		for i := range typed {
			require.Equal(t, typed[i], scanned[i], "%s (omit content %v): event %d (line %d)", name, omit, i, typed[i].LogLine)
		}
		require.JSONEq(t, string(ts), string(ss), "%s (omit content %v): state", name, omit)
		n += len(typed)
	}
	return n
}

// TestScanMatchesTyped: over every Codex line of the fixture corpus and of
// the golden cases, the in-place decoder yields the typed decoder's events,
// and it takes every response_item and event_msg line the typed one-pass
// decoder takes (it leaves none of the real lines to it).
func TestScanMatchesTyped(t *testing.T) {
	var paths []string
	for _, dir := range testenv.FixturePaths(t, "codex") {
		for _, name := range vendortest.Files(t, dir, ".jsonl") {
			paths = append(paths, filepath.Join(dir, name))
		}
	}
	if len(paths) == 0 {
		t.Skip("no Codex corpus")
	}
	root := filepath.Join(repoRoot(t), "testdata", "codex")
	for _, name := range vendortest.Files(t, root, ".jsonl") {
		paths = append(paths, filepath.Join(root, name))
	}
	events, fast, longOutputs := 0, 0, 0
	for _, path := range paths {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		lines := splitLines(data)
		events += requireSameEvents(t, path, lines)
		p := NewParserWithOptions("f.jsonl", Options{OmitContent: true})
		for _, l := range lines {
			typed, typedOK := decodeFast(l.Data)
			scanned, ok := p.scanLine(l.Data)
			require.Equal(t, typedOK, ok, "%s line %d: taken by the typed decoder, not in place", path, l.No)
			if ok {
				fast++
				if len(typed.item.output) > headRaw {
					longOutputs++
				}
				require.Equal(t, typed.Type, scanned.Type)
				require.Equal(t, typed.msg.Info, scanned.msg.Info, "%s line %d", path, l.No)
			}
		}
	}
	require.NotZero(t, fast)
	require.NotZero(t, longOutputs, "no output long enough to be read by its head")
	t.Logf("%d files, %d response_item/event_msg lines (%d tool outputs longer than a head), %d events: the same", len(paths), fast, longOutputs, events)
}

// FuzzScanMatchesTyped: on mutated real lines (one or several records after
// a session_meta), the in-place decoder yields the typed decoder's events,
// with and without content.
func FuzzScanMatchesTyped(f *testing.F) {
	var paths []string
	for _, dir := range testenv.FixturePaths(f, "codex") {
		for _, name := range vendortest.Files(f, dir, ".jsonl") {
			paths = append(paths, filepath.Join(dir, name))
		}
	}
	root := filepath.Join(repoRoot(f), "testdata", "codex")
	for _, name := range vendortest.Files(f, root, ".jsonl") {
		paths = append(paths, filepath.Join(root, name))
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		require.NoError(f, err)
		lines := splitLines(data)
		for i, l := range lines {
			if len(l.Data) < 16<<10 {
				f.Add(l.Data)
			}
			// A call and the lines after it: its output, its *_end event.
			if i+3 <= len(lines) {
				end := lines[i+2].Offset + int64(len(lines[i+2].Data))
				if w := data[l.Offset:end]; len(w) < 32<<10 {
					f.Add(w)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := []vendortest.Line{{Data: []byte(meta), No: 1}}
		for _, l := range splitLines(data) {
			lines = append(lines, vendortest.Line{Data: l.Data, No: l.No + 1, Offset: l.Offset + int64(len(meta)+1)})
		}
		requireSameEvents(t, "fuzz", lines)
	})
}
