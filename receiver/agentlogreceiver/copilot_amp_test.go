// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/internal/vendors/amp"
	"github.com/agentotel/agentotel/internal/vendors/copilotcli"
	"github.com/agentotel/agentotel/internal/vendors/vendortest"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/testfiles"
	"github.com/agentotel/agentotel/tests/testenv"
)

// Copilot CLI (events.jsonl tailed, history JSON rewritten) and Amp (threads
// rewritten in place), read through the source layer.

// copilotAmpConfig reads only the Copilot CLI home and the Amp data
// directory given ("" leaves the agent off), with content.
func copilotAmpConfig(copilotHome, ampDir string) *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.PollInterval = 10 * time.Millisecond
	cfg.IncludeContent = true
	for _, a := range registered() {
		a.config(cfg).Enabled = false
	}
	if copilotHome != "" {
		cfg.CopilotCLI.Enabled = true
		cfg.CopilotCLI.Include = copilotPatterns(copilotHome)
	}
	if ampDir != "" {
		cfg.Amp.Enabled = true
		cfg.Amp.Include = []string{ampPattern(ampDir)}
	}
	return cfg
}

// copilotLine is one events.jsonl record.
func copilotLine(t *testing.T, typ, id, ts string, data map[string]any) string {
	t.Helper()
	b, err := json.Marshal(map[string]any{"type": typ, "data": data, "id": id, "timestamp": ts, "parentId": nil})
	require.NoError(t, err)
	return string(b)
}

// copilotBarrier returns once the reader has completed a poll that started
// after the call: a new flat session file only such a poll can find.
func (h *harness) copilotBarrier(home string) {
	h.t.Helper()
	h.twoPolls(func(n int64) {
		path := filepath.Join(home, "session-state", fmt.Sprintf("barrier-%d.jsonl", n))
		testfiles.WriteFile(h.t, path, copilotLine(h.t, "user.message", fmt.Sprintf("barrier-%d", n), "2026-01-01T00:00:00Z", map[string]any{"content": "poll barrier"}))
		h.waitEvents(path, 1)
	})
}

// ampBarrier: the same with a new Amp thread.
func (h *harness) ampBarrier(dir string) {
	h.t.Helper()
	h.twoPolls(func(n int64) {
		id := fmt.Sprintf("T-barrier-%d", n)
		writeAmpThread(h.t, filepath.Join(dir, "threads", id+".json"), map[string]any{
			"id": id, "messages": []any{map[string]any{"role": "user", "messageId": 0, "content": []any{map[string]any{"type": "text", "text": "poll barrier"}}}},
		})
		h.waitSession(id, 1)
	})
}

func writeAmpThread(t *testing.T, path string, thread any) {
	t.Helper()
	b, err := json.MarshalIndent(thread, "", "  ")
	require.NoError(t, err)
	writeBytes(t, path, b)
}

func writeBytes(t *testing.T, path string, b []byte) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	// Write aside and rename, as an agent rewriting its file does: the
	// reader never sees half a file.
	tmp := path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, b, 0o600)) //nolint:gosec // G703: the data written was read from a file; the path is the test's own
	require.NoError(t, os.Rename(tmp, path))
}

func notBarrier(evs []agentevent.Event) []agentevent.Event {
	return slices.DeleteFunc(evs, func(ev agentevent.Event) bool {
		return strings.HasPrefix(ev.EventID, "barrier-") || strings.HasPrefix(ev.SessionID, "T-barrier-") || strings.HasPrefix(ev.SessionID, "barrier-")
	})
}

