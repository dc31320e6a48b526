// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/metadatatest"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/opencode"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/progress"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/snapshot"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/source"
	"github.com/agentotel/agentotel/tests/testenv"
	"github.com/agentotel/agentotel/tests/testenv/history"
)

// The benchmarks of the sources that are not tailed (OpenCode's JSON tree,
// the snapshot sources of Gemini CLI, Amp and Copilot CLI's history) over a
// history generated from ../shared/fixtures the way `make bench` generates
// it: the backfill (one first poll over the whole history, with a
// file-backed storage) and an idle poll (nothing changed since).
//
//	go test -run '^$' -bench 'OpenCodeTree|Snapshots' -benchmem ./receiver/agentlogreceiver/

// countingConsumer counts the log records and batches it is handed.
type countingConsumer struct {
	records, batches atomic.Int64
}

func (*countingConsumer) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (c *countingConsumer) ConsumeLogs(_ context.Context, ld plog.Logs) error {
	c.records.Add(int64(ld.LogRecordCount()))
	c.batches.Add(1)
	return nil
}

// benchHistory writes (once per benchmark) a history of about mb MB of the
// given agents below a temporary home.
func benchHistory(b *testing.B, mb int, agentShares map[string]float64) history.History {
	b.Helper()
	roots := testenv.FixtureRoots(b)
	vendortest.SkipIfAbsent(b, roots[0])
	h := history.WriteHistoryShares(b, roots, b.TempDir(), int64(mb)<<20, agentShares)
	// A history's directories are as old as its files.
	old := time.Now().Add(-48 * time.Hour)
	root, err := os.OpenRoot(h.Home)
	require.NoError(b, err)
	defer root.Close()
	require.NoError(b, fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			err = root.Chtimes(p, old, old)
		}
		return err
	}))
	return h
}

// benchSources builds the sources of the enabled agents of cfg without
// starting them (the benchmark polls them itself), on a fresh file-backed
// storage; stop closes the storage.
func benchSources(tb testing.TB, cfg *Config, next consumer.Logs) (srcs []source.Source, stop func()) {
	tb.Helper()
	ext := storagetest.NewFileBackedStorageExtension("state", tb.TempDir())
	cfg.Storage = &ext.ID
	return directSources(tb, cfg, next, storagetest.NewStorageHost().WithExtension(ext.ID, ext))
}

// directSources builds the sources of the enabled agents of cfg without
// starting them: the caller polls them (pollAll). stop closes the storage.
func directSources(tb testing.TB, cfg *Config, next consumer.Logs, host component.Host) (srcs []source.Source, stop func()) {
	tb.Helper()
	tel := componenttest.NewTelemetry()
	set := metadatatest.NewSettings(tel)
	set.Logger = zap.NewNop()
	r, err := newReceiver(set, cfg, next, registered())
	require.NoError(tb, err)
	ctx := tb.Context()
	require.NoError(tb, r.openStorage(ctx, host))
	r.progress = progress.New(r.set.Logger, r.telemetry, cfg.PollInterval, r.settle)
	env := agents.ProcessEnv()
	for _, a := range r.agents {
		ac := a.config(cfg)
		if !ac.Enabled {
			continue
		}
		src, err := r.newSource(ctx, host, a, ac, env, "bench", r.clock.now())
		require.NoError(tb, err)
		srcs = append(srcs, src)
	}
	return srcs, func() {
		// stop may run once the test's context is canceled (a cleanup).
		stopCtx := context.WithoutCancel(ctx)
		for _, s := range srcs {
			if ss, ok := s.(*snapshot.Source); ok {
				ss.Threads().Flush(stopCtx)
			}
		}
		_ = r.client.Close(stopCtx)
		_ = r.blobs.Close(stopCtx)
		_ = tel.Shutdown(stopCtx)
	}
}

// pollAll runs one poll of every source.
func pollAll(ctx context.Context, srcs []source.Source) {
	for _, s := range srcs {
		switch s := s.(type) {
		case *opencode.Source:
			s.Poll(ctx)
		case *snapshot.Source:
			s.Poll(ctx, false)
		case source.Group:
			pollAll(ctx, s)
		}
	}
}

