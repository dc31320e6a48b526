// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package codex

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
	"github.com/valyala/fastjson"

	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/tests/testenv"
)

// corpusLines are the lines of every Codex rollout of the fixture corpus
// (read in place), and their size in bytes.
func corpusLines(tb testing.TB) (lines [][]byte, size int64) {
	tb.Helper()
	vendortest.SkipIfAbsent(tb, filepath.Join(testenv.FixtureRoots(tb)[0], "codex"))
	for _, dir := range testenv.FixturePaths(tb, "codex") {
		for _, name := range vendortest.Files(tb, dir, ".jsonl") {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				tb.Fatal(err)
			}
			for _, l := range splitLines(data) {
				if len(bytes.TrimSpace(l.Data)) > 0 {
					lines = append(lines, l.Data)
					size += int64(len(l.Data))
				}
			}
		}
	}
	if len(lines) == 0 {
		tb.Fatal("the Codex corpus is there but holds no line")
	}
	return lines, size
}

// fastCorpusLines are the response_item and event_msg lines of the corpus.
func fastCorpusLines(tb testing.TB) (lines [][]byte, size int64) {
	all, _ := corpusLines(tb)
	for _, l := range all {
		if _, ok := decodeFast(l); ok {
			lines = append(lines, l)
			size += int64(len(l))
		}
	}
	return lines, size
}

// The candidates for decoding a response_item / event_msg line, each
// locating the members the mapping reads (README: Decoding). Only the one
// adopted is used outside tests.

func BenchmarkDecodeGoccy(b *testing.B) {
	lines, size := fastCorpusLines(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			decodeFast(l)
		}
	}
}

// decodePaths are the members the mapping reads, as gjson paths.
var decodePaths = []string{
	"timestamp", "type", "payload.type", "payload.role", "payload.content", "payload.summary", "payload.name",
	"payload.arguments", "payload.input", "payload.call_id", "payload.id", "payload.status", "payload.output",
	"payload.phase", "payload.action", "payload.ghost_commit.id", "payload.message", "payload.info",
	"payload.turn_id", "payload.reason", "payload.duration_ms", "payload.time_to_first_token_ms",
	"payload.exit_code", "payload.duration", "payload.success", "payload.result",
}

func BenchmarkDecodeGjson(b *testing.B) { benchmarkGjson(b, true) }

// BenchmarkDecodeGjsonUnchecked leaves out the validation a parser needs
// (gjson reads invalid JSON without an error).
func BenchmarkDecodeGjsonUnchecked(b *testing.B) { benchmarkGjson(b, false) }

func benchmarkGjson(b *testing.B, valid bool) {
	lines, size := fastCorpusLines(b)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			if valid && !gjson.ValidBytes(l) {
				b.Fatal("invalid")
			}
			gjson.GetManyBytes(l, decodePaths...)
		}
	}
}

func BenchmarkDecodeFastjson(b *testing.B) {
	lines, size := fastCorpusLines(b)
	paths := make([][]string, len(decodePaths))
	for i, path := range decodePaths {
		paths[i] = strings.Split(path, ".")
	}
	b.SetBytes(size)
	b.ReportAllocs()
	var p fastjson.Parser
	for b.Loop() {
		for _, l := range lines {
			v, err := p.ParseBytes(l)
			if err != nil {
				b.Fatal(err)
			}
			for _, path := range paths {
				v.Get(path...)
			}
		}
	}
}

// BenchmarkDecodeScan is the adopted decoder, in place, as the parser
// without content runs it.
func BenchmarkDecodeScan(b *testing.B) { benchmarkScan(b, true) }

// BenchmarkDecodeScanWithContent unescapes every content member the
// mapping reads.
func BenchmarkDecodeScanWithContent(b *testing.B) { benchmarkScan(b, false) }

func benchmarkScan(b *testing.B, omitContent bool) {
	lines, size := fastCorpusLines(b)
	p := NewParserWithOptions("f.jsonl", Options{OmitContent: omitContent})
	p.decoder = decodeScan
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, l := range lines {
			if _, ok := p.scanLine(l); !ok {
				b.Fatal("not decoded in place")
			}
		}
	}
}

// BenchmarkParseCorpus parses every Codex rollout of the fixture corpus
// (read in place), with the in-place decoder (scan) and the typed one only
// (typed), with and without content (and Raw).
func BenchmarkParseCorpus(b *testing.B) {
	vendortest.SkipIfAbsent(b, filepath.Join(testenv.FixtureRoots(b)[0], "codex"))
	var files [][]vendortest.Line
	var size int64
	for _, dir := range testenv.FixturePaths(b, "codex") {
		for _, name := range vendortest.Files(b, dir, ".jsonl") {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				b.Fatal(err)
			}
			files = append(files, splitLines(data))
			size += int64(len(data))
		}
	}
	if len(files) == 0 {
		b.Fatal("the Codex corpus is there but holds no rollout")
	}
	for _, mode := range []struct {
		name    string
		opts    Options
		decoder decoder
	}{
		{"scan", Options{}, decodeScan},
		{"typed", Options{}, decodeTyped},
		{"scan_without_content", Options{OmitContent: true, OmitRaw: true}, decodeScan},
		{"typed_without_content", Options{OmitContent: true, OmitRaw: true}, decodeTyped},
	} {
		b.Run(mode.name, func(b *testing.B) {
			b.SetBytes(size)
			b.ReportAllocs()
			for b.Loop() {
				for _, lines := range files {
					p := NewParserWithOptions("f.jsonl", mode.opts)
					p.decoder = mode.decoder
					for _, l := range lines {
						p.Parse(l.Data, l.No, l.Offset)
					}
				}
			}
		})
	}
}
