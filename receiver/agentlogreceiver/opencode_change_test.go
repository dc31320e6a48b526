// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// touch sets the modification time of paths.
func touch(t *testing.T, at time.Time, paths ...string) {
	t.Helper()
	for _, p := range paths {
		require.NoError(t, os.Chtimes(p, at, at))
	}
}

// touchTree sets the modification time of everything below dir.
func touchTree(t testing.TB, dir string, at time.Time) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err == nil {
			err = os.Chtimes(p, at, at)
		}
		return err
	}))
}

func sinkEvents(t *testing.T, sink *consumertest.LogsSink) []agentevent.Event {
	t.Helper()
	var out []agentevent.Event
	for _, l := range sink.AllLogs() {
		evs, skipped := agentevent.DecodeLogs(l)
		require.Zero(t, skipped)
		out = append(out, evs...)
	}
	return out
}

// TestOpenCodeTreeChangeDetection drives the JSON tree reader poll by poll
// through the changes its directory times must not hide: a message created
// within the clock tick of the listing that last saw its directory, a
// session file rewritten with the same size within the same second, and a
// message that changes neither message/ nor part/ (seen at the next sweep).
func TestOpenCodeTreeChangeDetection(t *testing.T) {
	data := t.TempDir()
	st := newOCStore(t, data)
	const ses = "ses_change01"
	st.session(ses, 1771000000000)
	st.user(ses, "msg_c001", 1771000000000, "one")
	old := time.Now().Add(-time.Hour)
	touchTree(t, st.storage, old)

	sink := new(consumertest.LogsSink)
	srcs, stop := directSources(t, ocConfig(data), sink, componenttest.NewNopHost())
	defer stop()
	rd := srcs[0].(*opencodeSource)
	ctx := context.Background()
	ids := func() []string { return eventIDs(sinkEvents(t, sink)) }

	rd.poll(ctx) // the first poll is a sweep: every directory is listed
	require.Equal(t, []string{"msg_c001"}, ids())
	tree := rd.trees[st.storage]
	require.NotNil(t, tree)
	require.True(t, tree.sessions[ses].settled(), "an old, fully emitted session is settled")
	rd.poll(ctx)
	require.Len(t, sink.AllLogs(), 1, "an idle poll emits nothing")

	msgDir := filepath.Join(st.storage, "message", ses)
	partRoot := filepath.Join(st.storage, "part")
	msgRoot := filepath.Join(st.storage, "message")

	// 1. The message directory is seen at a fresh time (a new part under
	// part/ brings the poll to it); a message is then created in the same
	// clock tick: its directory's time does not move. The fresh time was
	// not trusted, so the directory is listed again.
	tick := time.Now()
	touch(t, tick, msgDir, partRoot)
	rd.poll(ctx)
	require.False(t, tree.sessions[ses].settled(), "a directory seen within the racy window is not trusted")
	st.user(ses, "msg_c002", 1771000001000, "two")
	touch(t, tick, msgDir, partRoot)
	touch(t, old, msgRoot)
	rd.poll(ctx)
	require.Equal(t, []string{"msg_c001", "msg_c002"}, ids(), "a message created within the listing's clock tick")

	// 2. A session file rewritten with the same size within the same second
	// (its version 1.1.40 → 1.1.41) while a message is held back: the info
	// read at a fresh time is read again.
	sesFile := filepath.Join(st.storage, "session", ocProject, ses+".json")
	st.assistant(ses, "msg_c003", "msg_c002", 1771000002000, 0) // still working
	st.bash(ses, "msg_c003", "prt_c003b", "completed", 1771000002100, nil)
	tick = time.Now()
	touch(t, tick, sesFile)
	rd.poll(ctx)
	require.Len(t, ids(), 2, "an unfinished message is held back")
	before, err := os.Stat(sesFile)
	require.NoError(t, err)
	st.write(filepath.Join("session", ocProject, ses+".json"), map[string]any{
		"id": ses, "version": "1.1.41", "projectID": ocProject, "directory": "/home/dev/app", "title": "t",
		"time": map[string]any{"created": 1771000000000, "updated": 1771000000000},
	})
	after, err := os.Stat(sesFile)
	require.NoError(t, err)
	require.Equal(t, before.Size(), after.Size())
	touch(t, tick, sesFile)
	st.assistant(ses, "msg_c003", "msg_c002", 1771000002000, 1771000003000)
	rd.poll(ctx)
	evs := sinkEvents(t, sink)
	require.Equal(t, []string{"msg_c001", "msg_c002", "prt_c003b", "prt_c003b:result"}, eventIDs(evs))
	assert.Equal(t, "1.1.41", evs[2].AgentVersion, "the session file rewritten within the second is read again")

	// An empty session (no message directory yet) is settled; its first
	// message is found.
	const empty = "ses_change02"
	st.session(empty, 1771000005000)
	rd.poll(ctx)
	require.NotNil(t, tree.sessions[empty])
	require.True(t, tree.sessions[empty].settled(), "a session without messages is not looked at every poll")
	st.user(empty, "msg_e001", 1771000005000, "first")
	rd.poll(ctx)
	require.Equal(t, "msg_e001", ids()[len(ids())-1])

	// 3. Once everything is old, a message whose creation shows neither
	// under message/ nor under part/ (a message without parts; here the
	// roots' times are put back) is not looked for by an ordinary poll —
	// the sweep finds it.
	touchTree(t, st.storage, old)
	rd.poll(ctx)
	rd.poll(ctx)
	require.True(t, tree.sessions[ses].settled())
	n := len(ids())
	st.user(ses, "msg_c004", 1771000004000, "four")
	touch(t, old, partRoot, msgRoot)
	rd.poll(ctx)
	require.Len(t, ids(), n, "not looked for before the sweep")
	rd.swept = time.Time{} // the sweep is due
	rd.poll(ctx)
	require.Equal(t, "msg_c004", ids()[len(ids())-1], "the sweep lists every message directory")
	require.Len(t, ids(), n+1)
}

