// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package tailer

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/finder"
)

// testTailer is a tailer of dir's *.jsonl files with the receiver's default
// settings (max_log_size given); its store, logger and emit are the
// test's to set. It poisons the lines of each batch once its emit returned
// (Config.Poison): a test that sees a line after that reads garbage.
func testTailer(tb testing.TB, dir string, maxLogSize int) *Tailer {
	tb.Helper()
	match, err := finder.NewMatcher([]string{filepath.Join(dir, "**", "*.jsonl")}, nil, 0)
	require.NoError(tb, err)
	return New(Config{Match: match, Poll: 10 * time.Millisecond, Workers: 8, MaxLogSize: maxLogSize, HeadBytes: 1000, Poison: true})
}
