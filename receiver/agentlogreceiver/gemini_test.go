// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/internal/vendors/gemini"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/testfiles"
)

// geminiConfig reads only Gemini CLI files below home (a ~/.gemini-like
// tree), with content.
// (newHarness shortens the settle delay to 50ms.)
func geminiConfig(_ testing.TB, home string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.PollInterval = 10 * time.Millisecond
	cfg.IncludeContent = true
	for _, a := range registered() {
		a.config(cfg).Enabled = a.key == "gemini"
	}
	cfg.Gemini.Include = geminiPatterns(home)
	return cfg
}

// gemMsg is a chat message of a test chat.
type gemMsg struct {
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
	Content   string `json:"content"`
	Model     string `json:"model,omitempty"`
}

func gemUser(id, text string, minute int) gemMsg {
	return gemMsg{ID: id, Timestamp: fmt.Sprintf("2026-04-20T10:%02d:00.000Z", minute), Type: "user", Content: text}
}

func gemAnswer(id, text string, minute int) gemMsg {
	return gemMsg{ID: id, Timestamp: fmt.Sprintf("2026-04-20T10:%02d:30.000Z", minute), Type: "gemini", Content: text, Model: "gemini-2.5-pro"}
}

// writeChat writes (or rewrites in place, as the CLI does) a chat file.
func writeChat(tb testing.TB, path, session string, msgs ...gemMsg) {
	tb.Helper()
	b, err := json.MarshalIndent(map[string]any{
		"sessionId":   session,
		"projectHash": "5e1f",
		"startTime":   "2026-04-20T10:00:00.000Z",
		"lastUpdated": "2026-04-20T10:59:00.000Z",
		"messages":    msgs,
	}, "", "  ")
	require.NoError(tb, err)
	require.NoError(tb, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(tb, os.WriteFile(path, b, 0o600))
}

// geminiBarrier returns once the reader has completed a poll that started
// after the call: it writes a new one-message chat, which only such a poll
// can find (every file is looked at in each poll), and waits for it — twice,
// as files are read in path order and the barrier's may come first (see
// barrier).
func (h *harness) geminiBarrier(home string) {
	h.t.Helper()
	h.twoPolls(func(n int64) {
		session := fmt.Sprintf("barrier-%d", n)
		writeChat(h.t, filepath.Join(home, "tmp", "barrier", "chats", session+".json"), session, gemUser(session+"-u", "poll barrier", 0))
		h.waitSession(session, 1)
	})
}

// noBarrier drops the barrier sessions' events.
func noBarrier(evs []agentevent.Event) []agentevent.Event {
	return slices.DeleteFunc(evs, func(ev agentevent.Event) bool { return strings.HasPrefix(ev.SessionID, "barrier-") })
}

func assertNoDuplicates(t *testing.T, evs []agentevent.Event) {
	t.Helper()
	seen := map[string]bool{}
	for i := range evs {
		ev := &evs[i]
		key := ev.SessionID + "/" + ev.EventID
		assert.False(t, seen[key], "event %s emitted twice", key)
		seen[key] = true
	}
}

// TestGeminiTestdata: each ~/.gemini-like tree of testdata/gemini, read by
// the receiver, yields its golden events (events.yaml, written by the
// gemini package's golden test), with service.name gemini-cli.
func TestGeminiTestdata(t *testing.T) {
	root := filepath.Join(repoRoot(t), "testdata", "gemini")
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			dir := filepath.Join(root, e.Name())
			expected, err := golden.ReadLogs(filepath.Join(dir, "events.yaml"))
			require.NoError(t, err)
			want, skipped := agentevent.DecodeLogs(expected)
			require.Zero(t, skipped)
			require.NotEmpty(t, want)

			barriers := t.TempDir()
			cfg := geminiConfig(t, dir)
			cfg.Gemini.Include = append(cfg.Gemini.Include, geminiPatterns(barriers)...)
			h := newHarness(t, cfg, nil)
			h.start()
			require.Eventually(t, func() bool { return len(h.events()) >= len(want) }, 20*time.Second, 5*time.Millisecond,
				"waiting for %d events", len(want))
			h.geminiBarrier(barriers)
			got := noBarrier(h.events())
			// The golden file names files relative to the tree and numbers
			// the logs.json events on their own; the rest must be equal.
			for i := range got {
				rel, err := filepath.Rel(dir, got[i].LogFile)
				require.NoError(t, err)
				got[i].LogFile = filepath.ToSlash(rel)
			}
			norm := func(evs []agentevent.Event) map[string]agentevent.Event {
				m := map[string]agentevent.Event{}
				for _, ev := range evs {
					ev.Sequence = 0
					m[ev.SessionID+"/"+ev.EventID] = ev
				}
				return m
			}
			require.Len(t, got, len(want))
			assert.Equal(t, norm(want), norm(got))
			assertNoDuplicates(t, got)
			for _, l := range h.sink.AllLogs() {
				for i := 0; i < l.ResourceLogs().Len(); i++ {
					assert.Equal(t, "gemini-cli", l.ResourceLogs().At(i).Resource().Attributes().AsRaw()["service.name"])
				}
			}
			assert.Empty(t, h.badRecordLogs())
		})
	}
}

