// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package vendortest // import "github.com/agentotel/agentotel/internal/vendors/vendortest"

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// Stripped is what the receiver emits of events without include_content and
// include_raw: agentevent.StripContent, no Raw. An attribute map left empty
// by the strip counts as none.
func Stripped(events []agentevent.Event) []agentevent.Event {
	out := make([]agentevent.Event, len(events))
	for i, ev := range events {
		if ev.Attributes != nil {
			attrs := make(map[string]any, len(ev.Attributes))
			for k, v := range ev.Attributes {
				attrs[k] = v
			}
			ev.Attributes = attrs
		}
		agentevent.StripContent(&ev)
		ev.Raw = nil
		if len(ev.Attributes) == 0 {
			ev.Attributes = nil
		}
		out[i] = ev
	}
	return out
}

// RequireLeanParse checks a parser option that skips content against the
// full parser: for every file, parse(lean) == Stripped(parse(full)). parse
// maps one file (relative to dir) with or without the option. It fails when
// the files yield no event at all (nothing was compared).
func RequireLeanParse(t *testing.T, files []string, parse func(t *testing.T, rel string, lean bool) []agentevent.Event) {
	t.Helper()
	n := 0
	for _, rel := range files {
		full := Stripped(parse(t, rel, false))
		lean := Stripped(parse(t, rel, true)) // Stripped only normalizes empty attribute maps here
		require.Equal(t, len(full), len(lean), "%s: event count", rel)
		n += len(full)
		for i := range full {
			require.Equal(t, full[i], lean[i], "%s: event %d (line %d)", rel, i, full[i].LogLine)
		}
	}
	require.NotZero(t, n, "no events compared")
	t.Logf("%d files, %d events: the same without content", len(files), n)
}

// Files lists the files below dir whose name ends with suffix, relative to
// dir and sorted; none when dir does not exist.
func Files(t testing.TB, dir, suffix string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, suffix) {
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return err
			}
			files = append(files, rel)
		}
		return nil
	})
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	slices.Sort(files)
	return files
}
