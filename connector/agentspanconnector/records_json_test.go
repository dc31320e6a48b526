// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/state"
	"github.com/agentotel/agentotel/internal/storagecodec"
)

// TestSavedRecordsAreMarshal: every session record of the fixture corpus,
// as each batch leaves it, is saved with the bytes json.Marshal gives it
// (state.SessionRecord.AppendJSON), so that it reads back as written.
func TestSavedRecordsAreMarshal(t *testing.T) {
	files := corpusFiles(t)
	h := newHarness(t)
	h.c.client = storagecodec.Wrap(memClient{}, nil)
	h.c.asm.saved.load = state.StorageLoader{Ctx: t.Context(), Client: h.c.client, Unreadable: func(string, error) {}}
	h.history()
	h.c.started = true
	records := 0
	for _, ld := range readBatches(files, 50) {
		require.NoError(t, h.c.ConsumeLogs(t.Context(), ld))
		for sk, idx := range h.c.asm.store.sessions {
			if idx.empty() {
				continue
			}
			rec, err := h.c.asm.store.record(sk)
			require.NoError(t, err)
			want, err := json.Marshal(rec)
			require.NoError(t, err)
			got, err := rec.AppendJSON(nil)
			require.NoError(t, err)
			require.Equal(t, string(want), string(got), "session %v", sk)
			records++
		}
	}
	require.NotZero(t, records)
}
