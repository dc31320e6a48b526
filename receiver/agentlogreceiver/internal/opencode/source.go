// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package opencode is the source of the agent_log receiver for data
// directories in OpenCode's layout: OpenCode's own (`$XDG_DATA_HOME/opencode`,
// default ~/.local/share/opencode) and those of agents that keep OpenCode's
// layout under another name (Kilo CLI: `kilo.db` in ~/.local/share/kilo). Up
// to OpenCode 1.1.x the data is a JSON tree below `storage/` (treeReader),
// from 1.2 on a SQLite database (dbReader), `opencode.db` for OpenCode; the
// agent's Store names its database and the source of its events. Neither is
// an append-only file, so the data is read by a poller rather than by the
// tailer: each poll finds the data directories the include patterns match
// and reads what changed in them. The format itself is
// internal/vendors/opencode's.
package opencode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/agentotel/agentotel/internal/agentevent"
	oc "github.com/agentotel/agentotel/internal/vendors/opencode"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/checkpoint"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/finder"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/source"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/watch"
)

// Store is what differs between the agents whose data directories are in
// OpenCode's layout.
type Store struct {
	// Source is the source of the events ("" is OpenCode's).
	Source agentevent.Source
	// Database is the file name of the SQLite database in a data directory
	// ("" is OpenCode's, "opencode.db").
	Database string
}

// OpenCode is OpenCode's own Store.
var OpenCode = Store{Source: oc.Source, Database: "opencode.db"}

func (s Store) withDefaults() Store {
	if s.Source == "" {
		s.Source = OpenCode.Source
	}
	if s.Database == "" {
		s.Database = OpenCode.Database
	}
	return s
}

// Source polls data directories in OpenCode's layout.
type Source struct {
	source.Settings
	store  Store
	poller *source.Loop
	find   *finder.Finder

	// Touched by the poll goroutine only.
	trees    map[string]*treeReader // by storage directory
	dbs      map[string]*dbReader   // by database path
	reported map[string]string      // path → signature of the bad object reported
	noted    map[string]bool        // data directories whose layout was logged
	polls    int
	swept    time.Time
}

// New is the source of the data directories set's include patterns match,
// in OpenCode's layout, of the agent store describes.
func New(set source.Settings, store Store) (*Source, error) {
	find, err := finder.NewDirs(set.Include, set.Exclude)
	if err != nil {
		return nil, fmt.Errorf("`%s`: %w", set.Agent, err)
	}
	return &Source{
		Settings: set,
		store:    store.withDefaults(),
		find:     find,
		trees:    map[string]*treeReader{},
		dbs:      map[string]*dbReader{},
		reported: map[string]string{},
		noted:    map[string]bool{},
	}, nil
}

// Start polls the data directories every poll_interval, and when what they
// hold changes (watch).
func (rd *Source) Start(context.Context) error {
	rd.poller = source.StartWatchLoop(rd.PollInterval, rd.watcher(), rd.Poll)
	rd.Logger.Info("Reading agent session data",
		zap.String("agent", rd.Agent), zap.Strings("include", rd.Include), zap.Strings("exclude", rd.Exclude))
	return nil
}

// watcher watches what changes in a data directory as a session goes on:
// the database and its write-ahead log, and the JSON tree's project, session
// and message folders. Not the part folders, one per message: a message's
// file is written again once its parts are, and a watch per message would
// spend thousands of the user's watches (the parts are found by the
// message's read, or the next poll).
func (rd *Source) watcher() func() *watch.Watcher {
	s := rd.Settings
	var files []string
	for _, dir := range rd.Include {
		for _, f := range []string{
			rd.store.Database, rd.store.Database + "-wal",
			"storage/project/*.json", "storage/session/*/*.json", "storage/message/*/*.json",
		} {
			files = append(files, filepath.Join(dir, filepath.FromSlash(f)))
		}
	}
	// The exclude patterns name data directories, not these files.
	s.Exclude = nil
	return s.Watcher(files)
}

// Stop ends polling; a poll under way finishes its current session first
// (its events are sent and its watermark saved together).
func (rd *Source) Stop(ctx context.Context) error {
	closeAll := func() error {
		var errs []error
		for _, d := range rd.dbs {
			d.marks.Flush(context.WithoutCancel(ctx))
			errs = append(errs, d.close())
		}
		rd.dbs = map[string]*dbReader{}
		for _, t := range rd.trees {
			t.marks.Flush(context.WithoutCancel(ctx))
		}
		return errors.Join(errs...)
	}
	if err := rd.poller.Halt(ctx); err != nil {
		// The poll under way ends in the background; the databases are
		// closed after it.
		go func() {
			<-rd.poller.Done()
			_ = closeAll()
		}()
		return err
	}
	return closeAll()
}

// dataDirs returns the existing directories the include patterns match,
// sorted.
func (rd *Source) dataDirs() []string {
	dirs, _ := rd.find.Match() // no match is an error to the finder, nothing to read to us
	return dirs
}

