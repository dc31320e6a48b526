// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agenteventexporter

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
)

// agtraceEvent is one line of the agtrace_v1 format: AgentEventV1 (seed 000
// section 2.2), every field present, null where the event has no value,
// followed by the agentotel extensions (section 6 allows fields to be added
// within v1), present only when set.
type agtraceEvent struct {
	SchemaVersion  string          `json:"schema_version"`
	Source         string          `json:"source"`
	ProjectHash    string          `json:"project_hash"`
	ProjectRoot    *string         `json:"project_root"`
	SessionID      *string         `json:"session_id"`
	EventID        *string         `json:"event_id"`
	ParentEventID  *string         `json:"parent_event_id"`
	TS             string          `json:"ts"`
	EventType      string          `json:"event_type"`
	Role           *string         `json:"role"`
	Channel        *string         `json:"channel"`
	Text           *string         `json:"text"`
	ToolName       *string         `json:"tool_name"`
	ToolCallID     *string         `json:"tool_call_id"`
	ToolStatus     *string         `json:"tool_status"`
	ToolLatencyMs  *int64          `json:"tool_latency_ms"`
	ToolExitCode   *int64          `json:"tool_exit_code"`
	FilePath       *string         `json:"file_path"`
	FileLanguage   *string         `json:"file_language"`
	FileOp         *string         `json:"file_op"`
	Model          *string         `json:"model"`
	TokensInput    *int64          `json:"tokens_input"`
	TokensOutput   *int64          `json:"tokens_output"`
	TokensTotal    *int64          `json:"tokens_total"`
	TokensCached   *int64          `json:"tokens_cached"`
	TokensThinking *int64          `json:"tokens_thinking"`
	TokensTool     *int64          `json:"tokens_tool"`
	AgentID        *string         `json:"agent_id"`
	Raw            json.RawMessage `json:"raw"`

	// Extensions.
	Sequence            int64          `json:"sequence,omitempty"`
	AgentVersion        string         `json:"agent_version,omitempty"`
	GitBranch           string         `json:"git_branch,omitempty"`
	IsSidechain         bool           `json:"is_sidechain,omitempty"`
	SubagentType        string         `json:"subagent_type,omitempty"`
	ParentToolCallID    string         `json:"parent_tool_call_id,omitempty"`
	SpawnedAgentID      string         `json:"spawned_agent_id,omitempty"`
	Entrypoint          string         `json:"entrypoint,omitempty"`
	Provider            string         `json:"provider,omitempty"`
	ResponseID          string         `json:"response_id,omitempty"`
	FinishReason        string         `json:"finish_reason,omitempty"`
	ErrorType           string         `json:"error_type,omitempty"`
	TokensCacheCreation *int64         `json:"tokens_cache_creation,omitempty"`
	CostUSD             *float64       `json:"cost_usd,omitempty"`
	Status              string         `json:"status,omitempty"`
	LogFile             string         `json:"log_file,omitempty"`
	LogLine             int64          `json:"log_line,omitempty"`
	Unparsed            string         `json:"unparsed,omitempty"`
	Attributes          map[string]any `json:"attributes,omitempty"`
}

// agtraceFormat writes every event as it is: the exporter refuses nothing,
// and it does not repair what it is given either (a role or parent the
// parser got wrong would be hidden, not fixed). Events that break the
// specification's invariants are counted and the first of each rule logged.
type agtraceFormat struct {
	includeContent bool
	includeRaw     bool
	report         func(agentevent.Violation, *agentevent.Event)
}

func (*agtraceFormat) begin(s *session, _ []byte) {
	s.state = &invariantChecker{resumed: s.resumed, threads: map[string]*threadCheck{}}
}

// end writes nothing (agtrace has no session end) but lets go of what the
// checks remember: an idle session may never come back. If it does, its
// earlier calls and prompts are unknown, as after a restart.
func (*agtraceFormat) end(s *session, _ *lineBuffer) {
	s.state = &invariantChecker{resumed: true, threads: map[string]*threadCheck{}}
}