func onlyAgents(cfg *Config, keys ...string) {
	for _, a := range registered() {
		on := false
		for _, k := range keys {
			on = on || a.key == k
		}
		a.config(cfg).Enabled = on
	}
}

func openCodeBenchConfig(home string) *Config {
	cfg := createDefaultConfig().(*Config)
	onlyAgents(cfg, "opencode")
	cfg.OpenCode.Include = []string{filepath.Join(home, ".local", "share", "opencode")}
	return cfg
}

func snapshotBenchConfig(home string) *Config {
	cfg := createDefaultConfig().(*Config)
	onlyAgents(cfg, "gemini", "amp", "copilot_cli")
	cfg.Gemini.Include = geminiPatterns(filepath.Join(home, ".gemini"))
	cfg.Amp.Include = []string{ampPattern(filepath.Join(home, ".local", "share", "amp"))}
	cfg.CopilotCLI.Include = []string{filepath.Join(home, ".copilot", "history-session-state", "*.json")}
	return cfg
}

var benchSnapshotShares = map[string]float64{"gemini": 1, "amp": 1, "copilot_cli": 1}

// BenchmarkOpenCodeTreeBackfill: the first poll over an OpenCode JSON tree
// of thousands of sessions (each a session, two messages and six parts).
func BenchmarkOpenCodeTreeBackfill(b *testing.B) {
	for _, mb := range []int{4, 16} {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			h := benchHistory(b, mb, map[string]float64{"opencode": 1})
			benchBackfill(b, h, openCodeBenchConfig(h.Home))
		})
	}
}

// BenchmarkOpenCodeTreeIdlePoll: a poll of the same tree once it has been
// read, nothing having changed.
func BenchmarkOpenCodeTreeIdlePoll(b *testing.B) {
	for _, mb := range []int{4, 16} {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			h := benchHistory(b, mb, map[string]float64{"opencode": 1})
			benchIdlePoll(b, openCodeBenchConfig(h.Home))
		})
	}
}

// BenchmarkSnapshotsBackfill: the first poll over Gemini chats, Amp threads
// and Copilot CLI history files.
func BenchmarkSnapshotsBackfill(b *testing.B) {
	for _, mb := range []int{16, 64} {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			h := benchHistory(b, mb, benchSnapshotShares)
			benchBackfill(b, h, snapshotBenchConfig(h.Home))
		})
	}
}

// BenchmarkSnapshotsIdlePoll: a poll of the same files once read.
func BenchmarkSnapshotsIdlePoll(b *testing.B) {
	for _, mb := range []int{16, 64} {
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			h := benchHistory(b, mb, benchSnapshotShares)
			benchIdlePoll(b, snapshotBenchConfig(h.Home))
		})
	}
}

// cpuTime is the process's user+system CPU time so far (the machine is
// shared: CPU time is steadier than wall time).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchBackfill(b *testing.B, h history.History, cfg *Config) {
	ctx := b.Context()
	var records, batches int64
	var cpu time.Duration
	b.SetBytes(h.Bytes)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		next := &countingConsumer{}
		srcs, stop := benchSources(b, cfg, next)
		b.StartTimer()
		c0 := cpuTime()
		pollAll(ctx, srcs)
		cpu += cpuTime() - c0
		b.StopTimer()
		stop()
		records, batches = next.records.Load(), next.batches.Load()
		b.StartTimer()
	}
	require.Positive(b, records)
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(len(h.Files)), "files")
	b.ReportMetric(float64(records), "records")
	b.ReportMetric(float64(batches), "batches")
}

func benchIdlePoll(b *testing.B, cfg *Config) {
	ctx := b.Context()
	next := &countingConsumer{}
	srcs, stop := benchSources(b, cfg, next)
	defer stop()
	pollAll(ctx, srcs)
	require.Positive(b, next.records.Load())
	read := next.records.Load()
	b.ResetTimer()
	c0 := cpuTime()
	for range b.N {
		pollAll(ctx, srcs)
	}
	b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
	b.StopTimer()
	require.Equal(b, read, next.records.Load(), "an idle poll emits nothing")
}