// Poll reads what changed in the data directories; every sweep interval
// it also looks at every directory and forgets the sessions that are gone.
func (rd *Source) Poll(ctx context.Context) {
	first := rd.polls == 0
	rd.polls++
	sweep := false
	if now := rd.Now(); now.Sub(rd.swept) >= rd.SweepInterval() {
		rd.swept, sweep = now, true
	}
	for _, dir := range rd.dataDirs() {
		if ctx.Err() != nil {
			return
		}
		db := filepath.Join(dir, rd.store.Database)
		storage := filepath.Join(dir, "storage")
		if _, err := os.Stat(db); err == nil {
			// From 1.2 on, OpenCode migrates the JSON tree into the database
			// on its first start and leaves the tree behind: reading both
			// would count every migrated session twice.
			d, ok := rd.dbs[db]
			if !ok {
				var err error
				if d, err = newDBReader(rd, db, first && rd.StartAtEnd); err != nil {
					rd.dbError(db, err)
					continue
				}
				rd.dbs[db] = d
				rd.note(dir, "Reading OpenCode SQLite database", zap.String("database", db))
			}
			if err := d.poll(ctx, sweep); err != nil && ctx.Err() == nil {
				rd.dbError(db, err)
			}
			continue
		}
		if fi, err := os.Stat(filepath.Join(storage, "session")); err != nil || !fi.IsDir() {
			continue
		}
		t, ok := rd.trees[storage]
		if !ok {
			t = newTreeReader(rd, storage, first && rd.StartAtEnd)
			rd.trees[storage] = t
			rd.note(dir, "Reading OpenCode JSON storage", zap.String("storage", storage))
		}
		t.poll(ctx, sweep)
	}
}

// note logs a fact about a data directory once. Messages name the layout
// (OpenCode's), the agent field the agent.
func (rd *Source) note(dir, msg string, fields ...zap.Field) {
	if rd.noted[dir+"\x00"+msg] {
		return
	}
	rd.noted[dir+"\x00"+msg] = true
	rd.Logger.Info(msg, append([]zap.Field{zap.String("agent", rd.Agent), zap.String("path", dir)}, fields...)...)
}

// dbError logs a database that cannot be read, once per distinct error.
func (rd *Source) dbError(path string, err error) {
	msg := err.Error()
	if rd.reported["db:"+path] == msg {
		return
	}
	rd.reported["db:"+path] = msg
	rd.Logger.Warn("Cannot read the OpenCode database; retrying at the next poll",
		zap.String("agent", rd.Agent), zap.String("path", path), zap.Error(err))
}

// badObject returns the Unparsed event of an object that could not be
// mapped, once per version of it (signature); the emitter counts and
// reports it.
func (rd *Source) badObject(path, signature string, ev agentevent.Event) []agentevent.Event {
	if seen, ok := rd.reported[path]; ok && seen == signature {
		return nil
	}
	rd.reported[path] = signature
	return []agentevent.Event{ev}
}

// context is the mapping context of a session, for the agent's events.
func (rd *Source) context(s oc.Session, lookupSession func(string) (oc.Session, bool), lookupProject func(string) (oc.Project, bool)) oc.Context {
	c := oc.ResolveContext(s, lookupSession, lookupProject)
	c.Source = rd.store.Source
	return c
}

// What the JSON tree and the database readers share: the watermark of a
// session, kept in a session table, and a part that could not be decoded.

// storedMark is a session's watermark in a session table; stored says it
// came from the storage (or an earlier read), not fresh.
type storedMark struct {
	mark   sessionMark
	stored bool
}

// markCodec keeps sessionMarks in a session table.
func markCodec() checkpoint.Codec[*storedMark] {
	return checkpoint.Codec[*storedMark]{
		Fresh:   func(string) *storedMark { return &storedMark{} },
		Marshal: func(m *storedMark) ([]byte, error) { return json.Marshal(m.mark) },
		Unmarshal: func(_ string, b []byte) (*storedMark, error) {
			m := &storedMark{stored: true}
			return m, json.Unmarshal(b, &m.mark)
		},
	}
}

// sessionMark is the watermark of one session, kept in the storage.
type sessionMark struct {
	Last string `json:"last_message_id"`
	Seq  int64  `json:"sequence"`
}

// badPart is a part file that could not be decoded.
type badPart struct {
	path, sig string
	ev        agentevent.Event
}

// unparsed is the event of an object (a file or a row) that could not be
// decoded.
func unparsed(c oc.Context, id string, raw []byte, err error) agentevent.Event {
	reason := oc.ReasonMalformedJSON
	if de, ok := errors.AsType[*oc.DecodeError](err); ok {
		reason = de.Reason
	}
	return oc.Unparsed(c, id, "", raw, reason, err.Error())
}
