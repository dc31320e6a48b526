// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector // import "github.com/agentotel/agentotel/connector/agentspanconnector"

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/storagecodec"
)

// Storage layout (with the `storage` setting). Everything is written as it
// changes, in one batch per ConsumeLogs call or tick, after the spans it
// produced were handed on (see connector.go for the ordering rule):
//
//	agent_span/index/<n>        the active sessions (open units, events
//	                            waiting for a prompt, unresolved links)
//	                            whose key hashes to shard n (of
//	                            indexShards), read back at start; a batch
//	                            rewrites only the shards whose sessions
//	                            became active or inactive
//	agent_span/anchors          the anchors (bounded list)
//	agent_span/s/<agent>/<id>   one session: its threads (with the markers
//	                            of their emitted units), the metadata of
//	                            its open units, its subagent links and
//	                            tool calls
//	agent_span/e/<unit>/<i>     event i of an open unit, written once;
//	                            deleted when the unit is emitted
const (
	keyPrefix  = "agent_span/"
	keyIndex   = keyPrefix + "index"
	keyAnchors = keyPrefix + "anchors"
)

// indexShards is how many records the index of active sessions is split
// into. A history read for the first time has thousands of active
// sessions at once; one record listing them all, rewritten (and sorted)
// whenever a session became active or inactive, would cost a backfill more
// than the rest of the connector's state.
const indexShards = storagecodec.IndexShards

func indexShardKey(n int) string { return keyIndex + "/" + strconv.Itoa(n) }

// shardOf is the index shard of a session.
func shardOf(sk sessKey) int { return storagecodec.Shard(string(sk.Source), sk.Session) }

// stateVersion is the version of the saved records' shape, bumped on any
// incompatible change of it: a record of another version reads as
// unreadable (its turns are lost, the rest goes on). storagecodec's format
// version covers how values are encoded, shared with the receiver; this
// one covers what the connector's records hold.
const stateVersion = 1

func sessionStorageKey(sk sessKey) string {
	return keyPrefix + "s/" + string(sk.Source) + "/" + sk.Session
}

func eventStorageKey(k unitKey, i int) string {
	h := sha256.New()
	for _, s := range []string{string(k.Thread.Source), k.Thread.Session, k.Thread.Agent, k.Prompt} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return keyPrefix + "e/" + hex.EncodeToString(h.Sum(nil)[:12]) + "/" + strconv.Itoa(i)
}

// sessionRecord is the saved form of one session.
type sessionRecord struct {
	Version  int             `json:"version"`
	CaughtUp map[string]bool `json:"caught_up,omitempty"`
	Threads  []savedThread   `json:"threads,omitempty"`
	Units    []savedUnit     `json:"units,omitempty"`
	Links    []savedLink     `json:"links,omitempty"`
	Calls    []savedCall     `json:"calls,omitempty"`
}

type savedUnit struct {
	Key         unitKey `json:"key"`
	PrevPrompt  string  `json:"prev_prompt,omitempty"`
	Host        string  `json:"host,omitempty"`
	LastArrival int64   `json:"last_arrival"`
	Events      int     `json:"events"`
}

type savedThread struct {
	Key           threadKey    `json:"key"`
	LastPrompt    string       `json:"last_prompt,omitempty"`
	LastPromptSeq int64        `json:"last_prompt_seq,omitempty"`
	Preamble      []byte       `json:"preamble,omitempty"`
	PreambleHost  string       `json:"preamble_host,omitempty"`
	LastArrival   int64        `json:"last_arrival"`
	Prompts       []promptRef  `json:"prompts,omitempty"`
	Closed        []closedUnit `json:"closed,omitempty"`
	ClosedSeq     int64        `json:"closed_seq,omitempty"`
}

type savedLink struct {
	Thread threadKey `json:"thread"`
	Link   link      `json:"link"`
}

type savedCall struct {
	Call callKey `json:"call"`
	Ref  callRef `json:"ref"`
}

// MarshalJSON writes a call as [call id, agent, prompt, subagent type]
// (trailing empty ones left out): the agent and session are the record's,
// and a session keeps hundreds of calls (those of its open turns and of
// the turns among its markers), rewritten whenever the session changes.
func (c savedCall) MarshalJSON() ([]byte, error) {
	f := []string{c.Call.CallID, c.Ref.Unit.Thread.Agent, c.Ref.Unit.Prompt, c.Ref.SubagentType}
	for len(f) > 1 && f[len(f)-1] == "" {
		f = f[:len(f)-1]
	}
	return json.Marshal(f)
}

