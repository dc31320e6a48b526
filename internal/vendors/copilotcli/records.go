// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package copilotcli

import (
	"github.com/agentotel/agentotel/internal/jsonx"
)

// record is one line of events.jsonl: an envelope around a typed payload.
type record struct {
	Type      string    `json:"type"`
	Data      jsonx.Raw `json:"data"`
	ID        string    `json:"id"`
	Timestamp string    `json:"timestamp"`
	ParentID  *string   `json:"parentId"`
}

// data holds the fields of every payload type the mapping reads; which are
// set depends on the record type. The line itself is kept as Raw.
// fastRecord is a record whose data is decoded in the same pass (its
// member shadows record's). A line it cannot decode is decoded as a record,
// whose data is then decoded on its own: the events are the same either
// way.
type fastRecord struct {
	record
	Data *data `json:"data"`
}

type data struct {
	// session.start
	SessionID      string      `json:"sessionId"`
	Producer       string      `json:"producer"`
	CopilotVersion string      `json:"copilotVersion"`
	StartTime      string      `json:"startTime"`
	SelectedModel  string      `json:"selectedModel"`
	Context        *sessionCtx `json:"context"`

	// session.model_change, session.mode_changed
	PreviousModel   string `json:"previousModel"`
	NewModel        string `json:"newModel"`
	ReasoningEffort string `json:"reasoningEffort"`
	PreviousMode    string `json:"previousMode"`
	NewMode         string `json:"newMode"`

	// session.info / warning / error
	InfoType    string `json:"infoType"`
	WarningType string `json:"warningType"`
	ErrorType   string `json:"errorType"`
	Message     string `json:"message"`

	// session.resume
	EventCount *int64 `json:"eventCount"`

	// session.truncation
	TokenLimit                      *int64 `json:"tokenLimit"`
	PreTruncationTokensInMessages   *int64 `json:"preTruncationTokensInMessages"`
	PostTruncationTokensInMessages  *int64 `json:"postTruncationTokensInMessages"`
	TokensRemovedDuringTruncation   *int64 `json:"tokensRemovedDuringTruncation"`
	MessagesRemovedDuringTruncation *int64 `json:"messagesRemovedDuringTruncation"`
	PerformedBy                     string `json:"performedBy"`

	// session.compaction_start / compaction_complete
	PreCompactionTokens *int64 `json:"preCompactionTokens"`
	SummaryContent      string `json:"summaryContent"`

	// session.task_complete
	Summary string `json:"summary"`

	// session.shutdown
	ShutdownType         string                 `json:"shutdownType"`
	TotalPremiumRequests *float64               `json:"totalPremiumRequests"`
	TotalAPIDurationMs   *int64                 `json:"totalApiDurationMs"`
	CodeChanges          *codeChanges           `json:"codeChanges"`
	ModelMetrics         map[string]modelMetric `json:"modelMetrics"`
	CurrentModel         string                 `json:"currentModel"`

	// user.message, system.message, assistant.message, assistant.reasoning
	Content       string        `json:"content"`
	MessageID     string        `json:"messageId"`
	ReasoningText string        `json:"reasoningText"`
	ToolRequests  []toolRequest `json:"toolRequests"`
	OutputTokens  *int64        `json:"outputTokens"`
	InteractionID string        `json:"interactionId"`
	AgentMode     string        `json:"agentMode"`

	// tool.execution_start / complete; events of a subagent
	ToolCallID       string         `json:"toolCallId"`
	ToolName         string         `json:"toolName"`
	Arguments        jsonx.Raw      `json:"arguments"`
	Model            string         `json:"model"`
	Success          *bool          `json:"success"`
	Result           *toolResult    `json:"result"`
	Error            jsonx.Raw      `json:"error"`
	ToolTelemetry    *toolTelemetry `json:"toolTelemetry"`
	ParentToolCallID string         `json:"parentToolCallId"`

	// skill.invoked (SkillName is its name)
	SkillName  string `json:"name"`
	PluginName string `json:"pluginName"`

	// hook.start / hook.end
	HookInvocationID string `json:"hookInvocationId"`
	HookType         string `json:"hookType"`

	// subagent.started / completed / failed
	AgentName        string `json:"agentName"`
	AgentDisplayName string `json:"agentDisplayName"`

	// system.notification: what the notice is about, decoded when used
	// (notificationKind); raw, so that no other record's "kind" can fail
	// the decoding of the fields above.
	Kind jsonx.Raw `json:"kind"`
}

// notificationKind is the structured part of a system.notification: a
// background agent done (agent_completed, agent_idle) or a shell command
// done (shell_completed, shell_detached_completed).
type notificationKind struct {
	Type      string        `json:"type"`
	AgentID   string        `json:"agentId"`
	AgentType string        `json:"agentType"`
	Status    string        `json:"status"`
	ShellID   string        `json:"shellId"`
	ExitCode  *jsonx.Number `json:"exitCode"`
}

type sessionCtx struct {
	Cwd        string `json:"cwd"`
	GitRoot    string `json:"gitRoot"`
	Branch     string `json:"branch"`
	HeadCommit string `json:"headCommit"`
	Repository string `json:"repository"`
}

type codeChanges struct {
	LinesAdded    *int64   `json:"linesAdded"`
	LinesRemoved  *int64   `json:"linesRemoved"`
	FilesModified []string `json:"filesModified"`
}

type modelMetric struct {
	Requests struct {
		Count *int64   `json:"count"`
		Cost  *float64 `json:"cost"`
	} `json:"requests"`
	Usage struct {
		InputTokens      int64 `json:"inputTokens"`
		OutputTokens     int64 `json:"outputTokens"`
		CacheReadTokens  int64 `json:"cacheReadTokens"`
		CacheWriteTokens int64 `json:"cacheWriteTokens"`
	} `json:"usage"`
}

type toolRequest struct {
	ToolCallID string    `json:"toolCallId"`
	Name       string    `json:"name"`
	Arguments  jsonx.Raw `json:"arguments"`
}

type toolResult struct {
	Content         string `json:"content"`
	DetailedContent string `json:"detailedContent"`
}

// toolError is data.error of a failed tool.execution_complete (also seen
// as a bare string in SDK material; both are read).
type toolError struct {
	Message string `json:"message"`
	Code    string `json:"code"`
}

type toolTelemetry struct {
	Metrics map[string]jsonx.Raw `json:"metrics"`
}

// toolArgs are the arguments of the built-in tools the mapping reads.
type toolArgs struct {
	Command     string `json:"command"`
	Path        string `json:"path"`
	Prompt      string `json:"prompt"`
	Description string `json:"description"`
	AgentType   string `json:"agent_type"`
	FileText    string `json:"file_text"`
}
