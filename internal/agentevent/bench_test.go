// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentevent

import (
	"maps"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/plog"
)

// goldenEvents are the events of every golden case of the vendor parsers
// (testdata/<agent>/<case>/events.yaml, made from real session files), in
// file order: real events with the attributes the parsers set. Raw is not in
// the golden files (the receiver drops it unless include_raw is on).
func goldenEvents(tb testing.TB) []Event {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "*", "*", "events.yaml"))
	require.NoError(tb, err)
	require.NotEmpty(tb, paths, "the golden events under testdata are committed")
	var all []Event
	for _, p := range paths {
		logs, err := golden.ReadLogs(p)
		require.NoError(tb, err, p)
		evs, skipped := DecodeLogs(logs)
		require.Zero(tb, skipped, p)
		require.NotEmpty(tb, evs, p)
		all = append(all, evs...)
	}
	return all
}

// benchSets are the golden events as they are (content on) and with their
// content stripped (the receiver's default).
func benchSets(b *testing.B) map[string][]Event {
	evs := goldenEvents(b)
	stripped := make([]Event, len(evs))
	for i := range evs {
		ev := evs[i] // a copy, stripped below
		if ev.Attributes != nil {
			m := make(map[string]any, len(ev.Attributes))
			maps.Copy(m, ev.Attributes)
			ev.Attributes = m
		}
		StripContent(&ev)
		stripped[i] = ev
	}
	return map[string][]Event{"content": evs, "nocontent": stripped}
}

// BenchmarkEncode encodes the golden events, one per op, into the records of
// a slice made for them (a fresh one each time round the set).
func BenchmarkEncode(b *testing.B) {
	for set, evs := range benchSets(b) {
		b.Run(set, func(b *testing.B) {
			b.ReportAllocs()
			defer cpuPerOp(b, 1)()
			lrs, i := plog.NewLogRecordSlice(), 0
			for b.Loop() {
				if i == 0 {
					lrs = plog.NewLogRecordSlice()
					lrs.EnsureCapacity(len(evs))
				}
				Encode(evs[i], lrs.AppendEmpty())
				i = (i + 1) % len(evs)
			}
		})
	}
}

// BenchmarkDecode decodes the records of the golden events, one per op.
func BenchmarkDecode(b *testing.B) {
	for set, evs := range benchSets(b) {
		lrs := plog.NewLogRecordSlice()
		for i := range evs {
			Encode(evs[i], lrs.AppendEmpty())
		}
		b.Run(set, func(b *testing.B) {
			b.ReportAllocs()
			defer cpuPerOp(b, 1)()
			i := 0
			for b.Loop() {
				if _, err := Decode(lrs.At(i)); err != nil {
					b.Fatal(err)
				}
				i = (i + 1) % lrs.Len()
			}
		})
	}
}

// BenchmarkRoundTrip is the whole hand-off, EncodeLogs then DecodeLogs
// (resource grouping included), of all golden events per op; ns/event is
// per event.
func BenchmarkRoundTrip(b *testing.B) {
	for set, evs := range benchSets(b) {
		b.Run(set, func(b *testing.B) {
			b.ReportAllocs()
			defer cpuPerOp(b, len(evs))()
			n := 0
			for b.Loop() {
				got, skipped := DecodeLogs(EncodeLogs(evs, "host"))
				if skipped != 0 || len(got) != len(evs) {
					b.Fatalf("skipped %d, got %d of %d", skipped, len(got), len(evs))
				}
				n += len(evs)
			}
			perEvent(b, n)
		})
	}
}

// cpuPerOp reports the CPU time the process spent per op (all threads: the
// garbage collector's share included), a figure that other processes on a
// busy machine disturb far less than the wall time ns/op is. Call the
// function it returns when the loop is done.
// With perOp events per op, the figure is per event (cpu-ns/event).
func cpuPerOp(b *testing.B, perOp int) func() {
	start := cpuTime()
	return func() {
		if b.N == 0 {
			return
		}
		cpu := float64((cpuTime() - start).Nanoseconds())
		if perOp == 1 {
			b.ReportMetric(cpu/float64(b.N), "cpu-ns/op")
		} else {
			b.ReportMetric(cpu/float64(b.N*perOp), "cpu-ns/event")
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// perEvent adds the per-event figures of a benchmark whose op is a batch.
func perEvent(b *testing.B, n int) {
	b.Helper()
	if n > 0 {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n), "ns/event")
	}
}
