// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package pi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// expectedOpenCalls lists every tool call of the corpus that no tool_result
// answers, keyed "<file>/<tool call id>", with the reason it is open. The
// corpus test fails on any open call not listed here, and on a listed call
// that is no longer open. (The tool calls of aborted and failed responses
// are closed by the parser, see README.md, so none is expected.)
var expectedOpenCalls = map[string]string{}

// fileTotals is what a session file says about itself, read independently
// of the parser: the usage and cost of every assistant message, and the
// number of user prompts.
type fileTotals struct {
	Input, Output, CacheRead, CacheWrite int64
	Cost                                 float64
	Prompts                              int
	ToolCalls, ToolResults               int
}

func readTotals(t *testing.T, path string) fileTotals {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var tot fileTotals
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		var e struct {
			Type    string `json:"type"`
			Message struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
				Usage   *struct {
					Input, Output, CacheRead, CacheWrite int64
					Cost                                 struct{ Total float64 }
				} `json:"usage"`
			} `json:"message"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		if e.Type != "message" {
			continue
		}
		switch e.Message.Role {
		case "user":
			tot.Prompts++
		case "toolResult":
			tot.ToolResults++
		case "assistant":
			if u := e.Message.Usage; u != nil {
				tot.Input += u.Input
				tot.Output += u.Output
				tot.CacheRead += u.CacheRead
				tot.CacheWrite += u.CacheWrite
				tot.Cost += u.Cost.Total
			}
			var blocks []struct{ Type string }
			require.NoError(t, json.Unmarshal(e.Message.Content, &blocks))
			for _, b := range blocks {
				if b.Type == "toolCall" {
					tot.ToolCalls++
				}
			}
		}
	}
	require.NoError(t, sc.Err())
	return tot
}

// eventTotals sums what the events carry, in the same units.
func eventTotals(events []agentevent.Event) fileTotals {
	var tot fileTotals
	for i := range events {
		ev := &events[i]
		read := agentevent.Value(ev.TokensCached)
		write := agentevent.Value(ev.TokensCacheCreation)
		tot.Input += agentevent.Value(ev.TokensInput) - read - write
		tot.Output += agentevent.Value(ev.TokensOutput)
		tot.CacheRead += read
		tot.CacheWrite += write
		if ev.CostUSD != nil {
			tot.Cost += *ev.CostUSD
		}
		switch ev.Type {
		case agentevent.TypeUserMessage:
			tot.Prompts++
		case agentevent.TypeToolCall:
			tot.ToolCalls++
		case agentevent.TypeToolResult:
			if ev.Attributes[agentevent.AttrToolNotExecuted] != true {
				tot.ToolResults++
			}
		}
	}
	return tot
}

// TestCorpus parses every Pi file of the shared fixture corpus: nothing
// unparsed, no invariant broken, every open tool call explained, and the
// session's usage, cost, prompts and tool calls equal to what the file
// holds (Pi writes usage once per response: no streaming duplicates).
func TestCorpus(t *testing.T) {
	vendortest.EachCorpus(t, "pi", func(t *testing.T, dir string) {
		files := sessionFiles(t, dir)
		require.NotEmpty(t, files)
		open := map[string]bool{}
		for _, rel := range files {
			t.Run(rel, func(t *testing.T) {
				events := parseFile(t, dir, rel)
				require.NotEmpty(t, events)
				for _, ev := range events {
					assert.Emptyf(t, ev.Unparsed, "line %d unparsed: %v", ev.LogLine, ev.Attributes[agentevent.AttrUnparsedDetail])
					assert.Equal(t, Source, ev.Source)
					assert.NotEmpty(t, ev.SessionID)
					assert.False(t, ev.Timestamp.IsZero(), "line %d has no timestamp", ev.LogLine)
				}
				report := agentevent.Validate(events)
				assert.Empty(t, report.Violations)
				for _, call := range report.OpenToolCalls {
					key := rel + "/" + call.ToolCallID
					open[key] = true
					_, listed := expectedOpenCalls[key]
					assert.Truef(t, listed, "tool call %s (line %d) is open and not listed in expectedOpenCalls", key, call.LogLine)
				}

				want := readTotals(t, filepath.Join(dir, rel))
				got := eventTotals(events)
				assert.InDelta(t, want.Cost, got.Cost, 1e-9)
				want.Cost, got.Cost = 0, 0
				assert.Equal(t, want, got)
				assert.False(t, math.IsNaN(got.Cost))
			})
		}
		for key, reason := range expectedOpenCalls {
			assert.Truef(t, open[key], "listed open call %s (%s) is no longer open", key, reason)
		}
	})
}

// TestCorpusRestart parses every corpus file twice: uninterrupted, and with
// the parser's state saved and restored into a new parser after every line
// (the most restarts a receiver can do). Both give the same events.
func TestCorpusRestart(t *testing.T) {
	vendortest.EachCorpus(t, "pi", func(t *testing.T, dir string) {
		for _, rel := range sessionFiles(t, dir) {
			data, err := os.ReadFile(filepath.Join(dir, rel))
			require.NoError(t, err)
			whole := parseBytes(rel, data)
			var restarted []agentevent.Event
			p := NewParser(rel)
			for i, l := range splitLines(data) {
				if i%7 == 3 {
					st, err := p.MarshalState()
					require.NoError(t, err)
					p = NewParser(rel)
					require.NoError(t, p.UnmarshalState(st))
				}
				restarted = append(restarted, p.Parse(l.Data, l.No, l.Offset)...)
			}
			require.Len(t, restarted, len(whole), rel)
			for i := range whole {
				require.True(t, bytes.Equal(whole[i].Raw, restarted[i].Raw), rel)
				require.Equal(t, whole[i], restarted[i], "%s event %d", rel, i)
			}
		}
	})
}
