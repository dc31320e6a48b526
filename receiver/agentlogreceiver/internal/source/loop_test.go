// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package source

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/watch"
)

// TestWatchLoopCoalesces: with an hourly interval, a change wakes the loop;
// the changes made while a run is under way are one more run after it.
func TestWatchLoopCoalesces(t *testing.T) {
	if !watch.Supported {
		t.Skip("nothing is watched on this platform")
	}
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "thread.json")
	require.NoError(t, os.WriteFile(path, []byte("{}"), 0o600))
	var runs atomic.Int64
	entered, release := make(chan struct{}), make(chan struct{})
	l := StartWatchLoop(time.Hour, func() *watch.Watcher {
		return watch.Start(watch.Config{Include: []string{filepath.Join(dir, "*.json")}})
	}, func(context.Context) {
		if runs.Add(1) == 2 {
			close(entered)
			<-release
		}
	})
	require.Eventually(t, func() bool { return runs.Load() == 1 }, 5*time.Second, time.Millisecond)

	require.NoError(t, os.WriteFile(path, []byte(`{"a":1}`), 0o600))
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		require.FailNow(t, "no run on the change")
	}
	for range 20 {
		require.NoError(t, os.WriteFile(path, []byte(`{"a":2}`), 0o600))
	}
	close(release)
	require.Eventually(t, func() bool { return runs.Load() >= 3 }, 5*time.Second, time.Millisecond)
	time.Sleep(200 * time.Millisecond)
	// One run for the writes made during the second (and at most one more
	// for their events still queued when it reset the watcher), not 20.
	assert.LessOrEqual(t, runs.Load(), int64(4))
	require.NoError(t, l.Halt(t.Context()))
}

// TestLoopWithoutWatch runs at once, then every interval.
func TestLoopWithoutWatch(t *testing.T) {
	defer goleak.VerifyNone(t)
	var runs atomic.Int64
	l := StartLoop(10*time.Millisecond, func(context.Context) { runs.Add(1) })
	require.Eventually(t, func() bool { return runs.Load() >= 3 }, 5*time.Second, time.Millisecond)
	require.NoError(t, l.Halt(t.Context()))
}
