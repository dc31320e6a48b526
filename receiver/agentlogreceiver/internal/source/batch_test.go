// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package source

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/checkpoint"
)

// fakeEmitter records deliveries and the files told read; refuse makes
// Deliver fail as when the receiver stops.
type fakeEmitter struct {
	deliveries []Delivery
	told       []string
	refuse     bool
}

func (*fakeEmitter) Read(context.Context, int64)                {}
func (*fakeEmitter) Bad(context.Context, string, int64, string) {}
func (*fakeEmitter) Forget(...string)                           {}
func (e *fakeEmitter) FileRead(_ context.Context, path string, _ bool) {
	e.told = append(e.told, path)
}

// Encode encodes events as the receiver's emitter does with its default
// settings (the sources of this package deliver events, not records).
func (*fakeEmitter) Encode(_ context.Context, _ Part, events []agentevent.Event) Records {
	return Records{Logs: agentevent.EncodeLogs(events, ""), Count: len(events)}
}

func (e *fakeEmitter) Deliver(_ context.Context, d Delivery) error {
	if e.refuse {
		return ErrStopped
	}
	e.deliveries = append(e.deliveries, d)
	return nil
}

// TestBatchDeliversSessionsTogether: sessions go out several per delivery,
// in the order they were added; a change of the caught-up flag, a session
// added twice and a full batch each deliver what is held first; every
// session is told whether the delivery was accepted, then released.
func TestBatchDeliversSessionsTogether(t *testing.T) {
	ctx := t.Context()
	em := &fakeEmitter{}
	b := NewBatch(em, checkpoint.New(storage.NewNopClient(), "agent", false), func(err error) { t.Error(err) })
	var log []string
	add := func(key, path string, caughtUp bool) bool {
		ev := agentevent.Event{EventID: key}
		return b.Add(ctx, key, path, []agentevent.Event{ev}, caughtUp,
			func(accepted bool) *storage.Operation {
				log = append(log, fmt.Sprintf("commit %s %v", key, accepted))
				return nil
			},
			func() { log = append(log, "release "+key) })
	}
	require.True(t, add("a", "f1", true))
	require.True(t, add("b", "f2", true))
	assert.Empty(t, em.deliveries, "held until the batch is flushed")
	assert.True(t, b.Holds("a"))
	require.True(t, add("c", "f3", false)) // another caught-up flag: a and b go first
	require.True(t, add("c", "f3", false)) // c again: the first c goes first
	require.True(t, b.Flush(ctx))
	require.Len(t, em.deliveries, 3)
	assert.Equal(t, "f1", em.deliveries[0].Path, "the first file names the delivery")
	assert.True(t, em.deliveries[0].CaughtUp)
	assert.Len(t, em.deliveries[0].Events, 2)
	assert.False(t, em.deliveries[1].CaughtUp)
	assert.Equal(t, []string{"f2"}, em.told, "the other files of a delivery are told read")
	assert.Equal(t, []string{
		"commit a true", "commit b true", "release a", "release b",
		"commit c true", "release c", "commit c true", "release c",
	}, log)
	assert.False(t, b.Holds("a"))

	for i := range MaxBatchSessions {
		require.True(t, add(fmt.Sprint(i), "f", true))
	}
	assert.Len(t, em.deliveries, 4, "a full batch is delivered at once")

	log = nil
	em.refuse = true
	require.True(t, add("d", "f4", true))
	assert.False(t, b.Flush(ctx), "refused")
	assert.Equal(t, []string{"commit d false", "release d"}, log)
}