// TestGeminiLiveRewrite: the CLI rewrites the chat file whole; a rewrite
// with one more turn emits only that turn, and the last gemini message is
// emitted once the file has settled.
func TestGeminiLiveRewrite(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "tmp", "proj", "chats", "session-2026-04-20T10-00-live.json")
	msgs := []gemMsg{gemUser("u1", "one", 0), gemAnswer("g1", "one!", 0)}
	writeChat(t, path, "live", msgs...)

	h := newHarness(t, geminiConfig(t, home), nil)
	h.start()
	assert.Equal(t, []string{"u1", "g1"}, eventIDs(h.waitSession("live", 2)))

	msgs = append(msgs, gemUser("u2", "two", 1), gemAnswer("g2", "two!", 1))
	writeChat(t, path, "live", msgs...)
	h.waitSession("live", 4)
	h.geminiBarrier(home)
	evs := h.eventsOfSession("live")
	require.Equal(t, []string{"u1", "g1", "u2", "g2"}, eventIDs(evs))
	assert.Equal(t, agentevent.TypeUserMessage, evs[2].Type)
	assert.Equal(t, "two", evs[2].Text)
	assert.Equal(t, agentevent.TypeAssistantMessage, evs[3].Type)
	assert.Equal(t, "u2", evs[3].ParentEventID)
	for i, ev := range evs {
		assert.Equal(t, int64(i+1), ev.Sequence, "sequence continues across rewrites")
	}
}

// TestGeminiHeldUntilSettled: a last gemini message the CLI may still be
// completing is not emitted while the file keeps changing; a following
// message releases it at once.
func TestGeminiHeldUntilSettled(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "tmp", "proj", "chats", "held.json")
	writeChat(t, path, "held", gemUser("u1", "one", 0), gemAnswer("g1", "one!", 0))
	cfg := geminiConfig(t, home)
	h := newHarness(t, cfg, nil, withSettleDelay(time.Hour)) // never settles by itself in this test
	h.start()
	h.waitSession("held", 1)
	h.geminiBarrier(home)
	assert.Equal(t, []string{"u1"}, eventIDs(h.eventsOfSession("held")))

	writeChat(t, path, "held", gemUser("u1", "one", 0), gemAnswer("g1", "one!", 0), gemUser("u2", "two", 1))
	assert.Equal(t, []string{"u1", "g1", "u2"}, eventIDs(h.waitSession("held", 3)))
	// Shutdown settles the files: nothing is held for the next run.
	writeChat(t, path, "held", gemUser("u1", "one", 0), gemAnswer("g1", "one!", 0), gemUser("u2", "two", 1), gemAnswer("g2", "two!", 1))
	h.geminiBarrier(home)
	assert.Len(t, h.eventsOfSession("held"), 3)
	h.stop()
	assert.Equal(t, []string{"u1", "g1", "u2", "g2"}, eventIDs(h.eventsOfSession("held")))
}