// TestCopilotAndAmpTestdata: each ~/.copilot- or Amp-like tree of
// testdata/copilot_cli and testdata/amp, read by the receiver, yields what
// their parsers make of its files (the golden events; bad records counted,
// not emitted), with service.name copilot-cli / amp.
func TestCopilotAndAmpTestdata(t *testing.T) {
	for _, agentDir := range []string{"copilot_cli", "amp"} {
		root := filepath.Join(repoRoot(t), "testdata", agentDir)
		entries, err := os.ReadDir(root)
		require.NoError(t, err)
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			t.Run(agentDir+"/"+e.Name(), func(t *testing.T) {
				dir := filepath.Join(root, e.Name())
				barriers := t.TempDir()
				var cfg *Config
				var want []agentevent.Event
				service := "copilot-cli"
				if agentDir == "copilot_cli" {
					cfg = copilotAmpConfig(dir, "")
					cfg.CopilotCLI.Include = append(cfg.CopilotCLI.Include, copilotPatterns(barriers)...)
					want = mapCopilotTree(t, dir)
				} else {
					service = "amp"
					cfg = copilotAmpConfig("", dir)
					cfg.Amp.Include = append(cfg.Amp.Include, ampPattern(barriers))
					want = mapAmpThreads(t, dir)
				}
				want = slices.DeleteFunc(want, func(ev agentevent.Event) bool { return ev.Unparsed != "" })
				require.NotEmpty(t, want)
				h := newHarness(t, cfg, nil)
				h.start()
				require.Eventually(t, func() bool { return len(h.events()) >= len(want) }, 20*time.Second, 5*time.Millisecond,
					"waiting for %d events", len(want))
				if agentDir == "copilot_cli" {
					h.copilotBarrier(barriers)
				} else {
					h.ampBarrier(barriers)
				}
				got := notBarrier(h.events())
				require.Len(t, got, len(want))
				assertNoDuplicates(t, got)
				byID := map[string]agentevent.Event{}
				for _, ev := range got {
					byID[ev.SessionID+"/"+ev.EventID] = ev
				}
				for _, w := range roundTrip(t, want) {
					if !assert.Equal(t, w, byID[w.SessionID+"/"+w.EventID], w.EventID) {
						break // one difference is enough to read
					}
				}
				for _, l := range h.sink.AllLogs() {
					for i := 0; i < l.ResourceLogs().Len(); i++ {
						assert.Equal(t, service, l.ResourceLogs().At(i).Resource().Attributes().AsRaw()["service.name"])
					}
				}
			})
		}
	}
}

// mapCopilotTree maps the session files below a ~/.copilot-like tree the
// way the receiver's parsers do, Raw cleared.
func mapCopilotTree(t *testing.T, home string) []agentevent.Event {
	t.Helper()
	a := agentByKey("copilot_cli")
	var out []agentevent.Event
	for _, pattern := range copilotPatterns(home) {
		files, err := filepath.Glob(pattern)
		require.NoError(t, err)
		for _, f := range files {
			var evs []agentevent.Event
			if strings.HasSuffix(f, ".jsonl") {
				evs = parseDirect(t, a, f)
			} else {
				data, err := os.ReadFile(f)
				require.NoError(t, err)
				hh, err := copilotcli.DecodeHistory(data)
				require.NoError(t, err)
				evs = copilotcli.MapHistory(copilotcli.HistoryContext{LogFile: f}, hh, nil).Events
			}
			out = append(out, evs...)
		}
	}
	for i := range out {
		out[i].Raw = nil
	}
	return out
}

// mapAmpThreads maps the thread files below an Amp data directory, settled.
func mapAmpThreads(t *testing.T, dir string) []agentevent.Event {
	t.Helper()
	files, err := filepath.Glob(ampPattern(dir))
	require.NoError(t, err)
	var out []agentevent.Event
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		th, err := amp.DecodeThread(data)
		require.NoError(t, err)
		out = append(out, amp.MapThread(amp.Context{LogFile: f}, th, nil, true).Events...)
	}
	for i := range out {
		out[i].Raw = nil
	}
	return out
}

// TestReadsCopilotAndAmpFixtureCorpus: the corpus files of every root
// (testenv.FixtureRoots), read in place by the receiver, yield what their
// parsers yield for them. Each Copilot CLI generation folder is its own
// ~/.copilot and holds at least one session file the test knows how to find.
func TestReadsCopilotAndAmpFixtureCorpus(t *testing.T) {
	roots := testenv.FixtureRoots(t)
	vendortest.SkipIfAbsent(t, filepath.Join(roots[0], "copilot_cli"))
	vendortest.SkipIfAbsent(t, filepath.Join(roots[0], "amp"))
	for _, root := range roots {
		t.Run(filepath.Base(root), func(t *testing.T) {
			copilotDir, ampDir := filepath.Join(root, "copilot_cli"), filepath.Join(root, "amp")
			if !dirExists(t, copilotDir) && !dirExists(t, ampDir) {
				t.Skipf("neither copilot_cli nor amp in %s", root)
			}
			readsCopilotAndAmpCorpus(t, copilotDir, ampDir)
		})
	}
}