func (*agtraceFormat) closes() bool { return false }

func (*agtraceFormat) lineTime(line []byte) time.Time {
	var tail struct {
		TS time.Time `json:"ts"`
	}
	_ = jsonx.Unmarshal(line, &tail)
	return tail.TS
}

func (f *agtraceFormat) event(s *session, ev *agentevent.Event, out *lineBuffer) {
	for _, v := range s.state.(*invariantChecker).check(ev) {
		f.report(v, ev)
	}
	out.add(f.line(ev))
}

func (f *agtraceFormat) line(ev *agentevent.Event) *agtraceEvent {
	hash := ev.ProjectHash
	if hash == "" {
		hash = agentevent.ProjectHash(ev.ProjectRoot)
	}
	a := &agtraceEvent{
		SchemaVersion:  agentevent.SchemaVersion,
		Source:         string(ev.Source),
		ProjectHash:    hash,
		ProjectRoot:    nullable(ev.ProjectRoot),
		SessionID:      nullable(ev.SessionID),
		EventID:        nullable(ev.EventID),
		ParentEventID:  nullable(ev.ParentEventID),
		TS:             formatTime(ev.Timestamp),
		EventType:      string(ev.Type),
		Role:           nullable(string(ev.Role)),
		Channel:        nullable(string(ev.Channel)),
		ToolName:       nullable(ev.ToolName),
		ToolCallID:     nullable(ev.ToolCallID),
		ToolStatus:     nullable(string(toolStatus(ev))),
		ToolLatencyMs:  ev.ToolLatencyMs,
		ToolExitCode:   ev.ToolExitCode,
		FilePath:       nullable(ev.FilePath),
		FileLanguage:   nullable(ev.FileLanguage),
		FileOp:         nullable(string(ev.FileOp)),
		Model:          nullable(ev.Model),
		TokensInput:    ev.TokensInput,
		TokensOutput:   ev.TokensOutput,
		TokensTotal:    ev.TokensTotal,
		TokensCached:   ev.TokensCached,
		TokensThinking: ev.TokensThinking,
		TokensTool:     ev.TokensTool,
		AgentID:        nullable(ev.AgentID),
		Raw:            nullJSON,

		Sequence:            ev.Sequence,
		AgentVersion:        ev.AgentVersion,
		GitBranch:           ev.GitBranch,
		IsSidechain:         ev.IsSidechain,
		SubagentType:        ev.SubagentType,
		ParentToolCallID:    ev.ParentToolCallID,
		SpawnedAgentID:      ev.SpawnedAgentID,
		Entrypoint:          ev.Entrypoint,
		Provider:            ev.Provider,
		ResponseID:          ev.ResponseID,
		FinishReason:        ev.FinishReason,
		ErrorType:           ev.ErrorType,
		TokensCacheCreation: ev.TokensCacheCreation,
		CostUSD:             ev.CostUSD,
		Status:              ev.Status,
		LogFile:             ev.LogFile,
		LogLine:             ev.LogLine,
		Unparsed:            ev.Unparsed,
		Attributes:          vendorFacts(ev.Attributes, f.includeContent),
	}
	if f.includeContent {
		a.Text = nullable(ev.Text)
	}
	if f.includeRaw && len(ev.Raw) > 0 {
		a.Raw = rawJSON(ev.Raw)
	}
	return a
}

// toolStatus is the status a line shows: a tool_call's is the call's at that
// moment — in_progress, unless the vendor wrote one on the call record — and
// its outcome comes with its tool_result. Lines are written as events arrive,
// so a call line cannot wait for its result; a call never answered is thus
// in_progress to the end, as it should be.
func toolStatus(ev *agentevent.Event) agentevent.ToolStatus {
	if ev.Type == agentevent.TypeToolCall && ev.ToolStatus == "" {
		return agentevent.ToolInProgress
	}
	return ev.ToolStatus
}

