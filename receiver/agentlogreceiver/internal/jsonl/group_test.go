// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package jsonl

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/checkpoint"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/source"
)

// blockingEmitter records deliveries; while gate is set, Deliver waits on
// it (a delivery in flight) after telling entered.
type blockingEmitter struct {
	mu         sync.Mutex
	deliveries []source.Delivery
	gate       chan struct{}
	entered    chan struct{}
	err        error
}

func (*blockingEmitter) Read(context.Context, int64)                {}
func (*blockingEmitter) Bad(context.Context, string, int64, string) {}
func (*blockingEmitter) Forget(...string)                           {}
func (*blockingEmitter) FileRead(context.Context, string, bool)     {}
func (e *blockingEmitter) delivered() []source.Delivery {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]source.Delivery(nil), e.deliveries...)
}

// Encode encodes events as the receiver's emitter does with its default
// settings.
func (*blockingEmitter) Encode(_ context.Context, _ source.Part, events []agentevent.Event) source.Records {
	return source.Records{Logs: agentevent.EncodeLogs(events, ""), Count: len(events)}
}

// Deliver records d, with its records decoded into d.Events.
func (e *blockingEmitter) Deliver(_ context.Context, d source.Delivery) error {
	if d.Records != nil {
		d.Events, _ = agentevent.DecodeLogs(d.Records.Logs)
		d.Records = nil
	}
	e.mu.Lock()
	gate, entered := e.gate, e.entered
	e.mu.Unlock()
	if entered != nil {
		entered <- struct{}{}
	}
	if gate != nil {
		<-gate
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.deliveries = append(e.deliveries, d)
	return e.err
}

// countingClient counts the storage calls that write.
type countingClient struct {
	storage.Client
	writes atomic.Int64
}

func (c *countingClient) Set(ctx context.Context, k string, v []byte) error {
	c.writes.Add(1)
	return c.Client.Set(ctx, k, v)
}

func (c *countingClient) Batch(ctx context.Context, ops ...*storage.Operation) error {
	c.writes.Add(1)
	return c.Client.Batch(ctx, ops...)
}

func newTestGroup(t *testing.T, em *blockingEmitter) (*groupCommit, *countingClient, *checkpoint.Store) {
	t.Helper()
	client := &countingClient{Client: storagetest.NewInMemoryClient(component.KindReceiver, component.MustNewID("test"), "")}
	cp := checkpoint.New(client, "a", true)
	return newGroupCommit(em, cp, func(err error) { t.Errorf("storage: %v", err) }), client, cp
}

// fileBatch is one file's batch: n events of session ses, its state
// written under parser.<path>.
func fileBatch(path, ses string, n int, caughtUp bool, from, to int64) *groupBatch {
	evs := make([]agentevent.Event, n)
	for i := range evs {
		evs[i] = agentevent.Event{Type: agentevent.TypeUserMessage, SessionID: ses, EventID: fmt.Sprintf("%s-%d", path, i)}
	}
	return &groupBatch{
		part:     source.Part{Path: path, CaughtUp: caughtUp, From: from, To: to},
		recs:     source.Records{Logs: agentevent.EncodeLogs(evs, ""), Count: n},
		sessions: treeSessions(evs),
		ops:      []*storage.Operation{storage.SetOperation(checkpoint.ParserKey(path), []byte(path))},
	}
}

// TestGroupCommitLone: with no delivery in flight a batch goes out at once,
// alone, as a delivery of one file, then its state is written.
func TestGroupCommitLone(t *testing.T) {
	em := &blockingEmitter{}
	g, client, cp := newTestGroup(t, em)
	require.NoError(t, g.submit(t.Context(), fileBatch("f1", "s1", 3, true, 0, 120)))
	ds := em.delivered()
	require.Len(t, ds, 1)
	assert.Equal(t, "f1", ds[0].Path)
	assert.Len(t, ds[0].Events, 3)
	assert.True(t, ds[0].CaughtUp)
	assert.Equal(t, int64(0), ds[0].From)
	assert.Equal(t, int64(120), ds[0].To)
	assert.Nil(t, ds[0].Parts, "one file: a plain delivery")
	assert.Equal(t, int64(1), client.writes.Load())
	b, err := cp.Get(t.Context(), checkpoint.ParserKey("f1"))
	require.NoError(t, err)
	assert.Equal(t, "f1", string(b))
}

// TestGroupCommitGathers: batches submitted while a delivery is in flight
// go out together in the next one — one delivery, one storage write of all
// their states — in the order submitted, each file with its own caught-up
// flag and positions; every submitter returns after that write.
func TestGroupCommitGathers(t *testing.T) {
	em := &blockingEmitter{gate: make(chan struct{}), entered: make(chan struct{}, 16)}
	g, client, cp := newTestGroup(t, em)
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make([]error, 5)
	wg.Go(func() { errs[0] = g.submit(ctx, fileBatch("lead", "s0", 1, false, 0, 10)) })
	<-em.entered // the first delivery is in flight
	const n = 4
	for i := 1; i <= n; i++ {
		wg.Go(func() {
			errs[i] = g.submit(ctx, fileBatch(fmt.Sprintf("f%d", i), fmt.Sprintf("s%d", i), i, i%2 == 0, int64(i), int64(10*i)))
		})
	}
	require.Eventually(t, func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.queue) == n
	}, 10*time.Second, time.Millisecond)
	assert.Equal(t, int64(0), client.writes.Load(), "nothing is written before its delivery is accepted")
	em.mu.Lock()
	gate := em.gate
	em.gate, em.entered = nil, nil // the next delivery goes through
	em.mu.Unlock()
	close(gate)
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "submitter %d", i)
	}
	ds := em.delivered()
	require.Len(t, ds, 2, "the lone first batch, then the four gathered in one")
	assert.Equal(t, "lead", ds[0].Path)
	d := ds[1]
	require.Len(t, d.Parts, n)
	total := 0
	byPath := map[string]source.Part{}
	for _, p := range d.Parts {
		byPath[p.Path] = p
		total += p.Events
	}
	assert.Len(t, d.Events, total)
	for i := 1; i <= n; i++ {
		p := byPath[fmt.Sprintf("f%d", i)]
		assert.Equal(t, i, p.Events)
		assert.Equal(t, i%2 == 0, p.CaughtUp, "f%d's own flag", i)
		assert.Equal(t, int64(i), p.From)
		assert.Equal(t, int64(10*i), p.To)
	}
	// Each part's events are its file's, in the order of the parts.
	k := 0
	for _, p := range d.Parts {
		for range p.Events {
			assert.Contains(t, d.Events[k].EventID, p.Path+"-")
			k++
		}
	}
	assert.Equal(t, int64(2), client.writes.Load(), "one write for the lone batch, one for the four")
	for i := 1; i <= n; i++ {
		b, err := cp.Get(ctx, checkpoint.ParserKey(fmt.Sprintf("f%d", i)))
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("f%d", i), string(b))
	}
}