func dirExists(t *testing.T, dir string) bool {
	info, err := os.Stat(dir)
	if os.IsNotExist(err) {
		return false
	}
	require.NoError(t, err)
	return info.IsDir()
}

func readsCopilotAndAmpCorpus(t *testing.T, copilotDir, ampDir string) {
	ampInclude := ""
	if dirExists(t, ampDir) {
		ampInclude = ampDir
	}
	cfg := copilotAmpConfig("", ampInclude)
	// Each generation is its own ~/.copilot.
	gens, globErr := filepath.Glob(filepath.Join(copilotDir, "*"))
	require.NoError(t, globErr)
	for _, g := range gens {
		cfg.CopilotCLI.Enabled = true
		cfg.CopilotCLI.Include = append(cfg.CopilotCLI.Include, copilotPatterns(g)...)
	}
	want := map[string]int{}
	total := 0
	a := agentByKey("copilot_cli")
	for _, g := range gens {
		files, err := filepath.Glob(filepath.Join(g, "session-state", "*", "events.jsonl"))
		require.NoError(t, err)
		flat, err := filepath.Glob(filepath.Join(g, "session-state", "*.jsonl"))
		require.NoError(t, err)
		hist, err := filepath.Glob(filepath.Join(g, "history-session-state", "*.json"))
		require.NoError(t, err)
		require.NotEmpty(t, append(append(files, flat...), hist...), "%s: no Copilot CLI session file where the CLI keeps them", g)
		for _, f := range append(files, flat...) {
			n := len(parseDirect(t, a, f))
			want[f] = n
			total += n
		}
		for _, f := range hist {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			hh, err := copilotcli.DecodeHistory(data)
			require.NoError(t, err)
			n := len(copilotcli.MapHistory(copilotcli.HistoryContext{LogFile: f}, hh, nil).Events)
			want[f] = n
			total += n
		}
	}
	threads, err := filepath.Glob(filepath.Join(ampDir, "threads", "T-*.json"))
	require.NoError(t, err)
	if dirExists(t, ampDir) {
		require.NotEmpty(t, threads, "%s: no thread file where Amp keeps them", ampDir)
	}
	for _, f := range threads {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		th, err := amp.DecodeThread(data)
		require.NoError(t, err)
		n := len(amp.MapThread(amp.Context{LogFile: f}, th, nil, true).Events)
		want[f] = n
		total += n
	}
	require.Positive(t, total)

	h := newHarness(t, cfg, nil)
	h.start()
	require.Eventually(t, func() bool { return len(h.events()) >= total }, 60*time.Second, 10*time.Millisecond,
		"waiting for %d events", total)
	for f, n := range want {
		evs := h.eventsOf(f)
		assert.Len(t, evs, n, f)
		assertNoDuplicates(t, evs)
		rep := agentevent.Validate(evs)
		assert.Empty(t, rep.Violations, f)
		t.Logf("%s: %d events", f, len(evs))
	}
	assert.Empty(t, h.badRecordLogs(), "zero unparsed")
}

