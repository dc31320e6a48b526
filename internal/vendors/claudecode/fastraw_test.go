// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// rawMembers collects the raw members of the rows of lines that the mapping
// decodes when it uses them: tool inputs, tool result contents,
// toolUseResult values, and the structuredPatch of toolUseResult objects.
type rawMembers struct {
	inputs, contents, turs, patches [][]byte
}

func (m *rawMembers) add(lines []vendortest.Line) {
	for _, l := range lines {
		r, err := decodeRecord(l.Data)
		if err != nil || (r.Type != "user" && r.Type != "assistant") {
			continue
		}
		if len(r.ToolUseResult) > 0 {
			m.turs = append(m.turs, r.ToolUseResult)
		}
		if r.decoded.turDone && len(r.decoded.tur.edit.StructuredPatch) > 0 {
			m.patches = append(m.patches, r.decoded.tur.edit.StructuredPatch)
		}
		if _, ok := r.message(); !ok {
			continue
		}
		_, _, blocks := r.content()
		for i := range blocks {
			b := &blocks[i]
			if len(b.Input) > 0 {
				m.inputs = append(m.inputs, b.Input)
			}
			if len(b.Content) > 0 {
				m.contents = append(m.contents, b.Content)
			}
		}
	}
}

// requireSameRaw holds each raw-member reader to its typed decode on v.
func requireSameRaw(tb testing.TB, v []byte) {
	tb.Helper()
	for _, agent := range []bool{false, true} {
		require.Equal(tb, decodeToolInput(v, agent, true), decodeToolInput(v, agent, false), "tool input %q", v)
	}
	require.Equal(tb, rawText(v, true), rawText(v, false), "content %q", v)
	s, isString := jsonString(v, true)
	s2, isString2 := jsonString(v, false)
	require.Equal(tb, [2]any{s, isString}, [2]any{s2, isString2}, "string %q", v)
	a, r, ok := patchLines(v, true)
	a2, r2, ok2 := patchLines(v, false)
	require.Equal(tb, [3]any{a, r, ok}, [3]any{a2, r2, ok2}, "patch %q", v)
	if len(v) > 0 && v[0] != '{' {
		require.Equal(tb, decodeToolUseResult(v, true), decodeToolUseResult(v, false), "toolUseResult %q", v)
	}
}

// TestRawScanCorpus: over the golden cases and the fixture corpus (read in
// place), each raw-member reader gives what its typed decode gives, and the
// in-place readers take nearly every value.
func TestRawScanCorpus(t *testing.T) {
	var m rawMembers
	root := filepath.Join(repoRoot(t), "testdata", "claude_code")
	golden, err := filepath.Glob(filepath.Join(root, "*", "*.jsonl"))
	require.NoError(t, err)
	files := golden
	vendortest.EachCorpus(t, "claude_code", func(t *testing.T, dir string) {
		for _, rel := range vendortest.Files(t, dir, ".jsonl") {
			files = append(files, filepath.Join(dir, rel))
		}
	})
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		m.add(vendortest.SplitLines(data))
	}
	share := func(what string, vals [][]byte, scanned func(v []byte) bool) {
		n := 0
		for _, v := range vals {
			requireSameRaw(t, v)
			if scanned(v) {
				n++
			}
		}
		t.Logf("%s: %d of %d read in place", what, n, len(vals))
		require.NotEmpty(t, vals, what)
		assert.GreaterOrEqual(t, float64(n), 0.99*float64(len(vals)), "%s: the scanner falls back too often", what)
	}
	share("tool inputs", m.inputs, func(v []byte) bool { _, ok := scanToolInput(v, true); return ok })
	share("tool result contents", m.contents, func(v []byte) bool {
		if v[0] == '[' {
			_, ok := scanBlocksText(v)
			return ok
		}
		return true
	})
	share("structured patches", m.patches, func(v []byte) bool {
		if v[0] == '[' {
			_, _, ok := scanPatchLines(v)
			return ok
		}
		return true
	})
	for _, v := range m.turs {
		requireSameRaw(t, v)
	}
}

// TestRawScanFallsBack: values the in-place readers must leave to the
// typed decode, and values they take, made from real tool inputs, result
// contents and patches of the golden cases.
func TestRawScanFallsBack(t *testing.T) {
	readers := map[string]func(v []byte) bool{
		"input":   func(v []byte) bool { _, ok := scanToolInput(v, true); return ok },
		"content": func(v []byte) bool { _, ok := scanBlocksText(v); return ok },
		"patch":   func(v []byte) bool { _, _, ok := scanPatchLines(v); return ok },
	}
	for _, c := range []struct {
		name, reader, value string
		taken               bool
	}{
		{"folded name", "input", `{"File_Path":"/w/a.go"}`, false},
		{"duplicate", "input", `{"file_path":"/w/a.go","file_path":"/w/b.go"}`, false},
		{"escaped name", "input", `{"file_pat\u0068":"/w/a.go"}`, false},
		{"number path", "input", `{"path":1,"file_path":"/w/a.go"}`, false},
		{"not an object", "input", `["/w/a.go"]`, false},
		{"trailing", "input", `{"file_path":"/w/a.go"} x`, false},
		{"input", "input", `{"file_path":"","notebook_path":"/w/n.ipynb","command":["x"],"prompt":"p\u00e9"}`, true},
		{"null element", "content", `[null]`, false},
		{"folded block name", "content", `[{"type":"text","Text":"a"}]`, false},
		{"string is_error", "content", `[{"type":"text","text":"a","is_error":"no"}]`, false},
		{"blocks", "content", `[{"type":"text","text":"a\nb"},{"type":"image","source":{}},{"type":"te\u0078t","text":null}]`, true},
		{"null members", "content", `[{"type":"text","text":"a","is_error":null,"input":1}]`, true},
		{"float in hunk", "patch", `[{"oldStart":1.5,"lines":["+a"]}]`, false},
		{"number line", "patch", `[{"oldStart":1,"lines":[1]}]`, false},
		{"duplicate lines", "patch", `[{"lines":["+a"],"lines":["-b"]}]`, false},
		{"folded hunk name", "patch", `[{"Lines":["+a"]}]`, false},
		{"escaped line", "patch", `[{"oldStart":1,"oldLines":1,"newStart":1,"newLines":2,"lines":["\u002ba","-b",null,""]}]`, true},
	} {
		requireSameRaw(t, []byte(c.value))
		assert.Equal(t, c.taken, readers[c.reader]([]byte(c.value)), c.name)
	}
}

// FuzzRawScan mutates real raw members: each in-place reader gives what
// its typed decode gives.
func FuzzRawScan(f *testing.F) {
	var m rawMembers
	root := filepath.Join(repoRoot(f), "testdata", "claude_code")
	files, _ := filepath.Glob(filepath.Join(root, "*", "*.jsonl"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		require.NoError(f, err)
		m.add(vendortest.SplitLines(data))
	}
	for _, vals := range [][][]byte{m.inputs, m.contents, m.turs, m.patches} {
		for _, v := range vals {
			if len(v) < 4096 {
				f.Add(v)
			}
		}
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		requireSameRaw(t, v)
	})
}
