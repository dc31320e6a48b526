// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package opencode

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	// Pure-Go SQLite (the collector is built with CGO disabled).
	_ "modernc.org/sqlite"

	"github.com/agentotel/agentotel/internal/agentevent"
	oc "github.com/agentotel/agentotel/internal/vendors/opencode"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/checkpoint"
	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/source"
)

// dbReader reads OpenCode's SQLite database (≥1.2, `opencode.db` in WAL
// mode, or the agent's Store.Database). The schema is OpenCode's drizzle
// schema (see internal/vendors/opencode/README.md): tables project, session,
// message (id, session_id, time_created, time_updated, data) and part (id,
// message_id, session_id, time_created, time_updated, data), where data is
// the same JSON object as in the ≤1.1 storage tree without its id columns.
// The other tables are not read: `event` is the log of the session, message
// and part updates those tables are projected from (it would count every
// message again), the rest (todo, account, ...) hold no session records.
//
// The database is opened read-only (mode=ro, query_only): as a WAL reader it
// never blocks OpenCode's writes and never checkpoints. Each poll asks for
// the sessions with a message or part updated at or after the watermark
// (the largest time_updated seen, kept in the storage extension) and reads
// those sessions as the tree reader does: messages after the session's own
// watermark, in id order, each emitted once when final.
type dbReader struct {
	rd   *Source
	path string
	db   *sql.DB
	// skipExisting (start_at: end, first poll, no stored state) starts
	// every existing session after its last message written before the
	// receiver started.
	skipExisting bool

	loaded bool
	state  dbState
	// pending are sessions with a message not final yet: read every poll.
	pending  map[string]bool
	sessions map[string]*dbSession
	// marks are the sessions' watermarks (life cycle: internal/checkpoint).
	marks *checkpoint.Table[*storedMark]
	// spawnedBy maps a child session to the task call that runs it (see
	// treeReader.spawnedBy).
	spawnedBy map[string]string
	// held are the sessions whose last message is unfinished, with what
	// the reader saw of it and since when (see abandoned).
	held map[string]heldMessage
	// batch gathers the sessions read in a poll (source.Batch).
	batch *source.Batch
}

// dbState is the database-wide watermark, kept in the storage.
type dbState struct {
	// Since is the time_updated (epoch ms) from which rows are looked at.
	Since int64 `json:"since_ms"`
}

type dbSession struct {
	info oc.Session
	mark sessionMark
	// loaded says mark was read from the storage.
	loaded bool
}

// DBLookback is how far behind the newest row the database watermark stays.
const DBLookback = time.Minute

// AbandonAfter is how long the last message of a session may stay
// unfinished and unchanged before it is taken as it is: OpenCode stopped in
// the middle of a step (killed, crashed, or the database was copied while
// it wrote) and will not finish it. As long as the JSONL readers hold a
// record of copied history.
const AbandonAfter = 10 * time.Minute

// heldMessage is the unfinished last message of a session.
type heldMessage struct {
	id string
	// updated is the newest time_updated of the message and its parts;
	// row, the message row's own (the database watermark stays at or
	// below it, so that the session is read again after a restart).
	updated, row int64
	// since is when the reader first saw the message in this state.
	since time.Time
}

