// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/tests/testenv"
)

// parseBoth parses the lines with the in-place decoder and with the typed
// one only, with or without content, and returns both parsers' events.
func parseBoth(lines []vendortest.Line, omitContent bool) (scanned, typed []agentevent.Event, scanState, typedState []byte) {
	opts := Options{OmitContent: omitContent}
	ps, pt := NewParserWithOptions("f.jsonl", opts), NewParserWithOptions("f.jsonl", opts)
	pt.decoder, ps.decoder = decodeTyped, decodeScan
	for _, l := range lines {
		scanned = append(scanned, ps.Parse(l.Data, l.No, l.Offset)...)
		typed = append(typed, pt.Parse(l.Data, l.No, l.Offset)...)
	}
	scanState, _ = ps.MarshalState()
	typedState, _ = pt.MarshalState()
	return scanned, typed, scanState, typedState
}

// requireSameEvents: with content the events are the typed decoder's, byte
// for byte; without, they are once stripped as the receiver strips them
// (the in-place decoder leaves content it would drop unread).
func requireSameEvents(t *testing.T, name string, lines []vendortest.Line) int {
	t.Helper()
	n := 0
	for _, omit := range []bool{false, true} {
		scanned, typed, ss, ts := parseBoth(lines, omit)
		if omit {
			scanned, typed = vendortest.Stripped(scanned), vendortest.Stripped(typed)
		}
		require.Len(t, scanned, len(typed), "%s (omit content %v): event count", name, omit)
		for i := range typed {
			require.Equal(t, typed[i], scanned[i], "%s (omit content %v): event %d (line %d)", name, omit, i, typed[i].LogLine)
		}
		require.JSONEq(t, string(ts), string(ss), "%s (omit content %v): state", name, omit)
		n += len(typed)
	}
	return n
}

// TestScanMatchesTyped: over every Codex line of the fixture corpus and of
// the golden cases, the in-place decoder yields the typed decoder's events,
// and it takes every response_item and event_msg line the typed one-pass
// decoder takes (it leaves none of the real lines to it), and reads the
// envelope of the lines of other types as the typed record decode does.
func TestScanMatchesTyped(t *testing.T) {
	vendortest.SkipIfAbsent(t, filepath.Join(testenv.FixtureRoots(t)[0], "codex"))
	var paths []string
	for _, dir := range testenv.FixturePaths(t, "codex") {
		for _, name := range vendortest.Files(t, dir, ".jsonl") {
			paths = append(paths, filepath.Join(dir, name))
		}
	}
	require.NotEmpty(t, paths, "the Codex corpus is there but holds no rollout")
	root := filepath.Join(repoRoot(t), "testdata", "codex")
	for _, name := range vendortest.Files(t, root, ".jsonl") {
		paths = append(paths, filepath.Join(root, name))
	}
	events, fast, envelopes, longOutputs := 0, 0, 0, 0
	for _, path := range paths {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		lines := splitLines(data)
		events += requireSameEvents(t, path, lines)
		p := NewParserWithOptions("f.jsonl", Options{OmitContent: true})
		for _, l := range lines {
			typed, typedOK := decodeFast(l.Data)
			scanned, ok := p.scanLine(l.Data)
			require.Equal(t, typedOK, ok, "%s line %d: taken by the typed decoder, not in place", path, l.No)
			if !ok && scanned.Payload != nil {
				// Another type: the envelope the typed record decode reads.
				var r record
				require.NoError(t, jsonx.Unmarshal(l.Data, &r), "%s line %d", path, l.No)
				require.Equal(t, record{Timestamp: scanned.Timestamp, Type: scanned.Type, Payload: scanned.Payload}, r, "%s line %d", path, l.No)
				envelopes++
			}
			if ok {
				fast++
				if len(typed.item.output) > headRaw {
					longOutputs++
				}
				require.Equal(t, typed.Type, scanned.Type)
				require.Equal(t, typed.msg.Info, scanned.msg.Info, "%s line %d", path, l.No)
			}
		}
	}
	require.NotZero(t, fast)
	require.NotZero(t, envelopes, "no line of another type read in place")
	require.NotZero(t, longOutputs, "no output long enough to be read by its head")
	t.Logf("%d files, %d response_item/event_msg lines (%d tool outputs longer than a head), %d lines of other types read to their payload, %d events: the same",
		len(paths), fast, longOutputs, envelopes, events)
}

