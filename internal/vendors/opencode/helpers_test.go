// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package opencode

import (
	"database/sql"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	// Pure-Go SQLite, as the receiver reads OpenCode's database.
	_ "modernc.org/sqlite"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/tests/testenv"
)

func readJSONFiles(tb testing.TB, dir string) (names []string, data [][]byte) {
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	require.NoError(tb, err)
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(tb, err)
		names = append(names, e.Name())
		data = append(data, b)
	}
	return names, data
}

// mapTree maps a whole storage tree (<dir>/storage) the way the receiver's
// reader does once every message is final: sessions by creation time,
// messages and parts by id, one Sequence counter per session (a thread). LogFile
// is the message file's path relative to dir.
func mapTree(tb testing.TB, dir string) []agentevent.Event {
	storage := filepath.Join(dir, "storage")
	projects := map[string]Project{}
	_, pdata := readJSONFiles(tb, filepath.Join(storage, "project"))
	for _, b := range pdata {
		p, err := DecodeProject(b)
		require.NoError(tb, err)
		projects[p.ID] = p
	}
	sessions := map[string]Session{}
	var order []Session
	projDirs, err := os.ReadDir(filepath.Join(storage, "session"))
	require.NoError(tb, err)
	for _, pd := range projDirs {
		_, sdata := readJSONFiles(tb, filepath.Join(storage, "session", pd.Name()))
		for _, b := range sdata {
			s, err := DecodeSession(b)
			require.NoError(tb, err)
			sessions[s.ID] = s
			order = append(order, s)
		}
	}
	slices.SortFunc(order, func(a, b Session) int {
		if a.Time.Created != b.Time.Created {
			return int(a.Time.Created - b.Time.Created)
		}
		return strings.Compare(a.ID, b.ID)
	})
	lookupS := func(id string) (Session, bool) { s, ok := sessions[id]; return s, ok }
	lookupP := func(id string) (Project, bool) { p, ok := projects[id]; return p, ok }
	seq := map[string]int64{}
	spawnedBy := map[string]string{}
	var events []agentevent.Event
	for _, s := range order {
		c := ResolveContext(s, lookupS, lookupP)
		if s.ParentID != "" {
			c.ParentToolCallID = spawnedBy[s.ID]
		}
		names, mdata := readJSONFiles(tb, filepath.Join(storage, "message", s.ID))
		for i, b := range mdata {
			m, err := DecodeMessage(b)
			require.NoError(tb, err)
			_, partData := readJSONFiles(tb, filepath.Join(storage, "part", m.ID))
			var parts []Part
			for _, pb := range partData {
				p, err := DecodePart(pb)
				require.NoError(tb, err)
				parts = append(parts, p)
			}
			maps.Copy(spawnedBy, SpawnedSessions(parts))
			require.True(tb, Finished(m, parts, i < len(mdata)-1), "message %s is not final", m.ID)
			mc := c
			mc.LogFile = filepath.ToSlash(filepath.Join("storage", "message", s.ID, names[i]))
			mc.Sequence = seq[s.ID] + 1
			evs := MapMessage(mc, m, parts)
			seq[s.ID] += int64(len(evs))
			events = append(events, evs...)
		}
	}
	return events
}

// mapAPI maps a server API dump ([{info, parts}] of one session).
func mapAPI(tb testing.TB, path, logFile string) []agentevent.Event {
	b, err := os.ReadFile(path)
	require.NoError(tb, err)
	msgs, err := DecodeAPIMessages(b)
	require.NoError(tb, err)
	var events []agentevent.Event
	seq := int64(1)
	for i := range msgs {
		m := &msgs[i]
		c := Context{Session: Session{ID: m.Info.SessionID}, LogFile: logFile, Sequence: seq}
		evs := MapMessage(c, m.Info, m.Parts)
		seq += int64(len(evs))
		events = append(events, evs...)
	}
	return events
}

// openDatabase opens a database read-only, as the receiver does.
func openDatabase(tb testing.TB, path string) *sql.DB {
	tb.Helper()
	u := url.URL{Scheme: "file", Path: path}
	db, err := sql.Open("sqlite", u.String()+"?mode=ro&_pragma=query_only(1)")
	require.NoError(tb, err)
	tb.Cleanup(func() { db.Close() })
	return db
}

