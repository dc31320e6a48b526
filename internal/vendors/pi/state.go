// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package pi

import (
	"encoding/json" // not goccy: its encoder has corrupted the Go 1.26 heap on maps
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// Bounds of the state kept per file.
const (
	// maxOpenCalls bounds the tool calls waiting for a result; beyond it the
	// oldest is forgotten (its result then carries no name or latency).
	maxOpenCalls = 1024
	// maxEntries bounds the id → parentId map of the entry tree. Beyond it
	// the oldest entries are forgotten: a branch back to one of them is
	// still reported, its abandoned-entry count is then a lower bound.
	maxEntries = 20000
)

// stateVersion is bumped when the persisted layout changes incompatibly.
const stateVersion = 1

// state is everything Parse needs to continue mid-file. It is persisted as
// JSON by MarshalState.
type state struct {
	Version int `json:"v"`
	// Cursor: the last offset parsed, the last sequence number, and the
	// event id of the latest user_message (the parent of every other event).
	agentevent.Cursor

	// Header values.
	SessionID     string    `json:"session_id,omitempty"`
	FormatVersion int       `json:"format_version,omitempty"`
	Cwd           string    `json:"cwd,omitempty"`
	ParentSession string    `json:"parent_session,omitempty"`
	HeaderTime    time.Time `json:"header_time"`
	HeaderSeen    bool      `json:"header_seen,omitempty"`

	// Provider and Model are the current model (v1 header, model_change).
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// Timestamp is the last record time seen.
	Timestamp time.Time `json:"timestamp"`

	// Calls are the tool calls still waiting for their result, by id.
	Calls map[string]*openCall `json:"calls,omitempty"`
	// NotRun are the ids of the last tool calls closed as never run (their
	// response failed): a result for one of them is not a second result.
	NotRun []string `json:"not_run,omitempty"`
	// CallSeq numbers tool calls in the order they were opened.
	CallSeq int64 `json:"call_seq"`

	// Leaf is the id of the last tree entry (v2+): the current branch ends there.
	Leaf string `json:"leaf,omitempty"`
	// Parents maps entry id → parent id ("" for a root), for the entries
	// seen; EntryOrder is the ids in arrival order (for the bound).
	Parents    map[string]string `json:"parents,omitempty"`
	EntryOrder []string          `json:"entry_order,omitempty"`
	// Prompts maps the entry id of each user message seen to its event id,
	// to find the previous prompt on an entry's branch.
	Prompts map[string]string `json:"prompts,omitempty"`
}

// openCall is a tool call waiting for its result.
type openCall struct {
	Seq      int64     `json:"seq"`
	Name     string    `json:"name"`
	Time     time.Time `json:"time"`
	FilePath string    `json:"file_path,omitempty"`
	FileOp   string    `json:"file_op,omitempty"`
	Language string    `json:"language,omitempty"`
	Channel  string    `json:"channel,omitempty"`
	Command  string    `json:"command,omitempty"`
	Runner   string    `json:"runner,omitempty"`
	// WriteLines is the line count of a write call's content (-1: unknown).
	WriteLines int64 `json:"write_lines"`
}

func newState() state {
	return state{Version: stateVersion, Cursor: agentevent.NewCursor(), Calls: map[string]*openCall{}, Parents: map[string]string{}, Prompts: map[string]string{}}
}

// Order places the call among the calls of the file (agentevent.Ordered).
func (c *openCall) Order() int64 { return c.Seq }

func (s *state) addCall(id string, c *openCall) {
	s.CallSeq++
	c.Seq = s.CallSeq
	agentevent.AddOpenCall(s.Calls, id, c, maxOpenCalls)
}

// maxNotRun bounds state.NotRun.
const maxNotRun = 64

func (s *state) addNotRun(id string) {
	s.NotRun = append(s.NotRun, strings.Clone(id))
	if len(s.NotRun) > maxNotRun {
		s.NotRun = s.NotRun[len(s.NotRun)-maxNotRun:]
	}
}

func (s *state) notRun(id string) bool {
	return id != "" && slices.Contains(s.NotRun, id)
}

func (s *state) addEntry(id, parent string) {
	if _, seen := s.Parents[id]; !seen {
		s.EntryOrder = append(s.EntryOrder, id)
	}
	s.Parents[id] = parent
	for len(s.EntryOrder) > maxEntries {
		delete(s.Parents, s.EntryOrder[0])
		delete(s.Prompts, s.EntryOrder[0])
		s.EntryOrder = s.EntryOrder[1:]
	}
}

// promptBefore is the event id of the nearest user message above entry id
// on its branch ("" when there is none, or the tree was not seen).
func (s *state) promptBefore(id string) string {
	for n := 0; id != "" && n <= maxEntries; n++ {
		if ev, ok := s.Prompts[id]; ok {
			return ev
		}
		next, ok := s.Parents[id]
		if !ok {
			return ""
		}
		id = next
	}
	return ""
}

// MarshalState returns everything Parse needs to continue after the last
// record it was given, as JSON.
func (p *Parser) MarshalState() ([]byte, error) {
	return json.Marshal(&p.st)
}

// UnmarshalState restores a state MarshalState returned. Records at or
// before the saved offset are then dropped by Parse.
func (p *Parser) UnmarshalState(b []byte) error {
	st := newState()
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("pi parser state: %w", err)
	}
	if err := agentevent.CheckStateVersion("pi", st.Version, stateVersion); err != nil {
		return err
	}
	if st.Calls == nil {
		st.Calls = map[string]*openCall{}
	}
	if st.Prompts == nil {
		st.Prompts = map[string]string{}
	}
	if st.Parents == nil {
		st.Parents = map[string]string{}
	}
	p.st = st
	return nil
}