// UnmarshalJSON reads a call written by MarshalJSON; apply fills in its
// agent and session.
func (c *savedCall) UnmarshalJSON(b []byte) error {
	var f []string
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	if len(f) == 0 {
		return fmt.Errorf("saved call: empty")
	}
	f = append(f, "", "", "")
	*c = savedCall{
		Call: callKey{CallID: f[0]},
		Ref:  callRef{Unit: unitKey{Thread: threadKey{Agent: f[1]}, Prompt: f[2]}, SubagentType: f[3]},
	}
	return nil
}

// MarshalJSON writes a marker with its ids as bytes (base64): the trace as
// "t", the span ids to skip one after another as "s". As JSON arrays of
// numbers they would be a fifth of the bytes of every session record,
// which is rewritten whenever the session changes; base64 takes a third of
// that.
func (m closedUnit) MarshalJSON() ([]byte, error) {
	skip := make([]byte, 0, len(m.Skip)*len(pcommon.SpanID{}))
	for _, id := range m.Skip {
		skip = append(skip, id[:]...)
	}
	return json.Marshal(closedUnitJSON{Prompt: m.Prompt, T: m.Trace[:], S: skip})
}

// UnmarshalJSON reads a marker written by MarshalJSON.
func (m *closedUnit) UnmarshalJSON(b []byte) error {
	var w closedUnitJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	var span pcommon.SpanID
	if len(w.T) != len(m.Trace) || len(w.S)%len(span) != 0 {
		return fmt.Errorf("closed unit: a trace id of %d bytes, span ids of %d", len(w.T), len(w.S))
	}
	*m = closedUnit{Prompt: w.Prompt}
	copy(m.Trace[:], w.T)
	for i := 0; i < len(w.S); i += len(span) {
		copy(span[:], w.S[i:])
		m.Skip = append(m.Skip, span)
	}
	return nil
}

// closedUnitJSON is a closedUnit as stored.
type closedUnitJSON struct {
	Prompt string `json:"prompt,omitempty"`
	T      []byte `json:"t"`
	S      []byte `json:"s,omitempty"`
}

type savedIndex struct {
	Version  int       `json:"version"`
	Sessions []sessKey `json:"sessions"`
}

// savedRange is the n saved events of a unit.
type savedRange struct {
	unit unitKey
	n    int
}

// pruneCaughtUp drops, in the sessions a pass changed, the caught-up flags
// of the files that are no open unit's last file. Only those are looked up
// (groupCaughtUp), and the next event of any other file brings its flag
// again (noteRead), so the decisions are the same with or without them;
// kept, a session of many files (Claude Code writes a file per subagent)
// would carry the path of every file it ever had, in memory and in its
// record, rewritten with each of its batches. Called at the end of a kept
// pass (by flush, before the records are built, with storage), so that a
// restart from the records starts from the state an uninterrupted run has.
func (a *assembler) pruneCaughtUp() {
	for sk := range a.dirty {
		if idx := a.sessions[sk]; idx != nil {
			pruneCaughtUp(a.units, idx)
		}
	}
}

func pruneCaughtUp(units map[unitKey]*unit, idx *sessIndex) {
	for f := range idx.caughtUp {
		open := false
		for k := range idx.units {
			if units[k].lastFile == f {
				open = true
				break
			}
		}
		if !open {
			delete(idx.caughtUp, f)
		}
	}
	if len(idx.caughtUp) == 0 {
		idx.caughtUp = nil
	}
}

