// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"encoding/json"
	"fmt"
	"maps"
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
	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/opencode"
	"github.com/agentotel/agentotel/tests/testenv"
)

// ocConfig reads the OpenCode data directory dataDir only, polling fast.
func ocConfig(dataDir string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.PollInterval = 10 * time.Millisecond
	for _, a := range registered() {
		a.config(cfg).Enabled = false
	}
	cfg.OpenCode = AgentConfig{Enabled: true, Include: []string{dataDir}}
	return cfg
}

// ocStore writes OpenCode 1.1 storage objects below <data>/storage, each
// file replaced atomically as a whole (the reader never sees half a file).
type ocStore struct {
	t       testing.TB
	storage string
}

const ocProject = "0f3e9b1c6a7d4e2f8a9b0c1d2e3f4a5b6c7d8e9f"

func newOCStore(tb testing.TB, dataDir string) ocStore {
	s := ocStore{t: tb, storage: filepath.Join(dataDir, "storage")}
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
	st := map[string]any{
		"status": status, "input": map[string]any{"command": "go test ./...", "description": "Run tests"},
		"time": map[string]any{"start": start},
	}
	if status == "completed" {
		st["output"] = "ok  \texample.com/app\t0.01s\n"
		st["title"] = "Run tests"
		st["metadata"] = map[string]any{"exit": 0, "output": "ok", "description": "Run tests"}
		st["time"] = map[string]any{"start": start, "end": start + 700}
	}
	maps.Copy(st, extra)
	s.write(filepath.Join("part", msg, id+".json"), map[string]any{
		"id": id, "sessionID": session, "messageID": msg, "type": "tool", "callID": "call_" + id, "tool": "bash", "state": st,
	})
}