// vendorFacts keeps the agent.* attributes: the vendor facts the parsers
// add. Anything a processor may have added on the way is not the event's.
// Content attributes (agent.content.*) only go out with include_content.
func vendorFacts(attrs map[string]any, includeContent bool) map[string]any {
	var out map[string]any
	for k, v := range attrs {
		if !includeContent && strings.HasPrefix(k, agentevent.ContentAttrPrefix) {
			continue
		}
		if strings.HasPrefix(k, agentevent.AttrNamespace) {
			if out == nil {
				out = make(map[string]any, len(attrs))
			}
			out[k] = v
		}
	}
	return out
}

// maxTrackedCalls bounds the tool calls remembered per thread for the
// pairing rule; past it the oldest are forgotten, and a result for a
// forgotten call is not held against the event.
const maxTrackedCalls = 4096

// invariantChecker applies agentevent.Validate's rules to the events of one
// session as they arrive, batch after batch. When the session's file
// already held lines (a restart), what came before is unknown: a thread's
// first parent is taken as its latest prompt, and results for calls it has
// not seen are accepted.
type invariantChecker struct {
	resumed bool
	threads map[string]*threadCheck // by agent id ("" = the main agent)
}

type threadCheck struct {
	known      bool   // lastPrompt is the thread's latest prompt
	lastPrompt string // "" before the first prompt
	calls      map[string]bool
	order      []string // call ids, oldest first
	forgot     bool
}

func (c *invariantChecker) thread(agentID string) *threadCheck {
	t := c.threads[agentID]
	if t == nil {
		t = &threadCheck{known: !c.resumed, calls: map[string]bool{}}
		c.threads[agentID] = t
	}
	return t
}

func (c *invariantChecker) check(ev *agentevent.Event) []agentevent.Violation {
	var vs []agentevent.Violation
	add := func(rule, format string, args ...any) {
		vs = append(vs, agentevent.Violation{EventID: ev.EventID, Rule: rule, Detail: fmt.Sprintf(format, args...)})
	}
	if ev.SchemaVersion != agentevent.SchemaVersion {
		add("schema", "schema_version %q", ev.SchemaVersion)
	}
	if ev.EventID == "" {
		add("schema", "empty event_id")
	}
	if !slices.Contains(agentevent.AllowedRoles(ev.Type), ev.Role) {
		add("role", "event_type %s has role %q, allowed %v", ev.Type, ev.Role, agentevent.AllowedRoles(ev.Type))
	}
	t := c.thread(ev.AgentID)
	switch {
	case ev.Type == agentevent.TypeUserMessage:
		if ev.ParentEventID != "" {
			add("parent_event_id", "user_message has parent %q", ev.ParentEventID)
		}
		t.lastPrompt, t.known = ev.EventID, true
	case !t.known:
		t.lastPrompt, t.known = ev.ParentEventID, true
	case ev.ParentEventID != t.lastPrompt:
		add("parent_event_id", "%s has parent %q, want latest user_message %q", ev.Type, ev.ParentEventID, t.lastPrompt)
	}
	switch ev.Type {
	case agentevent.TypeToolCall:
		if ev.ToolCallID == "" {
			add("tool_pairing", "tool_call without tool_call_id")
			break
		}
		if _, dup := t.calls[ev.ToolCallID]; dup {
			add("tool_pairing", "tool_call id %q used twice", ev.ToolCallID)
			break
		}
		t.calls[ev.ToolCallID] = false
		t.order = append(t.order, ev.ToolCallID)
		if len(t.order) > maxTrackedCalls {
			delete(t.calls, t.order[0])
			t.order = t.order[1:]
			t.forgot = true
		}
	case agentevent.TypeToolResult:
		if ev.ToolCallID == "" {
			break // allowed: a result whose call cannot be identified
		}
		answered, ok := t.calls[ev.ToolCallID]
		switch {
		case !ok && (c.resumed || t.forgot):
		case !ok:
			add("tool_pairing", "tool_result for unknown tool_call %q", ev.ToolCallID)
		case answered:
			add("tool_pairing", "second tool_result for tool_call %q", ev.ToolCallID)
		default:
			t.calls[ev.ToolCallID] = true
		}
	}
	return vs
}
