// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package agentevent is the normalized event model of agentotel: the agtrace
// Agent Event v1 specification (schema_version "agtrace.event.v1") plus the
// extensions real agent logs need. It is the wire contract between the
// agent_log receiver (which produces events) and everything downstream
// (which consumes them as OTel log records, see Encode and Decode).
//
// The package imports nothing of agentotel and no vendor package.
package agentevent

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SchemaVersion is the agtrace schema version every event carries.
const SchemaVersion = "agtrace.event.v1"

// Source is the agent that wrote the record: the spec's enum, extended by
// every agent agentotel reads (an enum extension the spec allows within
// v1). Each agent's vendor package declares its own value and registers it
// (internal/agents); this package knows none of them.
type Source string

// services maps each registered source to its service.name and back
// (NameService); an agent's descriptor registers them (internal/agents).
var services = struct {
	sync.RWMutex
	byName   map[string]Source
	bySource map[Source]string
}{byName: map[string]Source{}, bySource: map[Source]string{}}

// NameService records the service.name of an agent's telemetry.
func NameService(s Source, service string) {
	services.Lock()
	defer services.Unlock()
	services.bySource[s] = service
	services.byName[service] = s
}

// ServiceName is the OTel service.name used for the agent's telemetry: the
// one its descriptor registers, else the source with "-" for "_".
func (s Source) ServiceName() string {
	services.RLock()
	name, ok := services.bySource[s]
	services.RUnlock()
	if ok {
		return name
	}
	return strings.ReplaceAll(string(s), "_", "-")
}

// SourceFromServiceName is the inverse of Source.ServiceName.
func SourceFromServiceName(name string) Source {
	services.RLock()
	s, ok := services.byName[name]
	services.RUnlock()
	if ok {
		return s
	}
	return Source(strings.ReplaceAll(name, "-", "_"))
}

// EventType is one of the ten agtrace event types.
type EventType string

const (
	TypeUserMessage      EventType = "user_message"
	TypeAssistantMessage EventType = "assistant_message"
	TypeSystemMessage    EventType = "system_message"
	TypeReasoning        EventType = "reasoning"
	TypeToolCall         EventType = "tool_call"
	TypeToolResult       EventType = "tool_result"
	TypeFileSnapshot     EventType = "file_snapshot"
	TypeSessionSummary   EventType = "session_summary"
	TypeMeta             EventType = "meta"
	TypeLog              EventType = "log"
)

// EventTypes lists every event type, in spec order.
var EventTypes = []EventType{
	TypeUserMessage, TypeAssistantMessage, TypeSystemMessage, TypeReasoning, TypeToolCall,
	TypeToolResult, TypeFileSnapshot, TypeSessionSummary, TypeMeta, TypeLog,
}

// Role is who is responsible for the event.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleSystem    Role = "system"
	RoleTool      Role = "tool"
	RoleCLI       Role = "cli"
	RoleOther     Role = "other"
)

// Channel is where the event happened.
type Channel string

const (
	ChannelChat       Channel = "chat"
	ChannelEditor     Channel = "editor"
	ChannelTerminal   Channel = "terminal"
	ChannelFilesystem Channel = "filesystem"
	ChannelSystem     Channel = "system"
	ChannelOther      Channel = "other"
)

// ToolStatus is the outcome of a tool call.
type ToolStatus string

const (
	ToolSuccess    ToolStatus = "success"
	ToolError      ToolStatus = "error"
	ToolInProgress ToolStatus = "in_progress"
	ToolUnknown    ToolStatus = "unknown"
)

// FileOp is the kind of file operation a tool performed.
type FileOp string

const (
	FileRead   FileOp = "read"
	FileWrite  FileOp = "write"
	FileModify FileOp = "modify"
	FileDelete FileOp = "delete"
	FileCreate FileOp = "create"
	FileMove   FileOp = "move"
)