// eventsOfSession returns the events of one OpenCode conversation.
func (h *harness) eventsOfSession(session string) []agentevent.Event {
	var out []agentevent.Event
	all := h.events()
	for i := range all {
		ev := &all[i]
		if ev.SessionID == session {
			out = append(out, *ev)
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
	assert.Equal(t, agentevent.Source("opencode"), got[0].Source)
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
	h.waitSession(ses, 4)
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
	h2.waitSession(ses, 3)
	h2.ocBarrier(s)
	evs := h2.eventsOfSession(ses)
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
	env := func(home string, vars map[string]string) agents.Env {
		return agents.Env{Home: home, Getenv: func(k string) string { return vars[k] }}
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
	require.ErrorIs(t, err, agents.ErrNoHome)
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

// TestReadsOpenCodeFixtureCorpus reads every OpenCode storage tree and
// database of every corpus root (opencode/ of testenv.FixtureRoots): a tree
// in place (the reader never writes there), a database through a copy
// (SQLite opens a WAL database's -shm read-write even in mode=ro). Every
// message arrives, nothing is unparsed, and the tokens are the sum of the
// assistant messages' own tokens (steps not added again); a database's
// tokens also equal ccusage's, session by session.
func TestReadsOpenCodeFixtureCorpus(t *testing.T) {
	vendortest.EachCorpus(t, "opencode", func(t *testing.T, dir string) {
		trees, err := filepath.Glob(filepath.Join(dir, "*", "storage"))
		require.NoError(t, err)
		dbs, err := filepath.Glob(filepath.Join(dir, "*", "opencode.db"))
		require.NoError(t, err)
		require.NotEmpty(t, append(trees, dbs...), "no OpenCode storage tree or database in %s", dir)
		for _, storage := range trees {
			t.Run(filepath.Base(filepath.Dir(storage)), func(t *testing.T) {
				before := testenv.FileStates(t, storage)
				readsOpenCodeTree(t, storage)
				require.Equal(t, before, testenv.FileStates(t, storage), "the reader changed the fixture")
			})
		}
		for _, db := range dbs {
			fixture := filepath.Dir(db)
			t.Run(filepath.Base(fixture), func(t *testing.T) {
				before := testenv.FileStates(t, fixture)
				readsOpenCodeDatabase(t, fixture)
				require.Equal(t, before, testenv.FileStates(t, fixture), "reading the fixture changed it")
			})
		}
	})
}

func readsOpenCodeTree(t *testing.T, storage string) {
	data := filepath.Dir(storage)
	msgs, err := filepath.Glob(filepath.Join(storage, "message", "*", "*.json"))
	require.NoError(t, err)
	var wantIn, wantOut int64
	for _, m := range msgs {
		b, err := os.ReadFile(m)
		require.NoError(t, err)
		var msg struct {
			Role   string `json:"role"`
			Tokens struct {
				Input, Output, Reasoning int64
				Cache                    struct{ Read, Write int64 }
			} `json:"tokens"`
		}
		require.NoError(t, json.Unmarshal(b, &msg))
		wantIn += msg.Tokens.Input + msg.Tokens.Cache.Read + msg.Tokens.Cache.Write
		wantOut += msg.Tokens.Output + msg.Tokens.Reasoning
	}

	h := newHarness(t, ocConfig(data), nil)
	h.start()
	require.Eventually(t, func() bool {
		seen := map[string]bool{}
		all := h.events()
		for i := range all {
			ev := &all[i]
			seen[filepath.Base(ev.LogFile)] = true
		}
		for _, m := range msgs {
			if !seen[filepath.Base(m)] {
				return false
			}
		}
		return true
	}, 20*time.Second, 5*time.Millisecond, "every message of the corpus is emitted")
	var gotIn, gotOut int64
	all := h.events()
	for i := range all {
		ev := &all[i]
		assert.Empty(t, ev.Unparsed)
		gotIn += agentevent.Value(ev.TokensInput)
		gotOut += agentevent.Value(ev.TokensOutput)
	}
	assert.Equal(t, wantIn, gotIn)
	assert.Equal(t, wantOut, gotOut)
	assert.Empty(t, h.badRecordLogs())
	report := agentevent.Validate(h.events())
	assert.Empty(t, report.Violations)
	assert.Empty(t, report.OpenToolCalls)
}

// ocRows is what an OpenCode database holds, read with SQL alone: the
// event ids its rows must yield and each session's tokens.
type ocRows struct {
	ids    []string // user messages, and the parts that map to events (tool results too)
	tokens map[string]ocTokens
}

// ocTokens are a session's tokens the way ccusage reports OpenCode usage:
// input without the cache reads and writes, output without reasoning.
type ocTokens struct {
	Input      int64 `json:"inputTokens"`
	Output     int64 `json:"outputTokens"`
	Reasoning  int64 `json:"-"`
	CacheRead  int64 `json:"cacheReadTokens"`
	CacheWrite int64 `json:"cacheCreationTokens"`
}

func readOCRows(t *testing.T, path string) ocRows {
	db, err := opencode.OpenDB(path)
	require.NoError(t, err)
	defer db.Close()
	r := ocRows{tokens: map[string]ocTokens{}}
	roles := map[string]string{}
	rows, err := db.Query(`SELECT id, session_id, data FROM message ORDER BY id`)
	require.NoError(t, err)
	for rows.Next() {
		var id, ses string
		var data []byte
		require.NoError(t, rows.Scan(&id, &ses, &data))
		var m struct {
			Role   string `json:"role"`
			Tokens struct {
				Input, Output, Reasoning int64
				Cache                    struct{ Read, Write int64 }
			} `json:"tokens"`
		}
		require.NoError(t, json.Unmarshal(data, &m))
		roles[id] = m.Role
		if m.Role == "user" {
			r.ids = append(r.ids, id)
		}
		s := r.tokens[ses]
		s.Input += m.Tokens.Input
		s.Output += m.Tokens.Output
		s.Reasoning += m.Tokens.Reasoning
		s.CacheRead += m.Tokens.Cache.Read
		s.CacheWrite += m.Tokens.Cache.Write
		r.tokens[ses] = s
	}
	require.NoError(t, rows.Err())
	rows, err = db.Query(`SELECT id, message_id, data FROM part ORDER BY id`)
	require.NoError(t, err)
	for rows.Next() {
		var id, msg string
		var data []byte
		require.NoError(t, rows.Scan(&id, &msg, &data))
		if roles[msg] != "assistant" {
			continue // a user message's parts are its prompt
		}
		var p struct {
			Type  string          `json:"type"`
			Text  string          `json:"text"`
			Time  json.RawMessage `json:"time"`
			State struct {
				Status string `json:"status"`
			} `json:"state"`
		}
		require.NoError(t, json.Unmarshal(data, &p))
		switch {
		case p.Type == "tool":
			r.ids = append(r.ids, id)
			if p.State.Status == "completed" || p.State.Status == "error" {
				r.ids = append(r.ids, id+":result")
			}
		case p.Type == "reasoning", p.Type == "patch", p.Type == "retry", p.Type == "text" && (p.Text != "" || p.Time != nil):
			r.ids = append(r.ids, id)
		}
	}
	require.NoError(t, rows.Err())
	return r
}

func readsOpenCodeDatabase(t *testing.T, fixture string) {
	data := t.TempDir()
	testenv.CopyOpenCodeDB(t, fixture, data)
	want := readOCRows(t, filepath.Join(data, "opencode.db"))

	// A last message OpenCode never finished (a database copied in the
	// middle of a step) is taken as it is once it stayed so for
	// opencode.AbandonAfter: the clock moves on while the test waits.
	clk := &fakeClock{}
	h := newHarness(t, ocConfig(data), nil, withClock(clk.clock()))
	h.start()
	require.Eventually(t, func() bool {
		clk.advance(opencode.AbandonAfter)
		seen := map[string]bool{}
		all := h.events()
		for i := range all {
			ev := &all[i]
			seen[ev.EventID] = true
		}
		for _, id := range want.ids {
			if !seen[id] {
				return false
			}
		}
		return true
	}, 20*time.Second, 5*time.Millisecond, "every message and part of the database is emitted")
	got := map[string]ocTokens{}
	all := h.events()
	for i := range all {
		ev := &all[i]
		assert.Empty(t, ev.Unparsed)
		s := got[ev.SessionID]
		read, write := agentevent.Value(ev.TokensCached), agentevent.Value(ev.TokensCacheCreation)
		s.Input += agentevent.Value(ev.TokensInput) - read - write
		s.CacheRead += read
		s.CacheWrite += write
		s.Reasoning += agentevent.Value(ev.TokensThinking)
		s.Output += agentevent.Value(ev.TokensOutput) - agentevent.Value(ev.TokensThinking)
		got[ev.SessionID] = s
	}
	for id, w := range want.tokens {
		assert.Equalf(t, w, got[id], "session %s: tokens of the events and of the rows", id)
	}
	assert.Empty(t, h.badRecordLogs())
	report := agentevent.Validate(h.events())
	assert.Empty(t, report.Violations)
	assert.Empty(t, report.OpenToolCalls)
	t.Logf("%d events of %d sessions; tokens %+v", len(h.events()), len(want.tokens), got)

	if testing.Short() {
		t.Log("-short: not running ccusage")
		return
	}
	home := t.TempDir()
	testenv.CopyOpenCodeDB(t, fixture, filepath.Join(home, ".local", "share", "opencode"))
	type session struct {
		SessionID string `json:"sessionId"`
		ocTokens
	}
	oracle := map[string]ocTokens{}
	for _, s := range testenv.CcusageSessions[session](t, home, "opencode") {
		oracle[s.SessionID] = s.ocTokens
	}
	for id, g := range got {
		g.Reasoning = 0 // ccusage reports no reasoning of its own
		if g == (ocTokens{}) {
			assert.NotContainsf(t, oracle, id, "session %s: ccusage counts tokens the events do not", id)
			continue
		}
		assert.Equalf(t, oracle[id], g, "session %s: tokens differ from ccusage", id)
	}
	for id := range oracle {
		assert.Containsf(t, got, id, "ccusage reports session %s, which the events do not hold", id)
	}
}

// TestOpenCodeSQLiteAbandonedLastMessage: a session's last message that
// never finishes (OpenCode killed mid-step, or the database copied while it
// wrote, as sqlite_v1.16.0 of the corpus) is held while it may still finish,
// and taken as it is once it stayed unchanged for opencode.AbandonAfter — also after
// a restart, though rows written since moved the database watermark past it.
func TestOpenCodeSQLiteAbandonedLastMessage(t *testing.T) {
	data := t.TempDir()
	o := newOCDB(t, data)
	const ses = "ses_dbabandon1"
	o.newSession(ses, 1771000000000)
	o.user(ses, "msg_k001", 1771000000000, "copy the database")
	o.assistant(ses, "msg_k002", "msg_k001", 1771000000100, 0) // never completed
	o.bash(ses, "msg_k002", "prt_k002b", "completed", 1771000000200)

	ext := storagetest.NewFileBackedStorageExtension("state", t.TempDir())
	host := storagetest.NewStorageHost().WithExtension(ext.ID, ext)
	cfg := ocConfig(data)
	cfg.Storage = &ext.ID
	clk := &fakeClock{}

	h1 := newHarness(t, cfg, host, withClock(clk.clock()))
	h1.start()
	require.Equal(t, []string{"msg_k001"}, eventIDs(h1.waitSession(ses, 1)))
	clk.advance(opencode.AbandonAfter - time.Minute)
	o.now += 10 * opencode.DBLookback.Milliseconds() // later rows: the watermark would pass the held message
	h1.dbBarrier(o)
	h1.dbBarrier(o)
	assert.Equal(t, []string{"msg_k001"}, eventIDs(h1.eventsOfSession(ses)), "held while it may still finish")
	h1.stop()

	h2 := newHarness(t, cfg, host, withClock(clk.clock()))
	h2.start()
	h2.dbBarrier(o)
	assert.Empty(t, h2.eventsOfSession(ses), "seen anew after the restart: held again")
	clk.advance(opencode.AbandonAfter)
	h2.waitSession(ses, 2)
	h2.dbBarrier(o)
	evs := h2.eventsOfSession(ses)
	require.Equal(t, []string{"prt_k002b", "prt_k002b:result"}, eventIDs(evs))
	assert.Equal(t, "msg_k001", evs[0].ParentEventID)
	assert.Equal(t, int64(2), evs[0].Sequence)
	assert.Empty(t, agentevent.Validate(evs).OpenToolCalls)
	h2.stop()

	h3 := newHarness(t, cfg, host, withClock(clk.clock()))
	h3.start()
	h3.dbBarrier(o)
	assert.Empty(t, h3.eventsOfSession(ses), "taken once")
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
	h.waitSession(ses, 2)
	h.ocBarrier(s)
	h.ocBarrier(s)
	evs := h.eventsOfSession(ses)
	require.Len(t, evs, 2)
	assert.Equal(t, "prt_zzbroken", evs[0].EventID)
	assert.Equal(t, "malformed_json", evs[0].Unparsed)
	assert.Equal(t, agentevent.TypeLog, evs[0].Type)
	assert.Equal(t, "msg_i001", evs[1].EventID)
	assert.Len(t, h.badRecordLogs(), 1)
}
