// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agenteventexporter

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/agents"
	"github.com/agentotel/agentotel/internal/jsonx"
)

// The values this format looks for on the agent_span connector's turn roots
// (their rollup is in docs/design/span-model.md), and the seed's constants.
const (
	opInvokeAgent         = "invoke_agent"
	statusAbandoned       = "abandoned"
	statusCompleted       = "completed"
	canonicalProviderID   = "agentotel"
	canonicalEventType    = "AGENT_TASK_COMPLETED"
	canonicalIDPrefix     = "agent-task-"
	canonicalDefaultColor = "gray"
)

// CanonicalEvent of seed 003, with the fields the seed lists in the event
// structure and in its converter.
type canonicalEvent struct {
	ID            string                 `json:"id"`
	CanonicalID   string                 `json:"canonicalId"`
	ProviderID    string                 `json:"providerId"`
	Type          string                 `json:"type"`
	Timestamp     string                 `json:"timestamp"`
	Title         string                 `json:"title"`
	Description   string                 `json:"description"`
	Author        canonicalAuthor        `json:"author"`
	Branches      []string               `json:"branches"`
	Hash          *string                `json:"hash"`
	ParentIDs     []string               `json:"parentIds"`
	ChildIDs      []string               `json:"childIds"`
	Impact        canonicalImpact        `json:"impact"`
	Visualization canonicalVisualization `json:"visualization"`
	Metadata      canonicalMetadata      `json:"metadata"`
}

type canonicalAuthor struct {
	ID    string  `json:"id"`
	Name  string  `json:"name"`
	Email *string `json:"email"`
}

type canonicalImpact struct {
	FilesChanged int64 `json:"filesChanged"`
	LinesAdded   int64 `json:"linesAdded"`
	LinesRemoved int64 `json:"linesRemoved"`
}

type canonicalVisualization struct {
	Icon     string   `json:"icon"`
	Color    string   `json:"color"`
	Priority string   `json:"priority"`
	Tags     []string `json:"tags"`
}

type canonicalMetadata struct {
	UserPrompt        *string             `json:"userPrompt"`
	UserIntent        *string             `json:"userIntent"`
	SessionID         string              `json:"sessionId"`
	SessionDuration   float64             `json:"sessionDuration"`
	IdleTimeout       bool                `json:"idleTimeout"`
	Activities        canonicalActivities `json:"activities"`
	TestsPass         *bool               `json:"testsPass"`
	BuildSuccess      *bool               `json:"buildSuccess"`
	ErrorsEncountered int64               `json:"errorsEncountered"`
	AgentVersion      *string             `json:"agentVersion"`
	ConversationTurns int64               `json:"conversationTurns"`
	ModelUsed         *string             `json:"modelUsed"`
	Status            string              `json:"status"`

	// Extensions: the rest of the turn rollup, and where to find the trace.
	ToolCalls  int64          `json:"toolCalls"`
	ToolErrors int64          `json:"toolErrors"`
	Subagents  int64          `json:"subagents"`
	Usage      canonicalUsage `json:"usage"`
	TraceID    string         `json:"traceId"`
	SpanID     string         `json:"spanId"`
}

type canonicalUsage struct {
	InputTokens         int64    `json:"inputTokens"`
	OutputTokens        int64    `json:"outputTokens"`
	CacheReadTokens     int64    `json:"cacheReadTokens"`
	CacheCreationTokens int64    `json:"cacheCreationTokens"`
	ReasoningTokens     int64    `json:"reasoningTokens"`
	CostUSD             *float64 `json:"costUsd"`
}

type canonicalActivities struct {
	FilesModified    []canonicalFile    `json:"filesModified"`
	TestsRun         []canonicalTest    `json:"testsRun"`
	CommandsExecuted []canonicalCommand `json:"commandsExecuted"`
}

