// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/metadatatest"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/testfiles"
)

// harness runs one receiver against a sink, with observable self-telemetry
// and logs.
type harness struct {
	t    *testing.T
	cfg  *Config
	sink *consumertest.LogsSink
	tel  *componenttest.Telemetry
	logs *observer.ObservedLogs
	rcv  *logsReceiver
	host component.Host
	// barriers counts the one-line files barrier created.
	barriers int64
	// patience is how long waitEvents (and so barrier) waits: a poll over
	// many thousand files on a loaded machine takes more than the default.
	patience time.Duration
}

// testConfig reads *.jsonl below dir, polling fast.
func testConfig(dir string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.PollInterval = 10 * time.Millisecond
	// Claude Code only: the other agents' tests enable theirs with their
	// own files.
	for _, a := range registered() {
		a.config(cfg).Enabled = false
	}
	cfg.ClaudeCode.Enabled = true
	cfg.ClaudeCode.Include = []string{filepath.Join(dir, "**", "*.jsonl")}
	return cfg
}

// newHarness builds a receiver on cfg. Rewritten files settle after 50ms
// unless an option says otherwise.
func newHarness(t *testing.T, cfg *Config, host component.Host, opts ...option) *harness {
	t.Helper()
	if host == nil {
		host = componenttest.NewNopHost()
	}
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	core, logs := observer.New(zapcore.InfoLevel)
	set := metadatatest.NewSettings(tel)
	set.Logger = zap.New(core)
	sink := new(consumertest.LogsSink)
	rcv, err := newReceiver(set, cfg, sink, registered(), append([]option{withSettleDelay(50 * time.Millisecond)}, opts...)...)
	require.NoError(t, err)
	return &harness{t: t, cfg: cfg, sink: sink, tel: tel, logs: logs, rcv: rcv, host: host, patience: 20 * time.Second}
}

func (h *harness) start() {
	h.t.Helper()
	require.NoError(h.t, h.rcv.Start(context.Background(), h.host))
	h.t.Cleanup(func() { require.NoError(h.t, h.rcv.Shutdown(context.Background())) })
}

func (h *harness) stop() {
	h.t.Helper()
	require.NoError(h.t, h.rcv.Shutdown(context.Background()))
}

// events decodes everything the sink received, in arrival order.
func (h *harness) events() []agentevent.Event {
	var all []agentevent.Event
	for _, l := range h.sink.AllLogs() {
		evs, skipped := agentevent.DecodeLogs(l)
		require.Zero(h.t, skipped)
		for i := range evs {
			// The wire-only flag (see caughtup_test.go) is no part of the event.
			delete(evs[i].Attributes, agentevent.AttrReadCaughtUp)
			if len(evs[i].Attributes) == 0 {
				evs[i].Attributes = nil
			}
		}
		all = append(all, evs...)
	}
	return all
}

// eventsOf returns the events read from one file.
func (h *harness) eventsOf(path string) []agentevent.Event {
	var out []agentevent.Event
	all := h.events()
	for i := range all {
		ev := &all[i]
		if ev.LogFile == path {
			out = append(out, *ev)
		}
	}
	return out
}

func (h *harness) waitEvents(path string, n int) []agentevent.Event {
	h.t.Helper()
	require.Eventually(h.t, func() bool { return len(h.eventsOf(path)) >= n }, h.patience, 5*time.Millisecond,
		"waiting for %d events from %s", n, path)
	return h.eventsOf(path)
}

var barrierSeq atomic.Int64

// barrier returns once the receiver has completed a poll that started after
// the call: it creates a new file, which only a poll that matched the
// include patterns after its creation can find, and waits for its event.
// That poll may still be reading other files when the event arrives (files
// are read concurrently; snapshot sources read them in path order): a
// second file, written then, is found by the next poll only, which starts
// once the first is over. The barriers wait for both (twoPolls).
func (h *harness) barrier(dir string) {
	h.t.Helper()
	h.twoPolls(func(n int64) {
		path := filepath.Join(dir, fmt.Sprintf("barrier-%d.jsonl", n))
		testfiles.WriteFile(h.t, path, userLine(fmt.Sprintf("barrier-%d", n), "barrier-session", "poll barrier"))
		h.waitEvents(path, 1)
	})
}

// twoPolls runs one barrier file's write-and-wait twice (see barrier).
func (h *harness) twoPolls(one func(n int64)) {
	h.t.Helper()
	for range 2 {
		h.barriers++
		one(barrierSeq.Add(1))
	}
}

// warnings returns the Warn logs about bad records.
func (h *harness) badRecordLogs() []observer.LoggedEntry {
	return h.logs.FilterLevelExact(zapcore.WarnLevel).FilterMessageSnippet("could not be mapped").All()
}

// Claude Code rows, shaped as in real transcripts (own content).

const testVersion = "2.1.0"

func userLine(uuid, session, text string) string {
	return fmt.Sprintf(`{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/home/dev/proj","sessionId":%q,"version":%q,"gitBranch":"main","type":"user","message":{"role":"user","content":%q},"uuid":%q,"timestamp":"2025-06-01T10:00:00.000Z"}`,
		session, testVersion, text, uuid)
}

func assistantLine(uuid, parent, session, msgID, text string) string {
	return fmt.Sprintf(`{"parentUuid":%q,"isSidechain":false,"userType":"external","cwd":"/home/dev/proj","sessionId":%q,"version":%q,"gitBranch":"main","message":{"id":%q,"type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"text","text":%q}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5,"service_tier":"standard"}},"requestId":"req_%s","type":"assistant","uuid":%q,"timestamp":"2025-06-01T10:00:01.000Z"}`,
		parent, session, testVersion, msgID, text, msgID, uuid)
}

// unknownLine is a record type no parser knows.
func unknownLine(uuid, session string) string { //nolint:unparam // the session is spelled at the call, as for userLine and assistantLine
	return fmt.Sprintf(`{"type":"hologram-projection","uuid":%q,"sessionId":%q,"version":%q,"timestamp":"2025-06-01T10:00:02.000Z"}`,
		uuid, session, testVersion)
}
