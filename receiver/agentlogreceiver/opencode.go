// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentlogreceiver // import "github.com/agentotel/agentotel/receiver/agentlogreceiver"

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"

	"github.com/bmatcuk/doublestar/v4"
	"go.opentelemetry.io/collector/component"
	"go.uber.org/zap"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// OpenCode keeps its data in one directory (`$XDG_DATA_HOME/opencode`,
// default ~/.local/share/opencode): up to 1.1.x a JSON tree below
// `storage/`, from 1.2 on the SQLite database `opencode.db`. Neither is an
// append-only file, so OpenCode is read by a poller rather than by
// fileconsumer: each poll finds the data directories the include patterns
// match and reads what changed in them.

// opencodeInclude: $XDG_DATA_HOME/opencode when XDG_DATA_HOME is set (as
// OpenCode's xdg-basedir does), else ~/.local/share/opencode.
func opencodeInclude(env environment) ([]string, error) {
	if d := env.getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(expandHome(d, env.home)) {
		return []string{filepath.Join(filepath.Clean(expandHome(d, env.home)), "opencode")}, nil
	}
	if env.home == "" {
		return nil, errNoHome
	}
	return []string{filepath.Join(env.home, ".local", "share", "opencode")}, nil
}

// snapshotReader is an agent reader that polls, for data that is rewritten
// in place (it has no lines to tail).
type snapshotReader interface {
	stop() error
}

type nopReader struct{}

func (nopReader) stop() error { return nil }

// opencodeReader polls OpenCode's data directories.
type opencodeReader struct {
	poller

	// Touched by the poll goroutine only.
	trees    map[string]*treeReader // by storage directory
	dbs      map[string]*dbReader   // by database path
	reported map[string]string      // path → signature of the bad object reported
	noted    map[string]bool        // data directories whose layout was logged
	polls    int
}

func startOpenCode(r *logsReceiver, host component.Host, a agent, ac *AgentConfig, env environment, hostname string) (snapshotReader, error) {
	include, exclude, err := resolvePatterns(a, ac, env)
	if errors.Is(err, errNoHome) && len(ac.Include) == 0 {
		// Enabled by default: without a home directory (and without
		// XDG_DATA_HOME) there is no default location, which must not stop
		// the other agents from being read.
		r.set.Logger.Warn("OpenCode's default data directory is unknown ($HOME and $XDG_DATA_HOME are not set); set `opencode.include` to read OpenCode sessions",
			zap.String("agent", a.key))
		return nopReader{}, nil
	}
	if err != nil {
		return nil, err
	}
	rd := &opencodeReader{
		poller:   newPoller(r, host, a, ac, include, exclude, hostname),
		trees:    map[string]*treeReader{},
		dbs:      map[string]*dbReader{},
		reported: map[string]string{},
		noted:    map[string]bool{},
	}
	rd.start(r.cfg.PollInterval, rd.poll)
	return rd, nil
}

// stop ends polling; a poll under way finishes its current session first
// (its events are sent and its watermark saved together).
func (rd *opencodeReader) stop() error {
	rd.halt()
	var errs []error
	for _, d := range rd.dbs {
		errs = append(errs, d.close())
	}
	rd.dbs = map[string]*dbReader{}
	return errors.Join(errs...)
}

// dataDirs returns the existing directories the include patterns match.
func (rd *opencodeReader) dataDirs() []string {
	var dirs []string
	for _, pattern := range rd.include {
		matches, err := doublestar.FilepathGlob(pattern)
		if err != nil {
			continue // validated at load
		}
		for _, m := range matches {
			if rd.excluded(m) || slices.Contains(dirs, m) {
				continue
			}
			if fi, err := os.Stat(m); err == nil && fi.IsDir() {
				dirs = append(dirs, m)
			}
		}
	}
	slices.Sort(dirs)
	return dirs
}

func (rd *opencodeReader) poll(ctx context.Context) {
	first := rd.polls == 0
	rd.polls++
	for _, dir := range rd.dataDirs() {
		if ctx.Err() != nil {
			return
		}
		db := filepath.Join(dir, "opencode.db")
		storage := filepath.Join(dir, "storage")
		if _, err := os.Stat(db); err == nil {
			// From 1.2 on, OpenCode migrates the JSON tree into the database
			// on its first start and leaves the tree behind: reading both
			// would count every migrated session twice.
			d, ok := rd.dbs[db]
			if !ok {
				var err error
				if d, err = newDBReader(rd, db, first && rd.startAtEnd); err != nil {
					rd.dbError(db, err)
					continue
				}
				rd.dbs[db] = d
				rd.note(dir, "Reading OpenCode SQLite database", zap.String("database", db))
			}
			if err := d.poll(ctx); err != nil && ctx.Err() == nil {
				rd.dbError(db, err)
			}
			continue
		}
		if fi, err := os.Stat(filepath.Join(storage, "session")); err != nil || !fi.IsDir() {
			continue
		}
		t, ok := rd.trees[storage]
		if !ok {
			t = newTreeReader(rd, storage, first && rd.startAtEnd)
			rd.trees[storage] = t
			rd.note(dir, "Reading OpenCode JSON storage", zap.String("storage", storage))
		}
		t.poll(ctx)
	}
}

// note logs a fact about a data directory once.
func (rd *opencodeReader) note(dir, msg string, fields ...zap.Field) {
	if rd.noted[dir+"\x00"+msg] {
		return
	}
	rd.noted[dir+"\x00"+msg] = true
	rd.r.set.Logger.Info(msg, append([]zap.Field{zap.String("agent", rd.agent.key), zap.String("path", dir)}, fields...)...)
}

// badObject counts and reports an object that could not be mapped, once per
// version of it (signature), and returns its Unparsed event for emit_unparsed.
func (rd *opencodeReader) badObject(ctx context.Context, path, signature string, ev agentevent.Event) []agentevent.Event {
	if seen, ok := rd.reported[path]; ok && seen == signature {
		return nil
	}
	rd.reported[path] = signature
	rd.bad(ctx, path, 0, ev.Unparsed)
	if !rd.r.cfg.EmitUnparsed {
		return nil
	}
	return []agentevent.Event{ev}
}

// send applies the content settings and emits events of one data source.
// Unparsed events among them have been counted and reported already
// (badObject); they are emitted only with emit_unparsed.
func (rd *opencodeReader) send(ctx context.Context, path string, events []agentevent.Event) {
	out := events[:0]
	for _, ev := range events {
		if ev.Unparsed != "" && !rd.r.cfg.EmitUnparsed {
			continue
		}
		if !rd.r.cfg.IncludeContent {
			agentevent.StripContent(&ev)
		}
		if !rd.r.cfg.IncludeRaw {
			ev.Raw = nil
		}
		out = append(out, ev)
	}
	if len(out) > 0 {
		rd.consume(ctx, path, out)
	}
}