type canonicalFile struct {
	Path         string `json:"path"`
	ChangeType   string `json:"changeType"`
	LinesAdded   int64  `json:"linesAdded"`
	LinesRemoved int64  `json:"linesRemoved"`
	EditCount    int64  `json:"editCount"`
}

type canonicalTest struct {
	TestFile    string `json:"testFile"`
	Status      string `json:"status"`
	Timestamp   string `json:"timestamp"`
	Command     string `json:"command"`
	Runner      string `json:"runner"`
	TestsRun    *int64 `json:"testsRun"`
	TestsPassed *int64 `json:"testsPassed"`
	ExitCode    *int64 `json:"exitCode"`
}

type canonicalCommand struct {
	Command   string `json:"command"`
	ExitCode  *int64 `json:"exitCode"`
	Timestamp string `json:"timestamp"`
}

// The JSON the connector writes in agent.turn.files, .commands and .tests.
type (
	rollupFile struct {
		Path         string `json:"path"`
		ChangeType   string `json:"change_type"`
		LinesAdded   int64  `json:"lines_added"`
		LinesRemoved int64  `json:"lines_removed"`
		EditCount    int64  `json:"edit_count"`
	}
	rollupCommand struct {
		Command   string `json:"command"`
		ExitCode  *int64 `json:"exit_code"`
		Timestamp string `json:"timestamp"`
	}
	rollupTest struct {
		Command     string `json:"command"`
		Runner      string `json:"runner"`
		Status      string `json:"status"`
		TestsRun    *int64 `json:"tests_run"`
		TestsPassed *int64 `json:"tests_passed"`
		ExitCode    *int64 `json:"exit_code"`
		Timestamp   string `json:"timestamp"`
	}
)

// canonicalFormat turns each agent turn (an invoke_agent turn-root span of
// the agent_span connector) into one CanonicalEvent.
type canonicalFormat struct {
	includeContent bool
	malformed      func(attr string, sp ptrace.Span, err error)
}

// isTurnRoot reports whether sp is the root span of a turn: an invoke_agent
// span without a parent that is not a subagent's (a subagent whose spawning
// call never showed up is a root too, with gen_ai.agent.id), or that is an
// orphan subagent's (its parent's log is absent: it is a session of its
// own, and its turns are tasks).
func isTurnRoot(sp ptrace.Span) bool {
	if !sp.ParentSpanID().IsEmpty() {
		return false
	}
	if op, ok := sp.Attributes().Get(agentevent.AttrOperationName); !ok || op.Str() != opInvokeAgent {
		return false
	}
	_, subagent := sp.Attributes().Get(agentevent.AttrAgentID)
	if o, ok := sp.Attributes().Get(agentevent.AttrSubagentOrphan); ok && o.Bool() {
		return true
	}
	return !subagent
}

// canonicalIDs are a turn's id and canonical id, from its agent, session
// and prompt event id alone: the previous turn's are then known from
// agent.turn.previous_id, and neither depends on the prompt's text (content).
func canonicalIDs(agent, session, promptID string) (id, canonicalID string) {
	h := hashHex(agent, session, promptID)
	return canonicalIDPrefix + h[:16], h
}

// turnOf names a turn root: the session file it goes to and the turn's id
// there (the hash part of canonicalIDs).
func turnOf(res pcommon.Resource, sp ptrace.Span) (sessionKey, string) {
	agent, key, promptID := turnKey(res, sp)
	h := hashHex(agent, key.session, promptID)
	return key, h[:16]
}

// turnKey is a turn root's agent, session file and prompt event id.
func turnKey(res pcommon.Resource, sp ptrace.Span) (agent string, key sessionKey, promptID string) {
	agent = "unknown"
	if v, ok := res.Attributes().Get(agentevent.ResourceServiceName); ok && v.Str() != "" {
		agent = v.Str()
	}
	session := ""
	if v, ok := sp.Attributes().Get(agentevent.AttrSessionID); ok {
		session = v.AsString()
	}
	if v, ok := sp.Attributes().Get(agentevent.AttrEventID); ok {
		promptID = v.AsString()
	}
	if promptID == "" {
		promptID = sp.SpanID().String()
	}
	return agent, sessionKey{agent: agent, session: session}, promptID
}

