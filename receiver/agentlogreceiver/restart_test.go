// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/stanza/adapter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/agentotel/agentotel/internal/storagecodec"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/tailer"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/testfiles"
)

// storedClient opens the storage the receiver uses, the way it does
// (stanza's adapter.GetStorageClient), to look at its keys. It is the raw
// client: its values are encoded (internal/storagecodec); read and write
// them through storagecodec.Wrap.
func storedClient(ctx context.Context, host component.Host, ext, self component.ID) (storage.Client, error) {
	return adapter.GetStorageClient(ctx, host, &ext, self)
}

// restartSetup is a transcript stopped mid-turn (the second prompt has no
// answer yet) and a file-backed storage extension.
type restartSetup struct {
	logsDir, path string
	ext           *storagetest.TestStorage
	host          component.Host
	cfg           *Config
}

func newRestartSetup(t *testing.T) restartSetup {
	s := restartSetup{logsDir: t.TempDir()}
	s.path = filepath.Join(s.logsDir, "p", "s1.jsonl")
	testfiles.WriteFile(t, s.path,
		userLine("u1", "s1", "one"),
		assistantLine("a1", "u1", "s1", "msg_1", "one!"),
		userLine("u2", "s1", "two"),
	)
	s.ext = storagetest.NewFileBackedStorageExtension("state", t.TempDir())
	s.host = storagetest.NewStorageHost().WithExtension(s.ext.ID, s.ext)
	s.cfg = testConfig(s.logsDir)
	s.cfg.Storage = &s.ext.ID
	return s
}

// storedState opens the first run's storage: its main client, its client
// of values written whole (both raw, see storedClient), and the file's
// stored state in the former — its parser state and its read position, in
// one value.
func (s restartSetup) storedState(t *testing.T, first *harness) (client, blobs storage.Client, state map[string]json.RawMessage) {
	t.Helper()
	ctx := t.Context()
	client, err := storedClient(ctx, s.host, s.ext.ID, first.rcv.set.ID)
	require.NoError(t, err)
	blobs, err = blobClient(ctx, s.host, &s.ext.ID, first.rcv.set.ID)
	require.NoError(t, err)
	b, err := storagecodec.Wrap(client, nil).Get(ctx, "claude_code.parser."+s.path)
	require.NoError(t, err)
	require.NotNil(t, b, "the file's state is stored per agent and path")
	require.NoError(t, json.Unmarshal(b, &state))
	require.Contains(t, state, "state", "the parser state")
	var pos tailer.Pos
	require.NoError(t, json.Unmarshal(state["pos"], &pos), "the read position, in the same value")
	assert.Equal(t, int64(3), pos.Line)
	assert.Equal(t, endOfLine(t, s.path, 3), pos.Offset, "after the third line, the end of what the first run saw")
	return client, blobs, state
}

// firstRun reads the transcript, then stops; more is appended while the
// receiver is down: the answer to the open turn and a new turn.
func (s restartSetup) firstRun(t *testing.T) *harness {
	h := newHarness(t, s.cfg, s.host)
	h.start()
	require.Equal(t, []string{"u1", "a1", "u2"}, eventIDs(h.waitEvents(s.path, 3)))
	h.barrier(s.logsDir)
	h.stop()
	testfiles.AppendFile(t, s.path, testfiles.JoinLines(
		assistantLine("a2", "u2", "s1", "msg_2", "two!"),
		userLine("u3", "s1", "three"),
		assistantLine("a3", "u3", "s1", "msg_3", "three!"),
	))
	return h
}

