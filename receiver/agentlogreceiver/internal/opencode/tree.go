// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package opencode

import (
	"cmp"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"

	"github.com/agentotel/agentotel/internal/agentevent"
	oc "github.com/agentotel/agentotel/internal/vendors/opencode"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/checkpoint"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/source"
)

// treeReader reads one OpenCode JSON storage tree (≤1.1.x):
// project/<id>.json, session/<project>/<ses>.json, message/<ses>/<msg>.json,
// part/<msg>/<prt>.json. Every object is its own small file, rewritten in
// place while OpenCode works. Per session it emits the messages in id order
// (ids ascend in creation order) once each is final, and keeps as watermark
// the last message emitted and the last Sequence used: a message is emitted
// once, in its final state, and nothing before the watermark is read again.
//
// What a poll costs follows what changed, not the size of the history
// (directory modification times, see stamp):
//
//   - session/<project>/ is listed only when it changed (a session was
//     created or removed); a session file is read when it is new, and again
//     before its session's new messages are mapped when it was rewritten.
//   - A session whose messages were all emitted ("settled") is looked at
//     again only when its message/<ses>/ directory changed. Those
//     directories are stat'ed only in a poll after message/ or part/
//     changed (every new message gets a part directory; a new session a
//     message directory), after a session was created, and at every sweep
//     (a message without any part, the one change those two directories do
//     not show, is seen then, at the latest after a minute).
//   - A session still being written (a message held back until final) is
//     looked at every poll, but its held message is read again only when
//     it changed (heldStamp: a stat of the message file, of its part
//     directory and of each part file, no read) or when it stayed
//     unfinished and unchanged for AbandonAfter, when it is taken as it
//     is, as the database reader does.
//
// Sessions are handed to the next consumer several at a time
// (source.Batch).
type treeReader struct {
	rd      *Source
	storage string
	// skipExisting (start_at: end, first poll) puts the watermark of a
	// session without one after the messages last written before the
	// receiver started.
	skipExisting bool

	projects   map[string]*cachedObject[oc.Project]
	projectDir stamp
	// marks are the sessions' watermarks (life cycle: internal/checkpoint).
	marks *checkpoint.Table[*storedMark]
	// sessions are the sessions listed, by id; dirs the session/<project>
	// directories, by path.
	sessions    map[string]*treeSession
	dirs        map[string]*sessionDir
	sessionRoot stamp
	// messageRoot and partRoot are message/ and part/ when last scanned.
	messageRoot, partRoot stamp
	// order is the listed sessions, oldest first (sorted again when
	// sessions come or go: reordered).
	order     []*treeSession
	reordered bool
	// spawnedBy maps a child session to the task call that runs it, as
	// seen in its parent's parts (sessions are read oldest first, so the
	// parent's running task is seen before the child's messages).
	spawnedBy map[string]string
	// held are the sessions whose last message is unfinished, with what
	// the reader saw of it and since when (see abandoned).
	held  map[string]treeHeld
	batch *source.Batch
}

// treeHeld is the unfinished last message of a session.
type treeHeld struct {
	id    string
	stamp heldStamp
	// since is when the reader first saw the message in this state (on
	// the reader's clock).
	since time.Time
}

// heldStamp is what the reader sees of a message and its parts without
// reading them. OpenCode rewrites an object in place: a part updated (a
// running tool's output, the child session a task starts) changes its own
// file's time only, neither the message's nor the part directory's.
type heldStamp struct {
	msg source.FileSig
	// dir is part/<msg>/'s modification time (parts created or removed),
	// newest the newest part file's, parts their number.
	dir, newest int64
	parts       int
	// clean: every time was older than racyWindow when looked at, so the
	// same stamp later means nothing changed.
	clean bool
}

type cachedObject[T any] struct {
	sig source.FileSig
	obj T
}

// sessionDir is one session/<project> directory as last listed.
type sessionDir struct {
	path  string // the key of treeReader.dirs
	stamp stamp
	files map[string]*treeSession // by file name
	// retry are the files listed that could not be read or decoded yet
	// (being written, or bad: reported once per version), read again every
	// poll (nil: none).
	retry map[string]bool
}

