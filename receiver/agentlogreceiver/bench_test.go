// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/metadatatest"
	"github.com/agentotel/agentotel/tests/testenv"
	"github.com/agentotel/agentotel/tests/testenv/history"
)

// BenchmarkBackfillJSONL reads a Claude Code and Codex history made from the
// fixture roots (history.WriteHistoryShares: unique ids, each agent's
// default layout) from start to the end of every file, with storage, into a
// nop consumer: the JSONL path whole (tailer, parsers, emitter,
// per-session commits). One op is one backfill; ns/file and B/file divide it
// by the files read. The storage is storagetest's in-memory one, so bbolt's
// cost is not in it (make bench measures that).
func BenchmarkBackfillJSONL(b *testing.B) {
	roots := testenv.FixtureRoots(b)
	vendortest.SkipIfAbsent(b, roots[0])
	home := b.TempDir()
	h := history.WriteHistoryShares(b, roots, home, 16<<20, map[string]float64{"claude_code": 0.6, "codex": 0.4})
	var files int
	for _, f := range h.Files {
		if f.Lines > 0 {
			files++
		}
	}
	b.Logf("%d files, %.1f MB", files, float64(h.Bytes)/1e6)

	cfg := createDefaultConfig().(*Config)
	cfg.PollInterval = 20 * time.Millisecond
	for _, a := range registered() {
		a.config(cfg).Enabled = a.key == "claude_code" || a.key == "codex"
	}
	cfg.ClaudeCode.Include = []string{filepath.Join(home, ".claude", "projects", "**", "*.jsonl")}
	cfg.Codex.Include = []string{filepath.Join(home, ".codex", "sessions", "**", "*.jsonl")}

	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		ext := storagetest.NewInMemoryStorageExtension("state")
		cfg.Storage = &ext.ID
		host := storagetest.NewStorageHost().WithExtension(ext.ID, ext)
		tel := componenttest.NewTelemetry()
		set := metadatatest.NewSettings(tel)
		set.Logger = zap.NewNop()
		rcv, err := newReceiver(set, cfg, consumertest.NewNop(), registered())
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if err := rcv.Start(b.Context(), host); err != nil {
			b.Fatal(err)
		}
		for !backfillDone(rcv) {
			time.Sleep(time.Millisecond) //nolint:forbidigo // a benchmark polling for its end, not a test waiting
		}
		b.StopTimer()
		if err := rcv.Shutdown(b.Context()); err != nil {
			b.Fatal(err)
		}
		_ = tel.Shutdown(b.Context())
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*files), "ns/file")
}

// backfillDone tells whether every agent has read the history it found.
func backfillDone(r *logsReceiver) bool {
	r.mu.Lock()
	p := r.progress
	r.mu.Unlock()
	return p.Done()
}
