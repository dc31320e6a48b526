// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver // import "github.com/agentotel/agentotel/receiver/agentlogreceiver"

import (
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/vendors/opencode"
)

// treeReader reads one OpenCode JSON storage tree (≤1.1.x):
// project/<id>.json, session/<project>/<ses>.json, message/<ses>/<msg>.json,
// part/<msg>/<prt>.json. Every object is its own small file, rewritten in
// place while OpenCode works. Per session it emits the messages in id order
// (ids ascend in creation order) once each is final, and keeps as watermark
// the last message emitted and the last Sequence used: a message is emitted
// once, in its final state, and nothing before the watermark is read again.
type treeReader struct {
	rd      *opencodeSource
	storage string
	// skipExisting (start_at: end, first poll) puts the watermark of a
	// session without one after the messages last written before the
	// receiver started.
	skipExisting bool

	projects map[string]*cachedObject[opencode.Project]
	// marks are the sessions' watermarks (life cycle: checkpoint.go).
	marks    *sessionTable[*storedMark]
	sessions map[string]*treeSession // by session id
	byPath   map[string]*treeSession
	// spawnedBy maps a child session to the task call that runs it, as
	// seen in its parent's parts (sessions are read oldest first, so the
	// parent's running task is seen before the child's messages).
	spawnedBy map[string]string
}

type cachedObject[T any] struct {
	sig fileSig
	obj T
}

// treeSession is what the reader knows of one session.
type treeSession struct {
	path   string
	sig    fileSig
	info   opencode.Session
	loaded bool // mark read from storage
	mark   sessionMark
	// msgDirMod is the message directory's mtime when it was last listed;
	// idle says every message listed then was emitted. An idle session
	// whose directory has not changed is not listed again.
	msgDirMod time.Time
	idle      bool
}

func newTreeReader(rd *opencodeSource, storage string, skipExisting bool) *treeReader {
	t := &treeReader{
		rd:           rd,
		storage:      storage,
		skipExisting: skipExisting,
		projects:     map[string]*cachedObject[opencode.Project]{},
		sessions:     map[string]*treeSession{},
		byPath:       map[string]*treeSession{},
		spawnedBy:    map[string]string{},
	}
	t.marks = newSessionTable(rd.checkpoints, "tree."+storage, markCodec(), rd.life, rd.storageError)
	t.marks.onForget = func(key string, probes []string) {
		id := strings.TrimPrefix(key, treeKey(storage, ""))
		if s := t.sessions[id]; s != nil {
			delete(t.byPath, s.path)
		}
		delete(t.sessions, id)
		delete(t.spawnedBy, id)
		rd.emitter.forget(probes...)
	}
	return t
}

// jsonFiles lists the *.json files of a directory, sorted by name.
func jsonFiles(dir string) ([]os.DirEntry, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := entries[:0]
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			out = append(out, e)
		}
	}
	return out, nil
}

func (t *treeReader) poll(ctx context.Context, sweep bool) {
	if sweep {
		t.marks.sweep(ctx, fileExists)
	}
	t.readProjects(ctx)
	sessions := t.readSessions(ctx)
	for _, s := range sessions {
		if ctx.Err() != nil {
			return
		}
		t.pollSession(ctx, s)
	}
	t.skipExisting = false
}