// treeSession is what the reader keeps of one session: little once the
// session is settled (its info is read again when it has news).
type treeSession struct {
	id, parentID string
	// dir and name are where the session file is (name is the key of
	// dir.files): its path is joined when the session is read, not kept for
	// every session listed (thousands on a long history).
	dir     *sessionDir
	name    string
	created int64
	// sig is the session file's when info was decoded (sigClean: old
	// enough then); info is read when the session has messages to map, kept
	// while it is being read and dropped once it is settled (a session
	// listed keeps none).
	sig  source.FileSig
	info *oc.Session
	// msgDir is message/<ses>/ when last listed; idle says every message
	// listed then was emitted; loaded that the watermark was looked up.
	msgDir stamp
	// (The flags last: together they fit the struct in a smaller size
	// class.)
	sigClean, idle, loaded, listed bool
}

// file is the path of the session file.
func (s *treeSession) file() string { return filepath.Join(s.dir.path, s.name) }

// settled: nothing of the session is held back and its message directory
// was listed after its last change.
func (s *treeSession) settled() bool { return s.loaded && s.idle && s.msgDir.clean }

// racyWindow is how old a modification time must be, when it is looked at,
// for a change after the look to be sure to change it: file times come from
// the kernel's coarse clock, and some file systems keep them to the second
// (HFS+) or two (FAT). A directory or file looked at within the window is
// looked at again at the next poll.
const racyWindow = 2 * time.Second

// stamp is a modification time as seen before a directory was listed (or a
// file read); clean: it was older than racyWindow then, so the same time
// later means nothing changed.
type stamp struct {
	mod   int64
	clean bool
}

func stampOf(mod, now time.Time) stamp {
	return stamp{mod: mod.UnixNano(), clean: now.Sub(mod) >= racyWindow}
}

// unchanged reports whether mod is the time of a clean stamp.
func (s stamp) unchanged(mod time.Time) bool { return s.clean && s.mod == mod.UnixNano() }

