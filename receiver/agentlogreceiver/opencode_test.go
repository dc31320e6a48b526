// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
)

// ocConfig reads the OpenCode data directory dataDir only, polling fast.
func ocConfig(dataDir string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.PollInterval = 10 * time.Millisecond
	cfg.ClaudeCode.Enabled = false
	cfg.OpenCode = AgentConfig{Enabled: true, Include: []string{dataDir}}
	return cfg
}

// ocStore writes OpenCode 1.1 storage objects below <data>/storage, each
// file replaced atomically as a whole (the reader never sees half a file).
type ocStore struct {
	t       *testing.T
	storage string
}

const ocProject = "0f3e9b1c6a7d4e2f8a9b0c1d2e3f4a5b6c7d8e9f"

func newOCStore(t *testing.T, dataDir string) ocStore {
	s := ocStore{t: t, storage: filepath.Join(dataDir, "storage")}
	s.write(filepath.Join("project", ocProject+".json"), map[string]any{"id": ocProject, "worktree": "/home/dev/app", "vcs": "git"})
	return s
}

func (s ocStore) write(rel string, obj any) {
	s.t.Helper()
	b, err := json.MarshalIndent(obj, "", "  ")
	require.NoError(s.t, err)
	path := filepath.Join(s.storage, rel)
	require.NoError(s.t, os.MkdirAll(filepath.Dir(path), 0o755))
	tmp := path + ".tmp"
	require.NoError(s.t, os.WriteFile(tmp, b, 0o600))
	require.NoError(s.t, os.Rename(tmp, path))
}