// Event is one normalized agent event (AgentEventV1 plus extensions).
//
// Nullable spec fields are modeled as the zero value for strings ("" = null)
// and as pointers for numbers. Token fields follow the OTel GenAI convention:
// TokensInput includes cache reads and cache creation, TokensOutput includes
// reasoning tokens, TokensTotal = input + output (+ tool tokens where the
// vendor reports them). Token fields carry the usage that this event adds to
// the session total, so summing them over a session never double counts.
type Event struct {
	// --- agtrace v1 fields ---
	SchemaVersion string // always SchemaVersion once normalized
	Source        Source
	ProjectHash   string // sha256 hex of ProjectRoot (ProjectHash func) or the vendor's hash
	ProjectRoot   string
	SessionID     string
	EventID       string
	ParentEventID string // the event id of the turn's user_message; "" for user_message
	Timestamp     time.Time
	Type          EventType
	Role          Role
	Channel       Channel
	Text          string // content: prompt, response, reasoning, tool arguments or output

	ToolName      string
	ToolCallID    string
	ToolStatus    ToolStatus
	ToolLatencyMs *int64
	ToolExitCode  *int64

	FilePath     string
	FileLanguage string
	FileOp       FileOp

	Model          string
	TokensInput    *int64
	TokensOutput   *int64
	TokensTotal    *int64
	TokensCached   *int64 // cache reads, a subset of TokensInput
	TokensThinking *int64 // reasoning tokens, a subset of TokensOutput
	TokensTool     *int64

	AgentID string // vendor agent id (Claude agentId, Codex thread id of a child, ...)
	Raw     []byte // the vendor record, undecoded (content: only kept when asked for)

	// --- extensions ---

	// Sequence orders events within a session file: strictly increasing in
	// emission order (the receiver derives it from record position).
	Sequence int64
	// AgentVersion is the CLI version that wrote the record (can change mid-file).
	AgentVersion string
	// GitBranch is the checked-out branch when the record was written.
	GitBranch string
	// IsSidechain marks records of a subagent (Claude isSidechain).
	IsSidechain bool
	// SubagentType names the kind of subagent (Claude agentType, Codex agent role).
	SubagentType string
	// ParentToolCallID is, on the events of a subagent, the id of the tool call
	// in the parent session that spawned it, when the parser knows it.
	ParentToolCallID string
	// SpawnedAgentID is, on a tool_result, the AgentID of the subagent that the
	// tool call ran. Downstream it links the subagent's events to the call.
	SpawnedAgentID string
	// CLIName/entrypoint-like origin of the session (cli, claude-vscode, codex_exec, ...).
	Entrypoint string
	// Provider is the gen_ai.provider.name of the model that answered (anthropic, openai, ...).
	Provider string
	// ResponseID is the model response (API message id) this event belongs to;
	// events of one model call share it.
	ResponseID string
	// FinishReason is the model's stop reason, on the last event of a response.
	FinishReason string
	// ErrorType classifies a failure (error.type): on failed tool results and error events.
	ErrorType string
	// TokensCacheCreation counts input tokens written to the prompt cache (subset of TokensInput).
	TokensCacheCreation *int64
	// CostUSD is the cost the vendor reported for this event's usage.
	CostUSD *float64
	// Status is a turn outcome the vendor recorded on this event
	// (completed, interrupted, error); empty when the event says nothing about it.
	Status string
	// LogFile and LogLine locate the record: the session file and its 1-based line.
	LogFile string
	LogLine int64
	// Unparsed, when set, marks a record that could not be mapped (reason:
	// malformed_json, unknown_type, ...). Such an event is a TypeLog, role
	// system, with Raw holding the record; it is counted, never fatal.
	Unparsed string
	// Attributes carries further vendor facts, keys under the "agent." prefix
	// (agent.compaction.trigger, agent.turn.duration_ms, ...). Values are
	// string, bool, int64 or float64.
	Attributes map[string]any
}

// ContentAttrPrefix marks the Attributes that are content (file diffs, …):
// like Text, they are dropped unless content is asked for (StripContent).
const ContentAttrPrefix = "agent.content."

// AttrFileDiff is a unified diff of the change a file tool made (content).
const AttrFileDiff = ContentAttrPrefix + "file_diff"

// StripContent drops the event's content: Text and every attribute under
// ContentAttrPrefix. Raw (the vendor record) is dropped separately.
func StripContent(ev *Event) {
	ev.Text = ""
	for k := range ev.Attributes {
		if strings.HasPrefix(k, ContentAttrPrefix) {
			delete(ev.Attributes, k)
		}
	}
}

// AttrSubagentLink, set to SubagentLinkTurn on a subagent's events, asks for
// the subagent to be nested under the turn of its session's main agent that
// was open when the subagent started, when no tool call is known to have
// spawned it (a Codex /review rollout, a Gemini subagent chat, an OpenCode
// child session no task call names). A spawning tool call, when one is
// known, wins.
const (
	AttrSubagentLink = "agent.subagent.link"
	SubagentLinkTurn = "turn"
	// SubagentLinkAnchor asks for the subagent to be nested under the turn
	// of another session of the same project (ProjectRoot) whose event
	// carries AttrSubagentAnchor with the same value as the subagent's events,
	// the latest one at or just before the subagent's start. For a subagent
	// that records no parent at all (a Codex /review rollout: its parent's
	// "entered review mode" event is the anchor).
	SubagentLinkAnchor = "anchor"
	// SubagentLinkNone says that no tool call spawned the subagent and none
	// will name it (a Claude Code warmup): it is a trace of its own, which
	// the connector closes like a turn instead of first waiting
	// turn_idle_timeout for a spawning call to claim it. A tool link that
	// does come still wins while the subagent is open.
	SubagentLinkNone = "none"
	// AttrSubagentAnchor names the kind of anchor (e.g. "review"): on the
	// parent's event, and on the subagent's events next to SubagentLinkAnchor.
	AttrSubagentAnchor = "agent.subagent.anchor"
)