func newTreeReader(rd *Source, storage string, skipExisting bool) *treeReader {
	t := &treeReader{
		rd:           rd,
		storage:      storage,
		skipExisting: skipExisting,
		projects:     map[string]*cachedObject[oc.Project]{},
		sessions:     map[string]*treeSession{},
		dirs:         map[string]*sessionDir{},
		spawnedBy:    map[string]string{},
		held:         map[string]treeHeld{},
	}
	t.marks = checkpoint.NewTable(rd.Checkpoints, "tree."+storage, markCodec(), rd.Life, rd.StorageError)
	t.marks.OnForget = func(key string, probes []string) {
		id := strings.TrimPrefix(key, checkpoint.TreeKey(storage, ""))
		if s := t.sessions[id]; s != nil {
			if s.dir.files[s.name] == s {
				delete(s.dir.files, s.name)
			}
			t.unlist(s)
		}
		delete(t.spawnedBy, id)
		delete(t.held, id)
		rd.Emitter.Forget(probes...)
	}
	t.batch = source.NewBatch(rd.Emitter, rd.Checkpoints, rd.StorageError)
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

// poll reads what changed; full (every sweep) looks at every directory.
func (t *treeReader) poll(ctx context.Context, full bool) {
	if full {
		t.marks.Sweep(ctx, source.FileExists)
	}
	defer t.batch.Flush(ctx)
	t.readProjects(ctx, full)
	// The roots are looked at before the sessions: a message created while
	// they are scanned changes them again.
	now := time.Now()
	scan := full
	for _, r := range []struct {
		dir string
		st  *stamp
	}{{"message", &t.messageRoot}, {"part", &t.partRoot}} {
		fi, err := os.Stat(filepath.Join(t.storage, r.dir))
		if err != nil {
			continue
		}
		if !r.st.unchanged(fi.ModTime()) {
			scan = true
			*r.st = stampOf(fi.ModTime(), now)
		}
	}
	if t.listSessions(ctx, full) {
		scan = true
	}
	if t.reordered {
		t.reordered = false
		t.order = slices.DeleteFunc(t.order, func(s *treeSession) bool { return !s.listed })
		slices.SortFunc(t.order, func(a, b *treeSession) int {
			return cmp.Or(cmp.Compare(a.created, b.created), strings.Compare(a.id, b.id))
		})
	}
	for _, s := range t.order {
		if ctx.Err() != nil {
			return
		}
		if !scan && s.settled() {
			continue
		}
		t.pollSession(ctx, s)
	}
	t.skipExisting = false
}

func (t *treeReader) readProjects(ctx context.Context, full bool) {
	dir := filepath.Join(t.storage, "project")
	fi, err := os.Stat(dir)
	if err != nil || (!full && t.projectDir.unchanged(fi.ModTime())) {
		return
	}
	t.projectDir = stampOf(fi.ModTime(), time.Now())
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
		if c, ok := t.projects[id]; ok && c.sig == source.SigOf(fi) {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		p, err := oc.DecodeProject(b)
		if err != nil {
			t.badFile(ctx, path, source.SigOf(fi), b, err)
			t.projectDir.clean = false // read again
			continue
		}
		t.projects[id] = &cachedObject[oc.Project]{sig: source.SigOf(fi), obj: p}
	}
}

// listSessions lists the session directories that changed (every one when
// full), reading the new session files. true: sessions came or went.
func (t *treeReader) listSessions(ctx context.Context, full bool) bool {
	root := filepath.Join(t.storage, "session")
	fi, err := os.Stat(root)
	if err != nil {
		return false
	}
	changed := false
	if full || !t.sessionRoot.unchanged(fi.ModTime()) {
		t.sessionRoot = stampOf(fi.ModTime(), time.Now())
		entries, err := os.ReadDir(root)
		if err != nil {
			return false
		}
		seen := map[string]bool{}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			path := filepath.Join(root, e.Name())
			seen[path] = true
			if t.dirs[path] == nil {
				t.dirs[path] = &sessionDir{path: path, files: map[string]*treeSession{}}
			}
		}
		for path, d := range t.dirs {
			if !seen[path] {
				for _, s := range d.files {
					t.unlist(s)
				}
				delete(t.dirs, path)
				changed = true
			}
		}
	}
	for path, d := range t.dirs {
		if t.listSessionDir(ctx, path, d, full) {
			changed = true
		}
	}
	return changed
}

// listSessionDir lists one session/<project> directory when it changed.
func (t *treeReader) listSessionDir(ctx context.Context, dir string, d *sessionDir, full bool) bool {
	changed := false
	fi, err := os.Stat(dir)
	if err != nil {
		return false
	}
	if full || !d.stamp.unchanged(fi.ModTime()) {
		d.stamp = stampOf(fi.ModTime(), time.Now())
		entries, err := jsonFiles(dir)
		if err != nil {
			return false
		}
		names := make(map[string]bool, len(entries))
		for _, e := range entries {
			names[e.Name()] = true
			if d.files[e.Name()] == nil {
				if d.retry == nil {
					d.retry = map[string]bool{}
				}
				d.retry[e.Name()] = true
			}
		}
		for name, s := range d.files {
			if !names[name] {
				delete(d.files, name)
				t.unlist(s)
				changed = true
			}
		}
		for name := range d.retry {
			if !names[name] {
				delete(d.retry, name)
			}
		}
	}
	for name := range d.retry {
		s, done := t.readSessionFile(ctx, d, name)
		if !done {
			continue
		}
		delete(d.retry, name)
		if s != nil {
			d.files[name] = s
			changed = true
		}
	}
	if len(d.retry) == 0 {
		// A map keeps the room of its largest size: at the first poll every
		// file of the directory is to be read.
		d.retry = nil
	}
	return changed
}