// TestOpenCodeTreeBatchesSessions: the sessions read in one poll go to the
// next consumer in few deliveries, each session's events in order, with
// agent.read.caught_up on the last record of every session.
func TestOpenCodeTreeBatchesSessions(t *testing.T) {
	data := t.TempDir()
	st := newOCStore(t, data)
	const n = 300
	for i := range n {
		ses := "ses_batch" + string(rune('a'+i/26/26%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i%26))
		st.session(ses, 1771000000000+int64(i))
		st.user(ses, "msg_"+ses[4:]+"1", 1771000000000+int64(i), "one")
		st.assistant(ses, "msg_"+ses[4:]+"2", "msg_"+ses[4:]+"1", 1771000000100+int64(i), 1771000000500+int64(i))
		st.bash(ses, "msg_"+ses[4:]+"2", "prt_"+ses[4:]+"b", "completed", 1771000000200+int64(i), nil)
	}
	sink := new(consumertest.LogsSink)
	srcs, stop := directSources(t, ocConfig(data), sink, componenttest.NewNopHost())
	defer stop()
	srcs[0].(*opencodeSource).poll(context.Background())

	require.LessOrEqual(t, len(sink.AllLogs()), (n+maxBatchSessions-1)/maxBatchSessions, "sessions are delivered in batches")
	bySession := map[string][]string{}
	caughtUp := map[string]int{}
	var order []string
	for _, l := range sink.AllLogs() {
		for _, lr := range logRecords(l) {
			ses, _ := lr.Attributes().Get(agentevent.AttrSessionID)
			id, _ := lr.Attributes().Get(agentevent.AttrEventID)
			if len(bySession[ses.Str()]) == 0 {
				order = append(order, ses.Str())
			}
			bySession[ses.Str()] = append(bySession[ses.Str()], id.Str())
			if agentevent.CaughtUp(lr) {
				caughtUp[ses.Str()]++
				assert.Equal(t, "prt_"+ses.Str()[4:]+"b:result", id.Str(), "caught up on the session's last record")
			}
		}
	}
	require.Len(t, bySession, n)
	for ses, ids := range bySession {
		assert.Equal(t, []string{"msg_" + ses[4:] + "1", "prt_" + ses[4:] + "b", "prt_" + ses[4:] + "b:result"}, ids)
		assert.Equal(t, 1, caughtUp[ses], ses)
	}
	require.IsIncreasing(t, order, "sessions oldest first")
}