// OpenDB opens an OpenCode database read-only, as the source reads it.
func OpenDB(path string) (*sql.DB, error) {
	u := url.URL{Scheme: "file", Path: path}
	// mode=ro: never create or write; query_only: refuse writes even if
	// asked; busy_timeout: wait out OpenCode's WAL recovery, never fail on it.
	dsn := u.String() + "?mode=ro&_pragma=query_only(1)&_pragma=busy_timeout(2000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

func newDBReader(rd *Source, path string, skipExisting bool) (*dbReader, error) {
	db, err := OpenDB(path)
	if err != nil {
		return nil, err
	}
	d := &dbReader{
		rd: rd, path: path, db: db, skipExisting: skipExisting,
		pending: map[string]bool{}, sessions: map[string]*dbSession{}, spawnedBy: map[string]string{},
		held: map[string]heldMessage{},
	}
	d.marks = checkpoint.NewTable(rd.Checkpoints, "db."+path, markCodec(), rd.Life, rd.StorageError)
	d.batch = source.NewBatch(rd.Emitter, rd.Checkpoints, rd.StorageError)
	d.marks.OnForget = func(key string, _ []string) {
		id := strings.TrimPrefix(key, checkpoint.DBSessionKey(path, ""))
		delete(d.sessions, id)
		delete(d.spawnedBy, id)
		delete(d.pending, id)
		delete(d.held, id)
	}
	return d, nil
}

func (d *dbReader) close() error { return d.db.Close() }

func (d *dbReader) stateKey() string          { return checkpoint.DBKey(d.path) }
func (d *dbReader) markKey(ses string) string { return checkpoint.DBSessionKey(d.path, ses) }

func (d *dbReader) poll(ctx context.Context, sweep bool) error {
	if sweep {
		d.marks.Sweep(ctx, func(p string) bool { return d.exists(ctx, p) })
	}
	if !d.loaded {
		if err := d.loadState(ctx); err != nil {
			return err
		}
	}
	var maxUpdated int64
	if err := d.db.QueryRowContext(ctx,
		`SELECT MAX(t) FROM (SELECT MAX(time_updated) AS t FROM message UNION ALL SELECT MAX(time_updated) FROM part)`,
	).Scan(nullInt{&maxUpdated}); err != nil {
		return fmt.Errorf("query %s: %w", d.path, err)
	}
	rows, err := d.db.QueryContext(ctx,
		`SELECT session_id FROM message WHERE time_updated >= ?1
		 UNION SELECT session_id FROM part WHERE time_updated >= ?1`, d.state.Since)
	if err != nil {
		return fmt.Errorf("query %s: %w", d.path, err)
	}
	candidates := map[string]bool{}
	for rows.Next() {
		var id string
		if err = rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		candidates[id] = true
	}
	rows.Close()
	if rowsErr := rows.Err(); rowsErr != nil {
		return rowsErr
	}
	for id := range d.pending {
		candidates[id] = true
	}
	order, err := d.loadSessions(ctx, candidates)
	if err != nil {
		return err
	}
	defer d.batch.Flush(ctx) // what was read before an error
	for _, s := range order {
		if ctx.Err() != nil {
			return nil
		}
		if err := d.pollSession(ctx, s); err != nil {
			return err
		}
	}
	// The database watermark moves only past sessions whose watermarks
	// were committed.
	if !d.batch.Flush(ctx) {
		return source.ErrStopped
	}
	// The watermark trails the newest row by DBLookback: time_updated is
	// OpenCode's clock when it wrote the row, and a transaction may commit
	// after rows with later times are visible. Sessions looked at again
	// cost a query each; their own watermarks drop what was emitted. It
	// stays at the oldest held message, which a restart must find again.
	since := maxUpdated - DBLookback.Milliseconds()
	for _, h := range d.held {
		since = min(since, h.row)
	}
	if since > d.state.Since {
		d.state.Since = since
		d.saveState(context.WithoutCancel(ctx))
	}
	return nil
}

// nullInt scans a nullable integer (MAX over no rows) as 0.
type nullInt struct{ v *int64 }

func (n nullInt) Scan(src any) error {
	var ni sql.NullInt64
	if err := ni.Scan(src); err != nil {
		return err
	}
	*n.v = ni.Int64
	return nil
}

func (d *dbReader) loadState(ctx context.Context) error {
	d.loaded = true
	if d.rd.Checkpoints.Persistent() {
		b, err := d.rd.Checkpoints.Get(ctx, d.stateKey())
		if err != nil {
			d.rd.StorageError(fmt.Errorf("read watermark of %s: %w", d.path, err))
		} else if b != nil && json.Unmarshal(b, &d.state) == nil {
			return nil
		}
	}
	if !d.skipExisting {
		return nil
	}
	// start_at: end: every existing session starts after the last message
	// written before the receiver started.
	rows, err := d.db.QueryContext(ctx, `SELECT session_id, MAX(id) FROM message WHERE time_updated < ? GROUP BY session_id`,
		d.rd.StartedAt.UnixMilli())
	if err != nil {
		return fmt.Errorf("query %s: %w", d.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var ses, last string
		if err := rows.Scan(&ses, &last); err != nil {
			return err
		}
		s := &dbSession{info: oc.Session{ID: ses}, loaded: true, mark: sessionMark{Last: last}}
		d.sessions[ses] = s
		m := d.marks.Acquire(ctx, d.markKey(ses), d.probe(ses))
		d.saveMark(ctx, s, m)
		d.marks.Release(m)
	}
	return rows.Err()
}

func (d *dbReader) saveState(ctx context.Context) {
	if !d.rd.Checkpoints.Persistent() {
		return
	}
	b, err := json.Marshal(d.state)
	if err == nil {
		err = d.rd.Checkpoints.Set(ctx, d.stateKey(), b, false)
	}
	if err != nil {
		d.rd.StorageError(fmt.Errorf("save watermark of %s: %w", d.path, err))
	}
}

// saveMark commits a session's watermark.
func (d *dbReader) saveMark(ctx context.Context, s *dbSession, m *checkpoint.Session[*storedMark]) {
	m.State.mark, m.State.stored = s.mark, true
	d.marks.Commit(ctx, m)
}

// probe names a session's rows for the life cycle: the database and the
// session id.
func (d *dbReader) probe(ses string) string { return d.path + "#" + ses }

// exists says whether a session's row is still in the database (and, when
// the database cannot be asked, that it is).
func (d *dbReader) exists(ctx context.Context, probe string) bool {
	ses := probe[strings.LastIndexByte(probe, '#')+1:]
	var one int
	err := d.db.QueryRowContext(ctx, `SELECT 1 FROM session WHERE id = ?`, ses).Scan(&one)
	return !errors.Is(err, sql.ErrNoRows)
}

// loadSessions reads the session rows of the candidates and of their
// parents (for the root of each child), oldest first.
func (d *dbReader) loadSessions(ctx context.Context, ids map[string]bool) ([]*dbSession, error) {
	var order []*dbSession
	for id := range ids {
		s, err := d.session(ctx, id)
		if err != nil {
			return nil, err
		}
		if s == nil {
			continue
		}
		for p, depth := s.info.ParentID, 0; p != "" && depth < 16; depth++ {
			ps, err := d.session(ctx, p)
			if err != nil || ps == nil {
				break
			}
			p = ps.info.ParentID
		}
		order = append(order, s)
	}
	sortSessions(order)
	return order, nil
}

func sortSessions(s []*dbSession) {
	// Oldest first, as the tree reader does; ids break ties.
	slices.SortFunc(s, func(a, b *dbSession) int {
		return cmp.Or(cmp.Compare(a.info.Time.Created, b.info.Time.Created), strings.Compare(a.info.ID, b.info.ID))
	})
}

// session returns a session row, read once (its mutable columns — title,
// time_updated — do not matter to the mapping).
func (d *dbReader) session(ctx context.Context, id string) (*dbSession, error) {
	if s, ok := d.sessions[id]; ok && s.info.Time.Created != 0 {
		return s, nil
	}
	row, err := queryRow(ctx, d.db, `SELECT * FROM session WHERE id = ?`, id)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", d.path, err)
	}
	if row == nil {
		return nil, nil
	}
	s := d.sessions[id]
	if s == nil {
		s = &dbSession{}
		d.sessions[id] = s
	}
	s.info = oc.Session{
		ID: id, ParentID: row.str("parent_id"), ProjectID: row.str("project_id"),
		Directory: row.str("directory"), Title: row.str("title"), Version: row.str("version"),
	}
	s.info.Time.Created = row.int("time_created")
	s.info.Time.Updated = row.int("time_updated")
	return s, nil
}

func (d *dbReader) lookupSession(id string) (oc.Session, bool) {
	s, ok := d.sessions[id]
	if !ok || s.info.Time.Created == 0 {
		return oc.Session{}, false
	}
	return s.info, true
}

func (d *dbReader) lookupProject(id string) (oc.Project, bool) {
	row, err := queryRow(context.Background(), d.db, `SELECT * FROM project WHERE id = ?`, id)
	if err != nil || row == nil {
		return oc.Project{}, false
	}
	return oc.Project{ID: id, Worktree: row.str("worktree"), VCS: row.str("vcs")}, true
}

func (d *dbReader) pollSession(ctx context.Context, s *dbSession) error {
	m := d.marks.Acquire(ctx, d.markKey(s.info.ID), d.probe(s.info.ID))
	held := false // m is released by the batch
	defer func() {
		if !held {
			d.marks.Release(m)
		}
	}()
	s.loaded = true
	if m.State.stored {
		s.mark = m.State.mark
	}
	type msgRow struct {
		id      string
		data    []byte
		updated int64
	}
	rows, err := d.db.QueryContext(ctx, `SELECT id, data, time_updated FROM message WHERE session_id = ? AND id > ? ORDER BY id`, s.info.ID, s.mark.Last)
	if err != nil {
		return fmt.Errorf("query %s: %w", d.path, err)
	}
	var msgs []msgRow
	for rows.Next() {
		var m msgRow
		if err := rows.Scan(&m.id, &m.data, &m.updated); err != nil {
			rows.Close()
			return err
		}
		msgs = append(msgs, m)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}

	c := d.rd.context(s.info, d.lookupSession, d.lookupProject)
	c.LogFile = d.path
	if s.info.ParentID != "" {
		c.ParentToolCallID = d.spawnedBy[s.info.ID]
	}
	before := s.mark
	var events []agentevent.Event
	var read int64
	done := 0
	for i, mr := range msgs {
		read++
		later := i < len(msgs)-1
		m, err := oc.DecodeMessageRow(mr.id, s.info.ID, mr.data)
		if err != nil {
			// A committed row is whole: it is bad, not being written.
			events = append(events, d.rd.badObject(d.path+"#message/"+mr.id, "", unparsed(c, mr.id, mr.data, err))...)
			s.mark.Last = mr.id
			done++
			continue
		}
		parts, bad, n, newest, err := d.parts(ctx, c, mr.id)
		if err != nil {
			return err
		}
		read += n
		for child, call := range oc.SpawnedSessions(parts) {
			d.spawnedBy[strings.Clone(child)] = strings.Clone(call)
		}
		if !oc.Finished(m, parts, later) && !d.abandoned(s.info.ID, mr.id, max(mr.updated, newest), mr.updated) {
			break
		}
		for i := range bad {
			events = append(events, d.rd.badObject(bad[i].path, bad[i].sig, bad[i].ev)...)
		}
		mc := c
		mc.Sequence = s.mark.Seq + 1
		evs := oc.MapMessage(mc, m, parts)
		s.mark.Seq += int64(len(evs))
		s.mark.Last = mr.id
		events = append(events, evs...)
		done++
	}
	if done < len(msgs) {
		d.pending[s.info.ID] = true
	} else {
		delete(d.pending, s.info.ID)
		delete(d.held, s.info.ID)
	}
	d.rd.Emitter.Read(ctx, read)
	if s.mark == before {
		return nil
	}
	// The watermark moves once the next consumer accepted the events.
	mark, id := s.mark, s.info.ID
	s.mark = before
	held = true
	if !d.batch.Add(ctx, m.Key, d.path, events, done == len(msgs), func(accepted bool) *storage.Operation {
		if !accepted {
			d.pending[id] = true
			return nil
		}
		s.mark = mark
		m.State.mark, m.State.stored = mark, true
		return d.marks.CommitOp(m)
	}, func() { d.marks.Release(m) }) {
		return source.ErrStopped
	}
	return nil
}

// abandoned reports whether the unfinished last message id of session ses,
// whose rows were last written at updated (row: the message row's
// time_updated), has stayed so for AbandonAfter. The time counts on the
// reader's clock from when it first saw the message in this state: the rows
// carry OpenCode's clock, which need not be the collector's. A tool that
// runs longer than that without OpenCode writing a row is emitted open, and
// its end is not read.
func (d *dbReader) abandoned(ses, id string, updated, row int64) bool {
	now := d.rd.Now()
	h, ok := d.held[ses]
	if !ok || h.id != id || h.updated != updated {
		d.held[strings.Clone(ses)] = heldMessage{id: strings.Clone(id), updated: updated, row: row, since: now}
		return false
	}
	return now.Sub(h.since) >= AbandonAfter
}

// parts reads the parts of a message and the newest time_updated of them.
func (d *dbReader) parts(ctx context.Context, c oc.Context, messageID string) ([]oc.Part, []badPart, int64, int64, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT id, data, time_updated FROM part WHERE message_id = ? ORDER BY id`, messageID)
	if err != nil {
		return nil, nil, 0, 0, fmt.Errorf("query %s: %w", d.path, err)
	}
	defer rows.Close()
	var parts []oc.Part
	var bad []badPart
	var read, newest int64
	for rows.Next() {
		var id string
		var data []byte
		var updated int64
		if err := rows.Scan(&id, &data, &updated); err != nil {
			return nil, nil, 0, 0, err
		}
		read++
		newest = max(newest, updated)
		p, err := oc.DecodePartRow(id, messageID, c.Session.ID, data)
		if err != nil {
			bad = append(bad, badPart{path: d.path + "#part/" + id, ev: unparsed(c, id, data, err)})
			continue
		}
		parts = append(parts, p)
	}
	return parts, bad, read, newest, rows.Err()
}

// row is one result row by column name.
type row map[string]any

func (r row) str(k string) string {
	switch v := r[k].(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

func (r row) int(k string) int64 {
	switch v := r[k].(type) {
	case int64:
		return v
	case float64:
		return int64(v)
	}
	return 0
}

// queryRow returns the first row of a query by column name (the schema
// grows columns between OpenCode versions; only the ones read matter), nil
// when there is none.
func queryRow(ctx context.Context, db *sql.DB, query string, args ...any) (row, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	if !rows.Next() {
		return nil, rows.Err()
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return nil, err
	}
	r := row{}
	for i, c := range cols {
		r[strings.ToLower(c)] = vals[i]
	}
	return r, nil
}