// TestCopilotLiveAppendAndWorkspace: an events.jsonl grows while the
// receiver runs; every event once, the project from workspace.yaml.
func TestCopilotLiveAppendAndWorkspace(t *testing.T) {
	src := filepath.Join(repoRoot(t), "testdata", "copilot_cli", "workspace_session_error", "session-state", "5f2b6c1e-1a2b-4c3d-8e4f-000000000c02")
	data, err := os.ReadFile(filepath.Join(src, "events.jsonl"))
	require.NoError(t, err)
	ws, err := os.ReadFile(filepath.Join(src, "workspace.yaml"))
	require.NoError(t, err)
	lines := bytes.SplitAfter(data, []byte("\n"))
	cut := len(lines) / 2

	home := t.TempDir()
	path := filepath.Join(home, "session-state", filepath.Base(src), "events.jsonl")
	writeBytes(t, filepath.Join(filepath.Dir(path), "workspace.yaml"), ws)
	writeBytes(t, path, bytes.Join(lines[:cut], nil))
	want := len(parseDirect(t, agentByKey("copilot_cli"), filepath.Join(src, "events.jsonl")))

	h := newHarness(t, copilotAmpConfig(home, ""), nil)
	h.start()
	first := h.waitEvents(path, 1)
	h.copilotBarrier(home)
	before := len(h.eventsOf(path))
	require.Less(t, before, want)
	testfiles.AppendFile(t, path, string(bytes.Join(lines[cut:], nil)))
	h.waitEvents(path, want)
	h.copilotBarrier(home)
	got := h.eventsOf(path)
	assert.Len(t, got, want, "every event once")
	assertNoDuplicates(t, got)
	for i, ev := range got {
		assert.Equal(t, `C:\Users\dev\shop`, ev.ProjectRoot, "from workspace.yaml")
		assert.Equal(t, agentevent.Source("copilot_cli"), ev.Source)
		assert.Equal(t, int64(i+1), ev.Sequence)
	}
	assert.Equal(t, "5f2b6c1e-1a2b-4c3d-8e4f-000000000c02", first[0].SessionID)
}

// TestAmpLiveRewrite: the thread file is rewritten as the thread grows: a
// streaming answer waits, a running tool stays open, then each part is
// emitted once, numbered in order.
func TestAmpLiveRewrite(t *testing.T) {
	snaps, err := filepath.Glob(filepath.Join(repoRoot(t), "testdata", "amp", "rewrite_in_place", "snapshots", "*.json"))
	require.NoError(t, err)
	require.Len(t, snaps, 3)
	read := func(i int) []byte {
		b, readErr := os.ReadFile(snaps[i])
		require.NoError(t, readErr)
		return b
	}
	id := "T-7a1c0d2e-3f40-4a5b-8c6d-0000000a0002"
	dir := t.TempDir()
	path := filepath.Join(dir, "threads", id+".json")
	writeBytes(t, path, read(0))

	h := newHarness(t, copilotAmpConfig("", dir), nil, withSettleDelay(time.Hour)) // settles only at shutdown
	h.start()
	h.waitSession(id, 1)
	h.ampBarrier(dir)
	assert.Len(t, h.eventsOfSession(id), 1, "the streaming answer is held")

	writeBytes(t, path, read(1))
	h.waitSession(id, 4)
	h.ampBarrier(dir)
	evs := h.eventsOfSession(id)
	require.Len(t, evs, 4, "prompt, thinking (with the answer's usage), call, title generation")
	assert.Len(t, agentevent.Validate(evs).OpenToolCalls, 1, "the glob runs: its result waits")

	writeBytes(t, path, read(2))
	h.waitSession(id, 6)
	h.ampBarrier(dir)
	evs = h.eventsOfSession(id)
	require.Len(t, evs, 6, "then the tool's result and the final answer")
	assertNoDuplicates(t, evs)
	rep := agentevent.Validate(evs)
	assert.Empty(t, rep.Violations)
	assert.Empty(t, rep.OpenToolCalls)
	for i, ev := range evs {
		assert.Equal(t, int64(i+1), ev.Sequence, "sequence continues across rewrites")
		assert.Equal(t, agentevent.Source("amp"), ev.Source)
	}
}

