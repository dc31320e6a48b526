// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package openclaw

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/pi"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// fileUsage is what a transcript says of its usage, read independently of
// the parser: every assistant message's usage and cost.
type fileUsage struct {
	Tokens vendortest.Tokens
	Cost   float64
}

func readUsage(t *testing.T, path string) fileUsage {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var u fileUsage
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var e struct {
			Type    string `json:"type"`
			Message struct {
				Role  string `json:"role"`
				Usage *struct {
					Input, Output, CacheRead, CacheWrite int64
					Cost                                 struct{ Total float64 }
				} `json:"usage"`
			} `json:"message"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		if m := e.Message; e.Type == "message" && m.Role == "assistant" && m.Usage != nil {
			u.Tokens.Input += m.Usage.Input
			u.Tokens.Output += m.Usage.Output
			u.Tokens.CacheRead += m.Usage.CacheRead
			u.Tokens.CacheCreation += m.Usage.CacheWrite
			u.Cost += m.Usage.Cost.Total
		}
	}
	require.NoError(t, sc.Err())
	return u
}

func sumCost(events []agentevent.Event) float64 {
	var c float64
	for i := range events {
		if events[i].CostUSD != nil {
			c += *events[i].CostUSD
		}
	}
	return c
}

// TestCorpus: every transcript of the corpus (live, reset and deleted
// archives) maps with no unparsed line and no violation, every tool call
// has its result, the usage and cost are what the file holds, and a parse
// stopped and restarted from the saved state every few lines gives the
// same events.
func TestCorpus(t *testing.T) {
	dir := corpusDir(t)
	files := transcripts(t, dir)
	kinds := map[string]bool{}
	for _, rel := range files {
		t.Run(rel, func(t *testing.T) {
			kinds[archiveKind(rel)] = true
			events := parseFile(t, dir, rel, pi.Options{})
			require.NotEmpty(t, events)
			for i := range events {
				assert.Emptyf(t, events[i].Unparsed, "event %s: %v", events[i].EventID, events[i].Attributes)
				assert.Equal(t, Source, events[i].Source)
			}
			assert.Empty(t, agentevent.Validate(events).Violations)

			calls, results := map[string]int{}, map[string]int{}
			for i := range events {
				ev := &events[i]
				switch ev.Type {
				case agentevent.TypeToolCall:
					calls[ev.ToolCallID]++
				case agentevent.TypeToolResult:
					results[ev.ToolCallID]++
				}
			}
			require.NotEmpty(t, calls)
			assert.Equal(t, calls, results, "every tool call answered once, every result a call's")

			want := readUsage(t, filepath.Join(dir, filepath.FromSlash(rel)))
			assert.Equal(t, want.Tokens, vendortest.SumTokens(events))
			assert.InDelta(t, want.Cost, sumCost(events), 1e-9)

			assert.Equal(t, events, parseRestarting(t, dir, rel, 3))
		})
	}
	assert.Equal(t, map[string]bool{"live": true, "reset": true, "deleted": true}, kinds, "the corpus has a live transcript and both kinds of archive")
}

// parseRestarting parses dir/rel with a new parser every n lines, restored
// from the state the one before saved.
func parseRestarting(t *testing.T, dir, rel string, n int) []agentevent.Event {
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	require.NoError(t, err)
	var events []agentevent.Event
	p := NewParser(rel, pi.Options{})
	for i, l := range vendortest.SplitLines(data) {
		if i > 0 && i%n == 0 {
			st, err := p.MarshalState()
			require.NoError(t, err)
			p = NewParser(rel, pi.Options{})
			require.NoError(t, p.UnmarshalState(st))
		}
		events = append(events, p.Parse(l.Data, l.No, l.Offset)...)
	}
	return events
}

// archiveKind tells a live transcript from one archived by a reset or a
// deletion.
func archiveKind(name string) string {
	for _, k := range []string{"reset", "deleted"} {
		if strings.Contains(name, ".jsonl."+k+".") {
			return k
		}
	}
	return "live"
}