// readSessionFile reads a new session file. done: nothing more to try (s
// nil: left out by exclude_older_than); not done: to be read again next
// poll (unreadable, or not decodable: reported once per version).
func (t *treeReader) readSessionFile(ctx context.Context, d *sessionDir, name string) (s *treeSession, done bool) {
	path := filepath.Join(d.path, name)
	fi, err := os.Stat(path)
	if err != nil {
		return nil, errors.Is(err, os.ErrNotExist)
	}
	if t.rd.ExcludeOlderThan > 0 && t.rd.Now().Sub(fi.ModTime()) > t.rd.ExcludeOlderThan {
		return nil, true // looked at again when its directory changes, or at the next sweep
	}
	info, _, ok := t.decodeSession(ctx, path, fi)
	if !ok {
		return nil, false
	}
	if old := t.sessions[info.ID]; old != nil && (old.dir != d || old.name != name) {
		t.unlist(old) // the same session under another project: the newest listing wins
		delete(old.dir.files, old.name)
	}
	// Only what orders and links the sessions is kept, its strings copied (a
	// decoded string shares the memory of the whole file): the info is read
	// again when the session is polled (sessionInfo). At the first poll every
	// session is listed before any is read, when the collector peaks; kept,
	// their infos would cost memory that grows with the history, for one
	// more read of a small file per session.
	s = &treeSession{id: strings.Clone(info.ID), parentID: strings.Clone(info.ParentID), dir: d, name: name, created: info.Time.Created, listed: true}
	t.sessions[s.id] = s
	t.order = append(t.order, s)
	t.reordered = true
	return s, true
}

func (s *treeSession) setInfo(info oc.Session, sig source.FileSig, now time.Time) {
	// The decoder's strings share its copy of the whole file: each kept
	// info would pin one while its session is being read.
	info.ID, info.ParentID, info.ProjectID = strings.Clone(info.ID), strings.Clone(info.ParentID), strings.Clone(info.ProjectID)
	info.Directory, info.Title, info.Version = strings.Clone(info.Directory), strings.Clone(info.Title), strings.Clone(info.Version)
	s.info, s.sig, s.sigClean = &info, sig, now.Sub(sig.Mod) >= racyWindow
	s.parentID = info.ParentID
}

// decodeSession reads and decodes a session file.
func (t *treeReader) decodeSession(ctx context.Context, path string, fi os.FileInfo) (oc.Session, source.FileSig, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return oc.Session{}, source.FileSig{}, false
	}
	info, err := oc.DecodeSession(b)
	if err != nil {
		t.badFile(ctx, path, source.SigOf(fi), b, err)
		return oc.Session{}, source.FileSig{}, false
	}
	return info, source.SigOf(fi), true
}

// sessionInfo returns the session's info, read again when the session file
// (at path) changed since (or was too fresh when read), or was dropped.
func (t *treeReader) sessionInfo(ctx context.Context, s *treeSession, path string) oc.Session {
	if fi, err := os.Stat(path); err == nil && (s.info == nil || !s.sigClean || source.SigOf(fi) != s.sig) {
		if info, sig, ok := t.decodeSession(ctx, path, fi); ok && info.ID == s.id {
			s.setInfo(info, sig, time.Now())
		}
	}
	if s.info != nil {
		return *s.info
	}
	var info oc.Session // the file went meanwhile: what is known of it
	info.ID, info.ParentID, info.Time.Created = s.id, s.parentID, s.created
	return info
}

// unlist takes a session out of the poll order.
func (t *treeReader) unlist(s *treeSession) {
	if s.listed {
		s.listed = false
		t.reordered = true
	}
	if t.sessions[s.id] == s {
		delete(t.sessions, s.id)
		delete(t.held, s.id)
	}
}

func (t *treeReader) markKey(sessionID string) string {
	return checkpoint.TreeKey(t.storage, sessionID)
}

// loadMark returns the session's watermark from its session table: stored,
// or, for a session without one under start_at: end, after the messages
// written before the receiver started.
func (t *treeReader) loadMark(ctx context.Context, s *treeSession, m *checkpoint.Session[*storedMark], messages []os.DirEntry) sessionMark {
	s.loaded = true
	if m.State.stored {
		return m.State.mark
	}
	m.State.stored = true
	m.State.mark = sessionMark{}
	if !t.skipExisting {
		return m.State.mark
	}
	// File times come from the kernel's coarse clock, a tick behind
	// time.Now: a margin keeps a file written just after the start from
	// passing for history (a file written in the second before the start
	// is read: a duplicate risk, never a loss).
	old := t.rd.StartedAt.Add(-time.Second)
	for _, e := range messages {
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(old) {
			m.State.mark.Last = max(m.State.mark.Last, strings.TrimSuffix(e.Name(), ".json"))
		}
	}
	if m.State.mark.Last != "" {
		t.marks.Commit(ctx, m)
	}
	return m.State.mark
}

