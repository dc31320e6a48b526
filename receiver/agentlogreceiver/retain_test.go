// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"context"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"weak"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/finder"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/tailer"
)

// TestDeliveredLinesAreNotRetained: once a batch is delivered and
// committed, nothing the receiver keeps (sessions, parser state, held
// events, read positions) nor anything it emitted reaches a line of it.
// The lines are slices of the tailer's read buffer (lineBatcher.take), so a
// reference kept into one pins the whole buffer (up to two batches) for as
// long as the session is tracked, for every file read. (That a line is
// not read after its emit returned is poison_test.go's.) The lines are read from the real corpus by the source's own
// tailer code, parsed, delivered to a sink and committed; weak pointers
// then tell which lines the collector still holds.
func TestDeliveredLinesAreNotRetained(t *testing.T) {
	settings := []struct {
		name string
		set  func(*Config)
	}{
		{"defaults", func(*Config) {}},
		{"include_content", func(c *Config) { c.IncludeContent = true }},
		// Event.Raw is the parser's own copy of the line.
		{"include_raw", func(c *Config) { c.IncludeContent, c.IncludeRaw = true, true }},
	}
	for _, key := range []string{"claude_code", "codex", "pi", "copilot_cli"} {
		for _, st := range settings {
			t.Run(key+"/"+st.name, func(t *testing.T) {
				// The lines to track are real session files: every root's.
				vendortest.EachCorpus(t, key, func(t *testing.T, dir string) {
					assertLinesNotRetained(t, key, dir, st.set)
				})
			})
		}
	}
}

// assertLinesNotRetained reads every JSONL file below dir as agent key's
// source does, then checks that no line read is still reachable.
func assertLinesNotRetained(t *testing.T, key, dir string, set func(*Config)) {
	// The receiver watches an empty directory: its own tailer reads nothing,
	// and the fixtures are read, synchronously, by a tailer of the same
	// settings that hands its batches to the source's emit.
	cfg := onlyAgentConfig(t, key, t.TempDir())
	cfg.IncludeContent = false // onlyAgentConfig's; the defaults otherwise
	set(cfg)
	h := newHarness(t, cfg, nil)
	h.start()
	src := jsonlSourceOf(t, h, key)

	match, err := finder.NewMatcher([]string{filepath.Join(dir, "**", "*.jsonl")}, nil, agentByKey(key).config(cfg).ExcludeOlderThan)
	require.NoError(t, err)
	var (
		mu    sync.Mutex
		lines []weak.Pointer[byte]
	)
	c := tailerConfig(cfg, match)
	c.Store, c.Logger = src, src.Logger
	c.Emit = func(ctx context.Context, b tailer.Batch) error {
		mu.Lock()
		for _, l := range b.Lines {
			// Objects under 16 bytes share blocks of the tiny allocator,
			// which a neighbor keeps alive: no JSONL record is that short.
			if len(l) >= 16 {
				lines = append(lines, weak.Make(&l[0]))
			}
		}
		mu.Unlock()
		return src.Emit(ctx, b)
	}
	tailer.New(c).PollOnce(t.Context())
	require.NotEmpty(t, lines, "no line read below %s", dir)
	require.NotZero(t, h.sink.LogRecordCount(), "nothing delivered from %s", dir)

	runtime.GC()
	runtime.GC()
	alive := 0
	for _, p := range lines {
		if p.Value() != nil {
			alive++
		}
	}
	require.Zero(t, alive, "lines of %d read still reachable after their delivery", len(lines))
	// What was emitted and the source's state (with every session) are kept
	// alive through the check: neither may hold a line.
	runtime.KeepAlive(h.sink)
	runtime.KeepAlive(src)
}
