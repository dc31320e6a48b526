// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentnativeprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"
)

// storageHost is a host with one real file_storage extension.
type storageHost struct {
	id  component.ID
	ext extension.Extension
}

func (h storageHost) GetExtensions() map[component.ID]component.Component {
	return map[component.ID]component.Component{h.id: h.ext}
}

func newFileStorage(t *testing.T, dir string) storageHost {
	t.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = dir
	ext, err := f.Create(t.Context(), extensiontest.NewNopSettings(f.Type()), cfg)
	require.NoError(t, err)
	host := storageHost{id: component.NewID(f.Type()), ext: ext}
	require.NoError(t, ext.Start(t.Context(), host))
	return host
}

// crash drops h the way kill -9 does: no Shutdown, so nothing is written
// beyond what ConsumeLogs already committed. Only the database is closed,
// so that the next instance in this process can open it.
func (h *harness) crash(host storageHost) {
	h.t.Helper()
	h.proc.mu.Lock()
	client := h.proc.client
	h.proc.mu.Unlock()
	require.NotNil(h.t, client)
	require.NoError(h.t, client.Close(context.Background()))
	require.NoError(h.t, host.ext.Shutdown(context.Background()))
	// What a dead process leaves: its telemetry builder is gone too.
	h.proc.tel.Shutdown()
}

// TestOwnerSurvivesCrash: native events of session S are accepted and
// their owner saved before they are handed on; the processor dies without
// Shutdown; a new one on the same storage drops S's file events under
// `first` (and, without storage, would have taken them).
func TestOwnerSurvivesCrash(t *testing.T) {
	dir := t.TempDir()
	withStorage := func(c *Config) {
		id := component.MustNewID("file_storage")
		c.Storage = &id
		c.MaxSessions = 1 // S is read back from storage, not from memory
	}
	host := newFileStorage(t, dir)
	h := newHarness(t, fakeAgents, host, withStorage)
	require.Len(t, h.consume(nativeLogs(nrec{name: "mapped", session: "S", seq: "1"}, nrec{name: "mapped", session: "S", at: time.Second, seq: "2"})), 2)
	require.Len(t, h.consume(fileLogs("U", 0)), 1, "another session evicts S from memory")
	h.crash(host)

	host = newFileStorage(t, dir)
	h = newHarness(t, fakeAgents, host, withStorage)
	defer func() {
		h.shutdown()
		require.NoError(t, host.ext.Shutdown(t.Context()))
	}()
	assert.Empty(t, h.consume(fileLogs("S", 0, 2*time.Second)), "S stays native after the restart")
	assert.Len(t, h.consume(nativeLogs(nrec{name: "mapped", session: "S", at: 3 * time.Second, seq: "3"})), 1)
	assert.Empty(t, h.consume(nativeLogs(nrec{name: "mapped", session: "U", seq: "4"})), "U stays with the files")
}

// TestLastNativeTimeSurvivesCrash: under `files`, the time of the last
// native event accepted is saved with the owner, so after a crash the file
// events up to it (turns that went out natively) are still dropped.
func TestLastNativeTimeSurvivesCrash(t *testing.T) {
	dir := t.TempDir()
	withStorage := func(c *Config) {
		id := component.MustNewID("file_storage")
		c.Storage = &id
		c.SessionOwner = OwnerFiles
	}
	host := newFileStorage(t, dir)
	h := newHarness(t, fakeAgents, host, withStorage)
	require.Len(t, h.consume(nativeLogs(nrec{name: "mapped", session: "S", seq: "1"})), 1)
	require.Len(t, h.consume(nativeLogs(nrec{name: "mapped", session: "S", at: time.Second, seq: "2"})), 1)
	h.crash(host)

	host = newFileStorage(t, dir)
	h = newHarness(t, fakeAgents, host, withStorage)
	defer func() {
		h.shutdown()
		require.NoError(t, host.ext.Shutdown(t.Context()))
	}()
	got := h.consumeEvents(fileLogs("S", 0, time.Second, 2*time.Second))
	require.Len(t, got, 1, "files up to the saved last native time are dropped")
	assert.Equal(t, t0.Add(2*time.Second), got[0].Timestamp)
	assert.Empty(t, h.consume(nativeLogs(nrec{name: "mapped", session: "S", at: 3 * time.Second, seq: "3"})), "the files own S now")
}
