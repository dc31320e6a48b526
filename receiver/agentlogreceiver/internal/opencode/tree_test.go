// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package opencode

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/internal/agentevent"
	oc "github.com/agentotel/agentotel/internal/vendors/opencode"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/source"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/testfiles"
)

// TestOpenCodeTreeChangeDetection drives the JSON tree reader poll by poll
// through the changes its directory times must not hide: a message created
// within the clock tick of the listing that last saw its directory, a
// session file rewritten with the same size within the same second, and a
// message that changes neither message/ nor part/ (seen at the next sweep).
func TestOpenCodeTreeChangeDetection(t *testing.T) {
	data := t.TempDir()
	st := newTreeStore(t, data)
	const ses = "ses_change01"
	st.session(ses, 1771000000000)
	st.user(ses, "msg_c001", 1771000000000, "one")
	old := time.Now().Add(-time.Hour)
	testfiles.TouchTree(t, st.storage, old)

	rec := &recorder{}
	rd := newTestSource(t, data, rec)
	ctx := t.Context()
	ids := func() []string { return eventIDs(rec.events(t)) }

	rd.Poll(ctx) // the first poll is a sweep: every directory is listed
	require.Equal(t, []string{"msg_c001"}, ids())
	tree := rd.trees[st.storage]
	require.NotNil(t, tree)
	require.True(t, tree.sessions[ses].settled(), "an old, fully emitted session is settled")
	rd.Poll(ctx)
	require.Equal(t, 1, rec.count(), "an idle poll emits nothing")

	msgDir := filepath.Join(st.storage, "message", ses)
	partRoot := filepath.Join(st.storage, "part")
	msgRoot := filepath.Join(st.storage, "message")

	// 1. The message directory is seen at a fresh time (a new part under
	// part/ brings the poll to it); a message is then created in the same
	// clock tick: its directory's time does not move. The fresh time was
	// not trusted, so the directory is listed again.
	tick := time.Now()
	touch(t, tick, msgDir, partRoot)
	rd.Poll(ctx)
	require.False(t, tree.sessions[ses].settled(), "a directory seen within the racy window is not trusted")
	st.user(ses, "msg_c002", 1771000001000, "two")
	touch(t, tick, msgDir, partRoot)
	touch(t, old, msgRoot)
	rd.Poll(ctx)
	require.Equal(t, []string{"msg_c001", "msg_c002"}, ids(), "a message created within the listing's clock tick")

	// 2. A session file rewritten with the same size within the same second
	// (its version 1.1.40 → 1.1.41) while a message is held back: the info
	// read at a fresh time is read again.
	sesFile := filepath.Join(st.storage, "session", testProject, ses+".json")
	st.assistant(ses, "msg_c003", "msg_c002", 1771000002000, 0) // still working
	st.bash(ses, "msg_c003", "prt_c003b", 1771000002100)
	tick = time.Now()
	touch(t, tick, sesFile)
	rd.Poll(ctx)
	require.Len(t, ids(), 2, "an unfinished message is held back")
	before, err := os.Stat(sesFile)
	require.NoError(t, err)
	st.write(filepath.Join("session", testProject, ses+".json"), map[string]any{
		"id": ses, "version": "1.1.41", "projectID": testProject, "directory": "/home/dev/app", "title": "t",
		"time": map[string]any{"created": 1771000000000, "updated": 1771000000000},
	})
	after, err := os.Stat(sesFile)
	require.NoError(t, err)
	require.Equal(t, before.Size(), after.Size())
	touch(t, tick, sesFile)
	st.assistant(ses, "msg_c003", "msg_c002", 1771000002000, 1771000003000)
	rd.Poll(ctx)
	evs := rec.events(t)
	require.Equal(t, []string{"msg_c001", "msg_c002", "prt_c003b", "prt_c003b:result"}, eventIDs(evs))
	assert.Equal(t, "1.1.41", evs[2].AgentVersion, "the session file rewritten within the second is read again")

	// An empty session (no message directory yet) is settled; its first
	// message is found.
	const empty = "ses_change02"
	st.session(empty, 1771000005000)
	rd.Poll(ctx)
	require.NotNil(t, tree.sessions[empty])
	require.True(t, tree.sessions[empty].settled(), "a session without messages is not looked at every poll")
	st.user(empty, "msg_e001", 1771000005000, "first")
	rd.Poll(ctx)
	require.Equal(t, "msg_e001", ids()[len(ids())-1])

	// 3. Once everything is old, a message whose creation shows neither
	// under message/ nor under part/ (a message without parts; here the
	// roots' times are put back) is not looked for by an ordinary poll —
	// the sweep finds it.
	testfiles.TouchTree(t, st.storage, old)
	rd.Poll(ctx)
	rd.Poll(ctx)
	require.True(t, tree.sessions[ses].settled())
	n := len(ids())
	st.user(ses, "msg_c004", 1771000004000, "four")
	touch(t, old, partRoot, msgRoot)
	rd.Poll(ctx)
	require.Len(t, ids(), n, "not looked for before the sweep")
	rd.swept = time.Time{} // the sweep is due
	rd.Poll(ctx)
	require.Equal(t, "msg_c004", ids()[len(ids())-1], "the sweep lists every message directory")
	require.Len(t, ids(), n+1)
}

