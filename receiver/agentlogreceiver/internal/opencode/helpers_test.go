// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package opencode

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/checkpoint"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/source"
)

// recorder is the emitter of the tests: it keeps what it is handed.
type recorder struct {
	mu sync.Mutex
	// deliveries are the deliveries with events, as the next consumer
	// would receive them (one ConsumeLogs each).
	deliveries [][]agentevent.Event
	// read is the records read, as otelcol_agent_log_records_read counts
	// them.
	read atomic.Int64
}

func (r *recorder) Read(_ context.Context, n int64)          { r.read.Add(n) }
func (*recorder) Bad(context.Context, string, int64, string) {}
func (*recorder) Forget(...string)                           {}
func (*recorder) FileRead(context.Context, string, bool)     {}

// Encode encodes events as the receiver's emitter does with its default
// settings (the OpenCode sources deliver events, not records).
func (*recorder) Encode(_ context.Context, _ source.Part, events []agentevent.Event) source.Records {
	return source.Records{Logs: agentevent.EncodeLogs(events, ""), Count: len(events)}
}

func (r *recorder) Deliver(_ context.Context, d source.Delivery) error {
	if len(d.Events) > 0 {
		r.mu.Lock()
		r.deliveries = append(r.deliveries, slices.Clone(d.Events))
		r.mu.Unlock()
	}
	return nil
}

// events are the events delivered, in order, as the next consumer decodes
// them.
func (r *recorder) events(t *testing.T) []agentevent.Event {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []agentevent.Event
	for _, d := range r.deliveries {
		evs, skipped := agentevent.DecodeLogs(agentevent.EncodeLogs(d, ""))
		require.Zero(t, skipped)
		out = append(out, evs...)
	}
	return out
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.deliveries)
}

func eventIDs(evs []agentevent.Event) []string {
	ids := make([]string, len(evs))
	for i := range evs {
		ids[i] = evs[i].EventID
	}
	return ids
}

// newTestSource is the source of OpenCode's data directory dataDir with the
// receiver's default settings, without storage, delivering to rec.
func newTestSource(t *testing.T, dataDir string, rec *recorder) *Source {
	t.Helper()
	return newStoreSource(t, dataDir, rec, OpenCode)
}

// newStoreSource is newTestSource for the agent store describes.
func newStoreSource(t *testing.T, dataDir string, rec *recorder, store Store) *Source {
	t.Helper()
	rd, err := New(source.Settings{
		Agent: string(store.Source), Source: store.Source,
		Include:      []string{dataDir},
		PollInterval: 10 * time.Millisecond,
		Emitter:      rec,
		Checkpoints:  checkpoint.New(storage.NewNopClient(), "opencode", false),
		Life:         checkpoint.LifeCycle{MaxSessions: 100, ForgetAfter: time.Hour, Now: time.Now},
		Now:          time.Now,
		Logger:       zap.NewNop(),
		Host:         componenttest.NewNopHost(),
		StartedAt:    time.Now(),
	}, store)
	require.NoError(t, err)
	return rd
}

// touch sets the modification time of paths.
func touch(t *testing.T, at time.Time, paths ...string) {
	t.Helper()
	for _, p := range paths {
		require.NoError(t, os.Chtimes(p, at, at))
	}
}

// treeStore writes OpenCode 1.1 storage objects below <data>/storage, each
// file replaced atomically as a whole (the reader never sees half a file).
// Their shapes are those the receiver's own OpenCode tests write.
type treeStore struct {
	t       testing.TB
	storage string
}

const testProject = "0f3e9b1c6a7d4e2f8a9b0c1d2e3f4a5b6c7d8e9f"

func newTreeStore(tb testing.TB, dataDir string) treeStore {
	s := treeStore{t: tb, storage: filepath.Join(dataDir, "storage")}
	s.write(filepath.Join("project", testProject+".json"), map[string]any{"id": testProject, "worktree": "/home/dev/app", "vcs": "git"})
	return s
}

func (s treeStore) write(rel string, obj any) {
	s.t.Helper()
	b, err := json.MarshalIndent(obj, "", "  ")
	require.NoError(s.t, err)
	path := filepath.Join(s.storage, rel)
	require.NoError(s.t, os.MkdirAll(filepath.Dir(path), 0o755))
	tmp := path + ".tmp"
	require.NoError(s.t, os.WriteFile(tmp, b, 0o600))
	require.NoError(s.t, os.Rename(tmp, path))
}

func (s treeStore) session(id string, created int64) {
	s.write(filepath.Join("session", testProject, id+".json"), map[string]any{
		"id": id, "version": "1.1.40", "projectID": testProject, "directory": "/home/dev/app", "title": "t",
		"time": map[string]any{"created": created, "updated": created},
	})
}

func (s treeStore) user(session, id string, created int64, text string) {
	s.write(filepath.Join("message", session, id+".json"), map[string]any{
		"id": id, "sessionID": session, "role": "user", "time": map[string]any{"created": created}, "agent": "build",
		"model": map[string]any{"providerID": "anthropic", "modelID": "claude-sonnet-4-5"},
	})
	s.write(filepath.Join("part", id, "prt_"+id[4:]+"T.json"), map[string]any{
		"id": "prt_" + id[4:] + "T", "sessionID": session, "messageID": id, "type": "text", "text": text,
	})
}

// assistant writes an assistant message; completed 0 = still working.
func (s treeStore) assistant(session, id, parent string, created, completed int64) {
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

// bash writes a completed bash tool part.
func (s treeStore) bash(session, msg, id string, start int64) {
	st := map[string]any{
		"status": "completed", "input": map[string]any{"command": "go test ./...", "description": "Run tests"},
		"output": "ok  \texample.com/app\t0.01s\n", "title": "Run tests",
		"metadata": map[string]any{"exit": 0, "output": "ok", "description": "Run tests"},
		"time":     map[string]any{"start": start, "end": start + 700},
	}
	s.write(filepath.Join("part", msg, id+".json"), map[string]any{
		"id": id, "sessionID": session, "messageID": msg, "type": "tool", "callID": "call_" + id, "tool": "bash", "state": st,
	})
}
