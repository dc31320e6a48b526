// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// parseBoth parses the lines of one file twice, with the fast decode and
// with decodeRecord only, and flushes.
func parseBoth(name string, lines []vendortest.Line, opts Options) (fast, typed []agentevent.Event) {
	for _, typedOnly := range []bool{false, true} {
		p := NewParserWithOptions(name, opts)
		p.typedOnly = typedOnly
		var events []agentevent.Event
		for _, l := range lines {
			events = append(events, p.Parse(l.Data, l.No, l.Offset)...)
		}
		events = append(events, p.Flush()...)
		if typedOnly {
			typed = events
		} else {
			fast = events
		}
	}
	return fast, typed
}

// requireSameEvents holds the fast decode to decodeRecord on one file: the
// same events, ids, lines and all, with content and without (where the
// events are compared as the receiver keeps them, stripped).
func requireSameEvents(tb testing.TB, name string, lines []vendortest.Line) {
	tb.Helper()
	t := tb
	fast, typed := parseBoth(name, lines, Options{})
	require.Equal(t, typed, fast, "%s: fast decode with content", name)
	fast, typed = parseBoth(name, lines, Options{OmitContent: true, OmitRaw: true})
	require.Equal(t, vendortest.Stripped(typed), vendortest.Stripped(fast), "%s: fast decode without content", name)
}

// fastShare counts the user and assistant lines of lines and those the fast
// decode takes.
func fastShare(lines []vendortest.Line) (rows, fast int) {
	for _, l := range lines {
		o, ok := jsonx.NewObj(l.Data)
		if !ok {
			continue
		}
		for o.Next() {
			if string(o.Name()) == "type" {
				if fastType(o.Value()) {
					rows++
					if _, ok := fastDecode(l.Data, true, nil); ok {
						fast++
					}
				}
				break
			}
		}
	}
	return rows, fast
}

// TestFastDecodeCorpus: over every Claude Code file of the golden cases and
// of the fixture corpus (read in place), the fast decode gives the events
// decodeRecord gives, and takes nearly every user and assistant row.
func TestFastDecodeCorpus(t *testing.T) {
	var rows, fast int
	check := func(t *testing.T, dir string, files []string) {
		for _, rel := range files {
			data, err := os.ReadFile(filepath.Join(dir, rel))
			require.NoError(t, err)
			lines := vendortest.SplitLines(data)
			requireSameEvents(t, rel, lines)
			r, f := fastShare(lines)
			rows, fast = rows+r, fast+f
		}
	}
	t.Run("golden", func(t *testing.T) {
		root := filepath.Join(repoRoot(t), "testdata", "claude_code")
		entries, err := os.ReadDir(root)
		require.NoError(t, err)
		for _, e := range entries {
			if e.IsDir() {
				dir := filepath.Join(root, e.Name())
				check(t, dir, sessionFiles(t, dir))
			}
		}
	})
	t.Run("corpus", func(t *testing.T) {
		vendortest.EachCorpus(t, "claude_code", func(t *testing.T, dir string) {
			files := vendortest.Files(t, dir, ".jsonl")
			require.NotEmpty(t, files)
			check(t, dir, files)
		})
	})
	t.Logf("fast decode took %d of %d user and assistant rows", fast, rows)
	require.Positive(t, rows)
	assert.GreaterOrEqual(t, float64(fast), 0.99*float64(rows), "the fast decode falls back too often")
}

// TestFastDecodeFallsBack: lines the fast decode must leave to decodeRecord,
// each made from a real assistant row of the golden cases.
func TestFastDecodeFallsBack(t *testing.T) {
	row := `{"type":"assistant","uuid":"u1","sessionId":"` + testSession + `","timestamp":"2026-01-01T10:00:00.000Z",` +
		`"message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5",` +
		`"content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/w/a.go"}}],` +
		`"stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":5}}%s}`
	_, ok := fastDecode([]byte(fmt.Sprintf(row, "")), true, nil)
	require.True(t, ok, "the plain row is taken")
	for name, extra := range map[string]string{
		"duplicate member":     `,"uuid":"u2"`,
		"folded name":          `,"SessionId":"x"`,
		"escaped name":         `,"uu\u0069d":"u2"`,
		"wrong type":           `,"isMeta":"yes"`,
		"compact metadata":     `,"compactMetadata":{"trigger":"auto"}`,
		"tool result a number": `,"toolUseResult":{"agentId":1}`,
	} {
		_, ok := fastDecode([]byte(fmt.Sprintf(row, extra)), true, nil)
		assert.False(t, ok, name)
		requireSameEvents(t, name, vendortest.SplitLines([]byte(fmt.Sprintf(row, extra))))
	}
	for name, line := range map[string]string{
		"message a string": `{"type":"user","message":"hi"}`,
		"no message":       `{"type":"user","uuid":"u"}`,
		"null block":       `{"type":"user","message":{"role":"user","content":[null]}}`,
		"trailing garbage": `{"type":"user","message":{"role":"user","content":"hi"}} x`,
		"other type":       `{"type":"system","content":"x"}`,
	} {
		_, ok := fastDecode([]byte(line), false, nil)
		assert.False(t, ok, name)
		requireSameEvents(t, name, vendortest.SplitLines([]byte(line)))
	}
}

// FuzzFastDecode mutates real rows: the fast decode and decodeRecord give
// the same events, with content and without.
func FuzzFastDecode(f *testing.F) {
	root := filepath.Join(repoRoot(f), "testdata", "claude_code")
	files, _ := filepath.Glob(filepath.Join(root, "*", "*.jsonl"))
	vendortest.AddLines(f, files, 8<<10)
	f.Fuzz(func(t *testing.T, data []byte) {
		requireSameEvents(t, testSession+".jsonl", vendortest.SplitLines(data))
	})
}