// A subagent thread the vendor gives an id of its own (a Codex thread_spawn
// child, an OpenCode child session, a Gemini subagent chat) keeps that id as
// SessionID (gen_ai.conversation.id); its events then name the session it
// was spawned from. AttrParentSessionID is the immediate parent's session id;
// AttrRootSessionID is the session whose turn the whole tree of subagents
// belongs to (the same, except for a grandchild): the agent_span connector
// builds the tree of a root session from the threads that name it.
// ParentToolCallID names the spawning call when the child's log tells it.
const (
	AttrParentSessionID = "agent.subagent.parent_session.id"
	AttrRootSessionID   = "agent.subagent.root_session.id"
)

// TreeSession is the session an event's thread belongs to for nesting: the
// root session it names (AttrRootSessionID), else its own.
func TreeSession(ev *Event) string {
	if r, ok := ev.Attributes[AttrRootSessionID].(string); ok && r != "" {
		return r
	}
	return ev.SessionID
}

// AttrPreviousPrompt, on a user_message of an agent whose log is a tree of
// branches (Pi), is the event id of the previous prompt on the same branch
// ("" on a branch's first prompt): the turn links to that turn, not to the
// one written before it in the file, which may be on an abandoned branch.
const AttrPreviousPrompt = "agent.turn.previous_prompt"

// AttrTurnEnd marks the event that is the vendor's own end-of-turn marker
// (Codex task_complete / turn_aborted, Claude Code turn_duration or an
// interrupt row, Pi's and OpenCode's final assistant message, …). Its value is
// the turn status the vendor states: TurnEndCompleted, TurnEndInterrupted or
// TurnEndError. Events of the same thread may still follow it (usage written
// after the marker, a hook's output): the marker tells the connector that the
// turn is over, not that nothing of it is left to read. The vendor parsers'
// READMEs say which record carries it.
const (
	AttrTurnEnd        = "agent.turn.end"
	TurnEndCompleted   = "completed"
	TurnEndInterrupted = "interrupted"
	TurnEndError       = "error"
)

// AttrUsageCarrier says how an event came to carry a model response's
// usage when the vendor wrote the usage apart from the response's content:
// UsageCarrierOwn when no response was there to carry it (a usage record
// after an aborted turn, around a compaction, at the end of a turn: the event
// stands for a model call of its own), UsageCarrierDeferred when the usage was
// held until the response's last row and carried by an event of its own,
// UsageCarrierCorrection when a response's final usage went out and a later
// row of it reported more (the event carries only the growth).
const (
	AttrUsageCarrier       = "agent.usage.carrier"
	UsageCarrierOwn        = "own"
	UsageCarrierDeferred   = "deferred"
	UsageCarrierCorrection = "correction"
)

// Int returns a pointer to v, for the nullable numeric fields.
func Int(v int64) *int64 { return new(v) }

// Float returns a pointer to v.
func Float(v float64) *float64 { return new(v) }

// Value returns *p, or 0 when p is nil.
func Value(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// ProjectHash is the agtrace project hash: sha256 hex of the project root
// (the Gemini CLI definition). It is "" for an empty root.
func ProjectHash(root string) string {
	if root == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(root))
	return hex.EncodeToString(sum[:])
}

// StableID derives an event id from the identity of the file a record came
// from, the record's byte offset and the event's index among those the record
// yields. It is used where the vendor has no id for an event (and, for
// records with ids, keeps ids unique when one record yields several events).
func StableID(fileIdentity string, offset int64, index int) string {
	h := sha256.New()
	h.Write([]byte(fileIdentity))
	h.Write([]byte{0})
	h.Write([]byte(strconv.FormatInt(offset, 10)))
	h.Write([]byte{0})
	h.Write([]byte(strconv.Itoa(index)))
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// RoleFor returns the role the spec's section 4 mandates for an event type
// where it allows exactly one; ok is false where more than one is allowed.
func RoleFor(t EventType) (role Role, ok bool) {
	switch t {
	case TypeUserMessage:
		return RoleUser, true
	case TypeAssistantMessage, TypeReasoning, TypeToolCall:
		return RoleAssistant, true
	case TypeSystemMessage, TypeFileSnapshot, TypeMeta:
		return RoleSystem, true
	case TypeToolResult:
		return RoleTool, true
	}
	return "", false
}

// AllowedRoles lists the roles section 4 allows for an event type.
func AllowedRoles(t EventType) []Role {
	if r, ok := RoleFor(t); ok {
		return []Role{r}
	}
	switch t {
	case TypeSessionSummary:
		return []Role{RoleAssistant, RoleSystem}
	case TypeLog:
		return []Role{RoleSystem, RoleCLI}
	}
	return nil
}