func (s ocStore) writeRaw(rel, data string) {
	s.t.Helper()
	path := filepath.Join(s.storage, rel)
	require.NoError(s.t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(s.t, os.WriteFile(path, []byte(data), 0o600))
}

func (s ocStore) session(id string, created int64) {
	s.write(filepath.Join("session", ocProject, id+".json"), map[string]any{
		"id": id, "version": "1.1.40", "projectID": ocProject, "directory": "/home/dev/app", "title": "t",
		"time": map[string]any{"created": created, "updated": created},
	})
}

func (s ocStore) user(session, id string, created int64, text string) {
	s.write(filepath.Join("message", session, id+".json"), map[string]any{
		"id": id, "sessionID": session, "role": "user", "time": map[string]any{"created": created}, "agent": "build",
		"model": map[string]any{"providerID": "anthropic", "modelID": "claude-sonnet-4-5"},
	})
	s.write(filepath.Join("part", id, "prt_"+id[4:]+"T.json"), map[string]any{
		"id": "prt_" + id[4:] + "T", "sessionID": session, "messageID": id, "type": "text", "text": text,
	})
}

// assistant writes an assistant message; completed 0 = still working.
func (s ocStore) assistant(session, id, parent string, created, completed int64) {
	tm := map[string]any{"created": created}
	m := map[string]any{
		"id": id, "sessionID": session, "role": "assistant", "parentID": parent, "time": tm,
		"modelID": "claude-sonnet-4-5", "providerID": "anthropic", "mode": "build", "agent": "build",
		"path": map[string]any{"cwd": "/home/dev/app", "root": "/home/dev/app"}, "cost": 0.01,
		"tokens": map[string]any{"input": 10, "output": 20, "reasoning": 0, "cache": map[string]any{"read": 100, "write": 0}},
	}
	if completed > 0 {
		tm["completed"] = completed
		m["finish"] = "tool-calls"
	}
	s.write(filepath.Join("message", session, id+".json"), m)
}

// bash writes a bash tool part in the given state.
func (s ocStore) bash(session, msg, id, status string, start int64, extra map[string]any) {
	st := map[string]any{"status": status, "input": map[string]any{"command": "go test ./...", "description": "Run tests"},
		"time": map[string]any{"start": start}}
	if status == "completed" {
		st["output"] = "ok  \texample.com/app\t0.01s\n"
		st["title"] = "Run tests"
		st["metadata"] = map[string]any{"exit": 0, "output": "ok", "description": "Run tests"}
		st["time"] = map[string]any{"start": start, "end": start + 700}
	}
	for k, v := range extra {
		st[k] = v
	}
	s.write(filepath.Join("part", msg, id+".json"), map[string]any{
		"id": id, "sessionID": session, "messageID": msg, "type": "tool", "callID": "call_" + id, "tool": "bash", "state": st,
	})
}

// eventsOfSession returns the events of one OpenCode conversation.
func (h *harness) eventsOfSession(session string) []agentevent.Event {
	var out []agentevent.Event
	for _, ev := range h.events() {
		if ev.SessionID == session {
			out = append(out, ev)
		}
	}
	return out
}

func (h *harness) waitSession(session string, n int) []agentevent.Event {
	h.t.Helper()
	require.Eventually(h.t, func() bool { return len(h.eventsOfSession(session)) >= n }, 20*time.Second, 5*time.Millisecond,
		"waiting for %d events of session %s", n, session)
	return h.eventsOfSession(session)
}

var ocBarrierSeq int64

// ocBarrier returns once the reader has completed a poll that started after
// the call: it writes a new, newest session with one prompt and waits for
// its event. Sessions are read oldest first, so every other session was
// looked at in that poll.
func (h *harness) ocBarrier(s ocStore) {
	h.t.Helper()
	ocBarrierSeq++
	id := fmt.Sprintf("ses_zzbarrier%04d", ocBarrierSeq)
	s.session(id, 1900000000000+ocBarrierSeq)
	s.user(id, fmt.Sprintf("msg_barrier%04d", ocBarrierSeq), 1900000000000+ocBarrierSeq, "barrier")
	h.waitSession(id, 1)
}

func TestOpenCodeTreeTestdata(t *testing.T) {
	data := t.TempDir()
	require.NoError(t, os.CopyFS(data, os.DirFS(filepath.Join("..", "..", "testdata", "opencode", "storage_tree"))))
	expectedLogs, err := golden.ReadLogs(filepath.Join("..", "..", "testdata", "opencode", "storage_tree", "events.yaml"))
	require.NoError(t, err)
	expected, skipped := agentevent.DecodeLogs(expectedLogs)
	require.Zero(t, skipped)

	cfg := ocConfig(data)
	cfg.IncludeContent = true
	h := newHarness(t, cfg, nil)
	h.start()
	require.Eventually(t, func() bool { return len(h.events()) >= len(expected) }, 20*time.Second, 5*time.Millisecond)
	h.ocBarrier(newOCStore(t, data))
	var got []agentevent.Event
	for _, ev := range h.events() {
		if strings.HasPrefix(ev.SessionID, "ses_zzbarrier") {
			continue
		}
		rel, err := filepath.Rel(data, ev.LogFile)
		require.NoError(t, err)
		ev.LogFile = filepath.ToSlash(rel)
		got = append(got, ev)
	}
	// The receiver emits exactly the mapping package's golden events.
	require.Equal(t, expected, got)
	assert.Empty(t, h.badRecordLogs())
	assert.Equal(t, agentevent.SourceOpenCode, got[0].Source)
}

// TestOpenCodeTreeLive follows a turn while OpenCode writes it: a tool part
// rewritten in place from running to completed, the assistant message
// completed afterwards. Each message is emitted once, in its final state.
func TestOpenCodeTreeLive(t *testing.T) {
	data := t.TempDir()
	s := newOCStore(t, data)
	const ses = "ses_live0001"
	s.session(ses, 1771000000000)
	s.user(ses, "msg_a001", 1771000000000, "run the tests")
	s.assistant(ses, "msg_a002", "msg_a001", 1771000000100, 0)
	s.bash(ses, "msg_a002", "prt_a002b", "running", 1771000000200, nil)

	h := newHarness(t, ocConfig(data), nil)
	h.start()
	require.Equal(t, []string{"msg_a001"}, eventIDs(h.waitSession(ses, 1)))

	// The tool finishes: the part is rewritten; the message is not done yet.
	s.bash(ses, "msg_a002", "prt_a002b", "completed", 1771000000200, nil)
	h.ocBarrier(s)
	require.Len(t, h.eventsOfSession(ses), 1, "an unfinished message is not emitted")

	// The step ends.
	s.assistant(ses, "msg_a002", "msg_a001", 1771000000100, 1771000001000)
	evs := h.waitSession(ses, 3)
	require.Equal(t, []string{"msg_a001", "prt_a002b", "prt_a002b:result"}, eventIDs(evs))
	res := evs[2]
	assert.Equal(t, agentevent.TypeToolResult, res.Type)
	assert.Equal(t, agentevent.ToolSuccess, res.ToolStatus)
	assert.Equal(t, int64(0), agentevent.Value(res.ToolExitCode))
	assert.Equal(t, int64(700), agentevent.Value(res.ToolLatencyMs))
	assert.Equal(t, "go", res.Attributes["agent.test.runner"])
	assert.Equal(t, int64(130), agentevent.Value(evs[1].TokensTotal), "usage once, on the message's first model event")
	assert.Empty(t, evs[0].Text, "content is off by default")

	// Later rewrites of an emitted message (OpenCode compacting old tool
	// output) are not emitted again; new messages are.
	s.bash(ses, "msg_a002", "prt_a002b", "completed", 1771000000200, map[string]any{
		"time": map[string]any{"start": 1771000000200, "end": 1771000000900, "compacted": 1771000005000},
	})
	s.user(ses, "msg_a003", 1771000002000, "thanks")
	evs = h.waitSession(ses, 4)
	h.ocBarrier(s)
	require.Equal(t, []string{"msg_a001", "prt_a002b", "prt_a002b:result", "msg_a003"}, eventIDs(h.eventsOfSession(ses)))
	for i, ev := range h.eventsOfSession(ses) {
		assert.Equal(t, int64(i+1), ev.Sequence)
	}
	assert.Empty(t, h.badRecordLogs())
}

// TestOpenCodeTreeRestart: with a storage extension, a restart emits only
// what was written while the receiver was down, and a message left
// unfinished at shutdown is emitted once it is final.
func TestOpenCodeTreeRestart(t *testing.T) {
	data := t.TempDir()
	s := newOCStore(t, data)
	const ses = "ses_restart01"
	s.session(ses, 1771000000000)
	s.user(ses, "msg_b001", 1771000000000, "one")
	s.assistant(ses, "msg_b002", "msg_b001", 1771000000100, 1771000000500)
	s.bash(ses, "msg_b002", "prt_b002b", "completed", 1771000000200, nil)
	s.user(ses, "msg_b003", 1771000001000, "two")
	s.assistant(ses, "msg_b004", "msg_b003", 1771000001100, 0) // still working

	ext := storagetest.NewFileBackedStorageExtension("state", t.TempDir())
	host := storagetest.NewStorageHost().WithExtension(ext.ID, ext)
	cfg := ocConfig(data)
	cfg.Storage = &ext.ID

	h1 := newHarness(t, cfg, host)
	h1.start()
	require.Equal(t, []string{"msg_b001", "prt_b002b", "prt_b002b:result", "msg_b003"}, eventIDs(h1.waitSession(ses, 4)))
	h1.ocBarrier(s)
	h1.stop()

	// While the receiver is down the open message completes, a new turn starts.
	s.bash(ses, "msg_b004", "prt_b004b", "completed", 1771000001200, nil)
	s.assistant(ses, "msg_b004", "msg_b003", 1771000001100, 1771000002000)
	s.user(ses, "msg_b005", 1771000003000, "three")

	h2 := newHarness(t, cfg, host)
	h2.start()
	evs := h2.waitSession(ses, 3)
	h2.ocBarrier(s)
	evs = h2.eventsOfSession(ses)
	require.Equal(t, []string{"prt_b004b", "prt_b004b:result", "msg_b005"}, eventIDs(evs), "nothing emitted twice, nothing lost")
	assert.Equal(t, []int64{5, 6, 7}, []int64{evs[0].Sequence, evs[1].Sequence, evs[2].Sequence}, "Sequence continues")
	assert.Equal(t, "msg_b003", evs[0].ParentEventID, "the answer belongs to the turn opened before the restart")
	h2.stop()

	// A third run with nothing new emits nothing but its barrier.
	h3 := newHarness(t, cfg, host)
	h3.start()
	h3.ocBarrier(s)
	assert.Empty(t, h3.eventsOfSession(ses))
}

func TestOpenCodeTreeBadObjects(t *testing.T) {
	data := t.TempDir()
	s := newOCStore(t, data)
	const ses = "ses_bad00001"
	s.session(ses, 1771000000000)
	s.user(ses, "msg_c001", 1771000000000, "one")
	s.writeRaw(filepath.Join("message", ses, "msg_c002.json"), `{"id": "msg_c002", "role": `)
	s.user(ses, "msg_c003", 1771000002000, "two")
	s.writeRaw(filepath.Join("part", "msg_c003", "prt_zz.json"), `[1, 2]`)
	s.writeRaw(filepath.Join("session", ocProject, "ses_broken.json"), `{"id":`)

	h := newHarness(t, ocConfig(data), nil)
	h.start()
	require.Equal(t, []string{"msg_c001", "msg_c003"}, eventIDs(h.waitSession(ses, 2)))
	h.ocBarrier(s)
	h.ocBarrier(s)
	bad := h.badRecordLogs()
	require.Len(t, bad, 3, "each bad object is reported once")
	reasons := map[string]string{}
	for _, e := range bad {
		reasons[filepath.Base(e.ContextMap()["path"].(string))] = e.ContextMap()["reason"].(string)
	}
	assert.Equal(t, map[string]string{
		"msg_c002.json":   "malformed_json",
		"prt_zz.json":     "unexpected_shape",
		"ses_broken.json": "malformed_json",
	}, reasons)
}

func TestOpenCodeDefaultInclude(t *testing.T) {
	env := func(home string, vars map[string]string) environment {
		return environment{home: home, getenv: func(k string) string { return vars[k] }}
	}
	inc, err := opencodeInclude(env("/home/dev", nil))
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join("/home/dev", ".local", "share", "opencode")}, inc)

	inc, err = opencodeInclude(env("/home/dev", map[string]string{"XDG_DATA_HOME": "/data/xdg"}))
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join("/data/xdg", "opencode")}, inc)

	// A relative XDG_DATA_HOME is invalid per the XDG spec and ignored.
	inc, err = opencodeInclude(env("/home/dev", map[string]string{"XDG_DATA_HOME": "rel"}))
	require.NoError(t, err)
	assert.Equal(t, []string{filepath.Join("/home/dev", ".local", "share", "opencode")}, inc)

	_, err = opencodeInclude(env("", nil))
	require.ErrorIs(t, err, errNoHome)
}

