// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumererror"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/jsonl"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/metadata"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/metadatatest"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/testfiles"
)

func agentSet(reason string) attribute.Set {
	if reason == "" {
		return attribute.NewSet(attribute.String("agent", "claude_code"))
	}
	return attribute.NewSet(attribute.String("agent", "claude_code"), attribute.String("reason", reason))
}

// assertUnparsed checks the unparsed counter holds exactly the given counts
// per reason.
func assertUnparsed(t *testing.T, h *harness, counts map[string]int64) {
	t.Helper()
	var dps []metricdata.DataPoint[int64]
	for reason, n := range counts {
		dps = append(dps, metricdata.DataPoint[int64]{Attributes: agentSet(reason), Value: n})
	}
	metadatatest.AssertEqualAgentLogRecordsUnparsed(t, h.tel, dps, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

func assertNoUnparsed(t *testing.T, h *harness) {
	t.Helper()
	_, err := h.tel.GetMetric("otelcol_agent_log_records_unparsed")
	assert.Error(t, err, "no record may be counted as unparsed")
	assert.Empty(t, h.badRecordLogs())
}

// assertBadRecordLogged checks exactly one Warn names this file and line.
func assertBadRecordLogged(t *testing.T, h *harness, path string, line int64, reason string) { //nolint:unparam // the line is spelled at the call, beside the records written
	t.Helper()
	var hits int
	entries := h.badRecordLogs()
	for i := range entries {
		e := &entries[i]
		m := e.ContextMap()
		if m["path"] == path && m["line"] == line {
			hits++
			assert.Equal(t, reason, m["reason"])
			assert.Equal(t, "claude_code", m["agent"])
		}
	}
	assert.Equal(t, 1, hits, "bad record %s:%d must be logged exactly once", path, line)
}

func eventIDs(evs []agentevent.Event) []string {
	ids := make([]string, len(evs))
	for i := range evs {
		ids[i] = evs[i].EventID
	}
	return ids
}

func TestMalformedLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p", "s1.jsonl")
	testfiles.WriteFile(t, path,
		userLine("u1", "s1", "first"),
		`{"type":"user","uuid":"u-broken","message":{"content":"cut`,
		assistantLine("a1", "u1", "s1", "msg_1", "answer"),
	)
	h := newHarness(t, testConfig(dir), nil)
	h.start()
	evs := h.waitEvents(path, 2)
	h.barrier(dir)
	assert.Equal(t, []string{"u1", "a1"}, eventIDs(h.eventsOf(path)), "the records around the bad one are emitted")
	assert.Equal(t, []int64{1, 3}, []int64{evs[0].LogLine, evs[1].LogLine})
	assertUnparsed(t, h, map[string]int64{"malformed_json": 1})
	assertBadRecordLogged(t, h, path, 2, "malformed_json")
}

func TestUnknownRecordType(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p", "s1.jsonl")
	testfiles.WriteFile(t, path,
		userLine("u1", "s1", "first"),
		unknownLine("x1", "s1"),
		assistantLine("a1", "u1", "s1", "msg_1", "answer"),
	)
	h := newHarness(t, testConfig(dir), nil)
	h.start()
	h.waitEvents(path, 2)
	h.barrier(dir)
	assert.Equal(t, []string{"u1", "a1"}, eventIDs(h.eventsOf(path)))
	assertUnparsed(t, h, map[string]int64{"unknown_type": 1})
	assertBadRecordLogged(t, h, path, 2, "unknown_type")
}

// forceFlushPeriod is file_log's default force_flush_period, after which it
// emits an unterminated last line; the receiver never does.
const forceFlushPeriod = 500 * time.Millisecond

func TestHalfWrittenLastLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p", "s1.jsonl")
	second := assistantLine("a1", "u1", "s1", "msg_1", "a complete answer")
	cut := len(second) / 2
	testfiles.WriteFile(t, path, userLine("u1", "s1", "question"))
	testfiles.AppendFile(t, path, second[:cut])

	h := newHarness(t, testConfig(dir), nil)
	h.start()
	h.waitEvents(path, 1)
	// Polls read the unterminated line and must leave it alone, also after
	// file_log's force-flush period (500ms by default) has passed: keep
	// polling for twice that long.
	for start := time.Now(); time.Since(start) < 2*forceFlushPeriod; {
		h.barrier(dir)
	}
	require.Len(t, h.eventsOf(path), 1, "a half-written line is not emitted")
	assertNoUnparsed(t, h) // nor taken for a malformed record

	testfiles.AppendFile(t, path, second[cut:]+"\n")
	h.waitEvents(path, 2)
	h.barrier(dir)
	evs := h.eventsOf(path)
	require.Len(t, evs, 2, "the completed line is emitted exactly once")
	assert.Equal(t, "a1", evs[1].EventID)
	assert.Equal(t, int64(2), evs[1].LogLine)
	assertNoUnparsed(t, h)
}

