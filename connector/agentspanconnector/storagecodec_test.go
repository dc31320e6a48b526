// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/adapter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/state"
	"github.com/agentotel/agentotel/internal/storagecodec"
)

// TestStoredRecordsAreCompressed feeds every golden case to a connector with
// file-backed storage and kills it before any turn closes by idleness, so
// that its storage holds session records and the events of open units. Each
// record worth it is compressed (internal/storagecodec) and reads back as
// what the connector wrote; together they take well under their bytes.
func TestStoredRecordsAreCompressed(t *testing.T) {
	stateDir := t.TempDir()
	id := storagetest.NewStorageID("state")
	h := newHarness(t, func(c *Config) { c.Storage = &id })
	h.history()
	require.NoError(t, h.c.Start(t.Context(), storagetest.NewStorageHost().WithFileBackedStorageExtension("state", stateDir)))
	for _, dir := range goldenCases(t) {
		logs, err := golden.ReadLogs(filepath.Join(dir, "events.yaml"))
		require.NoError(t, err)
		for _, b := range splitLogs(logs, 5) {
			require.NoError(t, h.c.ConsumeLogs(t.Context(), b))
		}
	}
	h.crash()

	ctx := t.Context()
	raw, err := adapter.GetStorageClient(ctx, storagetest.NewStorageHost().WithFileBackedStorageExtension("state", stateDir), &id, h.c.set.ID)
	require.NoError(t, err)
	defer func() { require.NoError(t, raw.Close(ctx)) }()
	walker, ok := raw.(storage.Walker)
	require.True(t, ok, "storagetest's client walks its keys")

	var stored, held, sessions, events int
	require.NoError(t, walker.Walk(ctx, func(key string, value []byte) ([]*storage.Operation, error) {
		if !strings.HasPrefix(key, state.KeyPrefix) {
			return nil, nil // the storage client's own keys
		}
		v, err := storagecodec.Decode(value)
		require.NoError(t, err, key)
		stored += len(value)
		held += len(v)
		if len(v) >= 64 {
			assert.Equal(t, byte(1), value[1], "%s is stored compressed", key)
		}
		switch {
		case strings.HasPrefix(key, state.KeyPrefix+"s/"):
			sessions++
			var rec state.SessionRecord
			if assert.NoError(t, json.Unmarshal(v, &rec), key) {
				assert.Equal(t, state.Version, rec.Version, key)
			}
		case strings.HasPrefix(key, state.KeyPrefix+"e/"):
			events++
			evs, err := state.DecodeEvents(v)
			if assert.NoError(t, err, key) {
				assert.NotEmpty(t, evs, key)
			}
		}
		return nil, nil
	}))
	require.Positive(t, sessions, "session records were stored")
	require.Positive(t, events, "the events of open units were stored")
	t.Logf("%d session records, %d events: %d bytes stored for %d", sessions, events, stored, held)
	assert.Less(t, stored, held*8/10, "compressed, the state takes less than 80 %% of its bytes")
}