// secondRun restarts on the same storage and checks that exactly the
// remaining records arrive, in the turn they belong to.
func (s restartSetup) secondRun(t *testing.T, first *harness) {
	h := newHarness(t, s.cfg, s.host)
	h.start()
	h.waitEvents(s.path, 3)
	h.barrier(s.logsDir)

	evs := h.eventsOf(s.path)
	assert.Equal(t, []string{"a2", "u3", "a3"}, eventIDs(evs), "exactly the records appended while stopped")
	assert.Equal(t, "u2", evs[0].ParentEventID, "the open turn continues: the parser state was restored")
	assert.Equal(t, []int64{4, 5, 6}, []int64{evs[0].LogLine, evs[1].LogLine, evs[2].LogLine})
	readBefore := map[string]bool{}
	firstAll := first.events()
	for i := range firstAll {
		ev := &firstAll[i]
		readBefore[ev.LogFile] = true
	}
	all := h.events()
	for i := range all {
		ev := &all[i]
		if ev.LogFile != s.path {
			assert.False(t, readBefore[ev.LogFile], "%s was read in the first run and is re-emitted", ev.LogFile)
		}
	}
	seen := map[string]bool{}
	for _, id := range append(eventIDs(first.eventsOf(s.path)), eventIDs(evs)...) {
		assert.False(t, seen[id], "event %s emitted twice across the restart", id)
		seen[id] = true
	}
	assert.Len(t, seen, 6, "no record lost across the restart")
	assertNoUnparsed(t, h)
}

// endOfLine is the file position after line n and its "\n".
func endOfLine(t *testing.T, path string, n int) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var end int64
	for range n {
		i := bytes.IndexByte(b[end:], '\n')
		require.GreaterOrEqual(t, i, 0)
		end += int64(i) + 1
	}
	return end
}

func TestRestartContinuesMidFileAndMidTurn(t *testing.T) {
	s := newRestartSetup(t)
	first := s.firstRun(t)
	s.secondRun(t, first)
}

// TestRestartReplayIsDropped loses the read position between the runs: the
// file is read again from its start and the parser drops what it has
// already emitted.
func TestRestartReplayIsDropped(t *testing.T) {
	s := newRestartSetup(t)
	first := s.firstRun(t)

	ctx := t.Context()
	client, blobs, state := s.storedState(t, first)
	delete(state, "pos")
	b, err := json.Marshal(state)
	require.NoError(t, err)
	require.NoError(t, storagecodec.Wrap(client, nil).Set(ctx, "claude_code.parser."+s.path, b))
	require.NoError(t, client.Close(ctx))
	require.NoError(t, blobs.Close(ctx))

	s.secondRun(t, first)
}

// TestRestartWithoutStorage documents the in-memory default: without a
// storage extension a new receiver reads according to start_at again.
func TestRestartWithoutStorage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p", "s1.jsonl")
	testfiles.WriteFile(t, path, userLine("u1", "s1", "one"))
	first := newHarness(t, testConfig(dir), nil)
	first.start()
	first.waitEvents(path, 1)
	first.stop()

	second := newHarness(t, testConfig(dir), nil)
	second.start()
	assert.Equal(t, []string{"u1"}, eventIDs(second.waitEvents(path, 1)))
}

// TestMovedAwayAndBackIsReadOnce moves a file to another path and back to
// its own (the same inode): what was read under the other path is not read
// again under the first, whose stored position is older — neither while the
// receiver runs nor when the move back happened while it was stopped.
func TestMovedAwayAndBackIsReadOnce(t *testing.T) {
	s := newRestartSetup(t)
	away := filepath.Join(s.logsDir, "archived", "s1.jsonl")
	require.NoError(t, os.MkdirAll(filepath.Dir(away), 0o755))
	moveAndAppend := func(h *harness, from, to, line string, want int) {
		t.Helper()
		require.NoError(t, os.Rename(from, to))
		h.barrier(s.logsDir) // a poll saw the move before the append
		testfiles.AppendFile(t, to, testfiles.JoinLines(line))
		h.waitEvents(to, want)
		h.barrier(s.logsDir)
	}

	first := newHarness(t, s.cfg, s.host)
	first.start()
	first.waitEvents(s.path, 3)
	moveAndAppend(first, s.path, away, assistantLine("a2", "u2", "s1", "msg_2", "two!"), 1)
	moveAndAppend(first, away, s.path, userLine("u3", "s1", "three"), 4)
	assert.Equal(t, []string{"u1", "a1", "u2", "u3"}, eventIDs(first.eventsOf(s.path)), "back at its path, the file reads on from where it was read to elsewhere")
	assert.Equal(t, []string{"a2"}, eventIDs(first.eventsOf(away)))

	// Away again, then back while the receiver is stopped.
	moveAndAppend(first, s.path, away, userLine("u4", "s1", "four"), 2)
	first.stop()
	require.NoError(t, os.Rename(away, s.path))
	testfiles.AppendFile(t, s.path, testfiles.JoinLines(assistantLine("a4", "u4", "s1", "msg_4", "four!")))

	second := newHarness(t, s.cfg, s.host)
	second.start()
	second.waitEvents(s.path, 1)
	second.barrier(s.logsDir)
	evs := second.eventsOf(s.path)
	assert.Equal(t, []string{"a4"}, eventIDs(evs), "after the restart, only what was appended while stopped")
	if len(evs) == 1 {
		assert.Equal(t, "u4", evs[0].ParentEventID, "the open turn continues: the state read elsewhere came back")
		assert.Equal(t, int64(7), evs[0].LogLine)
	}
	assertNoUnparsed(t, second)
}