func (f *canonicalFormat) turn(res pcommon.Resource, sp ptrace.Span, out *lineBuffer) {
	a := sp.Attributes()
	str := func(k string) string {
		if v, ok := a.Get(k); ok {
			return v.AsString()
		}
		return ""
	}
	num := func(k string) int64 {
		if v, ok := a.Get(k); ok {
			switch v.Type() {
			case pcommon.ValueTypeInt:
				return v.Int()
			case pcommon.ValueTypeDouble:
				return int64(v.Double())
			}
		}
		return 0
	}
	agent, key, promptID := turnKey(res, sp)
	version := ""
	if v, ok := res.Attributes().Get(agentevent.ResourceServiceVersion); ok {
		version = v.Str()
	}
	id, canonicalID := canonicalIDs(agent, key.session, promptID)
	status := str(agentevent.AttrTurnStatus)
	if status == "" {
		status = statusCompleted // the seed's event is a completed task
	}
	summary := str(agentevent.AttrTurnSummary)

	ev := &canonicalEvent{
		ID:          id,
		CanonicalID: canonicalID,
		ProviderID:  canonicalProviderID,
		Type:        canonicalEventType,
		Timestamp:   formatTime(sp.EndTimestamp().AsTime()),
		Title:       summary,
		Description: summary,
		Author:      canonicalAuthor{ID: agent, Name: agent},
		Branches:    []string{},
		ParentIDs:   []string{},
		ChildIDs:    []string{},
		Impact: canonicalImpact{
			FilesChanged: num(agentevent.AttrTurnFilesChanged),
			LinesAdded:   num(agentevent.AttrTurnLinesAdded),
			LinesRemoved: num(agentevent.AttrTurnLinesRemoved),
		},
		Visualization: canonicalVisualization{
			Icon: "robot", Color: canonicalDefaultColor, Priority: "medium",
			Tags: []string{"agent", agent},
		},
		Metadata: canonicalMetadata{
			SessionID:         key.session,
			IdleTimeout:       status == statusAbandoned,
			ErrorsEncountered: num(agentevent.AttrTurnToolErrors),
			AgentVersion:      nullable(version),
			ConversationTurns: num(agentevent.AttrTurnModelCalls),
			ModelUsed:         nullable(str(agentevent.AttrRequestModel)),
			Status:            status,
			ToolCalls:         num(agentevent.AttrTurnToolCalls),
			ToolErrors:        num(agentevent.AttrTurnToolErrors),
			Subagents:         num(agentevent.AttrTurnSubagents),
			Usage: canonicalUsage{
				InputTokens:         num(agentevent.AttrTurnUsagePrefix + "input_tokens"),
				OutputTokens:        num(agentevent.AttrTurnUsagePrefix + "output_tokens"),
				CacheReadTokens:     num(agentevent.AttrTurnUsagePrefix + "cache_read.input_tokens"),
				CacheCreationTokens: num(agentevent.AttrTurnUsagePrefix + "cache_creation.input_tokens"),
				ReasoningTokens:     num(agentevent.AttrTurnUsagePrefix + "reasoning.output_tokens"),
			},
			TraceID: sp.TraceID().String(),
			SpanID:  sp.SpanID().String(),
			Activities: canonicalActivities{
				FilesModified:    []canonicalFile{},
				TestsRun:         []canonicalTest{},
				CommandsExecuted: []canonicalCommand{},
			},
		},
	}
	if d := agents.Lookup(agentevent.SourceFromServiceName(agent)); d != nil {
		ev.Author.Name, ev.Visualization.Color = d.Display, d.Color
	}
	ev.Visualization.Tags = append(ev.Visualization.Tags, status)
	if b := str(agentevent.AttrGitBranch); b != "" {
		ev.Branches = append(ev.Branches, b)
	}
	if prev := str(agentevent.AttrTurnPreviousID); prev != "" {
		prevID, _ := canonicalIDs(agent, key.session, prev)
		ev.ParentIDs = append(ev.ParentIDs, prevID)
	}
	if _, ok := a.Get(agentevent.AttrTurnErrors); ok {
		ev.Metadata.ErrorsEncountered = num(agentevent.AttrTurnErrors)
	}
	if v, ok := a.Get(agentevent.AttrTurnCostUSD); ok && v.Type() == pcommon.ValueTypeDouble {
		c := v.Double()
		ev.Metadata.Usage.CostUSD = &c
	}
	duration := float64(sp.EndTimestamp()-sp.StartTimestamp()) / 1e9
	if _, ok := a.Get(agentevent.AttrTurnDurationMs); ok {
		duration = float64(num(agentevent.AttrTurnDurationMs)) / 1e3
	}
	ev.Metadata.SessionDuration = max(0, duration)
	if f.includeContent {
		if prompt := promptText(str(agentevent.AttrInputMessages)); prompt != "" {
			ev.Title = prompt
			ev.Metadata.UserPrompt = &prompt
		}
	}

	var files []rollupFile
	if f.rollup(sp, agentevent.AttrTurnFiles, &files) {
		for _, r := range files {
			ev.Metadata.Activities.FilesModified = append(ev.Metadata.Activities.FilesModified, canonicalFile(r))
		}
	}
	var commands []rollupCommand
	if f.rollup(sp, agentevent.AttrTurnCommands, &commands) {
		for _, r := range commands {
			ev.Metadata.Activities.CommandsExecuted = append(ev.Metadata.Activities.CommandsExecuted, canonicalCommand(r))
		}
	}
	var tests []rollupTest
	if f.rollup(sp, agentevent.AttrTurnTests, &tests) {
		for _, r := range tests {
			ev.Metadata.Activities.TestsRun = append(ev.Metadata.Activities.TestsRun, canonicalTest{
				TestFile: r.Command, Status: r.Status, Timestamp: r.Timestamp, Command: r.Command,
				Runner: r.Runner, TestsRun: r.TestsRun, TestsPassed: r.TestsPassed, ExitCode: r.ExitCode,
			})
		}
	}
	if len(ev.Metadata.Activities.TestsRun) > 0 {
		pass := true
		for _, t := range ev.Metadata.Activities.TestsRun {
			pass = pass && t.Status == "passed"
		}
		ev.Metadata.TestsPass = &pass
	}
	out.add(ev)
}

// rollup decodes one of the turn's JSON rollup attributes into v; it reports
// false when the attribute is absent or is not that JSON (counted).
func (f *canonicalFormat) rollup(sp ptrace.Span, attr string, v any) bool {
	raw, ok := sp.Attributes().Get(attr)
	if !ok || raw.Str() == "" {
		return false
	}
	if err := jsonx.Unmarshal([]byte(raw.Str()), v); err != nil {
		f.malformed(attr, sp, err)
		return false
	}
	return true
}

// promptText is the text of the user message in gen_ai.input.messages (the
// GenAI semantic-convention JSON the connector writes with include_content).
func promptText(messages string) string {
	if messages == "" {
		return ""
	}
	var msgs []struct {
		Role  string `json:"role"`
		Parts []struct {
			Type    string `json:"type"`
			Content string `json:"content"`
		} `json:"parts"`
	}
	if jsonx.Unmarshal([]byte(messages), &msgs) != nil {
		return ""
	}
	for _, m := range msgs {
		if m.Role != "user" {
			continue
		}
		for _, p := range m.Parts {
			if p.Type == "text" && p.Content != "" {
				return p.Content
			}
		}
	}
	return ""
}
