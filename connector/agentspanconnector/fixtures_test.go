// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/internal/vendors/claudecode"
	"github.com/agentotel/agentotel/internal/vendors/codex"
	"github.com/agentotel/agentotel/internal/vendors/pi"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// fixtureEvents parses a single-file session of ../shared/fixtures (read
// in place) as the receiver would.
func fixtureEvents(t *testing.T, path string) []agentevent.Event {
	t.Helper()
	return parseFixture(t, filepath.Base(filepath.Dir(path)), path)
}

// parseFixture parses a JSONL file of agent's (a folder of
// ../shared/fixtures: claude_code, codex or pi) as the receiver would.
func parseFixture(tb testing.TB, agent, path string) []agentevent.Event {
	tb.Helper()
	data, err := os.ReadFile(path)
	require.NoError(tb, err)
	type parser interface {
		Parse(line []byte, lineNo, offset int64) []agentevent.Event
	}
	var p parser
	switch agent {
	case "claude_code":
		r := agents.Lookup(claudecode.Source).Reader
		p = claudecode.NewParserWithOptions(path, claudecode.Options{Orphan: r.FileOptions(path, agents.ParseOptions{}).OwnerMissing})
	case "codex":
		p = codex.NewParser(path)
	case "pi":
		p = pi.NewParser(path)
	default:
		tb.Fatalf("no parser for %s", agent)
	}
	var evs []agentevent.Event
	for _, l := range vendortest.SplitLines(data) {
		evs = append(evs, p.Parse(l.Data, l.No, l.Offset)...)
	}
	return evs
}

// TestFixtureTurnsDoNotDependOnReads: every Codex and Pi session of the
// shared fixtures and of the newest real files (Codex and Pi are where
// turns could be cut between two reads), read in reads of a few records,
// yields exactly the traces of one whole read — same ids, same content —
// and every trace has one root that covers all its spans, no turn that the
// vendor ended is abandoned, and the chat spans carry all the events' usage
// and no other span any.
func TestFixtureTurnsDoNotDependOnReads(t *testing.T) {
	var files []string
	for i, root := range vendortest.FixtureRoots(t) {
		for _, agent := range []string{"codex", "pi"} {
			if i == 0 {
				vendortest.SkipIfAbsent(t, filepath.Join(root, agent))
			}
			m, err := filepath.Glob(filepath.Join(root, agent, "*.jsonl"))
			require.NoError(t, err)
			if i == 0 {
				require.NotEmpty(t, m, "no %s session in the corpus", agent)
			}
			files = append(files, m...)
		}
	}
	for _, f := range files {
		name := filepath.Join(filepath.Base(filepath.Dir(filepath.Dir(f))), filepath.Base(filepath.Dir(f)), filepath.Base(f))
		t.Run(name, func(t *testing.T) {
			evs := fixtureEvents(t, f)
			logs := markCaughtUp(agentevent.EncodeLogs(evs, "host1"))
			run := func(size int) []ptrace.Span {
				h := newHarness(t)
				h.history()
				for _, b := range splitLogs(logs, size) {
					require.NoError(t, h.c.ConsumeLogs(t.Context(), b))
				}
				h.setNow(2 * 365 * 24 * time.Hour)
				h.tick()
				require.NoError(t, h.c.Shutdown(t.Context()))
				return h.spans()
			}
			whole := run(1 << 20)
			assert.Equal(t, spanKeys(whole), spanKeys(run(4)), "reads of 4 records")
			assertSameUsage(t, eventUsage(evs), chatUsage(whole), "all usage on the chat spans")
			assertUsageOnlyOnChats(t, whole)
			merged := ptrace.NewTraces()
			ss := merged.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
			for _, sp := range whole {
				sp.CopyTo(ss.AppendEmpty())
			}
			checkTraceShape(t, merged)
			ended := map[string]bool{}
			for _, ev := range evs {
				if _, ok := ev.Attributes[agentevent.AttrTurnEnd]; ok && ev.AgentID == "" {
					ended[ev.ParentEventID] = true
				}
			}
			for _, r := range roots(whole) {
				if id, _ := attr(r, agentevent.AttrEventID).(string); ended[id] {
					assert.NotEqual(t, spanmodel.StatusAbandoned, attr(r, agentevent.AttrTurnStatus), "turn %s has the vendor's end marker", id)
				}
			}
		})
	}
}
