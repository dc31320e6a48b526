// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/metadata"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/source"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/testfiles"
)

// slowConsumer hands what it is given to next after a pause (a consumer
// that makes each call durable, as the agent_span connector does), and
// counts the calls.
type slowConsumer struct {
	next  consumer.Logs
	pause time.Duration
	calls atomic.Int64
}

func (*slowConsumer) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }

func (c *slowConsumer) ConsumeLogs(ctx context.Context, ld plog.Logs) error {
	c.calls.Add(1)
	time.Sleep(c.pause) //nolint:forbidigo // the consumer's own cost, not a test waiting
	return c.next.ConsumeLogs(ctx, ld)
}

// countingStorage is an in-memory storage extension that counts the
// writes of JSONL file states (parser.* and first.* keys): a Set or a
// Batch holding any of them.
type countingStorage struct {
	*storagetest.TestStorage
	stateWrites atomic.Int64
}

func (s *countingStorage) GetClient(ctx context.Context, kind component.Kind, id component.ID, name string) (storage.Client, error) {
	c, err := s.TestStorage.GetClient(ctx, kind, id, name)
	if err != nil {
		return nil, err
	}
	return &countingStorageClient{Client: c, s: s}, nil
}

type countingStorageClient struct {
	storage.Client
	s *countingStorage
}

func isStateKey(k string) bool {
	return strings.Contains(k, ".parser.") || strings.Contains(k, ".first.")
}

func (c *countingStorageClient) Set(ctx context.Context, k string, v []byte) error {
	if isStateKey(k) {
		c.s.stateWrites.Add(1)
	}
	return c.Client.Set(ctx, k, v)
}

func (c *countingStorageClient) Batch(ctx context.Context, ops ...*storage.Operation) error {
	for _, op := range ops {
		if op.Type != storage.Get && isStateKey(op.Key) {
			c.s.stateWrites.Add(1)
			break
		}
	}
	return c.Client.Batch(ctx, ops...)
}

// TestGroupCommitBackfill: a history of many small files, read several at
// a time into a consumer that takes its time, goes out in fewer deliveries
// than files, with one storage write of file states per delivery. Each
// file's last record carries agent.read.caught_up, and no other, also where
// files of one session (a session and its subagents' files) share a
// delivery; the backfill's progress counts every file and byte.
func TestGroupCommitBackfill(t *testing.T) {
	dir := t.TempDir()
	const files = 48
	var total int64
	var paths []string
	for i := range files {
		session := fmt.Sprintf("s%d", i)
		if i%2 == 0 {
			session = "shared" // one session's files, as a session's subagent files are
		}
		path := filepath.Join(dir, "p", fmt.Sprintf("f%02d.jsonl", i))
		var lines []string
		for j := range 2 + i%5 {
			u, a := fmt.Sprintf("f%d-u%d", i, j), fmt.Sprintf("f%d-a%d", i, j)
			lines = append(lines, userLine(u, session, "q"), assistantLine(a, u, session, "msg_"+a, "a"))
		}
		testfiles.WriteFile(t, path, lines...)
		fi, err := os.Stat(path)
		require.NoError(t, err)
		total += fi.Size()
		paths = append(paths, path)
	}
	ext := &countingStorage{TestStorage: storagetest.NewInMemoryStorageExtension("state")}
	host := storagetest.NewStorageHost().WithExtension(ext.ID, ext)
	cfg := testConfig(dir)
	cfg.Storage = &ext.ID
	h := newHarness(t, cfg, host)
	next := &slowConsumer{next: h.sink, pause: 10 * time.Millisecond}
	rcv, err := newReceiver(h.rcv.set, h.cfg, next, registered(), withSettleDelay(50*time.Millisecond))
	require.NoError(t, err)
	h.rcv = rcv
	h.start()
	const summary = "claude_code: history read in"
	require.Eventually(t, func() bool { return h.logs.FilterMessageSnippet(summary).Len() == 1 }, 30*time.Second, 10*time.Millisecond,
		"waiting for the summary line")
	fields := h.logs.FilterMessageSnippet(summary).All()[0].ContextMap()
	assert.Equal(t, total, fields["bytes_read"], "every byte of every file, once")

	want := map[string]bool{}
	for _, path := range paths {
		evs := h.waitEvents(path, 2*(2+0))
		want[evs[len(evs)-1].EventID] = true
	}
	got := map[string]bool{}
	for _, id := range h.caughtUp() {
		assert.False(t, got[id], "%s flagged once", id)
		got[id] = true
	}
	assert.Equal(t, want, got, "the last record of each file, and only those")

	calls, writes := next.calls.Load(), ext.stateWrites.Load()
	t.Logf("%d files: %d deliveries, %d storage writes of file states", files, calls, writes)
	assert.Less(t, calls, int64(files), "files read at once share deliveries")
	assert.Equal(t, calls, writes, "one storage write of file states per delivery")
}

