// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package claudecode

import (
	"bytes"
	"encoding/json" // not goccy: its encoder has corrupted the Go 1.26 heap on maps (see exporter/agenteventexporter)
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// Bounds of the state kept per file. A restart must not lose what an open
// turn needs, but a file of many thousand records must not make the state
// grow with it.
const (
	// maxUsageIDs is how many recent message ids keep their counted usage.
	// The rows of one streamed response are adjacent (at most interleaved
	// with a few tool results), so a short memory is enough.
	maxUsageIDs = 256
	// maxOpenCalls bounds the tool calls waiting for a result; beyond it the
	// oldest is forgotten (its result then carries no name or latency).
	maxOpenCalls = 1024
	// maxSidechainRows bounds the uuid → sidechain map of 1.0.x files.
	maxSidechainRows = 4096
	// maxUnspawned bounds the unexplained inline sidechains remembered; a
	// session starts a few warmups, not many.
	maxUnspawned = 16
)

// stateVersion is bumped when the persisted layout changes incompatibly.
const stateVersion = 2

// state is everything Parse needs to continue mid-file. It is persisted as
// JSON by MarshalState.
type state struct {
	Version int `json:"v"`
	// Cursor: the last offset parsed and the last sequence number (the
	// prompts are per thread: Prompts).
	agentevent.Cursor

	// Envelope values carried to records that lack them.
	SessionID  string    `json:"session_id,omitempty"`
	Cwd        string    `json:"cwd,omitempty"`
	AgentVer   string    `json:"version,omitempty"`
	GitBranch  string    `json:"git_branch,omitempty"`
	Entrypoint string    `json:"entrypoint,omitempty"`
	Timestamp  time.Time `json:"timestamp"`

	// Prompts maps a thread (session, agent) to the event id of its latest
	// user_message: the parent of every other event of the thread.
	Prompts map[string]string `json:"prompts,omitempty"`
	// Calls are the tool calls still waiting for their result, by tool id.
	Calls map[string]*openCall `json:"calls,omitempty"`
	// Usage is the usage already counted per message id, oldest first.
	Usage []countedUsage `json:"usage,omitempty"`
	// Sidechains maps the uuid of a 1.0.x inline sidechain row to the agent
	// id of its sidechain, so that the rows after it find their thread.
	Sidechains map[string]string `json:"sidechains,omitempty"`
	// CallSeq numbers tool calls in the order they were opened.
	CallSeq int64 `json:"call_seq"`
	// LastSidechain is the agent id of the inline sidechain row seen last.
	LastSidechain string `json:"last_sidechain,omitempty"`
	// Warmup: this subagent file is a warmup (see warmupRow); its events
	// say that no tool call spawned it.
	Warmup bool `json:"warmup,omitempty"`
	// Unspawned are the agent ids of the 1.0.x inline sidechains no Task
	// call explained (warmups), most recent last, at most maxUnspawned.
	Unspawned []string `json:"unspawned,omitempty"`
	// Held is the usage of the model response whose rows are being read,
	// held until its last row (see heldUsage).
	Held *heldUsage `json:"held,omitempty"`
	// Aside holds the events of a /btw side-question file since its latest
	// prompt, until the end of the file's data (see aside.go).
	Aside []agentevent.Event `json:"aside,omitempty"`
	// AsideLive: the end of an aside file's data was reached once; its rows
	// are emitted as they come from then on.
	AsideLive bool `json:"aside_live,omitempty"`
	// Fork is the fork-context-ref record that starts a forked subagent's
	// file, held until the next record (see forkRef).
	Fork *forkRef `json:"fork,omitempty"`
}

// forkRef is a fork-context-ref record waiting for the row after it. The
// record carries no envelope (no time, directory or version): its event
// goes out just before the next record's, with that record's envelope, so
// that it sits with the fork's other events rather than apart.
type forkRef struct {
	ParentSessionID string `json:"parent_session,omitempty"`
	ParentLastUUID  string `json:"parent_last,omitempty"`
	ContextLength   *int64 `json:"context_length,omitempty"`
	LineNo          int64  `json:"line"`
	Offset          int64  `json:"offset"`
	// Raw is the record, for Event.Raw ("" when raw records are omitted).
	Raw string `json:"raw,omitempty"`
}

// heldUsage is the usage of a streamed model response read so far, and
// where its last row was, for the event that carries it once the response is
// known to be complete.
type heldUsage struct {
	ID               string    `json:"id"`
	Model            string    `json:"model,omitempty"`
	SessionID        string    `json:"session"`
	AgentID          string    `json:"agent,omitempty"`
	Sidechain        bool      `json:"sidechain,omitempty"`
	ParentToolCallID string    `json:"parent_call,omitempty"`
	UUID             string    `json:"uuid,omitempty"`
	LineNo           int64     `json:"line"`
	Offset           int64     `json:"offset"`
	Timestamp        time.Time `json:"ts"`
	Input            int64     `json:"in"`
	CacheRead        int64     `json:"read"`
	CacheCreation    int64     `json:"create"`
	CacheCreation1h  int64     `json:"create_1h,omitempty"`
	Output           int64     `json:"out"`
}

// openCall is a tool call waiting for its result.
type openCall struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Timestamp time.Time `json:"ts"`
	FilePath  string    `json:"file,omitempty"`
	// Prompt is a Task/Agent call's prompt, to recognize the start of its
	// 1.0.x inline sidechain.
	Prompt string `json:"prompt,omitempty"`
	// Sidechain is the agent id of the inline sidechain this call spawned.
	Sidechain string `json:"sidechain,omitempty"`
	// Seq orders calls (the sequence of the tool_call event).
	Seq int64 `json:"seq"`
	// TestRunner is the test runner a Bash call's command runs
	// (testrun.Detect), so that its result can be read for test counts.
	TestRunner string `json:"test_runner,omitempty"`
}