// TestGeminiSameSessionTwoDirs: older CLIs kept chats under the project's
// SHA-256, newer ones under its name, and copy the old files over: the same
// session in both directories is emitted once.
func TestGeminiSameSessionTwoDirs(t *testing.T) {
	home := t.TempDir()
	msgs := []gemMsg{gemUser("u1", "one", 0), gemAnswer("g1", "one!", 0), gemUser("u2", "two", 1), gemAnswer("g2", "two!", 1)}
	hashDir := filepath.Join(home, "tmp", "9126eddec7f67e038794657b4d517dd9cb5226468f30b5ee7296c27d65e84fde", "chats", "session-x.json")
	nameDir := filepath.Join(home, "tmp", "proj", "chats", "session-x.json")
	writeChat(t, hashDir, "copied", msgs...)
	writeChat(t, nameDir, "copied", msgs...)

	h := newHarness(t, geminiConfig(t, home), nil)
	h.start()
	h.waitSession("copied", 4)
	h.geminiBarrier(home)
	// A later rewrite of the copy (the CLI goes on in the named directory)
	// adds only the new turn.
	writeChat(t, nameDir, "copied", append(msgs, gemUser("u3", "three", 2))...)
	h.waitSession("copied", 5)
	h.geminiBarrier(home)
	evs := h.eventsOfSession("copied")
	assert.Equal(t, []string{"u1", "g1", "u2", "g2", "u3"}, eventIDs(evs))
	assertNoDuplicates(t, evs)
}

// TestGeminiRestart: with a file-backed storage, a restart re-emits nothing
// and continues with what was written while the receiver was down.
func TestGeminiRestart(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "tmp", "proj", "chats", "session-r.json")
	msgs := []gemMsg{gemUser("u1", "one", 0), gemAnswer("g1", "one!", 0)}
	writeChat(t, path, "restart", msgs...)
	ext := storagetest.NewFileBackedStorageExtension("state", t.TempDir())
	host := storagetest.NewStorageHost().WithExtension(ext.ID, ext)
	cfg := geminiConfig(t, home)
	cfg.Storage = &ext.ID

	first := newHarness(t, cfg, host)
	first.start()
	first.waitSession("restart", 2)
	first.geminiBarrier(home)
	first.stop()

	// Unchanged: nothing again.
	second := newHarness(t, cfg, host)
	second.start()
	second.geminiBarrier(home)
	assert.Empty(t, second.eventsOfSession("restart"))
	second.stop()

	// Rewritten while down: only the new turn, numbered after the first.
	writeChat(t, path, "restart", append(msgs, gemUser("u2", "two", 1), gemAnswer("g2", "two!", 1))...)
	third := newHarness(t, cfg, host)
	third.start()
	third.waitSession("restart", 2)
	third.geminiBarrier(home)
	evs := third.eventsOfSession("restart")
	require.Equal(t, []string{"u2", "g2"}, eventIDs(evs))
	assert.Equal(t, int64(3), evs[0].Sequence)
}

