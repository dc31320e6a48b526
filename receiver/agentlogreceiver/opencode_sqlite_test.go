// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"bytes"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// openCodeSchema is OpenCode's SQLite schema (≥1.2) for the tables the
// reader uses, as its drizzle definitions create them
// (packages/opencode/src/{project/project,session/session}.sql.ts of
// anomalyco/opencode, see the README), with the indexes OpenCode declares.
const openCodeSchema = "" +
	"CREATE TABLE `project` (`id` text PRIMARY KEY, `worktree` text NOT NULL, `vcs` text, `name` text, `icon_url` text, `icon_color` text, " +
	"`time_created` integer NOT NULL, `time_updated` integer NOT NULL, `time_initialized` integer, `sandboxes` text NOT NULL, `commands` text);\n" +
	"CREATE TABLE `session` (`id` text PRIMARY KEY, `project_id` text NOT NULL, `workspace_id` text, `parent_id` text, `slug` text NOT NULL, " +
	"`directory` text NOT NULL, `path` text, `title` text NOT NULL, `version` text NOT NULL, `share_url` text, `summary_additions` integer, " +
	"`summary_deletions` integer, `summary_files` integer, `summary_diffs` text, `revert` text, `permission` text, `agent` text, `model` text, " +
	"`time_created` integer NOT NULL, `time_updated` integer NOT NULL, `time_compacting` integer, `time_archived` integer, " +
	"CONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE);\n" +
	"CREATE TABLE `message` (`id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL, " +
	"CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE);\n" +
	"CREATE TABLE `part` (`id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL, " +
	"CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE);\n" +
	"CREATE INDEX `session_project_idx` ON `session` (`project_id`);\n" +
	"CREATE INDEX `session_parent_idx` ON `session` (`parent_id`);\n" +
	"CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);\n" +
	"CREATE INDEX `part_message_id_id_idx` ON `part` (`message_id`,`id`);\n" +
	"CREATE INDEX `part_session_idx` ON `part` (`session_id`);\n"

// ocDB is OpenCode's side of the database: a writer in WAL mode, as
// OpenCode opens it.
type ocDB struct {
	t    *testing.T
	path string
	db   *sql.DB
	now  int64 // time_updated of the next write
}

func newOCDB(t *testing.T, dataDir string) *ocDB {
	path := filepath.Join(dataDir, "opencode.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)&_pragma=wal_autocheckpoint(0)")
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	_, err = db.Exec(openCodeSchema)
	require.NoError(t, err)
	o := &ocDB{t: t, path: path, db: db, now: 1771000000000}
	o.exec("INSERT INTO project (id, worktree, vcs, time_created, time_updated, sandboxes) VALUES (?, ?, 'git', ?, ?, '[]')",
		ocProject, "/home/dev/app", o.now, o.now)
	return o
}

func (o *ocDB) exec(q string, args ...any) {
	o.t.Helper()
	_, err := o.db.Exec(q, args...)
	require.NoError(o.t, err)
}

func (o *ocDB) tick() int64 { o.now += 10; return o.now }