// TestCopilotAmpRestart: with a file-backed storage, a restart re-emits
// nothing and continues with what was written while the receiver was down:
// a tailed events.jsonl, a rewritten history file, a rewritten Amp thread.
func TestCopilotAmpRestart(t *testing.T) {
	home, ampDir := t.TempDir(), t.TempDir()
	jsonl := filepath.Join(home, "session-state", "s-1", "events.jsonl")
	testfiles.WriteFile(t, jsonl,
		copilotLine(t, "session.start", "r1", "2026-01-01T10:00:00Z", map[string]any{"sessionId": "s-1", "copilotVersion": "1.0.10", "context": map[string]any{"cwd": "/w"}}),
		copilotLine(t, "user.message", "r2", "2026-01-01T10:00:01Z", map[string]any{"content": "one"}),
		copilotLine(t, "assistant.message", "r3", "2026-01-01T10:00:02Z", map[string]any{"messageId": "m1", "content": "one!", "outputTokens": 3}))
	history := filepath.Join(home, "history-session-state", "session_h-1_1700000000000.json")
	hist := func(n int) map[string]any {
		var tl []any
		for i := 1; i <= n; i++ {
			typ := "user"
			if i%2 == 0 {
				typ = "copilot"
			}
			tl = append(tl, map[string]any{"id": fmt.Sprintf("t%d", i), "timestamp": fmt.Sprintf("2025-10-01T10:00:%02dZ", i), "type": typ, "text": fmt.Sprint(i)})
		}
		return map[string]any{"sessionId": "h-1", "startTime": "2025-10-01T10:00:00Z", "chatMessages": []any{}, "timeline": tl}
	}
	writeAmpThread(t, history, hist(2))
	snaps, err := filepath.Glob(filepath.Join(repoRoot(t), "testdata", "amp", "rewrite_in_place", "snapshots", "*.json"))
	require.NoError(t, err)
	thread := filepath.Join(ampDir, "threads", "T-7a1c0d2e-3f40-4a5b-8c6d-0000000a0002.json")
	b, err := os.ReadFile(snaps[1])
	require.NoError(t, err)
	writeBytes(t, thread, b)

	ext := storagetest.NewFileBackedStorageExtension("state", t.TempDir())
	host := storagetest.NewStorageHost().WithExtension(ext.ID, ext)
	cfg := copilotAmpConfig(home, ampDir)
	cfg.Storage = &ext.ID

	first := newHarness(t, cfg, host)
	first.start()
	first.waitSession("s-1", 3)
	first.waitSession("h-1", 2)
	first.waitSession("T-7a1c0d2e-3f40-4a5b-8c6d-0000000a0002", 4)
	first.copilotBarrier(home)
	first.ampBarrier(ampDir)
	first.stop()

	// Written while down: one more prompt, one more history entry pair, the
	// thread's final version.
	testfiles.AppendFile(t, jsonl, testfiles.JoinLines(copilotLine(t, "user.message", "r4", "2026-01-01T10:01:00Z", map[string]any{"content": "two"})))
	writeAmpThread(t, history, hist(4))
	b, err = os.ReadFile(snaps[2])
	require.NoError(t, err)
	writeBytes(t, thread, b)

	second := newHarness(t, cfg, host)
	second.start()
	assert.Equal(t, []string{"r4"}, eventIDs(second.waitSession("s-1", 1)))
	h := second.waitSession("h-1", 2)
	assert.Equal(t, []string{"h-1:t3", "h-1:t4"}, eventIDs(h))
	assert.Equal(t, int64(3), h[0].Sequence, "numbered after the first run")
	second.waitSession("T-7a1c0d2e-3f40-4a5b-8c6d-0000000a0002", 2)
	second.copilotBarrier(home)
	second.ampBarrier(ampDir)
	assert.Len(t, second.eventsOfSession("s-1"), 1)
	assert.Len(t, second.eventsOfSession("h-1"), 2)
	assert.Len(t, second.eventsOfSession("T-7a1c0d2e-3f40-4a5b-8c6d-0000000a0002"), 2, "the tool result and the final answer only")
}