// TestGeminiBadFiles: a chat that does not decode is reported once (after
// it stayed bad at a second poll) and read again once rewritten; a bad JSONL
// line is reported once with its line number and the rest is read.
func TestGeminiBadFiles(t *testing.T) {
	home := t.TempDir()
	bad := filepath.Join(home, "tmp", "proj", "chats", "session-bad.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(bad), 0o755))
	require.NoError(t, os.WriteFile(bad, []byte(`{"sessionId": "bad", "messages": [`), 0o600))
	jl := filepath.Join(home, "tmp", "proj", "chats", "session-jl.jsonl")
	require.NoError(t, os.WriteFile(jl, []byte(strings.Join([]string{
		`{"sessionId":"jl","projectHash":"5e1f","startTime":"2026-04-20T10:00:00.000Z","lastUpdated":"2026-04-20T10:00:00.000Z","kind":"main"}`,
		`{"id":"u1","timestamp":"2026-04-20T10:00:00.000Z","type":"user","content":"one"}`,
		`not json`,
		`{"id":"u2","timestamp":"2026-04-20T10:01:00.000Z","type":"user","content":"two"}`,
	}, "\n")+"\n"), 0o600))
	cfg := geminiConfig(t, home)
	cfg.EmitUnparsed = true
	h := newHarness(t, cfg, nil)
	h.start()
	h.waitSession("jl", 3)
	h.geminiBarrier(home)
	h.geminiBarrier(home)
	logs := h.badRecordLogs()
	require.Len(t, logs, 2)
	var paths []string
	for _, l := range logs {
		paths = append(paths, l.ContextMap()["path"].(string)+fmt.Sprint(":", l.ContextMap()["line"]))
	}
	assert.ElementsMatch(t, []string{bad + ":0", jl + ":3"}, paths)
	var unparsed []agentevent.Event
	for _, ev := range h.events() {
		if ev.Unparsed != "" {
			unparsed = append(unparsed, ev)
		}
	}
	require.Len(t, unparsed, 2, "emit_unparsed: one event per bad file or line")

	writeChat(t, bad, "bad", gemUser("b1", "fixed", 0))
	assert.Equal(t, []string{"b1"}, eventIDs(h.waitSession("bad", 1)))
	h.geminiBarrier(home)
	assert.Len(t, h.badRecordLogs(), 2)
}

// TestGeminiLogsOnlyForSessionsWithoutChat: logs.json fills in the prompts
// of a session whose chat is gone, and never doubles those of a chat.
func TestGeminiLogsOnlyForSessionsWithoutChat(t *testing.T) {
	home := t.TempDir()
	writeChat(t, filepath.Join(home, "tmp", "proj", "chats", "session-c.json"), "with-chat", gemUser("u1", "one", 0))
	logs := `[
  {"sessionId":"with-chat","messageId":0,"type":"user","message":"one","timestamp":"2026-04-20T10:00:00.000Z"},
  {"sessionId":"no-chat","messageId":0,"type":"user","message":"lost prompt","timestamp":"2026-04-20T09:00:00.000Z"},
  {"sessionId":"no-chat","messageId":1,"type":"user","message":"/quit","timestamp":"2026-04-20T09:01:00.000Z"}
]`
	require.NoError(t, os.WriteFile(filepath.Join(home, "tmp", "proj", "logs.json"), []byte(logs), 0o600))
	h := newHarness(t, geminiConfig(t, home), nil)
	h.start()
	h.waitSession("no-chat", 1)
	h.geminiBarrier(home)
	evs := h.eventsOfSession("no-chat")
	require.Len(t, evs, 1)
	assert.Equal(t, "lost prompt", evs[0].Text)
	assert.Equal(t, []string{"u1"}, eventIDs(h.eventsOfSession("with-chat")))
}

// TestGeminiContentOffByDefault: without include_content the prompt is
// not in the record.
func TestGeminiContentOffByDefault(t *testing.T) {
	home := t.TempDir()
	writeChat(t, filepath.Join(home, "tmp", "proj", "chats", "s.json"), "quiet", gemUser("u1", "secret prompt", 0))
	cfg := geminiConfig(t, home)
	cfg.IncludeContent = false
	h := newHarness(t, cfg, nil)
	h.start()
	evs := h.waitSession("quiet", 1)
	assert.Empty(t, evs[0].Text)
}

// TestGeminiStartAtEnd: with start_at: end, the chats as they were at start
// are history; a message added afterwards is read.
func TestGeminiStartAtEnd(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, "tmp", "proj", "chats", "s.json")
	msgs := []gemMsg{gemUser("u1", "one", 0), gemAnswer("g1", "one!", 0)}
	writeChat(t, path, "end", msgs...)
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(path, old, old))
	cfg := geminiConfig(t, home)
	cfg.StartAt = StartAtEnd
	h := newHarness(t, cfg, nil)
	h.start()
	h.geminiBarrier(home)
	assert.Empty(t, h.eventsOfSession("end"))
	writeChat(t, path, "end", append(msgs, gemUser("u2", "two", 1))...)
	assert.Equal(t, []string{"u2"}, eventIDs(h.waitSession("end", 1)))
}

func TestGeminiDefaultInclude(t *testing.T) {
	got, err := geminiInclude(agents.Env{Home: "/home/dev", Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"/home/dev/.gemini/tmp/*/chats/*.json",
		"/home/dev/.gemini/tmp/*/chats/*.jsonl",
		"/home/dev/.gemini/tmp/*/chats/*/*.json",
		"/home/dev/.gemini/tmp/*/chats/*/*.jsonl",
		"/home/dev/.gemini/tmp/*/logs.json",
	}, got)
	_, err = geminiInclude(agents.Env{Getenv: func(string) string { return "" }})
	require.ErrorIs(t, err, agents.ErrNoHome)
}

