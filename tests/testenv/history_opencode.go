// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package testenv

import (
	"database/sql"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	// Pure-Go SQLite, as the receiver reads OpenCode's database.
	_ "modernc.org/sqlite"
)

// OpenCodeTree writes the objects of the OpenCode database of fixture (opencode.db, ≥ 1.2) below
// storage as OpenCode ≤ 1.1 kept them: project/<id>.json, session/<project>/<id>.json,
// message/<session>/<id>.json and part/<message>/<id>.json, each the row's data with its id
// columns put back. A history copies files with their ids made unique, which the pages of a
// database do not allow, and a data directory holding opencode.db has its tree left unread: the
// history's OpenCode is one tree. The database is read through a copy: SQLite writes a WAL
// database's -shm even when it opens it read-only.
func OpenCodeTree(tb testing.TB, fixture, storage string) {
	tb.Helper()
	tmp := tb.TempDir()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(filepath.Join(fixture, "opencode.db"+suffix))
		if os.IsNotExist(err) && suffix != "" {
			continue
		}
		if err != nil {
			tb.Fatalf("opencode tree: %v", err)
		}
		//nolint:gosec // G703: tmp is the test's temporary folder
		if err := os.WriteFile(filepath.Join(tmp, "opencode.db"+suffix), b, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	u := url.URL{Scheme: "file", Path: filepath.Join(tmp, "opencode.db")}
	db, err := sql.Open("sqlite", u.String()+"?mode=ro&_pragma=query_only(1)")
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	write := func(rel string, b []byte) {
		p := filepath.Join(storage, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	object := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	for _, r := range QueryByName(tb, db, `SELECT * FROM project`) {
		id := r.Str("id")
		write(filepath.Join("project", id+".json"), object(map[string]any{
			"id": id, "worktree": r.Str("worktree"), "vcs": r.Str("vcs"),
			"time": map[string]any{"created": r["time_created"], "updated": r["time_updated"]},
		}))
	}
	for _, r := range QueryByName(tb, db, `SELECT * FROM session`) {
		id, project := r.Str("id"), r.Str("project_id")
		s := map[string]any{
			"id": id, "projectID": project, "slug": r.Str("slug"), "directory": r.Str("directory"),
			"title": r.Str("title"), "version": r.Str("version"),
			"time": map[string]any{"created": r["time_created"], "updated": r["time_updated"]},
		}
		if p := r.Str("parent_id"); p != "" {
			s["parentID"] = p
		}
		write(filepath.Join("session", project, id+".json"), object(s))
	}
	for _, r := range QueryByName(tb, db, `SELECT id, session_id, data FROM message`) {
		id, ses := r.Str("id"), r.Str("session_id")
		write(filepath.Join("message", ses, id+".json"), withIDs(tb, r.Str("data"), "id", id, "sessionID", ses))
	}
	for _, r := range QueryByName(tb, db, `SELECT id, message_id, session_id, data FROM part`) {
		id, msg := r.Str("id"), r.Str("message_id")
		write(filepath.Join("part", msg, id+".json"), withIDs(tb, r.Str("data"), "id", id, "sessionID", r.Str("session_id"), "messageID", msg))
	}
}

// withIDs is the JSON object data with the key/value pairs kv put first.
func withIDs(tb testing.TB, data string, kv ...string) []byte {
	tb.Helper()
	if len(data) < 2 || data[0] != '{' {
		tb.Fatalf("opencode tree: data %.40q is not an object", data)
	}
	if len(kv)%2 != 0 {
		tb.Fatalf("opencode tree: %d keys and values, not pairs", len(kv))
	}
	out := []byte{'{'}
	for i := 0; i+1 < len(kv); i += 2 {
		k, _ := json.Marshal(kv[i])
		v, _ := json.Marshal(kv[i+1])
		out = append(append(append(append(out, k...), ':'), v...), ',')
	}
	rest := strings.TrimPrefix(data, "{")
	if strings.HasPrefix(rest, "}") {
		return append(out[:len(out)-1], '}')
	}
	return append(out, rest...)
}

// DBRow is a result row by column name: OpenCode adds and drops columns
// between versions, and its readers take the ones they need by name.
type DBRow map[string]any

// Str is column k as a string ("" when absent or of another type).
func (r DBRow) Str(k string) string {
	switch v := r[k].(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

// Int is column k as an integer (0 when absent or of another type).
func (r DBRow) Int(k string) int64 {
	v, _ := r[k].(int64)
	return v
}

// QueryByName runs query on db and returns every row by column name.
func QueryByName(tb testing.TB, db *sql.DB, query string) []DBRow {
	tb.Helper()
	rows, err := db.Query(query)
	if err != nil {
		tb.Fatalf("query %q: %v", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		tb.Fatal(err)
	}
	var out []DBRow
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			tb.Fatal(err)
		}
		r := DBRow{}
		for i, c := range cols {
			r[c] = vals[i]
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}
