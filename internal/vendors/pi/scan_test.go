// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package pi

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// parseBoth parses the lines of one file twice, with scanEntry where the
// parser uses it and with decodeEntry only.
func parseBoth(name string, lines []vendortest.Line, opts Options) (fast, typed []agentevent.Event) {
	for _, typedOnly := range []bool{false, true} {
		p := NewParserWithOptions(name, opts)
		p.typedOnly = typedOnly
		var events []agentevent.Event
		for _, l := range lines {
			events = append(events, p.Parse(l.Data, l.No, l.Offset)...)
		}
		if typedOnly {
			typed = events
		} else {
			fast = events
		}
	}
	return fast, typed
}

// requireSameEvents holds scanEntry to decodeEntry on one file, with
// content and without (compared as the receiver keeps them, stripped).
func requireSameEvents(tb testing.TB, name string, lines []vendortest.Line) {
	tb.Helper()
	fast, typed := parseBoth(name, lines, Options{})
	require.Equal(tb, typed, fast, "%s: with content", name)
	fast, typed = parseBoth(name, lines, Options{OmitContent: true, OmitRaw: true})
	require.Equal(tb, vendortest.Stripped(typed), vendortest.Stripped(fast), "%s: without content", name)
}

// scanShare counts the message lines of lines and those scanEntry takes.
func scanShare(lines []vendortest.Line) (messages, scanned int) {
	for _, l := range lines {
		o, ok := jsonx.NewObj(l.Data)
		if !ok {
			continue
		}
		for o.Next() {
			if string(o.Name()) == "type" {
				if jsonx.StrEq(o.Value(), "message") {
					messages++
					if _, ok := scanEntry(l.Data, nil); ok {
						scanned++
					}
				}
				break
			}
		}
	}
	return messages, scanned
}

// TestScanEntryCorpus: over every Pi file of the golden cases and of the
// fixture corpus (read in place), scanEntry gives the events decodeEntry
// gives, and takes nearly every message line.
func TestScanEntryCorpus(t *testing.T) {
	var messages, scanned int
	check := func(t *testing.T, dir string, files []string) {
		for _, rel := range files {
			data, err := os.ReadFile(filepath.Join(dir, rel))
			require.NoError(t, err)
			lines := vendortest.SplitLines(data)
			requireSameEvents(t, rel, lines)
			m, s := scanShare(lines)
			messages, scanned = messages+m, scanned+s
		}
	}
	t.Run("golden", func(t *testing.T) {
		root := filepath.Join(repoRoot(t), "testdata", "pi")
		check(t, root, sessionFiles(t, root))
	})
	t.Run("openclaw", func(t *testing.T) {
		// OpenClaw's transcripts are Pi's format with entries of its own.
		root := openclawCorpus(t)
		check(t, root, allFiles(t, root))
	})
	t.Run("corpus", func(t *testing.T) {
		vendortest.EachCorpus(t, "pi", func(t *testing.T, dir string) {
			files := vendortest.Files(t, dir, ".jsonl")
			require.NotEmpty(t, files)
			check(t, dir, files)
		})
	})
	t.Logf("scanEntry took %d of %d message lines", scanned, messages)
	require.Positive(t, messages)
	assert.GreaterOrEqual(t, float64(scanned), 0.99*float64(messages), "scanEntry falls back too often")
}

// TestScanEntryFallsBack: lines scanEntry must leave to decodeEntry, and
// lines it takes, each made from a real toolResult or assistant line of the
// golden cases.
func TestScanEntryFallsBack(t *testing.T) {
	const pre = `{"type":"message","id":"e2","parentId":"e1","timestamp":"2026-04-01T10:00:01.000Z","message":`
	for _, c := range []struct {
		name, line string
		taken      bool
	}{
		{"tool result", pre + `{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"ok\n"}],"isError":false,"timestamp":1775037601000}}`, true},
		{"content first", pre + `{"content":[{"type":"text","text":"Command exited with code 2"}],"role":"toolResult","toolCallId":"c1","isError":true}}`, true},
		{"string content", pre + `{"role":"user","content":"hi"}}`, true},
		{"assistant", pre + `{"role":"assistant","content":[{"type":"thinking","thinking":"x"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.go"}}],"api":"anthropic-messages","provider":"anthropic","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0.1,"total":0.25}},"stopReason":"toolUse","timestamp":1775037601000}}`, true},
		{"other type", `{"type":"model_change","id":"e2","provider":"openai","modelId":"gpt"}`, false},
		{"side append", `{"type":"message","id":"e2","parentId":"e1","appendMode":"side","timestamp":"2026-04-01T10:00:01.000Z","message":{"role":"user","content":"hi"}}`, true},
		{"append mode a number", `{"type":"message","id":"e2","parentId":"e1","appendMode":1,"message":{"role":"user","content":"hi"}}`, false},
		{"custom", `{"type":"custom","customType":"model-snapshot","data":{"modelId":"gpt-5.2"},"id":"e2","parentId":"e1"}`, false},
		{"other role", pre + `{"role":"bashExecution","command":"ls","output":"a","exitCode":0}}`, false},
		{"duplicate", pre + `{"role":"user","content":"hi","role":"user"}}`, false},
		{"folded name", pre + `{"role":"user","Content":"hi"}}`, false},
		{"escaped name", pre + `{"role":"user","cont\u0065nt":"hi"}}`, false},
		{"string usage", pre + `{"role":"assistant","content":[],"usage":{"input":"1"}}}`, false},
		{"number text", pre + `{"role":"assistant","content":[{"type":"text","text":1}]}}`, false},
		{"null block", pre + `{"role":"assistant","content":[null]}}`, false},
		{"message a string", `{"type":"message","id":"e2","message":"hi"}`, false},
		{"trailing", pre + `{"role":"user","content":"hi"}} x`, false},
	} {
		_, ok := scanEntry([]byte(c.line), nil)
		assert.Equal(t, c.taken, ok, c.name)
		requireSameEvents(t, c.name, vendortest.SplitLines([]byte(headerV3+"\n"+c.line)))
	}
}

// FuzzScanEntry mutates real lines (and OpenClaw's constructed ones) after a
// v3 header: scanEntry and decodeEntry give the same events, with content
// and without.
func FuzzScanEntry(f *testing.F) {
	root := filepath.Join(repoRoot(f), "testdata", "pi")
	var paths []string
	for _, rel := range sessionFiles(f, root) {
		paths = append(paths, filepath.Join(root, rel))
	}
	oc := openclawCorpus(f)
	for _, rel := range allFiles(f, oc) {
		paths = append(paths, filepath.Join(oc, rel))
	}
	vendortest.AddLines(f, paths, 8<<10)
	f.Fuzz(func(t *testing.T, data []byte) {
		requireSameEvents(t, testPath, vendortest.SplitLines(append([]byte(headerV3+"\n"), data...)))
	})
}
