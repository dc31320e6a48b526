// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector // import "github.com/agentotel/agentotel/connector/agentspanconnector"

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/storagecodec"
) // Storage layout (with the `storage` setting). Everything is written as it
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

type savedIndex struct {
	Version  int       `json:"version"`
	Sessions []sessKey `json:"sessions"`
}

// savedRange is the n saved events of a unit.
type savedRange struct {
	unit unitKey
	n    int
}

// indexChange is a session whose entry in the saved index flush changed.
type indexChange struct {
	sk     sessKey
	active bool
}

// loader reads saved sessions back (storage); nil keeps everything in memory.
type loader interface {
	// loadSession returns the saved record of a session, nil when none.
	loadSession(sk sessKey) (*sessionRecord, error)
	// loadEvents returns the n saved events of an open unit.
	loadEvents(k unitKey, n int) ([]agentevent.Event, error)
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

// persistence is what the assembler keeps of its storage: how to read a
// session back, what the last flush wrote of the index, and what is left
// to write or delete.
type persistence struct {
	// load reads a session's saved state; nil without storage.
	load loader
	// gone are the saved events of units closed since the last flush.
	gone []savedRange
	// loadErr is the first error reading a saved session back.
	loadErr error
	// indexed are the active sessions as last saved in the index, by
	// shard; shardsToWrite the shards to write at the next flush besides
	// those that change.
	indexed       []map[sessKey]bool
	shardsToWrite map[int]bool
	// flushedIndex and flushedShards are what the last flush changed of
	// the index, until its write is committed (unflush).
	flushedIndex  []indexChange
	flushedShards map[int]bool
}

// isIndexed tells whether the saved index lists the session as active.
func (ps *persistence) isIndexed(sk sessKey) bool { return ps.indexed[shardOf(sk)][sk] }

func (ps *persistence) takeLoadErr() error {
	err := ps.loadErr
	ps.loadErr = nil
	return err
}

// unflush undoes what flush did to the index in memory, when writing its
// operations failed: the sessions' entries and the parts to write are as
// before, and rollback reads the changed sessions back as saved.
func (ps *persistence) unflush() {
	for _, ch := range ps.flushedIndex {
		n := shardOf(ch.sk)
		if ch.active {
			delete(ps.indexed[n], ch.sk)
		} else {
			ps.indexed[n][ch.sk] = true
		}
	}
	for n := range ps.flushedShards {
		ps.shardsToWrite[n] = true
	}
	ps.flushedIndex, ps.flushedShards = nil, nil
}