// record builds the saved form of a session from memory.
func (a *assembler) record(sk sessKey) (*sessionRecord, error) {
	idx := a.sessions[sk]
	rec := &sessionRecord{Version: stateVersion, CaughtUp: idx.caughtUp}
	for th := range idx.threads {
		t := a.threads[th]
		var pre []byte
		if len(t.preamble) > 0 {
			var err error
			if pre, err = encodeEvents(t.preamble); err != nil {
				return nil, err
			}
		}
		rec.Threads = append(rec.Threads, savedThread{
			Key: th, LastPrompt: t.lastPrompt, LastPromptSeq: t.lastPromptSeq,
			Preamble: pre, PreambleHost: t.preambleHost, LastArrival: t.lastArrival.UnixNano(),
			Prompts: t.prompts, Closed: t.closed, ClosedSeq: t.closedSeq,
		})
	}
	for k := range idx.units {
		u := a.units[k]
		rec.Units = append(rec.Units, savedUnit{Key: k, PrevPrompt: u.prevPrompt, Host: u.host, LastArrival: u.lastArrival.UnixNano(), Events: len(u.events)})
	}
	for th := range idx.links {
		rec.Links = append(rec.Links, savedLink{Thread: th, Link: a.links[th]})
	}
	for c := range idx.calls {
		rec.Calls = append(rec.Calls, savedCall{Call: c, Ref: a.calls[c]})
	}
	// Fixed order, so equal states serialize to equal bytes.
	slices.SortFunc(rec.Threads, func(x, y savedThread) int { return compareThreads(x.Key, y.Key) })
	slices.SortFunc(rec.Units, func(x, y savedUnit) int { return compareUnits(x.Key, y.Key) })
	slices.SortFunc(rec.Links, func(x, y savedLink) int { return compareThreads(x.Thread, y.Thread) })
	slices.SortFunc(rec.Calls, func(x, y savedCall) int { return cmp.Compare(x.Call.CallID, y.Call.CallID) })
	return rec, nil
}

// apply loads a saved session into memory (its index entry exists).
func (a *assembler) apply(sk sessKey, rec *sessionRecord) error {
	a.sessions[sk].caughtUp = rec.CaughtUp
	for _, st := range rec.Threads {
		pre, err := decodeEvents(st.Preamble)
		if err != nil {
			return err
		}
		a.threads[st.Key] = &thread{
			lastPrompt: st.LastPrompt, lastPromptSeq: st.LastPromptSeq,
			preamble: pre, preambleHost: st.PreambleHost, lastArrival: time.Unix(0, st.LastArrival),
			prompts: st.Prompts, closed: st.Closed, closedSeq: st.ClosedSeq,
		}
		if len(pre) > 0 {
			a.notePreamble(st.Key)
		}
		a.sessions[st.Key.Sess()].threads[st.Key] = struct{}{}
	}
	for _, su := range rec.Units {
		evs, err := a.load.loadEvents(su.Key, su.Events)
		if err != nil {
			return err
		}
		u := &unit{key: su.Key, prevPrompt: su.PrevPrompt, host: su.Host, lastArrival: time.Unix(0, su.LastArrival), seen: map[string]struct{}{}}
		for i := range evs {
			if u.see(&evs[i]) {
				u.note(&evs[i])
			}
		}
		u.events = evs // exactly as saved, even if one repeats an id (not copied again)
		u.saved = len(evs)
		a.units[su.Key] = u
		a.sessions[su.Key.Thread.Sess()].units[su.Key] = struct{}{}
		a.fresh[su.Key] = true
	}
	a.linksToTry[sk] = true
	for _, sl := range rec.Links {
		old, had := a.links[sl.Thread]
		a.indexKid(sl.Thread, old, had, sl.Link, true)
		a.links[sl.Thread] = sl.Link
		a.indexLink(sl.Thread, sl.Link)
		a.sessions[sl.Thread.Sess()].links[sl.Thread] = struct{}{}
	}
	for _, sc := range rec.Calls {
		// A call and its unit are of the record's session (see MarshalJSON).
		sc.Call.Source, sc.Call.Session = sk.Source, sk.Session
		sc.Ref.Unit.Thread.Source, sc.Ref.Unit.Thread.Session = sk.Source, sk.Session
		a.calls[sc.Call] = sc.Ref
		a.sessions[sc.Call.Sess()].calls[sc.Call] = struct{}{}
	}
	for _, sl := range rec.Links {
		if sl.Link.Resolved && sl.Link.Parent.Thread.Sess() != sk {
			// A subagent linked by an anchor into another session: that
			// session's open units group with this one's.
			a.ensure(sl.Link.Parent.Thread.Sess())
		}
	}
	return nil
}

