// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package kilo

import (
	"database/sql"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	// Pure-Go SQLite, as the receiver reads Kilo's database.
	_ "modernc.org/sqlite"

	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

var update = flag.Bool("update", false, "rebuild testdata/corpus/kilo/*/kilo.db from kilo.db.sql")

// TestFixtureDatabases: each constructed database of testdata/corpus/kilo holds
// exactly the rows its kilo.db.sql builds (-update rebuilds it), and is one
// file, without a write-ahead log, so that reading it creates nothing
// beside it.
func TestFixtureDatabases(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join(corpusDir(t), "*", Database+".sql"))
	require.NoError(t, err)
	require.NotEmpty(t, scripts, "no testdata/corpus/kilo/*/kilo.db.sql")
	for _, script := range scripts {
		dir := filepath.Dir(script)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			text, err := os.ReadFile(script)
			require.NoError(t, err)
			committed := filepath.Join(dir, Database)
			if *update {
				for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
					require.NoError(t, removeIfPresent(committed+suffix))
				}
				buildDB(t, committed, string(text))
				t.Logf("wrote %s", committed)
			}
			built := filepath.Join(t.TempDir(), Database)
			buildDB(t, built, string(text))
			require.Equal(t, dumpDB(t, built), dumpDB(t, committed), "%s differs from what %s builds: run go test ./internal/vendors/kilo -run TestFixtureDatabases -update", committed, script)
			for _, suffix := range []string{"-wal", "-shm", "-journal"} {
				require.NoFileExists(t, committed+suffix)
			}
		})
	}
}

// corpusDir is the repository's Kilo fixture corpus: a corpus root's Kilo
// folder, one case folder with its kilo.db each.
func corpusDir(tb testing.TB) string {
	tb.Helper()
	return filepath.Join(vendortest.RepoRoot(tb), "testdata", "corpus", Fixtures)
}

func removeIfPresent(path string) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// buildDB runs script into a new database at path, in rollback-journal
// mode, compacted into small pages (a few rows per table).
func buildDB(t *testing.T, path, script string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	_, err = db.Exec("PRAGMA page_size=1024")
	require.NoError(t, err)
	_, err = db.Exec(script)
	require.NoError(t, err)
	_, err = db.Exec("PRAGMA journal_mode=DELETE; VACUUM;")
	require.NoError(t, err)
}

// dumpDB is every schema object and every row of every table of the
// database at path, opened read-only.
func dumpDB(t *testing.T, path string) []string {
	t.Helper()
	require.FileExists(t, path)
	u := url.URL{Scheme: "file", Path: path, RawQuery: "mode=ro"}
	db, err := sql.Open("sqlite", u.String())
	require.NoError(t, err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	var out, tables []string
	rows, err := db.Query(`SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master ORDER BY type, name`)
	require.NoError(t, err)
	for rows.Next() {
		var typ, name, tbl, def string
		require.NoError(t, rows.Scan(&typ, &name, &tbl, &def))
		out = append(out, fmt.Sprintf("%s %s on %s: %s", typ, name, tbl, def))
		if typ == "table" {
			tables = append(tables, name)
		}
	}
	require.NoError(t, rows.Err())
	require.NoError(t, rows.Close())
	for _, table := range tables {
		rows, err := db.Query(`SELECT * FROM "` + table + `" ORDER BY rowid`) //nolint:gosec // G202: a table name the database listed
		require.NoError(t, err)
		cols, err := rows.Columns()
		require.NoError(t, err)
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			require.NoError(t, rows.Scan(ptrs...))
			out = append(out, fmt.Sprintf("%s %q", table, vals))
		}
		require.NoError(t, rows.Err())
		require.NoError(t, rows.Close())
	}
	return out
}
