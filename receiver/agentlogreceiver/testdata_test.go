// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/jsonl"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/metadatatest"
)

// repoRoot is the directory holding go.mod.
func repoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := filepath.Abs(".")
	require.NoError(tb, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(tb, dir, parent, "no go.mod above the test directory")
		dir = parent
	}
}

// jsonlFiles lists the .jsonl files below dir, sorted.
func jsonlFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		if !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return nil
	}))
	sort.Strings(files)
	return files
}

// parseDirect is the reference: the agent's parser run over the file's
// complete lines in order, the way a careful reader would.
func parseDirect(t *testing.T, a agent, path string) []agentevent.Event {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	p := a.newParser(path, jsonl.ParseOptions{})
	var out []agentevent.Event
	var offset, lineNo int64
	for {
		i := bytes.IndexByte(data[offset:], '\n')
		if i < 0 {
			if fl, ok := p.(jsonl.Flusher); ok && offset == int64(len(data)) {
				// The reader reached the end of the file's data.
				out = append(out, fl.Flush()...)
			}
			return out
		}
		lineNo++
		out = append(out, p.Parse(data[offset:offset+int64(i)], lineNo, offset)...)
		offset += int64(i) + 1
	}
}

// roundTrip passes events through the log-record encoding, as the sink sees them.
func roundTrip(t *testing.T, evs []agentevent.Event) []agentevent.Event {
	t.Helper()
	if len(evs) == 0 {
		return nil
	}
	out, skipped := agentevent.DecodeLogs(agentevent.EncodeLogs(evs, ""))
	require.Zero(t, skipped)
	return out
}

// assertReadsLikeParser runs the receiver over the transcripts below the
// given directories, read in place, and checks that every file yields
// exactly what parsing it directly yields: the same events, in order, with
// the same ids, line numbers and offsets-derived ids; bad records counted,
// not emitted. It returns the number of events.
func assertReadsLikeParser(t *testing.T, dirs ...string) int {
	t.Helper()
	a := agentByKey("claude_code")
	want := map[string][]agentevent.Event{}
	total, unparsed := 0, map[string]int64{}
	for _, dir := range dirs {
		for _, f := range jsonlFiles(t, dir) {
			evs := parseDirect(t, a, f)
			for i := range evs {
				ev := &evs[i]
				if ev.Unparsed != "" {
					unparsed[ev.Unparsed]++
					continue
				}
				ev.Raw = nil
				if withoutContent {
					agentevent.StripContent(ev)
				}
				want[f] = append(want[f], *ev)
				total++
			}
		}
	}
	require.NotZero(t, total, "no events in %v", dirs)

	barriers := t.TempDir() // the transcripts are read in place; nothing is written next to them
	cfg := createDefaultConfig().(*Config)
	cfg.PollInterval = 10 * time.Millisecond
	cfg.IncludeContent = !withoutContent
	for _, dir := range append(dirs, barriers) {
		cfg.ClaudeCode.Include = append(cfg.ClaudeCode.Include, filepath.Join(dir, "**", "*.jsonl"))
	}
	h := newHarness(t, cfg, nil)
	h.start()
	require.Eventually(t, func() bool { return len(h.events()) >= total }, 30*time.Second, 10*time.Millisecond,
		"waiting for %d events", total)
	h.barrier(barriers)

	for f, evs := range want {
		assert.Equal(t, roundTrip(t, evs), h.eventsOf(f), "events of %s", f)
	}
	if len(unparsed) == 0 {
		assertNoUnparsed(t, h)
	} else {
		assertUnparsed(t, h, unparsed)
	}
	metadatatest.AssertEqualAgentLogEventsEmitted(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: agentSet(""), Value: int64(total) + h.barriers},
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())

	// Resources and event names.
	for _, l := range h.sink.AllLogs() {
		for i := 0; i < l.ResourceLogs().Len(); i++ {
			rl := l.ResourceLogs().At(i)
			assert.Equal(t, "claude-code", rl.Resource().Attributes().AsRaw()["service.name"])
			version, hasVersion := rl.Resource().Attributes().Get("service.version")
			lrs := rl.ScopeLogs().At(0).LogRecords()
			for j := 0; j < lrs.Len(); j++ {
				ev, err := agentevent.Decode(lrs.At(j))
				require.NoError(t, err)
				assert.Equal(t, "agent."+string(ev.Type), lrs.At(j).EventName())
				if assert.Equal(t, ev.AgentVersion != "", hasVersion, "service.version when the record has a version") && hasVersion {
					assert.Equal(t, ev.AgentVersion, version.Str(), "service.version is the CLI version of the record")
				}
			}
		}
	}
	return total
}

func TestReadsClaudeTestdata(t *testing.T) {
	// This package's testdata and the parser's golden cases (MIT/Apache
	// fixtures and hand-written edge cases), both committed.
	dirs := []string{filepath.Join("testdata", "claude_code"), filepath.Join(repoRoot(t), "testdata", "claude_code")}
	n := assertReadsLikeParser(t, dirs...)
	t.Logf("%d events from %v", n, dirs)
}

// TestReadsClaudeFixtureCorpus reads the real-world corpus in place: the
// claude_code folder of every root (testenv.FixtureRoots).
func TestReadsClaudeFixtureCorpus(t *testing.T) {
	vendortest.EachCorpus(t, "claude_code", func(t *testing.T, dir string) {
		n := assertReadsLikeParser(t, dir)
		t.Logf("%d events from %s", n, dir)
	})
}

// withoutContent, set by a test, reads with include_content off (the parsers'
// in-place decode) and expects the parsed events with their content
// stripped.
var withoutContent bool

// TestReadsFixtureCorpusWithoutContent is the corpus tests of the JSONL
// agents with include_content off, as the receiver reads by default.
func TestReadsFixtureCorpusWithoutContent(t *testing.T) {
	withoutContent = true
	t.Cleanup(func() { withoutContent = false })
	vendortest.EachCorpus(t, "claude_code", func(t *testing.T, dir string) {
		assertReadsLikeParser(t, dir)
	})
	for _, key := range []string{"pi", "codex"} {
		t.Run(key, func(t *testing.T) {
			vendortest.EachCorpus(t, key, func(t *testing.T, dir string) {
				assertReadsLikeItsParser(t, key, dir)
			})
		})
	}
}
