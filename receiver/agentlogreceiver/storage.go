// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver // import "github.com/agentotel/agentotel/receiver/agentlogreceiver"

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// storageClient returns the receiver's client of the configured storage
// extension, or a no-op client (state kept in memory only) when none is
// configured. A configured extension that is missing, or is no storage
// extension, is an error.
func storageClient(ctx context.Context, host component.Host, id *component.ID, self component.ID) (storage.Client, error) {
	if id == nil {
		return storage.NewNopClient(), nil
	}
	ext, ok := host.GetExtensions()[*id]
	if !ok {
		return nil, fmt.Errorf("storage extension %q not found", id)
	}
	se, ok := ext.(storage.Extension)
	if !ok {
		return nil, fmt.Errorf("extension %q is not a storage extension", id)
	}
	return se.GetClient(ctx, component.KindReceiver, self, "")
}