// countedUsage is the usage of one model response counted so far.
type countedUsage struct {
	ID     string `json:"id"`
	Output int64  `json:"out"`
}

func newState() state {
	return state{
		Version:    stateVersion,
		Cursor:     agentevent.NewCursor(),
		Prompts:    map[string]string{},
		Calls:      map[string]*openCall{},
		Sidechains: map[string]string{},
	}
}

// MarshalState persists everything Parse needs to continue mid-file after a
// restart: the turn each thread is in, open tool calls, usage already
// counted per message id (recent ids only), the last offset and sequence.
func (p *Parser) MarshalState() ([]byte, error) {
	return json.Marshal(&p.st)
}

// UnmarshalState restores a state written by MarshalState. Records at or
// before the restored offset are then dropped by Parse.
func (p *Parser) UnmarshalState(b []byte) error {
	st := newState()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // held events' attributes keep their integer type
	if err := dec.Decode(&st); err != nil {
		return fmt.Errorf("claudecode: decode parser state: %w", err)
	}
	for i := range st.Aside {
		numbers(st.Aside[i].Attributes)
	}
	if err := agentevent.CheckStateVersion("claudecode", st.Version, stateVersion); err != nil {
		return err
	}
	if st.Prompts == nil {
		st.Prompts = map[string]string{}
	}
	if st.Calls == nil {
		st.Calls = map[string]*openCall{}
	}
	if st.Sidechains == nil {
		st.Sidechains = map[string]string{}
	}
	p.st = st
	return nil
}

func (s *state) nextCallSeq() int64 {
	s.CallSeq++
	return s.CallSeq
}

// addCall records an open tool call, forgetting the oldest beyond the bound.
func (s *state) addCall(c *openCall) {
	agentevent.AddOpenCall(s.Calls, c.ID, c, maxOpenCalls)
}

// Order places the call among the calls of the file (agentevent.Ordered).
func (c *openCall) Order() int64 { return c.Seq }

// numbers turns the json.Number attribute values of a decoded event back
// into int64 (or float64 when not an integer).
func numbers(attrs map[string]any) {
	for k, v := range attrs {
		n, ok := v.(json.Number)
		if !ok {
			continue
		}
		if i, err := n.Int64(); err == nil {
			attrs[k] = i
		} else if f, err := n.Float64(); err == nil {
			attrs[k] = f
		}
	}
}

// counted returns the output already counted for a message id whose final
// usage went out, and whether it did.
func (s *state) counted(id string) (*countedUsage, bool) {
	for i := len(s.Usage) - 1; i >= 0; i-- {
		if s.Usage[i].ID == id {
			return &s.Usage[i], true
		}
	}
	return nil, false
}

// markCounted records that the final usage of a message id went out.
func (s *state) markCounted(id string, out int64) {
	s.Usage = append(s.Usage, countedUsage{ID: strings.Clone(id), Output: out})
	if len(s.Usage) > maxUsageIDs {
		s.Usage = append(s.Usage[:0], s.Usage[len(s.Usage)-maxUsageIDs:]...)
	}
}

// addSidechainRow maps a 1.0.x sidechain row to its agent, within bounds.
// addUnspawned remembers an inline sidechain no Task call explained.
func (s *state) addUnspawned(agentID string) {
	if len(s.Unspawned) >= maxUnspawned {
		s.Unspawned = slices.Delete(s.Unspawned, 0, 1)
	}
	s.Unspawned = append(s.Unspawned, strings.Clone(agentID))
}

func (s *state) addSidechainRow(uuid, agentID string) {
	if len(s.Sidechains) >= maxSidechainRows {
		// Start over: rows whose parent is then unknown fall back to the
		// sidechain seen last.
		clear(s.Sidechains)
	}
	s.Sidechains[strings.Clone(uuid)] = strings.Clone(agentID)
}

// endSidechain forgets a finished inline sidechain.
func (s *state) endSidechain(agentID string) {
	for k, v := range s.Sidechains {
		if v == agentID {
			delete(s.Sidechains, k)
		}
	}
	if s.LastSidechain == agentID {
		s.LastSidechain = ""
	}
}
