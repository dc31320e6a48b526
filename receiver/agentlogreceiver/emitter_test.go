// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/metadatatest"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/testfiles"
)

// TestBadRecordLogsAreRateLimited: the first bad record of each reason in
// a file is logged with its line; later ones are counted, and their number
// logged once when the receiver stops.
func TestBadRecordLogsAreRateLimited(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p", "s1.jsonl")
	testfiles.WriteFile(t, path,
		userLine("u1", "s1", "one"),
		unknownLine("x1", "s1"),
		`{not json`,
		unknownLine("x2", "s1"),
		unknownLine("x3", "s1"),
	)
	h := newHarness(t, testConfig(dir), nil)
	h.start()
	h.waitEvents(path, 1)
	h.barrier(dir)
	assertUnparsed(t, h, map[string]int64{"unknown_type": 3, "malformed_json": 1})
	logged := h.badRecordLogs()
	require.Len(t, logged, 2, "one line per file and reason")
	assert.Equal(t, int64(2), logged[0].ContextMap()["line"])
	assert.Equal(t, "unknown_type", logged[0].ContextMap()["reason"])
	assert.Equal(t, int64(3), logged[1].ContextMap()["line"])
	h.stop()
	summary := h.logs.FilterMessageSnippet("More records of this file could not be mapped").All()
	require.Len(t, summary, 1)
	assert.Equal(t, int64(2), summary[0].ContextMap()["count"])
	assert.Equal(t, path, summary[0].ContextMap()["path"])
}

// TestRefusalPastMaxElapsedTimeIsDropped: with max_elapsed_time set, a
// batch refused for that long is dropped, logged, and reading goes on.
func TestRefusalPastMaxElapsedTimeIsDropped(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p", "s1.jsonl")
	testfiles.WriteFile(t, path, userLine("u1", "s1", "one"))
	cfg := testConfig(dir)
	cfg.RetryOnFailure.InitialInterval = time.Millisecond
	cfg.RetryOnFailure.MaxInterval = time.Millisecond
	cfg.RetryOnFailure.MaxElapsedTime = 20 * time.Millisecond
	next := &refuseAll{}
	h := newHarness(t, cfg, nil)
	rcv, err := newReceiver(h.rcv.set, h.cfg, next, registered())
	require.NoError(t, err)
	h.rcv = rcv
	h.start()
	require.Eventually(t, func() bool {
		return h.logs.FilterMessageSnippet("kept refusing agent events for retry_on_failure::max_elapsed_time").Len() == 1
	}, 10*time.Second, 5*time.Millisecond)
	assert.Greater(t, next.calls.Load(), int64(1), "retried before giving up")
	metadatatest.AssertEqualAgentLogEventsDropped(t, h.tel, []metricdata.DataPoint[int64]{{
		Attributes: attribute.NewSet(attribute.String("agent", "claude_code"), attribute.String("reason", "max_elapsed_time")),
		Value:      1,
	}}, metricdatatest.IgnoreTimestamp(), metricdatatest.IgnoreExemplars())
}

// blockingConsumer never returns until released.
type blockingConsumer struct {
	entered chan struct{}
	release chan struct{}
}

func (*blockingConsumer) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (b *blockingConsumer) ConsumeLogs(context.Context, plog.Logs) error {
	select {
	case b.entered <- struct{}{}:
	default:
	}
	<-b.release
	return nil
}

// TestShutdownHonoursItsContext: a next consumer that never returns does
// not hold Shutdown past its context.
func TestShutdownHonoursItsContext(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p", "s1.jsonl")
	testfiles.WriteFile(t, path, userLine("u1", "s1", "one"))
	next := &blockingConsumer{entered: make(chan struct{}, 1), release: make(chan struct{})}
	h := newHarness(t, testConfig(dir), nil)
	rcv, err := newReceiver(h.rcv.set, h.cfg, next, registered())
	require.NoError(t, err)
	h.rcv = rcv
	h.start()
	<-next.entered
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	err = h.rcv.Shutdown(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	close(next.release) // the stop finishes in the background
}
