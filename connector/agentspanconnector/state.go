// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector // import "github.com/agentotel/agentotel/connector/agentspanconnector"

import (
	"cmp"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// stateKey is the storage key under which the connector keeps its state.
const stateKey = "agent_span.state"

// stateVersion is bumped on any incompatible change of savedState.
const stateVersion = 1

// savedState is what survives a restart: open turns with their events, the
// per-thread last prompt, subagent links, tool call index and the span ids
// already emitted. Events travel in the agentevent log-record encoding
// (protobuf), which is lossless.
type savedState struct {
	Version      int             `json:"version"`
	Units        []savedUnit     `json:"units,omitempty"`
	Threads      []savedThread   `json:"threads,omitempty"`
	Links        []savedLink     `json:"links,omitempty"`
	Calls        []savedCall     `json:"calls,omitempty"`
	EmittedUnits []savedEmitted  `json:"emitted_units,omitempty"`
	Emitted      []savedTraceIDs `json:"emitted,omitempty"`
	Anchors      []anchor        `json:"anchors,omitempty"`
}

type savedUnit struct {
	Key         unitKey `json:"key"`
	PrevPrompt  string  `json:"prev_prompt,omitempty"`
	Host        string  `json:"host,omitempty"`
	LastArrival int64   `json:"last_arrival"`
	Events      []byte  `json:"events"`
}

type savedThread struct {
	Key           threadKey   `json:"key"`
	LastPrompt    string      `json:"last_prompt,omitempty"`
	LastPromptSeq int64       `json:"last_prompt_seq,omitempty"`
	Preamble      []byte      `json:"preamble,omitempty"`
	PreambleHost  string      `json:"preamble_host,omitempty"`
	LastArrival   int64       `json:"last_arrival"`
	Prompts       []promptRef `json:"prompts,omitempty"`
}

type savedLink struct {
	Thread threadKey `json:"thread"`
	Link   link      `json:"link"`
}

type savedCall struct {
	Call callKey `json:"call"`
	Ref  callRef `json:"ref"`
}

type savedEmitted struct {
	Unit    unitKey `json:"unit"`
	TraceID string  `json:"trace_id"`
}

type savedTraceIDs struct {
	TraceID   string   `json:"trace_id"`
	Spans     []string `json:"spans"`
	LastTouch int64    `json:"last_touch"`
}

// marshal serializes the assembler's state.
func (a *assembler) marshal() ([]byte, error) {
	s := savedState{Version: stateVersion}
	for _, k := range a.sortedUnits() {
		u := a.units[k]
		evs, err := encodeEvents(u.events)
		if err != nil {
			return nil, err
		}
		s.Units = append(s.Units, savedUnit{Key: k, PrevPrompt: u.prevPrompt, Host: u.host, LastArrival: u.lastArrival.UnixNano(), Events: evs})
	}
	for k, t := range a.threads {
		var pre []byte
		if len(t.preamble) > 0 {
			var err error
			if pre, err = encodeEvents(t.preamble); err != nil {
				return nil, err
			}
		}
		s.Threads = append(s.Threads, savedThread{
			Key: k, LastPrompt: t.lastPrompt, LastPromptSeq: t.lastPromptSeq,
			Preamble: pre, PreambleHost: t.preambleHost, LastArrival: t.lastArrival.UnixNano(),
			Prompts: t.prompts,
		})
	}
	for th, l := range a.links {
		s.Links = append(s.Links, savedLink{Thread: th, Link: l})
	}
	s.Anchors = a.anchors
	for c, ref := range a.calls {
		s.Calls = append(s.Calls, savedCall{Call: c, Ref: ref})
	}
	for u, id := range a.emittedUnits {
		s.EmittedUnits = append(s.EmittedUnits, savedEmitted{Unit: u, TraceID: hex.EncodeToString(id[:])})
	}
	for id, et := range a.emitted {
		st := savedTraceIDs{TraceID: hex.EncodeToString(id[:]), LastTouch: et.lastTouch.UnixNano()}
		for sp := range et.spans {
			st.Spans = append(st.Spans, hex.EncodeToString(sp[:]))
		}
		s.Emitted = append(s.Emitted, st)
	}
	// Fixed order, so equal states serialize to equal bytes.
	slices.SortFunc(s.Threads, func(x, y savedThread) int { return compareThreads(x.Key, y.Key) })
	slices.SortFunc(s.Links, func(x, y savedLink) int { return compareThreads(x.Thread, y.Thread) })
	slices.SortFunc(s.Calls, func(x, y savedCall) int {
		return cmp.Or(cmp.Compare(x.Call.Source, y.Call.Source), cmp.Compare(x.Call.Session, y.Call.Session), cmp.Compare(x.Call.CallID, y.Call.CallID))
	})
	slices.SortFunc(s.EmittedUnits, func(x, y savedEmitted) int { return compareUnits(x.Unit, y.Unit) })
	slices.SortFunc(s.Emitted, func(x, y savedTraceIDs) int { return cmp.Compare(x.TraceID, y.TraceID) })
	for i := range s.Emitted {
		slices.Sort(s.Emitted[i].Spans)
	}
	return json.Marshal(s)
}

// restore loads a state written by marshal into an empty assembler.
func (a *assembler) restore(b []byte) error {
	var s savedState
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("decode saved state: %w", err)
	}
	if s.Version != stateVersion {
		return fmt.Errorf("saved state has version %d, this connector reads version %d", s.Version, stateVersion)
	}
	for _, su := range s.Units {
		evs, err := decodeEvents(su.Events)
		if err != nil {
			return err
		}
		u := &unit{key: su.Key, prevPrompt: su.PrevPrompt, host: su.Host, lastArrival: time.Unix(0, su.LastArrival), seen: map[string]struct{}{}}
		for _, ev := range evs {
			u.addEvent(ev)
		}
		a.units[su.Key] = u
	}
	for _, st := range s.Threads {
		pre, err := decodeEvents(st.Preamble)
		if err != nil {
			return err
		}
		a.threads[st.Key] = &thread{
			lastPrompt: st.LastPrompt, lastPromptSeq: st.LastPromptSeq,
			preamble: pre, preambleHost: st.PreambleHost, lastArrival: time.Unix(0, st.LastArrival),
			prompts: st.Prompts,
		}
	}
	a.anchors = s.Anchors
	for _, sl := range s.Links {
		a.links[sl.Thread] = sl.Link
	}
	for _, sc := range s.Calls {
		a.calls[sc.Call] = sc.Ref
	}
	for _, se := range s.EmittedUnits {
		id, err := parseTraceID(se.TraceID)
		if err != nil {
			return err
		}
		a.emittedUnits[se.Unit] = id
	}
	for _, st := range s.Emitted {
		id, err := parseTraceID(st.TraceID)
		if err != nil {
			return err
		}
		et := &emittedTrace{spans: make(map[pcommon.SpanID]struct{}, len(st.Spans)), lastTouch: time.Unix(0, st.LastTouch)}
		for _, h := range st.Spans {
			var sp pcommon.SpanID
			if n, err := hex.Decode(sp[:], []byte(h)); err != nil || n != len(sp) {
				return fmt.Errorf("saved state: bad span id %q", h)
			}
			et.spans[sp] = struct{}{}
		}
		a.emitted[id] = et
	}
	return nil
}

func parseTraceID(h string) (pcommon.TraceID, error) {
	var id pcommon.TraceID
	if n, err := hex.Decode(id[:], []byte(h)); err != nil || n != len(id) {
		return id, fmt.Errorf("saved state: bad trace id %q", h)
	}
	return id, nil
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