// TestCopilotAmpDefaultPaths: an empty agent_log block reads ~/.copilot
// (or $COPILOT_HOME) in its three layouts and ~/.local/share/amp (or
// $AMP_DATA_DIR).
func TestCopilotAmpDefaultPaths(t *testing.T) {
	for _, tt := range []struct{ name string }{{"home"}, {"env"}} {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("CLAUDE_CONFIG_DIR", "")
			t.Setenv("XDG_DATA_HOME", "")
			t.Setenv("PI_CODING_AGENT_DIR", "")
			t.Setenv("CODEX_HOME", "")
			copilotHome, ampDir := filepath.Join(home, ".copilot"), filepath.Join(home, ".local", "share", "amp")
			t.Setenv("COPILOT_HOME", "")
			t.Setenv("AMP_DATA_DIR", "")
			if tt.name == "env" {
				copilotHome, ampDir = filepath.Join(t.TempDir(), "cp"), filepath.Join(t.TempDir(), "ampdata")
				t.Setenv("COPILOT_HOME", copilotHome)
				t.Setenv("AMP_DATA_DIR", ampDir)
			}
			folder := filepath.Join(copilotHome, "session-state", "s-folder", "events.jsonl")
			testfiles.WriteFile(t, folder, copilotLine(t, "user.message", "f1", "2026-01-01T10:00:00Z", map[string]any{"content": "folder"}))
			flat := filepath.Join(copilotHome, "session-state", "s-flat.jsonl")
			testfiles.WriteFile(t, flat, copilotLine(t, "user.message", "l1", "2026-01-01T10:00:00Z", map[string]any{"content": "flat"}))
			history := filepath.Join(copilotHome, "history-session-state", "session_s-hist_1700000000000.json")
			writeAmpThread(t, history, map[string]any{"sessionId": "s-hist", "timeline": []any{map[string]any{"id": "t1", "type": "user", "text": "old", "timestamp": "2025-10-01T10:00:00Z"}}})
			// Not session files: the CLI's own logs and config.
			testfiles.WriteFile(t, filepath.Join(copilotHome, "logs", "process-1.jsonl"), copilotLine(t, "user.message", "x1", "2026-01-01T10:00:00Z", map[string]any{"content": "not a session"}))
			thread := filepath.Join(ampDir, "threads", "T-home.json")
			writeAmpThread(t, thread, map[string]any{"id": "T-home", "messages": []any{map[string]any{"role": "user", "messageId": 0, "content": []any{map[string]any{"type": "text", "text": "hi"}}}}})

			cfg := createDefaultConfig().(*Config) // an empty agent_log block
			cfg.PollInterval = 10 * time.Millisecond
			h := newHarness(t, cfg, nil)
			h.start()
			for _, p := range []string{folder, flat, history, thread} {
				h.waitEvents(p, 1)
			}
			h.copilotBarrier(copilotHome)
			h.ampBarrier(ampDir)
			files := map[string]agentevent.Source{}
			for _, ev := range notBarrier(h.events()) {
				files[ev.LogFile] = ev.Source
			}
			assert.Equal(t, map[string]agentevent.Source{
				folder: agentevent.Source("copilot_cli"), flat: agentevent.Source("copilot_cli"), history: agentevent.Source("copilot_cli"),
				thread: agentevent.Source("amp"),
			}, files)
		})
	}
}

func TestCopilotAmpDefaultInclude(t *testing.T) {
	env := agents.Env{Home: "/home/dev", Getenv: func(string) string { return "" }}
	got, err := copilotInclude(env)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"/home/dev/.copilot/session-state/*/events.jsonl",
		"/home/dev/.copilot/session-state/*.jsonl",
		"/home/dev/.copilot/history-session-state/*.json",
	}, got)
	got, err = ampInclude(env)
	require.NoError(t, err)
	assert.Equal(t, []string{"/home/dev/.local/share/amp/threads/T-*.json"}, got)

	moved := agents.Env{Home: "/home/dev", Getenv: func(k string) string {
		return map[string]string{"COPILOT_HOME": "~/cp", "AMP_DATA_DIR": "/data/amp/"}[k]
	}}
	got, err = copilotInclude(moved)
	require.NoError(t, err)
	assert.Equal(t, "/home/dev/cp/session-state/*/events.jsonl", got[0])
	got, err = ampInclude(moved)
	require.NoError(t, err)
	assert.Equal(t, []string{"/data/amp/threads/T-*.json"}, got)

	none := agents.Env{Getenv: func(string) string { return "" }}
	_, err = copilotInclude(none)
	require.ErrorIs(t, err, agents.ErrNoHome)
	_, err = ampInclude(none)
	require.ErrorIs(t, err, agents.ErrNoHome)
}

