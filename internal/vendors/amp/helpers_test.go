// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package amp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

var repoRoot = vendortest.RepoRoot

func decodeFile(tb testing.TB, path string) Thread {
	tb.Helper()
	data, err := os.ReadFile(path)
	require.NoError(tb, err)
	th, err := DecodeThread(data)
	require.NoError(tb, err, path)
	return th
}

// threadFiles lists the T-*.json files of dir, sorted.
func threadFiles(tb testing.TB, dir string) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(tb, err)
	files = slices.DeleteFunc(files, func(f string) bool { return !strings.Contains(filepath.Base(f), "T-") })
	slices.Sort(files)
	return files
}

// mapSnapshots maps the versions of one thread in order, as a reader that
// saw each of them would: one watermark, settled only at the last.
func mapSnapshots(tb testing.TB, name string, paths []string) []agentevent.Event {
	tb.Helper()
	w := Watermark{}
	var events []agentevent.Event
	for i, p := range paths {
		r := MapThread(Context{LogFile: name, Sequence: int64(len(events))}, decodeFile(tb, p), w, i == len(paths)-1)
		events = append(events, r.Events...)
		w.Add(r.Emitted)
	}
	return events
}

// tokenTotals are per-thread totals the way ccusage amp reports them.
type tokenTotals = vendortest.Tokens

var sumTokens = vendortest.SumTokens
