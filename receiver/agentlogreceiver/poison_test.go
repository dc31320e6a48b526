// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/finder"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/jsonl"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/tailer"
)

// The tailer hands a batch's lines in place, from its read buffer, valid
// until emit returns (tailer.Batch). These tests read real session files
// with a tailer that overwrites the memory of each batch's lines with
// garbage once its emit returned (tailer.Config.Poison), and compare what
// is delivered with what a reader that gives every line memory of its own
// delivers: anything that kept a line past its emit (parser state, events
// held back for a later flush, the source) would read garbage, and the two
// would differ.

// poisonSettings are the settings under which the parsers keep the least
// and the most of a line: neither content nor the raw record, and both.
var poisonSettings = []struct {
	name string
	set  func(*Config)
}{
	{"lean", func(c *Config) { c.IncludeContent, c.IncludeRaw = false, false }},
	{"content_and_raw", func(c *Config) { c.IncludeContent, c.IncludeRaw = true, true }},
}

// TestPoisonedReadBufferDeliversTheSame: every JSONL agent's corpus,
// read with each batch's lines poisoned after its emit, delivers exactly
// what it delivers with every line copied.
func TestPoisonedReadBufferDeliversTheSame(t *testing.T) {
	for _, key := range []string{"claude_code", "codex", "pi", "copilot_cli"} {
		for _, st := range poisonSettings {
			t.Run(key+"/"+st.name, func(t *testing.T) {
				vendortest.EachCorpus(t, key, func(t *testing.T, dir string) {
					copied, _ := readJSONLOnce(t, key, dir, st.set, false)
					poisoned, _ := readJSONLOnce(t, key, dir, st.set, true)
					want := copied.events()
					require.NotEmpty(t, want, "nothing delivered from %s", dir)
					assertSameByFile(t, want, poisoned.events())
				})
			})
		}
	}
}

// TestPoisonedReadBufferHeldEvents: Claude Code sessions cut where the
// parser holds a response's usage back (its rows so far carry no
// stop_reason), and written just now: the read reaches the end while the
// file is being written, so the held events go out only once the file has
// settled (jsonl.Source.flushSettled), long after the emit of their lines
// returned and their memory was poisoned. What goes out equals what a
// reader with copied lines delivers.
func TestPoisonedReadBufferHeldEvents(t *testing.T) {
	a := agentByKey("claude_code")
	vendortest.EachCorpus(t, "claude_code", func(t *testing.T, dir string) {
		cuts := 0
		for _, f := range jsonlFiles(t, dir) {
			rel, err := filepath.Rel(dir, f)
			require.NoError(t, err)
			data, at, ok := cutWhereHeld(t, a, f)
			if !ok {
				continue
			}
			cuts++
			t.Run(rel, func(t *testing.T) {
				// A copy of a real file in the test's temporary directory,
				// removed with it (never under testdata), at the same
				// relative path (it names the session).
				home := t.TempDir()
				path := filepath.Join(home, rel)
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, data, 0o600))
				for _, st := range poisonSettings {
					t.Run(st.name, func(t *testing.T) {
						want := readHeld(t, home, path, at, st.set, false)
						got := readHeld(t, home, path, at, st.set, true)
						assertSameByFile(t, want, got)
					})
				}
			})
		}
		require.NotZero(t, cuts, "no session of %s holds a response's usage back at any line", dir)
	})
}

// cutWhereHeld is the file's data up to the last line after which its
// parser holds events back (the end of a turn whose response's usage is
// not final yet), and the time of the newest record held; ok false when no
// line leaves anything held.
func cutWhereHeld(t *testing.T, a agent, path string) (data []byte, at time.Time, ok bool) {
	t.Helper()
	all, err := os.ReadFile(path)
	require.NoError(t, err)
	p := a.newParser(path, jsonl.ParseOptions{})
	fl := p.(jsonl.Flusher)
	for _, l := range vendortest.SplitLines(all) {
		if l.Offset+int64(len(l.Data)) >= int64(len(all)) {
			break // a last line without "\n" is no line to the tailer
		}
		p.Parse(l.Data, l.No, l.Offset)
		if held, holding := fl.HeldAt(); holding && !held.IsZero() {
			data, at, ok = all[:l.Offset+int64(len(l.Data))+1], held, true
		}
	}
	return data, at, ok
}

// readHeld reads path (below dir; a real session cut mid-turn) as if
// written at the time of its newest held record, with the receiver's clock
// at that time (the file is being written: the held events wait), then
// moves the clock past the settle delay and waits for the flush. It
// returns every event delivered.
func readHeld(t *testing.T, dir, path string, at time.Time, set func(*Config), poisoned bool) []agentevent.Event {
	t.Helper()
	require.NoError(t, os.Chtimes(path, at, at))
	clk := &fakeClock{}
	clk.advance(time.Until(at))
	h, src := readJSONLOnce(t, "claude_code", dir, set, poisoned, withClock(clk.clock()), withSettleDelay(time.Hour))
	require.True(t, src.Pending(path), "read to its end while being written: the held events wait for the file to settle")
	before := len(h.events())
	clk.advance(2 * time.Hour)
	require.Eventually(t, func() bool { return !src.Pending(path) }, 20*time.Second, 5*time.Millisecond,
		"the settled file is flushed")
	all := h.events()
	require.Greater(t, len(all), before, "the flush delivers what was held")
	return all
}

// readJSONLOnce reads every JSONL file below dir, once, as agent key's
// source does, under the receiver's settings (set) and options. poisoned:
// the memory of each batch's lines is overwritten with garbage once its
// emit returned; not: every line is handed in memory of its own, as a
// reader that copies each line would. The harness's sink has what was
// delivered.
func readJSONLOnce(t *testing.T, key, dir string, set func(*Config), poisoned bool, opts ...option) (*harness, *jsonl.Source) {
	t.Helper()
	// The receiver watches an empty directory: its own tailer reads nothing,
	// and dir is read, synchronously, by a tailer of the same settings that
	// hands its batches to the source's emit.
	cfg := onlyAgentConfig(t, key, t.TempDir())
	set(cfg)
	h := newHarness(t, cfg, nil, opts...)
	h.start()
	src := jsonlSourceOf(t, h, key)
	match, err := finder.NewMatcher([]string{filepath.Join(dir, "**", "*.jsonl")}, nil, agentByKey(key).config(cfg).ExcludeOlderThan)
	require.NoError(t, err)
	c := tailerConfig(cfg, match)
	c.Store, c.Logger, c.Poison = src, src.Logger, poisoned
	c.Emit = src.Emit
	if !poisoned {
		c.Emit = func(ctx context.Context, b tailer.Batch) error {
			for i, l := range b.Lines {
				if l != nil {
					b.Lines[i] = bytes.Clone(l)
				}
			}
			return src.Emit(ctx, b)
		}
	}
	tailer.New(c).PollOnce(t.Context())
	return h, src
}

// assertSameByFile: got has the events of want, file by file, in the
// same order (files are read in parallel: only each file's order is
// fixed).
func assertSameByFile(t *testing.T, want, got []agentevent.Event) {
	t.Helper()
	byFile := func(evs []agentevent.Event) map[string][]agentevent.Event {
		out := map[string][]agentevent.Event{}
		for i := range evs {
			out[evs[i].LogFile] = append(out[evs[i].LogFile], evs[i])
		}
		return out
	}
	w, g := byFile(want), byFile(got)
	require.ElementsMatch(t, slices.Collect(maps.Keys(w)), slices.Collect(maps.Keys(g)), "the files events came from")
	for f, evs := range w {
		assert.Equal(t, evs, g[f], "events of %s", f)
	}
}