// TestCopilotAmpDisabledAndExcluded: enabled: false reads nothing of the
// agent; exclude leaves files out, of both Copilot kinds.
func TestCopilotAmpDisabledAndExcluded(t *testing.T) {
	home, ampDir := t.TempDir(), t.TempDir()
	kept := filepath.Join(home, "session-state", "keep", "events.jsonl")
	testfiles.WriteFile(t, kept, copilotLine(t, "user.message", "k1", "2026-01-01T10:00:00Z", map[string]any{"content": "kept"}))
	skipped := filepath.Join(home, "session-state", "skip", "events.jsonl")
	testfiles.WriteFile(t, skipped, copilotLine(t, "user.message", "s1", "2026-01-01T10:00:00Z", map[string]any{"content": "left out"}))
	skippedHist := filepath.Join(home, "history-session-state", "session_skip_1.json")
	writeAmpThread(t, skippedHist, map[string]any{"sessionId": "skip-h", "timeline": []any{map[string]any{"id": "t1", "type": "user", "text": "x"}}})
	writeAmpThread(t, filepath.Join(ampDir, "threads", "T-off.json"), map[string]any{"id": "T-off", "messages": []any{map[string]any{"role": "user", "messageId": 0, "content": []any{map[string]any{"type": "text", "text": "off"}}}}})

	cfg := copilotAmpConfig(home, ampDir)
	cfg.CopilotCLI.Exclude = []string{filepath.Join(home, "**", "skip", "*"), filepath.Join(home, "history-session-state", "session_skip_*")}
	cfg.Amp.Enabled = false
	cfg.ClaudeCode.Enabled = true // the barrier's reader
	barriers := t.TempDir()
	cfg.ClaudeCode.Include = []string{filepath.Join(barriers, "*.jsonl")}
	h := newHarness(t, cfg, nil)
	h.start()
	h.waitEvents(kept, 1)
	h.barrier(barriers)
	for _, ev := range h.events() {
		assert.NotEqual(t, skipped, ev.LogFile)
		assert.NotEqual(t, skippedHist, ev.LogFile)
		assert.NotEqual(t, agentevent.Source("amp"), ev.Source, "amp is off")
	}
}

// TestAmpRefusalUntilShutdownIsReadAgain: the retry rule for a file
// rewritten in place — messages the next consumer refused until the
// receiver stopped do not advance the thread's watermark, so the next run
// emits them, once.
func TestAmpRefusalUntilShutdownIsReadAgain(t *testing.T) {
	snaps, err := filepath.Glob(filepath.Join(repoRoot(t), "testdata", "amp", "rewrite_in_place", "snapshots", "*.json"))
	require.NoError(t, err)
	require.Len(t, snaps, 3)
	read := func(i int) []byte {
		b, readErr := os.ReadFile(snaps[i])
		require.NoError(t, readErr)
		return b
	}
	const id = "T-7a1c0d2e-3f40-4a5b-8c6d-0000000a0002"
	dir := t.TempDir()
	path := filepath.Join(dir, "threads", id+".json")
	writeBytes(t, path, read(1))
	ext := storagetest.NewFileBackedStorageExtension("state", t.TempDir())
	host := storagetest.NewStorageHost().WithExtension(ext.ID, ext)
	cfg := copilotAmpConfig("", dir)
	cfg.Storage = &ext.ID
	cfg.RetryOnFailure.InitialInterval = time.Millisecond
	cfg.RetryOnFailure.MaxInterval = time.Millisecond

	h1 := newHarness(t, cfg, host, withSettleDelay(time.Hour))
	h1.start()
	h1.waitSession(id, 4)
	h1.ampBarrier(dir)
	h1.stop()
	first := h1.eventsOfSession(id)
	require.Len(t, first, 4, "prompt, thinking, call, title generation; the running tool waits")

	refusing := &refuseAll{}
	h2 := newHarness(t, cfg, host, withSettleDelay(time.Hour))
	rcv, err := newReceiver(h2.rcv.set, h2.cfg, refusing, registered(), withSettleDelay(time.Hour))
	require.NoError(t, err)
	h2.rcv = rcv
	h2.start()
	writeBytes(t, path, read(2))
	require.Eventually(t, func() bool { return refusing.calls.Load() >= 2 }, 10*time.Second, 5*time.Millisecond, "the new messages are offered, refused, offered again")
	h2.stop()

	h3 := newHarness(t, cfg, host, withSettleDelay(time.Hour))
	h3.start()
	h3.waitSession(id, 2)
	h3.ampBarrier(dir)
	h3.stop()
	again := h3.eventsOfSession(id)
	assert.Len(t, again, 2, "the refused messages (the tool's result, the final answer) come in the next run")
	all := append(slices.Clone(first), again...)
	assertNoDuplicates(t, all)
	rep := agentevent.Validate(all)
	assert.Empty(t, rep.Violations)
	assert.Empty(t, rep.OpenToolCalls, "the refused result answers the call")
}
