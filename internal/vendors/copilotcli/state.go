// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package copilotcli

import (
	"encoding/json" // state is encoded with the standard library only
	"fmt"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
)

// Bounds of the state kept per file.
const (
	// maxOpenCalls bounds the tool calls waiting for a result; beyond it the
	// oldest is forgotten (its result then carries no name or latency).
	maxOpenCalls = 1024
	// maxHooks bounds the hook invocations waiting for their end.
	maxHooks = 256
	// maxSubagents bounds the subagent threads remembered.
	maxSubagents = 256
)

// stateVersion is bumped when the persisted layout changes incompatibly.
const stateVersion = 1

// state is everything Parse needs to continue mid-file. It is persisted as
// JSON by MarshalState.
type state struct {
	Version int `json:"v"`
	// Cursor: the last offset parsed and the last sequence number (its
	// Prompt stays empty: the prompts are per thread, in Prompts).
	agentevent.Cursor

	SessionID string `json:"session_id,omitempty"`
	Started   bool   `json:"started,omitempty"`
	// Version of the CLI (copilotVersion, "unknown" left out).
	CLIVersion string `json:"cli_version,omitempty"`
	Producer   string `json:"producer,omitempty"`
	Cwd        string `json:"cwd,omitempty"`
	Branch     string `json:"branch,omitempty"`
	// WorkspaceRoot and WorkspaceBranch come from workspace.yaml.
	WorkspaceRoot   string `json:"workspace_root,omitempty"`
	WorkspaceBranch string `json:"workspace_branch,omitempty"`
	// Model is the model of the main thread's latest record that names
	// one, ModelFrom that record's type (see Parser.model).
	Model     string `json:"model,omitempty"`
	ModelFrom string `json:"model_from,omitempty"`
	// Timestamp is the last record time seen.
	Timestamp time.Time `json:"timestamp"`

	// Prompts maps a thread ("" = the main agent, else the subagent's
	// spawning call id) to the event id of its latest user_message.
	Prompts map[string]string `json:"prompts,omitempty"`
	// Calls are the tool calls still waiting for their result, by id.
	Calls   map[string]*openCall `json:"calls,omitempty"`
	CallSeq int64                `json:"call_seq"`
	// Hooks are the start times of hooks still running, by invocation id.
	Hooks     map[string]time.Time `json:"hooks,omitempty"`
	HookOrder []string             `json:"hook_order,omitempty"`
	// Subagents maps a subagent's spawning call id to its agent name, and
	// SubagentModels to its model when subagent.started names one.
	Subagents      map[string]string `json:"subagents,omitempty"`
	SubagentModels map[string]string `json:"subagent_models,omitempty"`
	SubagentOrder  []string          `json:"subagent_order,omitempty"`
	// Output sums the output tokens counted per response since the last
	// session.shutdown, by model.
	Output map[string]int64 `json:"output,omitempty"`
}

// openCall is a tool call waiting for its result.
type openCall struct {
	Seq  int64     `json:"seq"`
	Name string    `json:"name"`
	Time time.Time `json:"time"`
	// Started is the time of tool.execution_start.
	Started   time.Time `json:"started"`
	FilePath  string    `json:"file_path,omitempty"`
	FileOp    string    `json:"file_op,omitempty"`
	Language  string    `json:"language,omitempty"`
	Channel   string    `json:"channel,omitempty"`
	Runner    string    `json:"runner,omitempty"`
	Prompt    string    `json:"prompt,omitempty"`
	AgentType string    `json:"agent_type,omitempty"`
	// CreateLines is the line count of a create call's file_text (-1: unknown).
	CreateLines int64 `json:"create_lines"`
}

func newState() state {
	return state{
		Version: stateVersion, Cursor: agentevent.NewCursor(),
		Prompts: map[string]string{}, Calls: map[string]*openCall{}, Hooks: map[string]time.Time{},
		Subagents: map[string]string{}, SubagentModels: map[string]string{}, Output: map[string]int64{},
	}
}

// Order places the call among the calls of the file (agentevent.Ordered).
func (c *openCall) Order() int64 { return c.Seq }

func (s *state) addCall(id string, c *openCall) {
	s.CallSeq++
	c.Seq = s.CallSeq
	agentevent.AddOpenCall(s.Calls, id, c, maxOpenCalls)
}

func (s *state) addHook(id string, t time.Time) {
	if _, ok := s.Hooks[id]; !ok {
		s.HookOrder = append(s.HookOrder, id)
	}
	s.Hooks[id] = t
	for len(s.HookOrder) > maxHooks {
		delete(s.Hooks, s.HookOrder[0])
		s.HookOrder = s.HookOrder[1:]
	}
}

func (s *state) takeHook(id string) (time.Time, bool) {
	t, ok := s.Hooks[id]
	if !ok {
		return time.Time{}, false
	}
	delete(s.Hooks, id)
	for i, k := range s.HookOrder {
		if k == id {
			s.HookOrder = append(s.HookOrder[:i], s.HookOrder[i+1:]...)
			break
		}
	}
	return t, true
}

func (s *state) addSubagent(id, name string) {
	if _, ok := s.Subagents[id]; !ok {
		s.SubagentOrder = append(s.SubagentOrder, id)
	}
	s.Subagents[id] = name
	for len(s.SubagentOrder) > maxSubagents {
		delete(s.Subagents, s.SubagentOrder[0])
		delete(s.SubagentModels, s.SubagentOrder[0])
		delete(s.Prompts, s.SubagentOrder[0])
		s.SubagentOrder = s.SubagentOrder[1:]
	}
}

func (s *state) addOutput(model string, n int64) { s.Output[model] += n }

// setModel makes model, named by a record of type from, the current one.
func (s *state) setModel(model, from string) {
	if model != "" {
		s.Model, s.ModelFrom = strings.Clone(model), from
	}
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
		return fmt.Errorf("copilot cli parser state: %w", err)
	}
	if err := agentevent.CheckStateVersion("copilot cli", st.Version, stateVersion); err != nil {
		return err
	}
	fresh := newState()
	if st.Prompts == nil {
		st.Prompts = fresh.Prompts
	}
	if st.Calls == nil {
		st.Calls = fresh.Calls
	}
	if st.Hooks == nil {
		st.Hooks = fresh.Hooks
	}
	if st.Subagents == nil {
		st.Subagents = fresh.Subagents
	}
	if st.SubagentModels == nil {
		st.SubagentModels = fresh.SubagentModels
	}
	if st.Output == nil {
		st.Output = fresh.Output
	}
	// A workspace.yaml read by the caller since the state was saved (it
	// can appear after the first lines) is kept.
	if st.WorkspaceRoot == "" && st.WorkspaceBranch == "" {
		st.WorkspaceRoot, st.WorkspaceBranch = p.st.WorkspaceRoot, p.st.WorkspaceBranch
	}
	p.st = st
	return nil
}