func TestEmptyFile(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "p", "empty.jsonl")
	full := filepath.Join(dir, "p", "full.jsonl")
	testfiles.WriteFile(t, empty)
	testfiles.WriteFile(t, full, userLine("u1", "s1", "hi"), assistantLine("a1", "u1", "s1", "msg_1", "hello"))

	h := newHarness(t, testConfig(dir), nil)
	h.start()
	h.waitEvents(full, 2)
	h.barrier(dir)
	assert.Empty(t, h.eventsOf(empty))
	assertNoUnparsed(t, h)

	// The empty file becomes a session later: it is read from its start.
	testfiles.AppendFile(t, empty, testfiles.JoinLines(userLine("u2", "s2", "later")))
	evs := h.waitEvents(empty, 1)
	assert.Equal(t, "u2", evs[0].EventID)
	assert.Equal(t, int64(1), evs[0].LogLine)
	assertNoUnparsed(t, h)
}

func TestHugeLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p", "s1.jsonl")
	big := strings.Repeat("x", 20*1024*1024) // a 20 MB tool output, say
	testfiles.WriteFile(t, path,
		userLine("u1", "s1", "paste this"),
		assistantLine("a1", "u1", "s1", "msg_1", big),
		assistantLine("a2", "u1", "s1", "msg_2", "done"),
	)
	cfg := testConfig(dir)
	cfg.IncludeContent = true
	h := newHarness(t, cfg, nil)
	h.start()
	evs := h.waitEvents(path, 3)
	assert.Equal(t, []string{"u1", "a1", "a2"}, eventIDs(evs))
	assert.Len(t, evs[1].Text, len(big), "the 20 MB line arrives whole")
	assert.Equal(t, []int64{1, 2, 3}, []int64{evs[0].LogLine, evs[1].LogLine, evs[2].LogLine})
	assertNoUnparsed(t, h)
}

func TestLineLongerThanMaxLogSize(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p", "s1.jsonl")
	testfiles.WriteFile(t, path,
		userLine("u1", "s1", "paste this"),
		assistantLine("a1", "u1", "s1", "msg_1", strings.Repeat("y", 300*1024)),
		assistantLine("a2", "u1", "s1", "msg_2", "done"),
	)
	cfg := testConfig(dir)
	cfg.MaxLogSize = 64 * 1024
	h := newHarness(t, cfg, nil)
	h.start()
	h.waitEvents(path, 2)
	h.barrier(dir)
	evs := h.eventsOf(path)
	assert.Equal(t, []string{"u1", "a2"}, eventIDs(evs))
	assert.Equal(t, int64(3), evs[1].LogLine, "line numbers stay right after the skipped line")
	assertUnparsed(t, h, map[string]int64{jsonl.ReasonLineTooLong: 1})
	assertBadRecordLogged(t, h, path, 2, jsonl.ReasonLineTooLong)
}