// TestEncodeFlagsPerPart: in a delivery of several files, the records
// flagged are the last of each session within each caught-up file — not
// the last of each session in the whole delivery — also when the events
// are spread over several resources (agent versions) by the encoding.
func TestEncodeFlagsPerPart(t *testing.T) {
	ev := func(id, session, version string) agentevent.Event {
		return agentevent.Event{
			Source: agentevent.Source("claude_code"), AgentVersion: version, SessionID: session, EventID: id,
			Type: agentevent.TypeUserMessage, Role: agentevent.RoleUser, Timestamp: time.Unix(1, 0),
		}
	}
	events := []agentevent.Event{
		// a.jsonl, caught up: sessions s and t, two versions.
		ev("a1", "s", "1"), ev("a2", "t", "2"), ev("a3", "s", "2"), ev("a4", "t", "1"),
		// b.jsonl, not caught up: session s again.
		ev("b1", "s", "1"), ev("b2", "s", "2"),
		// c.jsonl, caught up: session s again.
		ev("c1", "s", "2"), ev("c2", "s", "1"),
	}
	// e.jsonl: a batch that maps to no event (it encodes to no records).
	parts := []source.Part{{Path: "a", Events: 4, CaughtUp: true}, {Path: "b", Events: 2}, {Path: "e", CaughtUp: true}, {Path: "c", Events: 2, CaughtUp: true}}
	sink := new(consumertest.LogsSink)
	rcv, err := newReceiver(receivertest.NewNopSettings(metadata.Type), testConfig(t.TempDir()), sink, registered())
	require.NoError(t, err)
	em := newEmitter(agentByKey("claude_code"), rcv.cfg, sink, rcv.obsrecv, rcv.telemetry, rcv.set.Logger, "", rcv.clock)

	// Encoded where they were read, file by file, and delivered together.
	var recs source.Records
	first := 0
	for _, p := range parts {
		recs.Append(em.Encode(t.Context(), p, slices.Clone(events[first:first+p.Events])))
		first += p.Events
	}
	require.NoError(t, em.Deliver(t.Context(), source.Delivery{Path: "a", Parts: parts, Records: &recs}))
	// Encoded by the emitter, from the events of the delivery.
	require.NoError(t, em.Deliver(t.Context(), source.Delivery{Path: "a", Parts: parts, Events: slices.Clone(events)}))

	require.Len(t, sink.AllLogs(), 2)
	for _, logs := range sink.AllLogs() {
		// What EncodeLogs of all the events builds: one resource per
		// version, in first-seen order, each with its events in order.
		want := agentevent.EncodeLogs(events, "")
		require.Equal(t, want.ResourceLogs().Len(), logs.ResourceLogs().Len())
		for i, rl := range logs.ResourceLogs().All() {
			wrl := want.ResourceLogs().At(i)
			assert.Equal(t, wrl.Resource().Attributes().AsRaw(), rl.Resource().Attributes().AsRaw())
			assert.Equal(t, recordEventIDs(wrl.ScopeLogs().At(0).LogRecords()), recordEventIDs(rl.ScopeLogs().At(0).LogRecords()))
		}
		var got []string
		for _, lr := range logRecords(logs) {
			if agentevent.CaughtUp(lr) {
				id, _ := lr.Attributes().Get(agentevent.AttrEventID)
				got = append(got, id.AsString())
			}
		}
		assert.ElementsMatch(t, []string{"a3", "a4", "c2"}, got)
	}
}

// recordEventIDs are the event ids of records, in order.
func recordEventIDs(lrs plog.LogRecordSlice) []string {
	var ids []string
	for _, lr := range lrs.All() {
		id, _ := lr.Attributes().Get(agentevent.AttrEventID)
		ids = append(ids, id.AsString())
	}
	return ids
}
