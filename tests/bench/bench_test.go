// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package bench

import (
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/agentotel/agentotel/connector/agentspanconnector"
	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/claudecode"
)

// parseFile runs one replica through the Claude Code parser, as the receiver does line by line.
func parseFile(f sessionFile, out []agentevent.Event) []agentevent.Event {
	return parseFileWith(f, claudecode.Options{}, out)
}

// parseFileWith is parseFile with parser options.
func parseFileWith(f sessionFile, opts claudecode.Options, out []agentevent.Event) []agentevent.Event {
	p := claudecode.NewParserWithOptions(f.path, opts)
	var offset int64
	for i, line := range f.lines {
		out = append(out, p.Parse(line, int64(i+1), offset)...)
		offset += int64(len(line)) + 1
	}
	return out
}

// BenchmarkParse measures vendor records → AgentEvents (MB/s of session files, allocations).
func BenchmarkParse(b *testing.B) { benchmarkParse(b, claudecode.Options{}) }

// BenchmarkParseWithoutContent is BenchmarkParse as the receiver parses by default: without
// include_content and include_raw.
func BenchmarkParseWithoutContent(b *testing.B) {
	benchmarkParse(b, claudecode.Options{OmitContent: true, OmitRaw: true})
}

func benchmarkParse(b *testing.B, opts claudecode.Options) {
	files, total := buildCorpus(b, corpusTarget())
	b.SetBytes(total)
	b.ReportAllocs()
	b.ResetTimer()
	var events int
	for range b.N {
		events = 0
		buf := make([]agentevent.Event, 0, 4096)
		for _, f := range files {
			buf = parseFileWith(f, opts, buf[:0])
			events += len(buf)
		}
	}
	b.ReportMetric(float64(events), "events/op")
}

// BenchmarkParseToSpans measures the whole mapping path: records → AgentEvents → OTel log records
// (the receiver's output) → the agent_span connector → spans. Turns are history, so each closes as
// soon as its successor arrives.
func BenchmarkParseToSpans(b *testing.B) {
	files, total := buildCorpus(b, corpusTarget())
	b.SetBytes(total)
	b.ReportAllocs()
	b.ResetTimer()
	var spans int
	for range b.N {
		b.StopTimer()
		sink := new(consumertest.TracesSink)
		f := agentspanconnector.NewFactory()
		conn, err := f.CreateLogsToTraces(b.Context(), connectortest.NewNopSettings(f.Type()), f.CreateDefaultConfig(), sink)
		if err != nil {
			b.Fatal(err)
		}
		if err := conn.Start(b.Context(), componenttest.NewNopHost()); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		buf := make([]agentevent.Event, 0, 4096)
		for _, file := range files {
			buf = parseFile(file, buf[:0])
			if err := conn.ConsumeLogs(b.Context(), agentevent.EncodeLogs(buf, "bench")); err != nil {
				b.Fatal(err)
			}
		}
		if err := conn.Shutdown(b.Context()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		spans = sink.SpanCount()
		b.StartTimer()
	}
	b.ReportMetric(float64(spans), "spans/op")
}
