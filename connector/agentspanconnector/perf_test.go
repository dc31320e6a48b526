// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/state"
	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/storagecodec"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// corpusFiles parses every Claude Code, Codex and Pi session file of the
// fixture roots (read in place) as the receiver would, one slice of events
// per file.
func corpusFiles(tb testing.TB) [][]agentevent.Event {
	tb.Helper()
	roots := vendortest.FixtureRoots(tb)
	vendortest.SkipIfAbsent(tb, roots[0])
	var files [][]agentevent.Event
	for _, root := range roots {
		for _, agent := range []string{"claude_code", "codex", "pi"} {
			dir := filepath.Join(root, agent)
			if _, err := os.Stat(dir); os.IsNotExist(err) {
				continue
			}
			require.NoError(tb, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
					files = append(files, parseFixture(tb, agent, p))
				}
				return err
			}))
		}
	}
	require.NotEmpty(tb, files)
	return files
}

// memClient is a storage.Client over a map: storage that costs next to
// nothing, so that a profile shows the connector's own work (its encoding
// and compression of what it saves included, through storagecodec.Wrap as
// Start does).
type memClient map[string][]byte

func (m memClient) Get(_ context.Context, key string) ([]byte, error) { return m[key], nil }

func (m memClient) Set(_ context.Context, key string, value []byte) error {
	m[key] = value
	return nil
}

func (m memClient) Delete(_ context.Context, key string) error {
	delete(m, key)
	return nil
}

func (m memClient) Batch(ctx context.Context, ops ...*storage.Operation) error {
	for _, op := range ops {
		switch op.Type {
		case storage.Get:
			op.Value, _ = m.Get(ctx, op.Key)
		case storage.Set:
			_ = m.Set(ctx, op.Key, op.Value)
		case storage.Delete:
			_ = m.Delete(ctx, op.Key)
		}
	}
	return nil
}

func (memClient) Close(context.Context) error { return nil }

// spanCounter is a nop consumer of traces that counts the spans.
type spanCounter struct{ spans int }

func (*spanCounter) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (s *spanCounter) ConsumeTraces(_ context.Context, td ptrace.Traces) error {
	s.spans += td.SpanCount()
	return nil
}

// readBatches splits each file's records into reads of size records, the
// last read of a file flagged caught up, as the receiver hands a history
// over.
func readBatches(files [][]agentevent.Event, size int) []plog.Logs {
	var out []plog.Logs
	for _, evs := range files {
		for i := 0; i < len(evs); i += size {
			j := min(i+size, len(evs))
			ld := agentevent.EncodeLogs(evs[i:j], "host1")
			if j == len(evs) {
				ld = markCaughtUp(ld)
			}
			out = append(out, ld)
		}
	}
	return out
}

// BenchmarkConsumeFixtures reads a copy of every Claude Code, Codex and Pi
// session of the fixture corpus per iteration, as a backfill with the
// receiver's defaults does (no content, no raw records; reads of
// 100 records per file, the last flagged caught up, the wall clock a year
// after the events), through the connector with storage (a map, through
// the storage codec) into a nop consumer: the decode, the turns, their
// spans and the state saved per ConsumeLogs. Profile it with
// go test -run '^$' -bench ConsumeFixtures -cpuprofile cpu.out ./connector/agentspanconnector/
func BenchmarkConsumeFixtures(b *testing.B) {
	pass, ev, links, pre := verifyPass, verifyEvict, verifyLinks, verifyPreambles
	verifyPass, verifyEvict, verifyLinks, verifyPreambles = nil, nil, nil, nil
	defer func() { verifyPass, verifyEvict, verifyLinks, verifyPreambles = pass, ev, links, pre }()
	files := corpusFiles(b)
	for _, f := range files {
		for i := range f {
			// As the receiver sends them by default (include_content and
			// include_raw off).
			f[i].Raw = nil
			agentevent.StripContent(&f[i])
		}
	}
	events := 0
	for _, f := range files {
		events += len(f)
	}
	h := newHarness(b)
	sink := &spanCounter{}
	h.c.next = sink
	client := memClient{}
	h.c.client = storagecodec.Wrap(client, nil)
	h.c.asm.saved.load = state.StorageLoader{Ctx: b.Context(), Client: h.c.client, Unreadable: func(string, error) {}}
	h.history()
	h.c.started = true
	b.ReportAllocs()
	r := 0
	for b.Loop() {
		b.StopTimer()
		copies := make([][]agentevent.Event, len(files))
		for i, f := range files {
			copies[i] = copyOf(f, r)
		}
		r++
		batches := readBatches(copies, 100)
		b.StartTimer()
		for _, ld := range batches {
			if err := h.c.ConsumeLogs(b.Context(), ld); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
	b.ReportMetric(float64(events), "events/op")
	b.ReportMetric(float64(sink.spans)/float64(b.N), "spans/op")
}
