// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agenteventexporter

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// What a session file's commit record keeps with its size (fileMark.State).
//
// The receiver commits a read position only after the exporter accepted the
// records before it, so after a crash it delivers again at most what it had
// not seen accepted: from each of its read units (a file; an OpenCode
// session) a suffix of the events, the same events with the same Sequence.
// Within a unit Sequence increases in reading order (every receiver source
// guarantees it; the agent_span connector relies on it too), and so it does
// within any part of one: a thread (threadOf) — the records of one file,
// of one agent in it — is such a part, so the highest Sequence handled per
// thread says exactly which of its events the file already holds. Turns carry no such order (a turn held for its
// subagent goes out after the next one), so a canonical_task file keeps the
// ids of its turns.
type markState struct {
	// Threads is session.threads.
	Threads map[string]int64 `json:"threads,omitempty"`
	// Unplaced are the ids of the events without a Sequence the file
	// holds (session.unplaced): rare (a record a reader could not decode),
	// so kept one by one.
	Unplaced []string `json:"unplaced,omitempty"`
	// Turns are the ids (canonicalIDs, without the prefix) of the turns
	// the file holds, in the order written.
	Turns []string `json:"turns,omitempty"`
	// Pending are the events held for a time (session.pending), as OTLP
	// protobuf: accepted, so never delivered again, and not yet written.
	Pending []byte `json:"pending,omitempty"`
}

// threadOf is the thread an event belongs to within its session file: the
// file it was read from (hashed: paths are long), the subagent ("" for the
// main agent), and the root session when the event names one of its own.
// The file keeps apart two files of one session id (a history copied or
// moved next to itself, an OpenCode message), each numbered on its own.
func threadOf(ev *agentevent.Event) string {
	th := hashHex(ev.LogFile)[:16] + "/" + ev.AgentID
	if tree := agentevent.TreeSession(ev); tree != ev.SessionID {
		th += "/" + tree
	}
	return th
}

// handled reports whether the session's file already holds ev (or holds it
// back, in pending), and notes ev as handled otherwise. Events without a
// Sequence are known by their id.
func (s *session) handled(ev *agentevent.Event) bool {
	if ev.Sequence <= 0 {
		if ev.EventID == "" {
			return false
		}
		if slices.Contains(s.unplaced, ev.EventID) {
			return true
		}
		s.unplaced = append(s.unplaced, strings.Clone(ev.EventID))
		return false
	}
	th := threadOf(ev)
	if ev.Sequence <= s.threads[th] {
		return true
	}
	if s.threads == nil {
		s.threads = map[string]int64{}
	}
	s.threads[th] = ev.Sequence
	return false
}

// sessionState is what a logs session's commit record keeps.
func sessionState(s *session) ([]byte, error) {
	st := markState{Threads: s.threads, Unplaced: s.unplaced}
	if len(s.pending) > 0 {
		// One record per event, in order (EncodeLogs would group them by
		// resource); each record names its own source and version.
		ld := plog.NewLogs()
		lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
		for i := range s.pending {
			lr := lrs.AppendEmpty()
			agentevent.Encode(s.pending[i].ev, lr)
			if !s.pending[i].observed.IsZero() {
				lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(s.pending[i].observed))
			}
		}
		var m plog.ProtoMarshaler
		b, err := m.MarshalLogs(ld)
		if err != nil {
			return nil, fmt.Errorf("encode the events waiting for a time: %w", err)
		}
		st.Pending = b
	}
	return json.Marshal(st)
}

// restoreSession takes back what a session's commit record kept.
func restoreSession(s *session, state []byte) error {
	if len(state) == 0 {
		return nil
	}
	var st markState
	if err := json.Unmarshal(state, &st); err != nil {
		return err
	}
	s.threads, s.unplaced = st.Threads, st.Unplaced
	if len(st.Pending) == 0 {
		return nil
	}
	var u plog.ProtoUnmarshaler
	ld, err := u.UnmarshalLogs(st.Pending)
	if err != nil {
		return fmt.Errorf("decode the events waiting for a time: %w", err)
	}
	for r := 0; r < ld.ResourceLogs().Len(); r++ {
		sls := ld.ResourceLogs().At(r).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				ev, err := agentevent.Decode(lrs.At(k))
				if err != nil {
					return fmt.Errorf("decode the events waiting for a time: %w", err)
				}
				d := decoded{ev: ev}
				if ts := lrs.At(k).ObservedTimestamp(); ts != 0 {
					d.observed = ts.AsTime().UTC()
				}
				s.pending = append(s.pending, d)
			}
		}
	}
	return nil
}

// hasPending reports whether a commit record holds events waiting for a
// time, without decoding them.
func hasPending(state []byte) bool {
	var st struct {
		Pending json.RawMessage `json:"pending"`
	}
	return json.Unmarshal(state, &st) == nil && len(st.Pending) > 0 && string(st.Pending) != "null"
}

// turnSet is what a canonical_task file holds: the ids of its turns.
type turnSet struct {
	key   sessionKey
	ids   map[string]struct{}
	order []string
	dirty bool
}

func newTurnSet(key sessionKey, state []byte) (*turnSet, error) {
	ts := &turnSet{key: key, ids: map[string]struct{}{}}
	if len(state) == 0 {
		return ts, nil
	}
	var st markState
	if err := json.Unmarshal(state, &st); err != nil {
		return ts, err
	}
	for _, id := range st.Turns {
		ts.add(id)
	}
	return ts, nil
}

func (ts *turnSet) has(id string) bool {
	_, ok := ts.ids[id]
	return ok
}

func (ts *turnSet) add(id string) {
	if ts.has(id) {
		return
	}
	ts.ids[id] = struct{}{}
	ts.order = append(ts.order, id)
}

func (ts *turnSet) state() ([]byte, error) {
	return json.Marshal(markState{Turns: slices.Clip(ts.order)})
}