// TestGroupCommitStopped: a delivery given up while stopping commits
// nothing for any of its files, and each of them returns the error.
func TestGroupCommitStopped(t *testing.T) {
	em := &blockingEmitter{gate: make(chan struct{}), entered: make(chan struct{}, 16)}
	g, client, cp := newTestGroup(t, em)
	ctx := t.Context()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	wg.Go(func() { errs[0] = g.submit(ctx, fileBatch("lead", "s0", 1, false, 0, 10)) })
	<-em.entered
	for i := 1; i < len(errs); i++ {
		wg.Go(func() {
			errs[i] = g.submit(ctx, fileBatch(fmt.Sprintf("f%d", i), fmt.Sprintf("s%d", i), 2, true, 0, 5))
		})
	}
	require.Eventually(t, func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.queue) == len(errs)-1
	}, 10*time.Second, time.Millisecond)
	em.mu.Lock()
	em.err = source.ErrStopped
	gate := em.gate
	em.gate, em.entered = nil, nil
	em.mu.Unlock()
	close(gate)
	wg.Wait()
	for i, err := range errs {
		require.ErrorIs(t, err, source.ErrStopped, "submitter %d", i)
	}
	assert.Len(t, em.delivered(), 2)
	assert.Equal(t, int64(0), client.writes.Load(), "nothing is committed")
	for _, path := range []string{"lead", "f1", "f2", "f3"} {
		b, err := cp.Get(ctx, checkpoint.ParserKey(path))
		require.NoError(t, err)
		assert.Nil(t, b, path)
	}
	g.mu.Lock()
	assert.False(t, g.busy, "the group is idle again")
	g.mu.Unlock()
}

// TestGroupCommitBounds: a queue longer than a delivery may hold goes out
// in several, each within the bounds, none lost.
func TestGroupCommitBounds(t *testing.T) {
	g := &groupCommit{}
	for i := range maxGroupBatches + 3 {
		g.queue = append(g.queue, fileBatch(fmt.Sprintf("f%d", i), fmt.Sprintf("s%d", i), 10, false, 0, 1))
	}
	first := g.takeLocked()
	assert.Len(t, first, maxGroupBatches)
	assert.Len(t, g.takeLocked(), 3)
	assert.Nil(t, g.takeLocked())

	big := maxGroupEvents/2 + 1
	g.queue = []*groupBatch{
		fileBatch("a", "sa", big, false, 0, 1), fileBatch("b", "sb", big, false, 0, 1), fileBatch("c", "sc", 3*maxGroupEvents, false, 0, 1),
	}
	assert.Len(t, g.takeLocked(), 1, "two halves and more are over the bound")
	assert.Len(t, g.takeLocked(), 1)
	assert.Len(t, g.takeLocked(), 1, "a batch over the bound alone still goes")
	assert.Nil(t, g.takeLocked())
}

// TestGroupCommitOneFilePerSession: two files of one session (a session
// and its subagent's file) never share a delivery; the second waits for
// the next.
func TestGroupCommitOneFilePerSession(t *testing.T) {
	g := &groupCommit{}
	main, sub, other := fileBatch("main", "s", 2, true, 0, 1), fileBatch("sub", "s", 2, false, 0, 1), fileBatch("o", "t", 2, false, 0, 1)
	main.sessions, sub.sessions, other.sessions = []string{"s"}, []string{"s"}, []string{"t"}
	g.queue = []*groupBatch{main, other, sub}
	assert.Equal(t, []*groupBatch{main, other}, g.takeLocked())
	assert.Equal(t, []*groupBatch{sub}, g.takeLocked())
}