// TestReadsGeminiFixtureCorpus: every Gemini chat (.json and .jsonl) of
// every corpus root (testenv.FixtureRoots), read in place, yields what the
// mapping yields for it, with zero unparsed, no violations and every tool
// call paired.
func TestReadsGeminiFixtureCorpus(t *testing.T) {
	vendortest.EachCorpus(t, "gemini", readsGeminiCorpus)
}

func readsGeminiCorpus(t *testing.T, dir string) {
	var chats []string
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		if strings.HasSuffix(name, ".jsonl") ||
			strings.HasSuffix(name, ".json") && (strings.HasPrefix(name, "chat_") || strings.HasPrefix(name, "session-")) {
			chats = append(chats, p)
		}
		return nil
	}))
	require.NotEmpty(t, chats, "no Gemini chat in %s", dir)
	slices.Sort(chats)
	// What a reader keyed by thread emits, straight from the mapping.
	want := map[string]bool{}
	marks := map[string]gemini.Watermark{}
	for _, p := range chats {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		var chat gemini.Chat
		if strings.HasSuffix(p, ".jsonl") {
			var errs []*gemini.DecodeError
			chat, errs = gemini.DecodeChatJSONL(b)
			require.Empty(t, errs, p)
		} else {
			chat, err = gemini.DecodeChat(b)
			require.NoError(t, err, p)
		}
		c := gemini.Context{LogFile: p}
		key := gemini.ThreadKey(c, chat)
		if marks[key] == nil {
			marks[key] = gemini.Watermark{}
		}
		r := gemini.MapChat(c, chat, marks[key], true)
		marks[key].Add(r.Emitted)
		for i := range r.Events {
			ev := &r.Events[i]
			want[ev.SessionID+"/"+ev.EventID] = true
		}
	}
	require.NotEmpty(t, want)

	cfg := geminiConfig(t, dir)
	barriers := t.TempDir()
	cfg.Gemini.Include = append(slices.Clone(chats), geminiPatterns(barriers)...)
	h := newHarness(t, cfg, nil)
	h.start()
	require.Eventually(t, func() bool { return len(h.events()) >= len(want) }, 30*time.Second, 10*time.Millisecond,
		"waiting for %d events", len(want))
	h.geminiBarrier(barriers)
	got := noBarrier(h.events())
	ids := map[string]bool{}
	for i := range got {
		ev := &got[i]
		assert.Empty(t, ev.Unparsed, "%s in %s", ev.EventID, ev.LogFile)
		ids[ev.SessionID+"/"+ev.EventID] = true
	}
	assert.Equal(t, want, ids)
	assert.Len(t, got, len(want))
	assert.Empty(t, h.badRecordLogs())
	report := agentevent.Validate(got)
	assert.Empty(t, report.Violations)
	assert.Empty(t, report.OpenToolCalls)
	t.Logf("%d chats, %d events", len(chats), len(got))
}

// TestGeminiLogsOfDeletedChat: a chat emitted in an earlier run and
// deleted since does not have its prompts emitted again from logs.json.
func TestGeminiLogsOfDeletedChat(t *testing.T) {
	home := t.TempDir()
	chat := filepath.Join(home, "tmp", "proj", "chats", "session-gone.json")
	writeChat(t, chat, "gone", gemUser("u1", "one", 0))
	ext := storagetest.NewFileBackedStorageExtension("state", t.TempDir())
	host := storagetest.NewStorageHost().WithExtension(ext.ID, ext)
	cfg := geminiConfig(t, home)
	cfg.Storage = &ext.ID

	first := newHarness(t, cfg, host)
	first.start()
	first.waitSession("gone", 1)
	first.stop()

	require.NoError(t, os.Remove(chat))
	logs := `[{"sessionId":"gone","messageId":0,"type":"user","message":"one","timestamp":"2026-04-20T10:00:00.000Z"},
{"sessionId":"other","messageId":0,"type":"user","message":"kept","timestamp":"2026-04-20T10:00:00.000Z"},
{"messageId":1,"type":"user","message":"no session","timestamp":"2026-04-20T10:00:00.000Z"}]`
	require.NoError(t, os.WriteFile(filepath.Join(home, "tmp", "proj", "logs.json"), []byte(logs), 0o600))
	second := newHarness(t, cfg, host)
	second.start()
	second.waitSession("other", 1)
	second.geminiBarrier(home)
	assert.Empty(t, second.eventsOfSession("gone"))
	require.Len(t, second.badRecordLogs(), 1, "the entry without a session is reported")
}

