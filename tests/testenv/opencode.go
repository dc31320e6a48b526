// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CopyOpenCodeDB copies the OpenCode database of a fixture folder (opencode.db
// with its -wal and -shm, those that exist) into dst and returns the copy's
// path. SQLite opens a WAL database's -shm read-write even in mode=ro (it
// keeps the WAL index and the readers' marks there), and immutable=1 would
// skip the WAL, where a database may keep every row: so a fixture is read
// through a copy, never opened in place.
func CopyOpenCodeDB(tb testing.TB, fixture, dst string) string {
	tb.Helper()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		tb.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(filepath.Join(fixture, "opencode.db"+suffix))
		if errors.Is(err, fs.ErrNotExist) && suffix != "" {
			continue
		}
		if err != nil {
			tb.Fatal(err)
		}
		//nolint:gosec // G703: dst is the test's temporary folder
		if err := os.WriteFile(filepath.Join(dst, "opencode.db"+suffix), b, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	return filepath.Join(dst, "opencode.db")
}

// FileStates are the size, modification time and mode of every file below
// dir: what a reader writing into a fixture (a -shm, a -wal) would change.
func FileStates(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fmt.Sprintf("%d %s %s", info.Size(), info.ModTime().Format(time.RFC3339Nano), info.Mode())
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}