func (t *treeReader) pollSession(ctx context.Context, s *treeSession) {
	dir := filepath.Join(t.storage, "message", s.id)
	// The directory's mtime is taken before listing it: a message created
	// after the listing changes it again.
	fi, err := os.Stat(dir)
	if err != nil {
		// No message yet: settled until message/ changes (the directory is
		// created) or the next sweep.
		s.loaded, s.idle, s.msgDir = true, true, stamp{clean: true}
		return
	}
	if s.settled() && fi.ModTime().UnixNano() == s.msgDir.mod {
		return
	}
	if t.stillHeld(s, dir, fi.ModTime()) {
		return
	}
	listed := stampOf(fi.ModTime(), time.Now())
	entries, err := jsonFiles(dir)
	if err != nil {
		return
	}
	file := s.file()
	m := t.marks.Acquire(ctx, t.markKey(s.id), file)
	held := false // m is released by the batch
	defer func() {
		if !held {
			t.marks.Release(m)
		}
	}()
	before := t.loadMark(ctx, s, m, entries)
	var pending []string
	for _, e := range entries {
		if id := strings.TrimSuffix(e.Name(), ".json"); id > before.Last {
			pending = append(pending, id)
		}
	}
	if len(pending) == 0 {
		s.msgDir, s.idle, s.info = listed, true, nil
		delete(t.held, s.id)
		return
	}

	info := t.sessionInfo(ctx, s, file)
	c := t.rd.context(info, t.lookupSession, t.lookupProject)
	if s.parentID != "" {
		c.ParentToolCallID = t.spawnedBy[s.id]
	}
	mark := before
	var events []agentevent.Event
	var read int64
	done := 0
	holding := false // stopped at an unfinished last message, in t.held
	for i, id := range pending {
		later := i < len(pending)-1
		path := filepath.Join(dir, id+".json")
		// The last message's stamp is taken before it is read: a change
		// made while it is read changes the stamp again.
		var st heldStamp
		stamped := false
		if !later {
			st, stamped = t.heldStampOf(path, id)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			break // removed (a revert) or unreadable: look again next poll
		}
		read++
		msg, err := oc.DecodeMessage(b)
		if err != nil {
			if !later {
				break // possibly being written: look again next poll
			}
			mc := c
			mc.LogFile = path
			events = append(events, t.rd.badObject(path, "", unparsed(mc, id, b, err))...)
			mark.Last = id
			done++
			continue
		}
		parts, bad, n := t.readParts(c, msg.ID)
		read += n
		for child, call := range oc.SpawnedSessions(parts) {
			t.spawnedBy[strings.Clone(child)] = strings.Clone(call)
		}
		if !oc.Finished(msg, parts, later) && (!stamped || !t.abandoned(s.id, id, st)) {
			holding = stamped
			break
		}
		// A part that cannot be decoded once its message is final is bad,
		// not half-written.
		for i := range bad {
			events = append(events, t.rd.badObject(bad[i].path, bad[i].sig, bad[i].ev)...)
		}
		mc := c
		mc.LogFile = path
		mc.Sequence = mark.Seq + 1
		evs := oc.MapMessage(mc, msg, parts)
		mark.Seq += int64(len(evs))
		mark.Last = id
		events = append(events, evs...)
		done++
	}
	s.msgDir = listed
	s.idle = done == len(pending)
	if s.idle {
		s.info = nil // read again when the session has news
	}
	t.rd.Emitter.Read(ctx, read)
	if !holding && mark == before {
		delete(t.held, s.id)
	}
	if mark == before {
		return
	}
	// The watermark moves once the next consumer accepted the events.
	held = true
	id := s.id
	t.batch.Add(ctx, m.Key, file, events, s.idle, func(accepted bool) *storage.Operation {
		if !accepted {
			s.idle = false
			// Read again at the next poll: the messages before the held
			// one are still to be emitted.
			delete(t.held, id)
			return nil
		}
		if !holding {
			delete(t.held, id)
		}
		m.State.mark = mark
		return t.marks.CommitOp(m)
	}, func() { t.marks.Release(m) })
}