// FuzzScanMatchesTyped: on mutated real lines (one or several records after
// a session_meta), the in-place decoder yields the typed decoder's events,
// with and without content.
func FuzzScanMatchesTyped(f *testing.F) {
	var paths []string
	for _, dir := range testenv.FixturePaths(f, "codex") {
		for _, name := range vendortest.Files(f, dir, ".jsonl") {
			paths = append(paths, filepath.Join(dir, name))
		}
	}
	root := filepath.Join(repoRoot(f), "testdata", "codex")
	for _, name := range vendortest.Files(f, root, ".jsonl") {
		paths = append(paths, filepath.Join(root, name))
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		require.NoError(f, err)
		lines := splitLines(data)
		for i, l := range lines {
			if len(l.Data) < 16<<10 {
				f.Add(l.Data)
			}
			// A call and the lines after it: its output, its *_end event.
			if i+3 <= len(lines) {
				end := lines[i+2].Offset + int64(len(lines[i+2].Data))
				if w := data[l.Offset:end]; len(w) < 32<<10 {
					f.Add(w)
				}
			}
		}
	}
	// The 0.14x records (threads_test.go), which the corpus may not hold.
	for _, l := range []string{worldFull, worldDelta, searchCall, searchOut, agentMsgEv, settings14, aborted14, rolledBack1} {
		f.Add([]byte(l))
	}
	f.Add([]byte(prompt14 + "\n" + searchCall + "\n" + searchOut))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := []vendortest.Line{{Data: []byte(meta), No: 1}}
		for _, l := range splitLines(data) {
			lines = append(lines, vendortest.Line{Data: l.Data, No: l.No + 1, Offset: l.Offset + int64(len(meta)+1)})
		}
		requireSameEvents(t, "fuzz", lines)
	})
}

// TestScanEdgeCases: lines the typed decoder reads in its own way (names
// matched without case or through escapes, members given twice, nulls,
// values of another type, integers out of range, trailing bytes) map to the
// same events either way. The rows are shaped after real 0.98 rows.
func TestScanEdgeCases(t *testing.T) {
	const call = `{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"go test ./...\"]}","call_id":"c1"}}`
	rows := []string{
		`{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"Exit code: 1\nWall time: 0.2 seconds\nOutput:\nFAIL"}}`,
		`{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call_output","Call_ID":"c1","output":"Exit code: 1"}}`,
		`{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","call_id":"c2","output":"x"}}`,
		`{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call_output","call\u005fid":"c1","output":"x"}}`,
		`{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":null}}`,
		`{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":[{"type":"input_text","text":"Exit code: 2"}]}}`,
		`{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":{"content":"Exit code: 3"}}}`,
		`{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":7}}`,
		`{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"ok\",\"metadata\":{\"exit_code\":4,\"duration_seconds\":1.5}}"}}`,
		`{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"aborted by user"}} x`,
		`{"timestamp":"2026-01-01T00:00:02Z","TYPE":"event_msg","type":"response_item","payload":{"type":"reasoning","summary":[]}}`,
		`{"timestamp":null,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi \ud83d\ude00 \ud800"}]}}`,
		`{"timestamp":1,"type":"response_item","payload":{"type":"message","role":"assistant","content":[]}}`,
		`{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"message","role":7,"content":[]}}`,
		`{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"local_shell_call","call_id":"c3","action":null}}`,
		`{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"ghost_snapshot","ghost_commit":{"id":"g1","ID":"g2"}}}`,
		`{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"ghost_snapshot","ghost_commit":null}}`,
		`{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"web_search_call","status":"completed","action":{"query":"q"},"exit_code":"1"}}`,
		`{"timestamp":"2026-01-01T00:00:03Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":10,"cached_input_tokens":null,"output_tokens":2,"reasoning_output_tokens":0,"total_tokens":12},"model_context_window":9223372036854775808}}}`,
		`{"timestamp":"2026-01-01T00:00:03Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":10},"total_token_usage":{"output_tokens":3}}}}`,
		`{"timestamp":"2026-01-01T00:00:03Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":1.0}}}}`,
		`{"timestamp":"2026-01-01T00:00:03Z","type":"event_msg","payload":{"type":"token_count","info":[]}}`,
		`{"timestamp":"2026-01-01T00:00:03Z","type":"event_msg","payload":{"type":"exec_command_end","call_id":"c1","exit_code":-0,"duration":{"secs":1,"nanos":5000000},"status":"failed","success":null}}`,
		`{"timestamp":"2026-01-01T00:00:03Z","type":"event_msg","payload":{"type":"patch_apply_end","call_id":"c1","success":"false"}}`,
		`{"timestamp":"2026-01-01T00:00:03Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t1","duration_ms":12,"time_to_first_token_ms":-","invocation":{"server":"s"}}}`,
		`{"timestamp":"2026-01-01T00:00:03Z","type":"event_msg","payload":{"type":"user_message","message":"a\tb"}}`,
		`{"timestamp":"2026-01-01T00:00:03Z","type":"event_msg","payload":{"type":"error","message":"\u00e9","Message":"x"}}`,
		`{"timestamp":"2026-01-01T00:00:03Z","type":"event_msg","payload":{"type":"agent_message","message":{"text":"not a string"}}}`,
		`{"timestamp":"2026-01-01T00:00:03Z","type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted","ſtatus":"x"}}`,
		`{"timestamp":"2026-01-01T00:00:03Z","type":"event_msg","payload":null}`,
	}
	// Long outputs read by their head without content: escapes and a
	// surrogate pair around the cut, a JSON dialect after leading space.
	for _, pad := range []int{headRaw - 14, headRaw - 8, headRaw - 3, headRaw} {
		body := `Exit code: 5\nWall time: 1.5 seconds\n` + strings.Repeat("a", pad-38) + `\ud83d\ude00\u00e9\n` + strings.Repeat(`b\\`, 600)
		rows = append(rows,
			`{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"`+body+`"}}`,
			`{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"\n {\"metadata\":{\"exit_code\":6}}`+body+`"}}`)
	}
	head := NewParserWithOptions("f.jsonl", Options{OmitContent: true})
	for _, row := range rows[len(rows)-8:] {
		fl, ok := head.scanLine([]byte(row))
		require.True(t, ok)
		full, _ := decodeFast([]byte(row))
		if strings.Contains(row, `metadata`) {
			require.Equal(t, full.item.output, fl.item.output, "a JSON-like output is read whole")
		} else {
			require.Less(t, len(fl.item.output), len(full.item.output), "only the head is read")
			require.True(t, strings.HasPrefix(full.item.output, fl.item.output))
		}
	}
	for i, row := range rows {
		lines := []vendortest.Line{{Data: []byte(meta), No: 1}, {Data: []byte(call), No: 2, Offset: 1000}, {Data: []byte(row), No: 3, Offset: 2000}}
		require.NotZero(t, requireSameEvents(t, row, lines), "row %d", i)
	}
}

