// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/agentotel/agentotel/internal/storagecodec"
)

// TestStoredStateIsCompressed reads the Claude Code and Codex testdata with
// file-backed storage and looks at what the receiver stored: every value
// but the shortest is compressed (internal/storagecodec), reads back as the
// JSON the receiver wrote, and all of them take well under the bytes they
// hold.
func TestStoredStateIsCompressed(t *testing.T) {
	home := t.TempDir()
	claude := filepath.Join(home, "claude")
	codex := filepath.Join(home, "codex")
	require.NoError(t, os.CopyFS(claude, os.DirFS(filepath.Join(repoRoot(t), "testdata", "claude_code"))))
	require.NoError(t, os.CopyFS(codex, os.DirFS(filepath.Join(repoRoot(t), "testdata", "codex"))))

	ext := storagetest.NewFileBackedStorageExtension("state", t.TempDir())
	host := storagetest.NewStorageHost().WithExtension(ext.ID, ext)
	cfg := testConfig(claude)
	cfg.Codex.Enabled = true
	cfg.Codex.Include = []string{filepath.Join(codex, "**", "*.jsonl")}
	cfg.Storage = &ext.ID
	h := newHarness(t, cfg, host)
	h.start()
	h.barrier(claude)
	require.NotEmpty(t, h.events())
	h.stop()

	ctx := t.Context()
	client, err := storedClient(ctx, host, ext.ID, h.rcv.set.ID)
	require.NoError(t, err)
	defer func() { require.NoError(t, client.Close(ctx)) }()
	blobs, err := blobClient(ctx, host, &ext.ID, h.rcv.set.ID)
	require.NoError(t, err)
	defer func() { require.NoError(t, blobs.Close(ctx)) }()

	var stored, held, compressed, parserStates int
	for _, c := range []storage.Client{client, blobs} {
		walker, ok := c.(storage.Walker)
		require.True(t, ok, "storagetest's client walks its keys")
		require.NoError(t, walker.Walk(ctx, func(key string, value []byte) ([]*storage.Operation, error) {
			if key == "client_creator_id" {
				return nil, nil // storagetest's own key, not the receiver's
			}
			v, err := storagecodec.Decode(value)
			require.NoError(t, err, key)
			stored += len(value)
			held += len(v)
			if strings.Contains(key, ".first.") {
				// The first-line index: a path, compressed when S2
				// shrinks it (long, with repeated parts).
				assert.True(t, strings.HasPrefix(string(v), home), "%s reads back as a path", key)
				return nil, nil
			}
			if value[1] == 1 { // the S2 encoding
				compressed++
				assert.True(t, json.Valid(v), "%s decompresses to the JSON written", key)
			} else {
				assert.Less(t, len(value), 64, "%s: a JSON state this long is stored compressed", key)
			}
			if filepath.Ext(key) == ".jsonl" {
				parserStates++
			}
			return nil, nil
		}))
	}
	require.Positive(t, parserStates, "a state per file was stored")
	require.Positive(t, compressed)
	t.Logf("%d values compressed, %d bytes stored for %d", compressed, stored, held)
	assert.Less(t, stored, held*8/10, "compressed, the state takes less than 80 %% of its bytes")
}
