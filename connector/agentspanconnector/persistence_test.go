// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/state"
	"github.com/agentotel/agentotel/internal/agentevent"
)

// batchCounter counts the batches written to a storage client.
type batchCounter struct {
	memClient
	batches int
}

func (b *batchCounter) Batch(ctx context.Context, ops ...*storage.Operation) error {
	b.batches++
	return b.memClient.Batch(ctx, ops...)
}

// A tick, or a request, that changes nothing durable writes no batch: with
// file_storage an empty batch is still a write transaction.
func TestNothingChangedWritesNothing(t *testing.T) {
	h := newHarness(t)
	client := &batchCounter{memClient: memClient{}}
	h.c.client = client
	h.c.asm.saved.load = state.StorageLoader{Ctx: t.Context(), Client: client, Unreadable: func(string, error) {}}
	h.c.started = true
	s := newSession("s1")
	require.NoError(t, h.c.ConsumeLogs(t.Context(), agentevent.EncodeLogs([]agentevent.Event{s.prompt("p1", 0), s.answer("a1", "m1", 1)}, "host1")))
	require.Equal(t, 1, client.batches, "the open turn is saved")
	h.tick()
	require.NoError(t, h.c.ConsumeLogs(t.Context(), plog.NewLogs()))
	assert.Equal(t, 1, client.batches, "nothing changed, nothing written")
	h.setNow(time.Hour)
	h.tick()
	assert.Equal(t, 2, client.batches, "the turn closed: its events go")
	assert.Len(t, h.spans(), 2)
}