// mapDB maps every session of a database (a copy: testenv.CopyOpenCodeDB) the way
// the receiver's database reader does once nothing changes any more:
// sessions by creation time, messages and parts by id, one Sequence counter
// per session, a last message that never finished taken as it is (the
// reader does so once it stayed unchanged for a while). LogFile is logFile.
func mapDB(tb testing.TB, path, logFile string) []agentevent.Event {
	db := openDatabase(tb, path)
	projects := map[string]Project{}
	for _, r := range testenv.QueryByName(tb, db, `SELECT * FROM project`) {
		p := Project{ID: r.Str("id"), Worktree: r.Str("worktree"), VCS: r.Str("vcs")}
		projects[p.ID] = p
	}
	sessions := map[string]Session{}
	var order []Session
	for _, r := range testenv.QueryByName(tb, db, `SELECT * FROM session ORDER BY time_created, id`) {
		s := Session{
			ID: r.Str("id"), ProjectID: r.Str("project_id"), ParentID: r.Str("parent_id"),
			Directory: r.Str("directory"), Title: r.Str("title"), Version: r.Str("version"),
		}
		s.Time.Created, s.Time.Updated = r.Int("time_created"), r.Int("time_updated")
		sessions[s.ID] = s
		order = append(order, s)
	}
	lookupS := func(id string) (Session, bool) { s, ok := sessions[id]; return s, ok }
	lookupP := func(id string) (Project, bool) { p, ok := projects[id]; return p, ok }
	spawnedBy := map[string]string{}
	var events []agentevent.Event
	for _, s := range order {
		c := ResolveContext(s, lookupS, lookupP)
		c.LogFile = logFile
		if s.ParentID != "" {
			c.ParentToolCallID = spawnedBy[s.ID]
		}
		type row struct {
			id   string
			data []byte
		}
		var msgs []row
		rows, err := db.Query(`SELECT id, data FROM message WHERE session_id = ? ORDER BY id`, s.ID)
		require.NoError(tb, err)
		for rows.Next() {
			var r row
			require.NoError(tb, rows.Scan(&r.id, &r.data))
			msgs = append(msgs, r)
		}
		require.NoError(tb, rows.Err())
		seq := int64(0)
		for i, mr := range msgs {
			m, err := DecodeMessageRow(mr.id, s.ID, mr.data)
			require.NoError(tb, err)
			var parts []Part
			prows, err := db.Query(`SELECT id, data FROM part WHERE message_id = ? ORDER BY id`, mr.id)
			require.NoError(tb, err)
			for prows.Next() {
				var r row
				require.NoError(tb, prows.Scan(&r.id, &r.data))
				p, err := DecodePartRow(r.id, mr.id, s.ID, r.data)
				require.NoError(tb, err)
				parts = append(parts, p)
			}
			require.NoError(tb, prows.Err())
			maps.Copy(spawnedBy, SpawnedSessions(parts))
			if !Finished(m, parts, i < len(msgs)-1) {
				tb.Logf("session %s: the last message %s never finished; taken as it is", s.ID, m.ID)
			}
			mc := c
			mc.Sequence = seq + 1
			evs := MapMessage(mc, m, parts)
			seq += int64(len(evs))
			events = append(events, evs...)
		}
	}
	return events
}

// dbTokens sums the tokens of a database's assistant messages.
func dbTokens(tb testing.TB, path string) tokenSums {
	db := openDatabase(tb, path)
	rows, err := db.Query(`SELECT id, session_id, data FROM message`)
	require.NoError(tb, err)
	defer rows.Close()
	var s tokenSums
	for rows.Next() {
		var id, ses string
		var data []byte
		require.NoError(tb, rows.Scan(&id, &ses, &data))
		m, err := DecodeMessageRow(id, ses, data)
		require.NoError(tb, err)
		s.add(m)
	}
	require.NoError(tb, rows.Err())
	return s
}
