// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package testfiles holds the file helpers the tests of the receiver's
// packages share: agent files written, appended to and aged. Only tests
// import it.
package testfiles

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// WriteFile writes lines, each ended by "\n", to path, creating its
// directory.
func WriteFile(tb testing.TB, path string, lines ...string) {
	tb.Helper()
	require.NoError(tb, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(tb, os.WriteFile(path, []byte(JoinLines(lines...)), 0o600))
}

// AppendFile appends s to path, creating it.
func AppendFile(tb testing.TB, path, s string) {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	require.NoError(tb, err)
	_, err = f.WriteString(s)
	require.NoError(tb, err)
	require.NoError(tb, f.Close())
}

// JoinLines is lines, each ended by "\n"; "" for none.
func JoinLines(lines ...string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// TouchTree sets the modification time of everything below dir.
func TouchTree(tb testing.TB, dir string, at time.Time) {
	tb.Helper()
	root, err := os.OpenRoot(dir)
	require.NoError(tb, err)
	defer root.Close()
	require.NoError(tb, fs.WalkDir(root.FS(), ".", func(p string, _ fs.DirEntry, err error) error {
		if err == nil {
			err = root.Chtimes(p, at, at)
		}
		return err
	}))
}