// stillHeld reports whether the session's unfinished last message, the
// only one not emitted, is as it was when last read, and not yet to be
// abandoned: nothing to read (listed is message/<ses>/'s time now).
func (t *treeReader) stillHeld(s *treeSession, dir string, listed time.Time) bool {
	h, ok := t.held[s.id]
	if !ok || !s.msgDir.unchanged(listed) || t.rd.Now().Sub(h.since) >= AbandonAfter {
		return false
	}
	st, ok := t.heldStampOf(filepath.Join(dir, h.id+".json"), h.id)
	return ok && st.clean && st == h.stamp
}

// abandoned reports whether the unfinished last message id of session ses,
// seen as st, has stayed so for AbandonAfter: the rule and the clock of
// dbReader.abandoned. A stamp taken within racyWindow of a change counts
// as a change.
func (t *treeReader) abandoned(ses, id string, st heldStamp) bool {
	now := t.rd.Now()
	h, ok := t.held[ses]
	if !ok || h.id != id || h.stamp != st || !st.clean {
		t.held[strings.Clone(ses)] = treeHeld{id: strings.Clone(id), stamp: st, since: now}
		return false
	}
	return now.Sub(h.since) >= AbandonAfter
}

// heldStampOf stats the message file at path and the parts of message id;
// false when the message file cannot be stat'ed.
func (t *treeReader) heldStampOf(path, id string) (heldStamp, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return heldStamp{}, false
	}
	st := heldStamp{msg: source.SigOf(fi)}
	newest := fi.ModTime()
	// The directory is stat'ed before it is listed: a part created after
	// the listing changes it again.
	dir := filepath.Join(t.storage, "part", id)
	if di, err := os.Stat(dir); err == nil {
		st.dir = di.ModTime().UnixNano()
		if di.ModTime().After(newest) {
			newest = di.ModTime()
		}
		entries, _ := jsonFiles(dir)
		for _, e := range entries {
			pi, err := e.Info()
			if err != nil {
				continue // removed meanwhile: the directory's time moved
			}
			st.parts++
			st.newest = max(st.newest, pi.ModTime().UnixNano())
			if pi.ModTime().After(newest) {
				newest = pi.ModTime()
			}
		}
	}
	st.clean = time.Since(newest) >= racyWindow
	return st, true
}

// readParts decodes the parts of a message; parts that cannot be decoded
// are returned apart, for the caller to report once the message is final.
func (t *treeReader) readParts(c oc.Context, messageID string) (parts []oc.Part, bad []badPart, read int64) {
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
		p, err := oc.DecodePart(b)
		if err != nil {
			sig := ""
			if fi, infoErr := e.Info(); infoErr == nil {
				sig = source.SigOf(fi).String()
			}
			mc := c
			mc.LogFile = path
			bad = append(bad, badPart{path: path, sig: sig, ev: unparsed(mc, strings.TrimSuffix(e.Name(), ".json"), b, err)})
			continue
		}
		parts = append(parts, p)
	}
	return parts, bad, read
}

// badFile reports a project or session file that cannot be decoded.
func (t *treeReader) badFile(ctx context.Context, path string, sig source.FileSig, raw []byte, err error) {
	ev := unparsed(oc.Context{Source: t.rd.store.Source, LogFile: path}, "", raw, err)
	if evs := t.rd.badObject(path, sig.String(), ev); len(evs) > 0 {
		_ = t.rd.Emitter.Deliver(ctx, source.Delivery{Path: path, Events: evs})
	}
}

// lookupSession returns what ResolveContext needs of a session: its id and
// its parent's.
func (t *treeReader) lookupSession(id string) (oc.Session, bool) {
	s, ok := t.sessions[id]
	if !ok {
		return oc.Session{}, false
	}
	return oc.Session{ID: s.id, ParentID: s.parentID}, true
}

func (t *treeReader) lookupProject(id string) (oc.Project, bool) {
	p, ok := t.projects[id]
	if !ok {
		return oc.Project{}, false
	}
	return p.obj, true
}