func TestEmitUnparsed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p", "s1.jsonl")
	testfiles.WriteFile(t, path,
		userLine("u1", "s1", "first"),
		`{"type":"user","uuid":"u-broken","message":{"content":"cut`,
		unknownLine("x1", "s1"),
		assistantLine("a1", "u1", "s1", "msg_1", strings.Repeat("y", 300*1024)),
		assistantLine("a2", "u1", "s1", "msg_2", "answer"),
	)
	cfg := testConfig(dir)
	cfg.EmitUnparsed, cfg.IncludeRaw = true, true
	cfg.MaxLogSize = 64 * 1024
	h := newHarness(t, cfg, nil)
	h.start()
	h.waitEvents(path, 5)
	h.barrier(dir)
	evs := h.eventsOf(path)
	require.Len(t, evs, 5, "the good records and one event per bad record")
	want := map[int64]string{2: "malformed_json", 3: "unknown_type", 4: jsonl.ReasonLineTooLong}
	for _, ev := range evs {
		reason, bad := want[ev.LogLine]
		if !bad {
			assert.Empty(t, ev.Unparsed, "line %d", ev.LogLine)
			continue
		}
		assert.Equal(t, reason, ev.Unparsed, "line %d", ev.LogLine)
		assert.Equal(t, agentevent.TypeLog, ev.Type)
		assert.Equal(t, agentevent.RoleSystem, ev.Role)
		assert.Equal(t, path, ev.LogFile)
		assert.NotEmpty(t, ev.EventID)
		if reason != jsonl.ReasonLineTooLong {
			assert.NotEmpty(t, ev.Raw, "include_raw keeps the bad record")
		}
	}
	// Still counted and logged, as without emit_unparsed.
	assertUnparsed(t, h, map[string]int64{"malformed_json": 1, "unknown_type": 1, jsonl.ReasonLineTooLong: 1})
	assertBadRecordLogged(t, h, path, 2, "malformed_json")
}

func TestLiveAppend(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p", "s1.jsonl")
	testfiles.WriteFile(t, path, userLine("u1", "s1", "one"), assistantLine("a1", "u1", "s1", "msg_1", "one!"))
	h := newHarness(t, testConfig(dir), nil)
	h.start()
	h.waitEvents(path, 2)

	testfiles.AppendFile(t, path, testfiles.JoinLines(userLine("u2", "s1", "two"), assistantLine("a2", "u2", "s1", "msg_2", "two!")))
	h.waitEvents(path, 4)
	testfiles.AppendFile(t, path, testfiles.JoinLines(userLine("u3", "s1", "three")))
	h.waitEvents(path, 5)
	h.barrier(dir)
	evs := h.eventsOf(path)
	assert.Equal(t, []string{"u1", "a1", "u2", "a2", "u3"}, eventIDs(evs), "new records arrive, none twice")
	assert.Equal(t, "u2", evs[3].ParentEventID)
	metadatatest.AssertEqualAgentLogRecordsRead(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: agentSet(""), Value: 5 + h.barriers}, // each barrier file holds one line
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

func TestEmittedRecordShape(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p", "s1.jsonl")
	testfiles.WriteFile(t, path, userLine("u1", "s1", "hi"), assistantLine("a1", "u1", "s1", "msg_1", "hello"))
	h := newHarness(t, testConfig(dir), nil)
	h.start()
	h.waitEvents(path, 2)

	hostname, err := os.Hostname()
	require.NoError(t, err)
	var names []string
	for _, l := range h.sink.AllLogs() {
		for i := 0; i < l.ResourceLogs().Len(); i++ {
			rl := l.ResourceLogs().At(i)
			attrs := rl.Resource().Attributes().AsRaw()
			if attrs["service.version"] == nil {
				continue // barrier or other files
			}
			assert.Equal(t, "claude-code", attrs["service.name"])
			assert.Equal(t, testVersion, attrs["service.version"])
			assert.Equal(t, hostname, attrs["host.name"])
			sl := rl.ScopeLogs().At(0)
			assert.Equal(t, metadata.ScopeName, sl.Scope().Name())
			for j := 0; j < sl.LogRecords().Len(); j++ {
				names = append(names, sl.LogRecords().At(j).EventName())
			}
		}
	}
	assert.Equal(t, []string{"agent.user_message", "agent.assistant_message"}, names)
	metadatatest.AssertEqualAgentLogEventsEmitted(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: agentSet(""), Value: 2},
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

func TestContentOffByDefault(t *testing.T) {
	for _, tt := range []struct {
		name                   string
		content, raw           bool
		wantText, wantRawBytes bool
	}{
		{name: "default"},
		{name: "include_content", content: true, wantText: true},
		{name: "include_raw", raw: true, wantRawBytes: true},
		{name: "both", content: true, raw: true, wantText: true, wantRawBytes: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "p", "s1.jsonl")
			lines := []string{userLine("u1", "s1", "secret prompt"), assistantLine("a1", "u1", "s1", "msg_1", "secret answer")}
			testfiles.WriteFile(t, path, lines...)
			cfg := testConfig(dir)
			cfg.IncludeContent, cfg.IncludeRaw = tt.content, tt.raw
			h := newHarness(t, cfg, nil)
			h.start()
			evs := h.waitEvents(path, 2)
			for i, ev := range evs {
				if tt.wantText {
					assert.NotEmpty(t, ev.Text)
				} else {
					assert.Empty(t, ev.Text, "content is off unless include_content")
				}
				if tt.wantRawBytes {
					assert.Equal(t, lines[i], string(ev.Raw))
				} else {
					assert.Nil(t, ev.Raw, "raw records are off unless include_raw")
				}
			}
			for _, l := range h.sink.AllLogs() {
				for i := 0; i < l.ResourceLogs().Len(); i++ {
					sl := l.ResourceLogs().At(i).ScopeLogs().At(0)
					for j := 0; j < sl.LogRecords().Len(); j++ {
						body := sl.LogRecords().At(j).Body().AsString()
						if !tt.content {
							assert.NotContains(t, body, "secret")
						}
					}
				}
			}
		})
	}
}