func TestOpenCodeNoHomeIsSkipped(t *testing.T) {
	t.Setenv("HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	cfg := testConfig(t.TempDir())
	cfg.OpenCode = AgentConfig{Enabled: true}
	h := newHarness(t, cfg, nil)
	h.start()
	assert.Len(t, h.logs.FilterMessageSnippet("set `opencode.include`").All(), 1)
}

// TestOpenCodeDatabaseDirSkipsTree: where opencode.db exists, OpenCode
// (≥1.2) has migrated the tree into it; the tree left behind is not read.
func TestOpenCodeDatabaseDirSkipsTree(t *testing.T) {
	migrated, other := t.TempDir(), t.TempDir()
	s := newOCStore(t, migrated)
	s.session("ses_old00001", 1771000000000)
	s.user("ses_old00001", "msg_d001", 1771000000000, "old")
	o := newOCDB(t, migrated)
	cfg := ocConfig(migrated)
	cfg.OpenCode.Include = []string{migrated, other}
	h := newHarness(t, cfg, nil)
	h.start()
	h.ocBarrier(newOCStore(t, other))
	h.dbBarrier(o)
	assert.Empty(t, h.eventsOfSession("ses_old00001"))
	assert.Len(t, h.logs.FilterMessageSnippet("Reading OpenCode SQLite database").All(), 1)
	assert.Empty(t, h.logs.FilterMessageSnippet("Reading OpenCode JSON storage").FilterField(zap.String("path", migrated)).All())
}

// TestReadsOpenCodeFixtureCorpus reads every OpenCode data directory of the
// real-world corpus (every fixture root's opencode/: ≤1.1 storage trees read
// in place, ≥1.2 SQLite databases copied first with their -wal and -shm, so
// that nothing SQLite does to a WAL reader's files can touch the fixtures):
// every message arrives, nothing is unparsed, and the session's tokens are
// the sum of its assistant messages' tokens (steps not added again).
func TestReadsOpenCodeFixtureCorpus(t *testing.T) {
	vendortest.EachCorpus(t, "opencode", func(t *testing.T, dir string) {
		trees, err := filepath.Glob(filepath.Join(dir, "*", "storage"))
		require.NoError(t, err)
		dbs, err := filepath.Glob(filepath.Join(dir, "*", "opencode.db"))
		require.NoError(t, err)
		require.NotEmpty(t, append(trees, dbs...), "no OpenCode storage tree or database in %s", dir)
		for _, storage := range trees {
			data := filepath.Dir(storage)
			t.Run(filepath.Base(data), func(t *testing.T) {
				msgs, err := filepath.Glob(filepath.Join(storage, "message", "*", "*.json"))
				require.NoError(t, err)
				var want ocMessages
				for _, m := range msgs {
					b, err := os.ReadFile(m)
					require.NoError(t, err)
					want.add(t, filepath.Base(filepath.Dir(m)), filepath.Base(m), b)
				}
				readOpenCodeCorpus(t, data, want)
			})
		}
		for _, db := range dbs {
			t.Run(filepath.Base(filepath.Dir(db)), func(t *testing.T) {
				data := t.TempDir()
				for _, suffix := range []string{"", "-wal", "-shm"} {
					b, err := os.ReadFile(db + suffix)
					if suffix != "" && errors.Is(err, fs.ErrNotExist) {
						continue
					}
					require.NoError(t, err)
					require.NoError(t, os.WriteFile(filepath.Join(data, "opencode.db"+suffix), b, 0o600))
				}
				conn, err := sql.Open("sqlite", "file:"+filepath.Join(data, "opencode.db")+"?mode=ro")
				require.NoError(t, err)
				rows, err := conn.Query("SELECT session_id, id, data FROM message ORDER BY id")
				require.NoError(t, err)
				var want ocMessages
				for rows.Next() {
					var session, id string
					var b []byte
					require.NoError(t, rows.Scan(&session, &id, &b))
					want.add(t, session, id, b)
				}
				require.NoError(t, rows.Err())
				require.NoError(t, rows.Close())
				require.NoError(t, conn.Close())
				require.NotEmpty(t, want.ids, "no message rows in %s", db)
				readOpenCodeCorpus(t, data, want)
			})
		}
	})
}

// ocMessages is what a corpus's messages say of themselves, read
// independently of the reader: their ids, and the tokens of the final ones.
// A session's last message, an assistant message that neither completed nor
// failed, is one OpenCode was still writing when the copy was taken: the
// reader holds it back until it is final or a later message exists.
type ocMessages struct {
	ids           []string
	input, output int64
	last          map[string]ocMessage // by session
}

type ocMessage struct {
	id            string
	user, open    bool
	input, output int64
}

func (m *ocMessages) add(t *testing.T, session, id string, b []byte) {
	var msg struct {
		Role string `json:"role"`
		Time struct {
			Completed *int64 `json:"completed"`
		} `json:"time"`
		Error  json.RawMessage `json:"error"`
		Tokens struct {
			Input, Output, Reasoning int64
			Cache                    struct{ Read, Write int64 }
		} `json:"tokens"`
	}
	require.NoError(t, json.Unmarshal(b, &msg))
	if m.last == nil {
		m.last = map[string]ocMessage{}
	}
	if prev, ok := m.last[session]; ok {
		m.take(prev)
	}
	m.last[session] = ocMessage{
		id:     strings.TrimSuffix(id, ".json"),
		user:   msg.Role == "user",
		open:   msg.Role == "assistant" && msg.Time.Completed == nil && len(msg.Error) == 0,
		input:  msg.Tokens.Input + msg.Tokens.Cache.Read + msg.Tokens.Cache.Write,
		output: msg.Tokens.Output + msg.Tokens.Reasoning,
	}
}

func (m *ocMessages) take(msg ocMessage) {
	if msg.user || msg.input+msg.output > 0 {
		// An assistant message without tokens may have no event that names
		// it (only step and patch parts); its parts are checked by the
		// totals and Validate.
		m.ids = append(m.ids, msg.id)
	}
	m.input += msg.input
	m.output += msg.output
}

// done takes every session's last message when it is final, and returns
// the ids of those held back.
func (m *ocMessages) done() (held []string) {
	for _, msg := range m.last {
		if msg.open {
			held = append(held, msg.id)
			continue
		}
		m.take(msg)
	}
	m.last = nil
	return held
}

// readOpenCodeCorpus reads the OpenCode data directory data and checks it
// against want.
func readOpenCodeCorpus(t *testing.T, data string, want ocMessages) {
	held := want.done()
	h := newHarness(t, ocConfig(data), nil)
	h.start()
	require.Eventually(t, func() bool {
		seen := map[string]bool{}
		for _, ev := range h.events() {
			seen[ev.EventID] = true
			seen[ev.ResponseID] = true
			seen[strings.TrimSuffix(filepath.Base(ev.LogFile), ".json")] = true
		}
		for _, id := range want.ids {
			if !seen[id] {
				return false
			}
		}
		return true
	}, 20*time.Second, 5*time.Millisecond, "every message of the corpus is emitted")
	var gotIn, gotOut int64
	for _, ev := range h.events() {
		assert.Empty(t, ev.Unparsed)
		assert.NotContains(t, held, ev.ResponseID, "a message OpenCode was still writing is held back")
		gotIn += agentevent.Value(ev.TokensInput)
		gotOut += agentevent.Value(ev.TokensOutput)
	}
	assert.Equal(t, want.input, gotIn)
	assert.Equal(t, want.output, gotOut)
	assert.Empty(t, h.badRecordLogs())
	report := agentevent.Validate(h.events())
	assert.Empty(t, report.Violations)
	for _, c := range report.OpenToolCalls {
		// OpenCode leaves a part "running" when it stops mid-call: such a
		// call stays open, marked in progress.
		assert.Equalf(t, agentevent.ToolInProgress, c.ToolStatus, "open tool call %s (%s)", c.ToolCallID, c.ToolName)
	}
}

// TestOpenCodeStartAtEnd: with start_at: end, what exists at the first poll
// is history left alone; what is written afterwards is read, in old
// sessions and new ones, from the tree and from the database alike.
func TestOpenCodeStartAtEnd(t *testing.T) {
	t.Run("tree", func(t *testing.T) {
		data := t.TempDir()
		s := newOCStore(t, data)
		s.session("ses_old00001", 1771000000000)
		s.user("ses_old00001", "msg_g001", 1771000000000, "old")
		past := time.Now().Add(-time.Hour)
		require.NoError(t, os.Chtimes(filepath.Join(s.storage, "message", "ses_old00001", "msg_g001.json"), past, past))
		cfg := ocConfig(data)
		cfg.StartAt = StartAtEnd
		h := newHarness(t, cfg, nil)
		h.start()
		h.ocBarrier(s)
		s.user("ses_old00001", "msg_g002", 1771000001000, "new in an old session")
		h.ocBarrier(s)
		assert.Equal(t, []string{"msg_g002"}, eventIDs(h.eventsOfSession("ses_old00001")))
	})
	t.Run("database", func(t *testing.T) {
		data := t.TempDir()
		o := newOCDB(t, data)
		o.now = time.Now().UnixMilli() - 10_000 // rows written before the start
		o.newSession("ses_old00002", 1771000000000)
		o.user("ses_old00002", "msg_h001", 1771000000000, "old")
		cfg := ocConfig(data)
		cfg.StartAt = StartAtEnd
		h := newHarness(t, cfg, nil)
		h.start()
		o.now = time.Now().UnixMilli() + 1000 // rows written after it
		h.dbBarrier(o)
		o.user("ses_old00002", "msg_h002", 1771000001000, "new in an old session")
		h.dbBarrier(o)
		assert.Equal(t, []string{"msg_h002"}, eventIDs(h.eventsOfSession("ses_old00002")))
	})
}

// TestOpenCodeEmitUnparsed: with emit_unparsed, an object that cannot be
// decoded goes out once as an agent.log event with its reason.
func TestOpenCodeEmitUnparsed(t *testing.T) {
	data := t.TempDir()
	s := newOCStore(t, data)
	const ses = "ses_unparsed1"
	s.session(ses, 1771000000000)
	s.user(ses, "msg_i001", 1771000000000, "one")
	s.writeRaw(filepath.Join("part", "msg_i001", "prt_zzbroken.json"), `{"id": "prt_zzbroken", "type": `)
	cfg := ocConfig(data)
	cfg.EmitUnparsed = true
	h := newHarness(t, cfg, nil)
	h.start()
	evs := h.waitSession(ses, 2)
	h.ocBarrier(s)
	h.ocBarrier(s)
	evs = h.eventsOfSession(ses)
	require.Len(t, evs, 2)
	assert.Equal(t, "prt_zzbroken", evs[0].EventID)
	assert.Equal(t, "malformed_json", evs[0].Unparsed)
	assert.Equal(t, agentevent.TypeLog, evs[0].Type)
	assert.Equal(t, "msg_i001", evs[1].EventID)
	assert.Len(t, h.badRecordLogs(), 1)
}