func (t *treeReader) readProjects(ctx context.Context) {
	dir := filepath.Join(t.storage, "project")
	entries, err := jsonFiles(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		fi, err := e.Info()
		if err != nil {
			continue
		}
		id := strings.TrimSuffix(e.Name(), ".json")
		if c, ok := t.projects[id]; ok && c.sig == sigOf(fi) {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		p, err := opencode.DecodeProject(b)
		if err != nil {
			t.badFile(ctx, path, sigOf(fi), b, err)
			continue
		}
		t.projects[id] = &cachedObject[opencode.Project]{sig: sigOf(fi), obj: p}
	}
}

// readSessions decodes new and changed session files and returns the
// sessions to poll, oldest first (session ids descend in time, so they are
// ordered by their creation time).
func (t *treeReader) readSessions(ctx context.Context) []*treeSession {
	root := filepath.Join(t.storage, "session")
	projectDirs, err := os.ReadDir(root)
	if err != nil {
		return nil
	}
	var out []*treeSession
	for _, pd := range projectDirs {
		if !pd.IsDir() {
			continue
		}
		entries, err := jsonFiles(filepath.Join(root, pd.Name()))
		if err != nil {
			continue
		}
		for _, e := range entries {
			path := filepath.Join(root, pd.Name(), e.Name())
			fi, err := e.Info()
			if err != nil {
				continue
			}
			if t.rd.ac.ExcludeOlderThan > 0 && t.rd.clock.now().Sub(fi.ModTime()) > t.rd.ac.ExcludeOlderThan {
				continue
			}
			s := t.byPath[path]
			if s == nil || s.sig != sigOf(fi) {
				b, err := os.ReadFile(path)
				if err != nil {
					continue
				}
				info, err := opencode.DecodeSession(b)
				if err != nil {
					t.badFile(ctx, path, sigOf(fi), b, err)
					continue
				}
				if s == nil {
					s = &treeSession{path: path}
					t.byPath[path] = s
				}
				s.sig, s.info = sigOf(fi), info
				t.sessions[info.ID] = s
			}
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b *treeSession) int {
		return cmp.Or(cmp.Compare(a.info.Time.Created, b.info.Time.Created), strings.Compare(a.info.ID, b.info.ID))
	})
	return out
}

func (t *treeReader) markKey(sessionID string) string {
	return treeKey(t.storage, sessionID)
}

// loadMark takes the session's watermark from its session table: stored,
// or, for a session without one under start_at: end, after the messages
// written before the receiver started.
func (t *treeReader) loadMark(ctx context.Context, s *treeSession, m *tracked[*storedMark], messages []os.DirEntry) {
	s.loaded = true
	if m.state.stored {
		s.mark = m.state.mark
		return
	}
	m.state.stored = true
	s.mark = sessionMark{}
	if !t.skipExisting {
		return
	}
	// File times come from the kernel's coarse clock, a tick behind
	// time.Now: a margin keeps a file written just after the start from
	// passing for history (a file written in the second before the start
	// is read: a duplicate risk, never a loss).
	old := t.rd.startedAt.Add(-time.Second)
	for _, e := range messages {
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(old) {
			s.mark.Last = max(s.mark.Last, strings.TrimSuffix(e.Name(), ".json"))
		}
	}
	if s.mark.Last != "" {
		t.saveMark(ctx, s, m)
	}
}

// saveMark commits the session's watermark.
func (t *treeReader) saveMark(ctx context.Context, s *treeSession, m *tracked[*storedMark]) {
	m.state.mark = s.mark
	t.marks.commit(ctx, m)
}

func (t *treeReader) pollSession(ctx context.Context, s *treeSession) {
	dir := filepath.Join(t.storage, "message", s.info.ID)
	// The directory's mtime is taken before listing it: a message created
	// after the listing changes it again.
	fi, err := os.Stat(dir)
	if err != nil {
		return // no message yet
	}
	if s.loaded && s.idle && fi.ModTime().Equal(s.msgDirMod) {
		return
	}
	entries, err := jsonFiles(dir)
	if err != nil {
		return
	}
	ids := make([]string, 0, len(entries))
	for _, e := range entries {
		ids = append(ids, strings.TrimSuffix(e.Name(), ".json"))
	}
	m := t.marks.acquire(ctx, t.markKey(s.info.ID), s.path)
	defer t.marks.release(m)
	t.loadMark(ctx, s, m, entries)
	pending := ids[:0:0]
	for _, id := range ids {
		if id > s.mark.Last {
			pending = append(pending, id)
		}
	}

	c := opencode.ResolveContext(s.info, t.lookupSession, t.lookupProject)
	if s.info.ParentID != "" {
		c.ParentToolCallID = t.spawnedBy[s.info.ID]
	}
	before := s.mark
	var events []agentevent.Event
	var read int64
	done := 0
	for i, id := range pending {
		later := i < len(pending)-1
		path := filepath.Join(dir, id+".json")
		b, err := os.ReadFile(path)
		if err != nil {
			break // removed (a revert) or unreadable: look again next poll
		}
		read++
		m, err := opencode.DecodeMessage(b)
		if err != nil {
			if !later {
				break // possibly being written: look again next poll
			}
			mc := c
			mc.LogFile = path
			events = append(events, t.rd.badObject(path, "", t.unparsed(mc, id, b, err))...)
			s.mark.Last = id
			done++
			continue
		}
		parts, bad, n := t.readParts(c, m.ID)
		read += n
		for child, call := range opencode.SpawnedSessions(parts) {
			t.spawnedBy[child] = call
		}
		if !opencode.Finished(m, parts, later) {
			break
		}
		// A part that cannot be decoded once its message is final is bad,
		// not half-written.
		for _, p := range bad {
			events = append(events, t.rd.badObject(p.path, p.sig, p.ev)...)
		}
		mc := c
		mc.LogFile = path
		mc.Sequence = s.mark.Seq + 1
		evs := opencode.MapMessage(mc, m, parts)
		s.mark.Seq += int64(len(evs))
		s.mark.Last = id
		events = append(events, evs...)
		done++
	}
	s.msgDirMod = fi.ModTime()
	s.idle = done == len(pending)
	t.rd.emitter.read(ctx, read)
	if s.mark == before {
		return
	}
	// The watermark moves once the next consumer accepted the events.
	if err := t.rd.emitter.deliver(ctx, delivery{path: s.path, events: events, caughtUp: s.idle}); err != nil {
		s.mark, s.idle = before, false
		return
	}
	t.saveMark(context.WithoutCancel(ctx), s, m)
}

// readParts decodes the parts of a message; parts that cannot be decoded
// are returned apart, for the caller to report once the message is final.
func (t *treeReader) readParts(c opencode.Context, messageID string) (parts []opencode.Part, bad []badPart, read int64) {
	dir := filepath.Join(t.storage, "part", messageID)
	entries, err := jsonFiles(dir)
	if err != nil {
		return nil, nil, 0
	}
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		read++
		p, err := opencode.DecodePart(b)
		if err != nil {
			sig := ""
			if fi, err := e.Info(); err == nil {
				sig = sigOf(fi).String()
			}
			mc := c
			mc.LogFile = path
			bad = append(bad, badPart{path: path, sig: sig, ev: t.unparsed(mc, strings.TrimSuffix(e.Name(), ".json"), b, err)})
			continue
		}
		parts = append(parts, p)
	}
	return parts, bad, read
}

// unparsed is the event of an object that could not be decoded.
func (t *treeReader) unparsed(c opencode.Context, id string, raw []byte, err error) agentevent.Event {
	reason := opencode.ReasonMalformedJSON
	var de *opencode.DecodeError
	if errors.As(err, &de) {
		reason = de.Reason
	}
	return opencode.Unparsed(c, id, "", raw, reason, err.Error())
}

// badFile reports a project or session file that cannot be decoded.
func (t *treeReader) badFile(ctx context.Context, path string, sig fileSig, raw []byte, err error) {
	ev := t.unparsed(opencode.Context{LogFile: path}, "", raw, err)
	if evs := t.rd.badObject(path, sig.String(), ev); len(evs) > 0 {
		_ = t.rd.emitter.deliver(ctx, delivery{path: path, events: evs})
	}
}

func (t *treeReader) lookupSession(id string) (opencode.Session, bool) {
	s, ok := t.sessions[id]
	if !ok {
		return opencode.Session{}, false
	}
	return s.info, true
}

func (t *treeReader) lookupProject(id string) (opencode.Project, bool) {
	p, ok := t.projects[id]
	if !ok {
		return opencode.Project{}, false
	}
	return p.obj, true
}
