// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package tailer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/finder"
)

// testTailer is a tailer of dir's *.jsonl files with the receiver's default
// settings (max_log_size given); its store, logger and emit are the
// test's to set.
func testTailer(tb testing.TB, dir string, maxLogSize int) *Tailer {
	tb.Helper()
	match, err := finder.NewMatcher([]string{filepath.Join(dir, "**", "*.jsonl")}, nil, 0)
	require.NoError(tb, err)
	return New(Config{Match: match, Poll: 10 * time.Millisecond, Workers: 8, MaxLogSize: maxLogSize, HeadBytes: 1000})
}

func writeFile(t *testing.T, path string, lines ...string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(joinLines(lines...)), 0o600)) //nolint:gosec // G703: the lines written may have been read from a file; the path is the test's own
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	require.NoError(t, err)
	_, err = f.WriteString(s)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func joinLines(lines ...string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}