// splitObject splits an OpenCode object into its id columns and its data
// JSON, keeping the order of the other keys (as OpenCode's migration does).
func splitObject(t *testing.T, obj map[string]any, idKeys ...string) (ids []string, data string) {
	raw, ok := obj[rawKey].(json.RawMessage)
	if !ok {
		b, err := json.Marshal(obj)
		require.NoError(t, err)
		raw = b
	}
	for _, k := range idKeys {
		s, _ := obj[k].(string)
		ids = append(ids, s)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	_, err := dec.Token() // {
	require.NoError(t, err)
	var out bytes.Buffer
	out.WriteByte('{')
	for dec.More() {
		tok, err := dec.Token()
		require.NoError(t, err)
		var v json.RawMessage
		require.NoError(t, dec.Decode(&v))
		if slices.Contains(idKeys, tok.(string)) {
			continue
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(tok)
		out.Write(k)
		out.WriteByte(':')
		require.NoError(t, json.Compact(&out, v))
	}
	out.WriteByte('}')
	return ids, out.String()
}

// rawKey holds, in an object read from a file, its bytes as written.
const rawKey = "\x00raw"

func (o *ocDB) session(obj map[string]any) {
	tm := obj["time"].(map[string]any)
	parent, _ := obj["parentID"].(string)
	var parentArg any
	if parent != "" {
		parentArg = parent
	}
	slug, _ := obj["slug"].(string)
	o.exec(`INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, time_updated)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, obj["id"], obj["projectID"], parentArg, slug, obj["directory"], obj["title"], obj["version"],
		int64(tm["created"].(float64)), o.tick())
}

// message inserts or replaces a message (OpenCode upserts on every update).
func (o *ocDB) message(obj map[string]any) {
	ids, data := splitObject(o.t, obj, "id", "sessionID")
	created := int64(obj["time"].(map[string]any)["created"].(float64))
	o.exec(`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET time_updated = excluded.time_updated, data = excluded.data`, ids[0], ids[1], created, o.tick(), data)
}

func (o *ocDB) part(obj map[string]any) {
	ids, data := splitObject(o.t, obj, "id", "messageID", "sessionID")
	now := o.tick()
	o.exec(`INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET time_updated = excluded.time_updated, data = excluded.data`, ids[0], ids[1], ids[2], now, now, data)
}

// loadTree inserts a ≤1.1 storage tree into the database, the way
// OpenCode 1.2's migration does: same objects, ids as columns.
func (o *ocDB) loadTree(storage string) {
	read := func(pattern string) []map[string]any {
		paths, err := filepath.Glob(filepath.Join(storage, pattern))
		require.NoError(o.t, err)
		sort.Strings(paths)
		var out []map[string]any
		for _, p := range paths {
			b, err := os.ReadFile(p)
			require.NoError(o.t, err)
			var m map[string]any
			require.NoError(o.t, json.Unmarshal(b, &m))
			m[rawKey] = json.RawMessage(b)
			out = append(out, m)
		}
		return out
	}
	for _, p := range read("project/*.json") {
		o.exec("INSERT OR REPLACE INTO project (id, worktree, vcs, time_created, time_updated, sandboxes) VALUES (?, ?, ?, 0, 0, '[]')",
			p["id"], p["worktree"], p["vcs"])
	}
	for _, s := range read("session/*/*.json") {
		o.session(s)
	}
	for _, m := range read("message/*/*.json") {
		o.message(m)
	}
	for _, p := range read("part/*/*.json") {
		o.part(p)
	}
}

// ocDBMessages writes the same kind of session as ocStore, into the database.
func (o *ocDB) user(session, id string, created int64, text string) {
	o.message(map[string]any{"id": id, "sessionID": session, "role": "user", "time": map[string]any{"created": float64(created)}, "agent": "build"})
	o.part(map[string]any{"id": "prt_" + id[4:] + "T", "sessionID": session, "messageID": id, "type": "text", "text": text})
}

func (o *ocDB) newSession(id string, created int64) {
	o.session(map[string]any{
		"id": id, "projectID": ocProject, "directory": "/home/dev/app", "title": "t", "version": "1.2.10",
		"time": map[string]any{"created": float64(created)},
	})
}

func (o *ocDB) assistant(session, id, parent string, created, completed int64) {
	tm := map[string]any{"created": float64(created)}
	m := map[string]any{
		"id": id, "sessionID": session, "role": "assistant", "parentID": parent, "time": tm,
		"modelID": "gpt-5", "providerID": "openai", "mode": "build", "agent": "build", "cost": 0.02,
		"tokens": map[string]any{"input": 5, "output": 6, "reasoning": 7, "cache": map[string]any{"read": 8, "write": 0}},
	}
	if completed > 0 {
		tm["completed"] = float64(completed)
		m["finish"] = "stop"
	}
	o.message(m)
}

func (o *ocDB) bash(session, msg, id, status string, start int64) {
	st := map[string]any{"status": status, "input": map[string]any{"command": "ls"}, "time": map[string]any{"start": float64(start)}}
	if status == "completed" {
		st["output"] = "a\n"
		st["metadata"] = map[string]any{"exit": 0}
		st["time"] = map[string]any{"start": float64(start), "end": float64(start + 40)}
	}
	o.part(map[string]any{"id": id, "sessionID": session, "messageID": msg, "type": "tool", "callID": "call_" + id, "tool": "bash", "state": st})
}

// dbBarrier returns once the reader completed a poll that started after the
// call (a new, newest session's prompt arrives).
func (h *harness) dbBarrier(o *ocDB) {
	h.t.Helper()
	ocBarrierSeq++
	id := "ses_zzbarrier" + time.Now().Format("150405.000000000") + string(rune('a'+ocBarrierSeq%26))
	o.newSession(id, 1900000000000+ocBarrierSeq)
	o.user(id, "msg_barrier"+id[13:], 1900000000000+ocBarrierSeq, "barrier")
	h.waitSession(id, 1)
}

func fileSum(t *testing.T, path string) [32]byte {
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return sha256.Sum256(b)
}

// TestOpenCodeSQLiteTestdata: the storage tree testdata, migrated into a
// database, yields the same events as the tree (LogFile aside).
func TestOpenCodeSQLiteTestdata(t *testing.T) {
	data := t.TempDir()
	o := newOCDB(t, data)
	o.loadTree(filepath.Join("..", "..", "testdata", "opencode", "storage_tree", "storage"))
	expectedLogs, err := golden.ReadLogs(filepath.Join("..", "..", "testdata", "opencode", "storage_tree", "events.yaml"))
	require.NoError(t, err)
	expected, _ := agentevent.DecodeLogs(expectedLogs)
	for i := range expected {
		expected[i].LogFile = o.path
	}

	cfg := ocConfig(data)
	cfg.IncludeContent = true
	h := newHarness(t, cfg, nil)
	h.start()
	require.Eventually(t, func() bool { return len(h.events()) >= len(expected) }, 20*time.Second, 5*time.Millisecond)
	h.dbBarrier(o)
	var got []agentevent.Event
	for _, ev := range h.events() {
		if !strings.HasPrefix(ev.SessionID, "ses_zzbarrier") {
			got = append(got, ev)
		}
	}
	require.Equal(t, expected, got)
	assert.Empty(t, h.badRecordLogs())
}

// TestOpenCodeSQLiteLive inserts and updates rows while the receiver polls,
// as OpenCode does during a turn; the reader never writes to the database.
func TestOpenCodeSQLiteLive(t *testing.T) {
	data := t.TempDir()
	o := newOCDB(t, data)
	const ses = "ses_dblive01"
	o.newSession(ses, 1771000000000)
	o.user(ses, "msg_e001", 1771000000000, "list files")

	h := newHarness(t, ocConfig(data), nil)
	h.start()
	require.Equal(t, []string{"msg_e001"}, eventIDs(h.waitSession(ses, 1)))

	o.assistant(ses, "msg_e002", "msg_e001", 1771000000100, 0)
	o.bash(ses, "msg_e002", "prt_e002b", "running", 1771000000200)
	h.dbBarrier(o)
	o.bash(ses, "msg_e002", "prt_e002b", "completed", 1771000000200)
	h.dbBarrier(o)
	require.Len(t, h.eventsOfSession(ses), 1, "an unfinished message is not emitted")

	o.assistant(ses, "msg_e002", "msg_e001", 1771000000100, 1771000000900)
	h.waitSession(ses, 3)
	h.dbBarrier(o)
	evs := h.eventsOfSession(ses)
	require.Equal(t, []string{"msg_e001", "prt_e002b", "prt_e002b:result"}, eventIDs(evs))
	assert.Equal(t, "openai", evs[1].Provider)
	assert.Equal(t, int64(5+8+6+7), agentevent.Value(evs[1].TokensTotal))
	assert.Equal(t, int64(40), agentevent.Value(evs[2].ToolLatencyMs))
	assert.Equal(t, "1.2.10", evs[0].AgentVersion)

	// The reader is a WAL reader only: it never checkpoints (the WAL keeps
	// every write, autocheckpoint being off in this writer) and never writes.
	walInfo, err := os.Stat(o.path + "-wal")
	require.NoError(t, err)
	assert.Positive(t, walInfo.Size())
	mainBefore := fileSum(t, o.path)
	h.dbBarrier(o)
	h.stop()
	assert.Equal(t, mainBefore, fileSum(t, o.path), "the database file is untouched by the reader")
}

// TestOpenCodeSQLiteRestart: the watermarks in the storage extension make a
// restart emit only rows written while the receiver was down.
func TestOpenCodeSQLiteRestart(t *testing.T) {
	data := t.TempDir()
	o := newOCDB(t, data)
	const ses = "ses_dbrestart"
	o.newSession(ses, 1771000000000)
	o.user(ses, "msg_f001", 1771000000000, "one")
	o.assistant(ses, "msg_f002", "msg_f001", 1771000000100, 1771000000200)
	o.user(ses, "msg_f003", 1771000001000, "two")
	o.assistant(ses, "msg_f004", "msg_f003", 1771000001100, 0)

	ext := storagetest.NewFileBackedStorageExtension("state", t.TempDir())
	host := storagetest.NewStorageHost().WithExtension(ext.ID, ext)
	cfg := ocConfig(data)
	cfg.Storage = &ext.ID

	h1 := newHarness(t, cfg, host)
	h1.start()
	require.Equal(t, []string{"msg_f001", "msg_f002", "msg_f003"}, eventIDs(h1.waitSession(ses, 3)))
	h1.dbBarrier(o)
	h1.stop()

	o.bash(ses, "msg_f004", "prt_f004b", "completed", 1771000001200)
	o.assistant(ses, "msg_f004", "msg_f003", 1771000001100, 1771000002000)
	o.user(ses, "msg_f005", 1771000003000, "three")

	h2 := newHarness(t, cfg, host)
	h2.start()
	h2.waitSession(ses, 3)
	h2.dbBarrier(o)
	evs := h2.eventsOfSession(ses)
	require.Equal(t, []string{"prt_f004b", "prt_f004b:result", "msg_f005"}, eventIDs(evs))
	assert.Equal(t, int64(4), evs[0].Sequence)
	assert.Equal(t, "msg_f003", evs[0].ParentEventID)
	h2.stop()

	h3 := newHarness(t, cfg, host)
	h3.start()
	h3.dbBarrier(o)
	assert.Empty(t, h3.eventsOfSession(ses))
}

// TestOpenCodeSQLiteBadData: a database the reader cannot use (not SQLite,
// or tables of another shape) is reported once and retried, never fatal; a
// row whose data is not JSON is counted once and skipped.
func TestOpenCodeSQLiteBadData(t *testing.T) {
	broken := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(broken, "opencode.db"), []byte("not a database, just text that is long enough"), 0o600))
	data := t.TempDir()
	o := newOCDB(t, data)
	const ses = "ses_dbbad001"
	o.newSession(ses, 1771000000000)
	o.user(ses, "msg_j001", 1771000000000, "one")
	o.exec(`INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES ('msg_j002', ?, 1, ?, '{"role":')`, ses, o.tick())
	o.user(ses, "msg_j003", 1771000002000, "two")

	cfg := ocConfig(data)
	cfg.OpenCode.Include = []string{broken, data}
	h := newHarness(t, cfg, nil)
	h.start()
	h.waitSession(ses, 2)
	h.dbBarrier(o)
	h.dbBarrier(o)
	assert.Equal(t, []string{"msg_j001", "msg_j003"}, eventIDs(h.eventsOfSession(ses)))
	assert.Len(t, h.badRecordLogs(), 1, "the bad row is reported once")
	assert.Len(t, h.logs.FilterMessageSnippet("Cannot read the OpenCode database").All(), 1, "the bad database is reported once")
}