// An OpenCode session listed but not read yet keeps its info; the info must
// not pin the decoder's copy of the whole session file (at the first poll
// of a backfill every session is listed before any is read).
func TestListedOpenCodeSessionDoesNotPinItsFile(t *testing.T) {
	// A real session object's shape, with a large field the decoder skips.
	b := []byte(`{"id":"ses_pin01","version":"1.1.25","projectID":"p1","directory":"/home/u/proj","title":"A title","time":{"created":1771000000000,"updated":1771000000500},"summary":"` + strings.Repeat("x", 64<<10) + `"}`)
	info, err := oc.DecodeSession(b)
	require.NoError(t, err)
	var held []weak.Pointer[byte]
	for _, f := range []string{info.ID, info.ProjectID, info.Directory, info.Title, info.Version} {
		held = append(held, weak.Make(unsafe.StringData(f)))
	}
	s := &treeSession{}
	s.setInfo(info, source.FileSig{}, time.Now())
	// b and info are not read past here: only s can keep the file's bytes.
	runtime.GC()
	runtime.GC()
	for i, w := range held {
		assert.Nil(t, w.Value(), "field %d of the kept info still points into the decoded file", i)
	}
	assert.Equal(t, "A title", s.info.Title)
	assert.Equal(t, "/home/u/proj", s.info.Directory)
	runtime.KeepAlive(s)
}

// heldTree is a JSON tree whose session ends in an assistant message
// OpenCode never finished (killed in the middle of a step), every file an
// hour old, read by a source whose clock the test moves.
type heldTree struct {
	st     treeStore
	rd     *Source
	rec    *recorder
	offset time.Duration // added to the source's clock
	old    time.Time
}

const heldSession = "ses_held01"

func newHeldTree(t *testing.T) *heldTree {
	t.Helper()
	data := t.TempDir()
	h := &heldTree{st: newTreeStore(t, data), rec: &recorder{}, old: time.Now().Add(-time.Hour)}
	h.st.session(heldSession, 1771000000000)
	h.st.user(heldSession, "msg_h001", 1771000000000, "run the tests")
	h.st.assistant(heldSession, "msg_h002", "msg_h001", 1771000000100, 0) // never completed
	h.st.bash(heldSession, "msg_h002", "prt_h002a", 1771000000200)
	testfiles.TouchTree(t, h.st.storage, h.old)
	h.rd = newTestSource(t, data, h.rec)
	h.rd.Now = func() time.Time { return time.Now().Add(h.offset) }
	return h
}

func (h *heldTree) poll(t *testing.T) []string {
	t.Helper()
	h.rd.Poll(t.Context())
	return eventIDs(h.rec.events(t))
}