func TestBlankLinesAreNotBadRecords(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p", "s1.jsonl")
	testfiles.WriteFile(t, path, userLine("u1", "s1", "a"), "", "  \r", assistantLine("a1", "u1", "s1", "msg_1", "b"))
	h := newHarness(t, testConfig(dir), nil)
	h.start()
	evs := h.waitEvents(path, 2)
	h.barrier(dir)
	assert.Equal(t, int64(4), evs[1].LogLine)
	assertNoUnparsed(t, h)
}

func TestLifecycle(t *testing.T) {
	f := NewFactory()
	cfg := testConfig(t.TempDir())

	t.Run("shutdown_before_start", func(t *testing.T) {
		r, err := f.CreateLogs(t.Context(), receivertest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
		require.NoError(t, err)
		require.NoError(t, r.Shutdown(t.Context()))
		require.NoError(t, r.Shutdown(t.Context()))
	})
	t.Run("shutdown_twice", func(t *testing.T) {
		r, err := f.CreateLogs(t.Context(), receivertest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
		require.NoError(t, err)
		require.NoError(t, r.Start(t.Context(), componenttest.NewNopHost()))
		require.NoError(t, r.Shutdown(t.Context()))
		require.NoError(t, r.Shutdown(t.Context()))
	})
	t.Run("missing_storage_extension", func(t *testing.T) {
		c := *cfg
		id := component.MustNewIDWithName("file_storage", "absent")
		c.Storage = &id
		r, err := f.CreateLogs(t.Context(), receivertest.NewNopSettings(metadata.Type), &c, consumertest.NewNop())
		require.NoError(t, err)
		err = r.Start(t.Context(), componenttest.NewNopHost())
		require.Error(t, err)
		assert.Contains(t, err.Error(), "`storage`")
		assert.Contains(t, err.Error(), "file_storage/absent")
		require.NoError(t, r.Shutdown(t.Context()))
	})
}

func TestReplacedFileIsReadAgain(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p", "s1.jsonl")
	testfiles.WriteFile(t, path, userLine("u1", "s1", "old"), assistantLine("a1", "u1", "s1", "msg_1", "old answer"))
	h := newHarness(t, testConfig(dir), nil)
	h.start()
	h.waitEvents(path, 2)

	// Same path, new content (not an append): a new session file.
	require.NoError(t, os.Remove(path))
	testfiles.WriteFile(t, path, userLine("v1", "s9", "new"))
	evs := h.waitEvents(path, 3)
	assert.Equal(t, []string{"u1", "a1", "v1"}, eventIDs(evs))
	assert.Equal(t, 1, h.logs.FilterMessageSnippet("replaced").Len())
}

// failOnce refuses its first batch, then passes everything to the sink.
type failOnce struct {
	*consumertest.LogsSink
	failed atomic.Bool
}

func (f *failOnce) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	if f.failed.CompareAndSwap(false, true) {
		return errors.New("downstream unavailable")
	}
	return f.LogsSink.ConsumeLogs(ctx, ld)
}

// TestRetryableRefusalHoldsTheReadPosition: a retryable refusal by the next
// consumer is retried (the read position is not moved past the refused
// records); nothing is lost and reading goes on in order.
func TestRetryableRefusalHoldsTheReadPosition(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p", "s1.jsonl")
	testfiles.WriteFile(t, path, userLine("u1", "s1", "one"))
	cfg := testConfig(dir)
	cfg.RetryOnFailure.InitialInterval = time.Millisecond
	cfg.RetryOnFailure.MaxInterval = time.Millisecond
	h := newHarness(t, cfg, nil)
	next := &failOnce{LogsSink: h.sink}
	rcv, err := newReceiver(h.rcv.set, h.cfg, next, registered())
	require.NoError(t, err)
	h.rcv = rcv
	h.start()
	require.Eventually(t, func() bool { return next.failed.Load() }, 10*time.Second, 5*time.Millisecond)
	assert.Equal(t, []string{"u1"}, eventIDs(h.waitEvents(path, 1)), "the refused batch is retried")

	testfiles.AppendFile(t, path, testfiles.JoinLines(assistantLine("a1", "u1", "s1", "msg_1", "one!")))
	evs := h.waitEvents(path, 2)
	assert.Equal(t, []string{"u1", "a1"}, eventIDs(evs))
	assert.Equal(t, "u1", evs[1].ParentEventID)
	refused := h.logs.FilterMessageSnippet("refused").All()
	require.NotEmpty(t, refused)
	assert.Equal(t, path, refused[0].ContextMap()["path"])
	metadatatest.AssertEqualAgentLogEventsEmitted(t, h.tel, []metricdata.DataPoint[int64]{
		{Attributes: agentSet(""), Value: 2},
	}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

// refuseAll refuses everything, permanently or not.
type refuseAll struct {
	permanent bool
	calls     atomic.Int64
}

func (*refuseAll) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (r *refuseAll) ConsumeLogs(context.Context, plog.Logs) error {
	r.calls.Add(1)
	if r.permanent {
		return consumererror.NewPermanent(errors.New("malformed"))
	}
	return errors.New("downstream unavailable")
}

// TestPermanentRefusalIsDroppedAndCounted: a permanent error drops the
// batch (logged, counted as refused) and reading goes on.
func TestPermanentRefusalIsDroppedAndCounted(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p", "s1.jsonl")
	testfiles.WriteFile(t, path, userLine("u1", "s1", "one"), userLine("u2", "s1", "two"))
	h := newHarness(t, testConfig(dir), nil)
	next := &refuseAll{permanent: true}
	rcv, err := newReceiver(h.rcv.set, h.cfg, next, registered())
	require.NoError(t, err)
	h.rcv = rcv
	h.start()
	require.Eventually(t, func() bool {
		return h.logs.FilterMessageSnippet("refused agent events permanently").Len() == 1
	}, 10*time.Second, 5*time.Millisecond)
	testfiles.AppendFile(t, path, testfiles.JoinLines(userLine("u3", "s1", "three")))
	require.Eventually(t, func() bool { return next.calls.Load() == 2 }, 10*time.Second, 5*time.Millisecond,
		"reading goes on past a permanently refused batch, which is not retried")
	h.stop()
	assert.Equal(t, int64(2), next.calls.Load())
	refused, err := h.tel.GetMetric("otelcol_receiver_refused_log_records")
	require.NoError(t, err)
	var n int64
	for _, dp := range refused.Data.(metricdata.Sum[int64]).DataPoints {
		n += dp.Value
	}
	assert.Equal(t, int64(3), n, "the dropped events are counted as refused")
	metadatatest.AssertEqualAgentLogEventsDropped(t, h.tel, []metricdata.DataPoint[int64]{{
		Attributes: attribute.NewSet(attribute.String("agent", "claude_code"), attribute.String("reason", "permanent")),
		Value:      3,
	}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

// TestRefusalUntilShutdownIsReadAgain: the next consumer refuses until the
// receiver stops; the read positions of that run are not saved, so the
// next run emits the refused records, once, and nothing else twice.
func TestRefusalUntilShutdownIsReadAgain(t *testing.T) {
	s := newRestartSetup(t)
	h := newHarness(t, s.cfg, s.host)
	h.start()
	require.Equal(t, []string{"u1", "a1", "u2"}, eventIDs(h.waitEvents(s.path, 3)))
	h.barrier(s.logsDir)
	h.stop()

	refusing := &refuseAll{}
	h2 := newHarness(t, s.cfg, s.host)
	rcv, err := newReceiver(h2.rcv.set, h2.cfg, refusing, registered())
	require.NoError(t, err)
	h2.rcv = rcv
	h2.start()
	testfiles.AppendFile(t, s.path, testfiles.JoinLines(assistantLine("a2", "u2", "s1", "msg_2", "two!")))
	require.Eventually(t, func() bool { return refusing.calls.Load() >= 2 }, 10*time.Second, 5*time.Millisecond)
	h2.stop()

	h3 := newHarness(t, s.cfg, s.host)
	h3.start()
	h3.waitEvents(s.path, 1)
	h3.barrier(s.logsDir)
	evs := h3.eventsOf(s.path)
	assert.Equal(t, []string{"a2"}, eventIDs(evs), "the refused record comes in the next run, once")
	assert.Equal(t, "u2", evs[0].ParentEventID)
}

// TestContentAttributesOffByDefault: a file tool's diff (agent.content.*) is
// content and stays out of the records unless include_content is set, while
// the always-on facts about the change stay in.
func TestContentAttributesOffByDefault(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "claude_code", "turn_rollup", "5b7e9d1f-2c4a-4e6b-8d0f-1a3c5e7b9d2f.jsonl"))
	require.NoError(t, err)
	for _, content := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, "p", "5b7e9d1f-2c4a-4e6b-8d0f-1a3c5e7b9d2f.jsonl")
		writeBytes(t, path, src)
		cfg := testConfig(dir)
		cfg.IncludeContent = content
		h := newHarness(t, cfg, nil)
		h.start()
		count := func() (diffs, facts int) {
			for _, ev := range h.eventsOf(path) {
				if _, ok := ev.Attributes[agentevent.AttrFileDiff]; ok {
					diffs++
				}
				if _, ok := ev.Attributes["agent.file.lines_added"]; ok {
					facts++
				}
			}
			return diffs, facts
		}
		require.Eventually(t, func() bool { _, facts := count(); return facts == 5 },
			10*time.Second, 10*time.Millisecond, "include_content=%v: the change facts of all 5 file changes are always on", content)
		h.barrier(dir)
		diffs, _ := count()
		if content {
			assert.Positive(t, diffs, "include_content: the diffs are kept")
		} else {
			assert.Zero(t, diffs, "the diffs are content")
		}
	}
}
