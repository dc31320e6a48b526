// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package storagecodectest helps tests of the components that store values
// through storagecodec.
package storagecodectest // import "github.com/agentotel/agentotel/internal/storagecodec/storagecodectest"

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/agentotel/agentotel/internal/storagecodec"
)

// RewriteUncompressed rewrites every value of a raw (unwrapped) storage
// client as a build before storagecodec stored it: decompressed. It returns
// how many values were compressed. The client must walk its keys (storagetest's
// clients do).
func RewriteUncompressed(t testing.TB, c storage.Client) int {
	t.Helper()
	ctx := context.Background()
	walker, ok := c.(storage.Walker)
	require.True(t, ok, "the client walks its keys")
	values := map[string][]byte{}
	compressed := 0
	require.NoError(t, walker.Walk(ctx, func(key string, value []byte) ([]*storage.Operation, error) {
		values[key] = storagecodec.Decode(bytes.Clone(value))
		if len(value) > 0 && value[0] == 0 {
			compressed++
		}
		return nil, nil
	}))
	for key, v := range values {
		require.NoError(t, c.Set(ctx, key, v))
	}
	return compressed
}