// flush returns the storage operations that save every change since the
// last flush. The caller writes them, then calls committed (the changes
// count as saved) or, when the write failed, unflush and rollback.
func (a *assembler) flush() ([]*storage.Operation, error) {
	var ops []*storage.Operation
	for _, g := range a.gone {
		for i := 0; i < g.n; i++ {
			ops = append(ops, storage.DeleteOperation(eventStorageKey(g.unit, i)))
		}
	}
	shardsChanged := a.shardsToWrite
	a.shardsToWrite = map[int]bool{}
	a.pruneCaughtUp()
	for _, sk := range a.dirtySessions() {
		idx := a.sessions[sk]
		if idx == nil || idx.empty() {
			ops = append(ops, storage.DeleteOperation(sessionStorageKey(sk)))
		} else {
			for k := range idx.units {
				u := a.units[k]
				for i := u.saved; i < len(u.events); i++ {
					b, err := encodeEvents(u.events[i : i+1])
					if err != nil {
						return nil, err
					}
					ops = append(ops, storage.SetOperation(eventStorageKey(k, i), b))
				}
			}
			rec, err := a.record(sk)
			if err != nil {
				return nil, err
			}
			b, err := json.Marshal(rec)
			if err != nil {
				return nil, err
			}
			ops = append(ops, storage.SetOperation(sessionStorageKey(sk), b))
		}
		if act := a.active(sk); act != a.isIndexed(sk) {
			n := shardOf(sk)
			shardsChanged[n] = true
			a.flushedIndex = append(a.flushedIndex, indexChange{sk, act})
			if act {
				a.indexed[n][ownKey(sk)] = true
			} else {
				delete(a.indexed[n], sk)
			}
		}
	}
	for n := range shardsChanged {
		ix := savedIndex{Version: stateVersion}
		for sk := range a.indexed[n] {
			ix.Sessions = append(ix.Sessions, sk)
		}
		slices.SortFunc(ix.Sessions, compareSessions)
		b, err := json.Marshal(ix)
		if err != nil {
			return nil, err
		}
		ops = append(ops, storage.SetOperation(indexShardKey(n), b))
	}
	a.flushedShards = shardsChanged
	if a.anchorsDirty {
		b, err := json.Marshal(a.anchors)
		if err != nil {
			return nil, err
		}
		ops = append(ops, storage.SetOperation(keyAnchors, b))
	}
	return ops, nil
}

// indexChange is a session whose entry in the saved index flush changed.
type indexChange struct {
	sk     sessKey
	active bool
}

// unflush undoes what flush did to the index in memory, when writing its
// operations failed: the sessions' entries and the parts to write are as
// before, and rollback reads the changed sessions back as saved.
func (a *assembler) unflush() {
	for _, ch := range a.flushedIndex {
		n := shardOf(ch.sk)
		if ch.active {
			delete(a.indexed[n], ch.sk)
		} else {
			a.indexed[n][ch.sk] = true
		}
	}
	for n := range a.flushedShards {
		a.shardsToWrite[n] = true
	}
	a.flushedIndex, a.flushedShards = nil, nil
}

// committed forgets the changes, as saved.
func (a *assembler) committed() {
	for sk := range a.dirty {
		if idx := a.sessions[sk]; idx != nil {
			for k := range idx.units {
				a.units[k].saved = len(a.units[k].events)
			}
		}
	}
	clear(a.dirty)
	a.gone = nil
	a.anchorsDirty = false
	a.flushedIndex, a.flushedShards = nil, nil
}

// storageLoader reads saved sessions from a storage client.
type storageLoader struct {
	ctx    context.Context
	client storage.Client
	// unreadable is told of a saved record this version cannot read; the
	// record is then treated as absent.
	unreadable func(key string, err error)
}

func (l storageLoader) loadSession(sk sessKey) (*sessionRecord, error) {
	b, err := l.client.Get(l.ctx, sessionStorageKey(sk))
	if err != nil || b == nil {
		return nil, err
	}
	var rec sessionRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		l.unreadable(sessionStorageKey(sk), err)
		return nil, nil
	}
	if rec.Version != stateVersion {
		l.unreadable(sessionStorageKey(sk), fmt.Errorf("version %d, this connector reads version %d", rec.Version, stateVersion))
		return nil, nil
	}
	return &rec, nil
}