// startPolled starts a receiver on the setup and returns once the Claude
// Code tailer's first poll has read a file. With start_at: end the
// barrier's files must come after it, or they are read from their end too:
// the first poll opens the transcript.
func (s restartSetup) startPolled(t *testing.T) *harness {
	t.Helper()
	h := newHarness(t, s.cfg, s.host)
	h.start()
	tl := jsonlSourceOf(t, h, "claude_code").Tailer()
	require.Eventually(t, func() bool { return tl.Reads() > 0 }, h.patience, 5*time.Millisecond)
	return h
}

// TestRestartStartAtEndBeforeAnyLine: with start_at: end, the end a file
// was found at is stored at once, so that a restart before anything was
// appended to it reads what was appended while the receiver was stopped,
// rather than starting at the file's new end.
func TestRestartStartAtEndBeforeAnyLine(t *testing.T) {
	s := newRestartSetup(t)
	s.cfg.StartAt = StartAtEnd
	first := s.startPolled(t)
	first.barrier(s.logsDir)
	first.stop()
	assert.Empty(t, first.eventsOf(s.path), "start_at: end")
	testfiles.AppendFile(t, s.path, testfiles.JoinLines(assistantLine("a2", "u2", "s1", "msg_2", "two!")))

	second := s.startPolled(t)
	second.barrier(s.logsDir)
	evs := second.eventsOf(s.path)
	assert.Equal(t, []string{"a2"}, eventIDs(evs), "what was appended while stopped")
	if len(evs) == 1 {
		assert.Equal(t, int64(1), evs[0].LogLine, "numbered from where reading started")
	}
}

// TestRestartStartAtEndReplacedFile: with start_at: end, a file read before
// and replaced by a shorter one while the receiver was stopped starts at
// the new file's end with a parser state of its own: the old file's state
// (its last offset parsed) would drop every line the new file gets up to
// that offset.
func TestRestartStartAtEndReplacedFile(t *testing.T) {
	s := newRestartSetup(t)
	s.cfg.StartAt = StartAtEnd
	first := s.startPolled(t)
	testfiles.AppendFile(t, s.path, testfiles.JoinLines(assistantLine("a2", "u2", "s1", "msg_2", "two!")))
	first.waitEvents(s.path, 1)
	first.barrier(s.logsDir)
	first.stop()

	// Replaced (another inode) by a shorter file while stopped.
	tmp := s.path + ".new"
	testfiles.WriteFile(t, tmp, userLine("n1", "s1", "new"))
	require.NoError(t, os.Rename(tmp, s.path))

	second := s.startPolled(t)
	testfiles.AppendFile(t, s.path, testfiles.JoinLines(assistantLine("b1", "n1", "s1", "msg_b", "b!"), userLine("n2", "s1", "more")))
	second.barrier(s.logsDir)
	second.barrier(s.logsDir)
	assert.Equal(t, []string{"b1", "n2"}, eventIDs(second.eventsOf(s.path)), "the lines written to the new file after the start")
}