// TestGeminiDefaultPaths: an empty agent_log block reads ~/.gemini's
// chats, nested chats and logs.json, and nothing else.
func TestGeminiDefaultPaths(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("PI_CODING_AGENT_DIR", "")
	t.Setenv("CODEX_HOME", "")
	g := filepath.Join(home, ".gemini", "tmp", "proj")
	top := filepath.Join(g, "chats", "session-top.json")
	writeChat(t, top, "top", gemUser("u1", "one", 0))
	nested := filepath.Join(g, "chats", "top", "helper.json")
	writeChat(t, nested, "helper", gemUser("h1", "task", 0))
	outside := filepath.Join(home, ".gemini", "elsewhere", "chats", "session-out.json")
	writeChat(t, outside, "out", gemUser("o1", "not read", 0))

	cfg := createDefaultConfig().(*Config)
	cfg.PollInterval = 10 * time.Millisecond
	h := newHarness(t, cfg, nil)
	h.start()
	h.waitEvents(top, 1)
	sub := h.waitEvents(nested, 1)
	assert.Equal(t, "helper", sub[0].SessionID, "a nested chat keeps its own session id")
	assert.Equal(t, "top", agentevent.TreeSession(&sub[0]), "a nested chat belongs to the session of its directory")
	assert.Equal(t, "helper", sub[0].AgentID)
	h.geminiBarrier(filepath.Join(home, ".gemini"))
	for _, ev := range h.events() {
		assert.Equal(t, agentevent.Source("gemini"), ev.Source)
		assert.NotEqual(t, outside, ev.LogFile)
	}
}

// TestGeminiLiveJSONL: a JSONL chat (CLI v0.39+) grows by records that may
// replace earlier ones or rewind; each message is emitted once, and a
// converted .json of the same session adds nothing.
func TestGeminiLiveJSONL(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "tmp", "proj", "chats")
	path := filepath.Join(dir, "session-l.jsonl")
	rec := func(v any) string {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return string(b)
	}
	testfiles.WriteFile(t, path,
		`{"sessionId":"jl-live","projectHash":"5e1f","startTime":"2026-04-20T10:00:00.000Z","lastUpdated":"2026-04-20T10:00:00.000Z","kind":"main"}`,
		rec(gemUser("u1", "one", 0)),
		rec(gemAnswer("g1", "draft", 0)),
	)
	h := newHarness(t, geminiConfig(t, home), nil)
	h.start()
	assert.Equal(t, []string{"u1", "g1"}, eventIDs(h.waitSession("jl-live", 2)))

	// g1 rewritten (already emitted: ignored), then a new turn.
	testfiles.AppendFile(t, path, testfiles.JoinLines(rec(gemAnswer("g1", "final", 0)), rec(gemUser("u2", "two", 1)), rec(gemAnswer("g2", "two!", 1))))
	h.waitSession("jl-live", 4)
	// A rewind drops u2 and g2 from the chat; events already sent stay sent.
	testfiles.AppendFile(t, path, testfiles.JoinLines(`{"$rewindTo":"u2"}`, rec(gemUser("u3", "three", 2))))
	h.waitSession("jl-live", 5)
	// The same session as a legacy .json next to it.
	writeChat(t, filepath.Join(dir, "session-l.json"), "jl-live", gemUser("u1", "one", 0), gemAnswer("g1", "final", 0))
	h.geminiBarrier(home)
	evs := h.eventsOfSession("jl-live")
	assert.Equal(t, []string{"u1", "g1", "u2", "g2", "u3"}, eventIDs(evs))
	assertNoDuplicates(t, evs)
	assert.Empty(t, h.badRecordLogs())
}