func (l storageLoader) loadEvents(k unitKey, n int) ([]agentevent.Event, error) {
	ops := make([]*storage.Operation, n)
	for i := range ops {
		ops[i] = storage.GetOperation(eventStorageKey(k, i))
	}
	if n > 0 {
		if err := l.client.Batch(l.ctx, ops...); err != nil {
			return nil, err
		}
	}
	evs := make([]agentevent.Event, 0, n)
	for _, op := range ops {
		if op.Value == nil {
			return nil, fmt.Errorf("saved state: event %s missing", op.Key)
		}
		ev, err := decodeEvents(op.Value)
		if err != nil {
			return nil, err
		}
		evs = append(evs, ev...)
	}
	return evs, nil
}

// loadAll reads the active sessions and the anchors back (at start). Past
// max sessions in memory, each session read is put to sleep at once (see
// settle), so that start-up holds about max sessions however many are
// active; now is the wall clock at start.
func (a *assembler) loadAll(ctx context.Context, client storage.Client, unreadable func(key string, err error), max int, now time.Time) error {
	a.load = storageLoader{ctx: ctx, client: client, unreadable: unreadable}
	ops := make([]*storage.Operation, 0, indexShards)
	for n := range indexShards {
		ops = append(ops, storage.GetOperation(indexShardKey(n)))
	}
	if err := client.Batch(ctx, ops...); err != nil {
		return err
	}
	for _, op := range ops {
		if op.Value == nil {
			continue
		}
		var ix savedIndex
		if err := json.Unmarshal(op.Value, &ix); err != nil {
			unreadable(op.Key, err)
			continue
		}
		if ix.Version != stateVersion {
			unreadable(op.Key, fmt.Errorf("version %d, this connector reads version %d", ix.Version, stateVersion))
			continue
		}
		for _, sk := range ix.Sessions {
			a.ensure(sk)
			n := shardOf(sk)
			a.indexed[n][sk] = true
			if len(a.sessions) > max && a.loadErr == nil {
				a.settle(sk, now)
			}
		}
	}
	b, err := client.Get(ctx, keyAnchors)
	if err != nil {
		return err
	}
	if b != nil {
		if err := json.Unmarshal(b, &a.anchors); err != nil {
			unreadable(keyAnchors, err)
			a.anchors = nil
		}
		a.indexAnchors()
	}
	return a.takeLoadErr()
}

func (a *assembler) takeLoadErr() error {
	err := a.loadErr
	a.loadErr = nil
	return err
}

// rollback drops every change since the last flush from memory and reads
// the changed sessions back as saved: the spans they produced were refused
// downstream, so the input that produced them will come again.
func (a *assembler) rollback(ctx context.Context, client storage.Client) error {
	for _, sk := range a.dirtySessions() {
		a.drop(sk)
		a.ensure(sk)
	}
	clear(a.dirty)
	a.checkAll = true // groups across sessions went back in time
	a.gone = nil
	if a.anchorsDirty {
		a.anchors = nil
		b, err := client.Get(ctx, keyAnchors)
		if err != nil {
			return err
		}
		if b != nil {
			if err := json.Unmarshal(b, &a.anchors); err != nil {
				return err
			}
		}
		a.indexAnchors()
		a.anchorsDirty = false
	}
	return a.takeLoadErr()
}

// encodeEvents writes events, in order, as one protobuf plog.Logs.
func encodeEvents(evs []agentevent.Event) ([]byte, error) {
	logs := plog.NewLogs()
	lrs := logs.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for _, ev := range evs {
		agentevent.Encode(ev, lrs.AppendEmpty())
	}
	var m plog.ProtoMarshaler
	return m.MarshalLogs(logs)
}

func decodeEvents(b []byte) ([]agentevent.Event, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var u plog.ProtoUnmarshaler
	logs, err := u.UnmarshalLogs(b)
	if err != nil {
		return nil, fmt.Errorf("saved state: decode events: %w", err)
	}
	evs, skipped := agentevent.DecodeLogs(logs)
	if skipped > 0 {
		return nil, fmt.Errorf("saved state: %d records are not agent events", skipped)
	}
	return evs, nil
}

func newIndexShards() []map[sessKey]bool {
	out := make([]map[sessKey]bool, indexShards)
	for i := range out {
		out[i] = map[sessKey]bool{}
	}
	return out
}

// isIndexed tells whether the saved index lists the session as active.
func (a *assembler) isIndexed(sk sessKey) bool { return a.indexed[shardOf(sk)][sk] }