// TestOpenCodeTreeAbandonedLastMessage: a last message that stays
// unfinished is not read again while its files do not change, and is
// taken as it is, once, after AbandonAfter on the reader's clock.
func TestOpenCodeTreeAbandonedLastMessage(t *testing.T) {
	h := newHeldTree(t)
	require.Equal(t, []string{"msg_h001"}, h.poll(t), "the unfinished message is held back")
	read := h.rec.read.Load()
	require.Positive(t, read)
	for range 3 {
		require.Equal(t, []string{"msg_h001"}, h.poll(t))
	}
	assert.Equal(t, read, h.rec.read.Load(), "an unchanged held message is not read again")

	h.offset = AbandonAfter - time.Minute
	h.rd.swept = time.Time{} // a sweep looks at every session too
	require.Equal(t, []string{"msg_h001"}, h.poll(t), "held while it may still finish")
	assert.Equal(t, read, h.rec.read.Load())

	h.offset = AbandonAfter
	evs := func() []agentevent.Event { h.rd.Poll(t.Context()); return h.rec.events(t) }()
	require.Equal(t, []string{"msg_h001", "prt_h002a", "prt_h002a:result"}, eventIDs(evs), "taken as it is")
	assert.Equal(t, "msg_h001", evs[1].ParentEventID)
	assert.Equal(t, int64(2), evs[1].Sequence)
	assert.Equal(t, read+2, h.rec.read.Load(), "read once more: the message and its part")

	tree := h.rd.trees[h.st.storage]
	assert.Empty(t, tree.held)
	h.offset = 3 * AbandonAfter
	for range 3 {
		require.Len(t, h.poll(t), 3, "taken once")
	}
	assert.True(t, tree.sessions[heldSession].settled())
	assert.Equal(t, read+2, h.rec.read.Load())
}

// TestOpenCodeTreeHeldMessageFinishes: a held message that becomes final
// before AbandonAfter is emitted final, once. OpenCode rewrites the message
// file in place: only the file's own time moves.
func TestOpenCodeTreeHeldMessageFinishes(t *testing.T) {
	h := newHeldTree(t)
	require.Equal(t, []string{"msg_h001"}, h.poll(t))
	h.offset = AbandonAfter / 2
	require.Equal(t, []string{"msg_h001"}, h.poll(t))

	h.st.assistant(heldSession, "msg_h002", "msg_h001", 1771000000100, 1771000001000)
	touch(t, h.old, filepath.Join(h.st.storage, "message", heldSession), filepath.Join(h.st.storage, "message"))
	h.rd.Poll(t.Context())
	evs := h.rec.events(t)
	require.Equal(t, []string{"msg_h001", "prt_h002a", "prt_h002a:result"}, eventIDs(evs))
	assert.Empty(t, agentevent.Validate(evs).OpenToolCalls)
	assert.Empty(t, h.rd.trees[h.st.storage].held)

	h.offset = 2 * AbandonAfter
	for range 3 {
		require.Len(t, h.poll(t), 3, "emitted once")
	}
}

// TestOpenCodeTreeHeldMessageChanges: a change to a held message (a part
// added, a part rewritten in place) restarts its AbandonAfter and has it
// read again.
func TestOpenCodeTreeHeldMessageChanges(t *testing.T) {
	h := newHeldTree(t)
	require.Equal(t, []string{"msg_h001"}, h.poll(t))
	read := h.rec.read.Load()
	partDir := filepath.Join(h.st.storage, "part", "msg_h002")
	partRoot := filepath.Join(h.st.storage, "part")

	// A part added: part/msg_h002/ changes (times put an hour back, past
	// racyWindow, but not the old ones).
	h.offset = 6 * time.Minute
	h.st.bash(heldSession, "msg_h002", "prt_h002b", 1771000000900)
	changed := h.old.Add(time.Minute)
	touch(t, changed, filepath.Join(partDir, "prt_h002b.json"), partDir, partRoot)
	require.Equal(t, []string{"msg_h001"}, h.poll(t))
	assert.Equal(t, read+3, h.rec.read.Load(), "read again: the message and its two parts")
	read = h.rec.read.Load()

	h.offset = AbandonAfter + time.Minute // AbandonAfter after the first look
	require.Equal(t, []string{"msg_h001"}, h.poll(t), "the change restarted the clock")
	assert.Equal(t, read, h.rec.read.Load(), "unchanged since: not read")

	// A part rewritten in place: only its own file's time moves.
	h.st.bash(heldSession, "msg_h002", "prt_h002a", 1771000000300)
	touch(t, changed.Add(time.Minute), filepath.Join(partDir, "prt_h002a.json"))
	touch(t, changed, partDir)
	require.Equal(t, []string{"msg_h001"}, h.poll(t))
	assert.Equal(t, read+3, h.rec.read.Load(), "a part rewritten in place is seen")
	restarted := h.offset

	h.offset = restarted + AbandonAfter - time.Second
	require.Equal(t, []string{"msg_h001"}, h.poll(t))
	h.offset = restarted + AbandonAfter
	require.Equal(t, []string{"msg_h001", "prt_h002a", "prt_h002a:result", "prt_h002b", "prt_h002b:result"}, h.poll(t),
		"taken as it is AbandonAfter after its last change")
}