// TestAppendPartsText: the parts read in place give partsText's text, and
// the parts the typed decoder might read otherwise are left to it.
func TestAppendPartsText(t *testing.T) {
	for raw, taken := range map[string]bool{
		`[]`:                                  true,
		`[{"type":"input_text","text":"hi"}]`: true,
		`[{"type":"input_text","text":"a"},{"text":""},null,{"text":"b\nc"}]`: true,
		`[{"text":"\u00e9\"x\""},{"type":null,"text":null},{"other":[1,{}]}]`: true,
		`[ {"text" : "  <environment_context>"} ]`:                            true,
		` [{"text":"x"}]`:           false, // as partsText reads it: no list
		`[{"TEXT":"x"}]`:            false, // a name matched without case
		`[{"t\u0065xt":"x"}]`:       false, // a name matched through an escape
		`[{"text":"a","text":"b"}]`: false, // given twice
		`[{"text":1}]`:              false, // of another type
		`[{"type":{},"text":"x"}]`:  false,
		`["x"]`:                     false, // a part that is no object
		`"a string"`:                false,
		`[{"text":"x"},]`:           false, // malformed
		`[{"text":"unterminated}]`:  false,
	} {
		got, ok := appendPartsText([]byte("keep"), []byte(raw))
		require.Equal(t, taken, ok, raw)
		if !ok {
			assert.Equal(t, "keep", string(got), raw)
			continue
		}
		assert.Equal(t, "keep"+partsText(jsonx.Raw(raw)), string(got), raw)
	}
}

// TestIsInjected: the start of a message, trimmed of white space, tells
// injected context apart, whether the text is a string or bytes.
func TestIsInjected(t *testing.T) {
	for text, want := range map[string]bool{
		"<environment_context>x":            true,
		" \n\t\u00a0<user_instructions>":    true,
		"# AGENTS.md instructions for /w":   true,
		"please read <environment_context>": false,
		"<environment":                      false,
		"":                                  false,
		"\xff<skill>":                       false,
	} {
		assert.Equal(t, want, isInjected(text), "%q", text)
		assert.Equal(t, want, isInjected([]byte(text)), "%q", text)
		trimmed := strings.TrimSpace(text)
		old := false
		for _, pre := range injectedPrefixes {
			old = old || strings.HasPrefix(trimmed, pre)
		}
		assert.Equal(t, want, old, "%q: as TrimSpace and HasPrefix", text)
	}
}
