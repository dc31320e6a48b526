// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package testfiles

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a", "b.jsonl")
	WriteFile(t, path, "one", "two")
	AppendFile(t, path, "three\n")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "one\ntwo\nthree\n", string(b))
	assert.Empty(t, JoinLines())

	at := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	TouchTree(t, dir, at)
	for _, p := range []string{dir, filepath.Join(dir, "a"), path} {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		assert.True(t, fi.ModTime().Equal(at), p)
	}
}
