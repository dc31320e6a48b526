// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentevent

// Error classes: the values of Event.ErrorType (error.type) the parsers and
// agent_span give a failure. They are few and stable on purpose:
// span_metrics turns error.type into a label and the alert rules key on it.
// A value an agent states itself (its own error_type) may pass through.
const (
	// ErrorTypeExitCode: a shell command exited non-zero.
	ErrorTypeExitCode = "exit_code"
	// ErrorTypeInterrupted: the user interrupted the tool while it ran, or
	// stopped the call before it ran.
	ErrorTypeInterrupted = "interrupted"
	// ErrorTypeRejected: the user declined the tool call when asked.
	ErrorTypeRejected = "rejected"
	// ErrorTypePermissionDenied: the tool needed a permission that was not
	// granted (a rule of the configuration or a hook refused it).
	ErrorTypePermissionDenied = "permission_denied"
	// ErrorTypeTimeout: the tool ran out of time.
	ErrorTypeTimeout = "timeout"
	// ErrorTypeTool: any other failure the tool reported, and a failed tool
	// call that carries no class of its own.
	ErrorTypeTool = "tool_error"
	// ErrorTypeAPI: the agent gave up on a model call (prompt too long,
	// usage limit, overload, ...).
	ErrorTypeAPI = "api_error"
	// ErrorTypeAPIRetry: a model call failed and the agent retries it. Not a
	// failure of the turn by itself.
	ErrorTypeAPIRetry = "api_retry"
	// ErrorTypeStream: the model's response stream broke and the agent
	// retries it; the turn goes on.
	ErrorTypeStream = "stream_error"
	// ErrorTypeRefusal: the model refused to answer.
	ErrorTypeRefusal = "refusal"
	// ErrorTypeInternal: the agent reported an internal error.
	ErrorTypeInternal = "internal_error"
	// ErrorTypeHook: a hook reported an error.
	ErrorTypeHook = "hook_error"
	// ErrorTypeSession: the agent reported an error of the session.
	ErrorTypeSession = "session_error"
	// ErrorTypeSubagent: a subagent failed.
	ErrorTypeSubagent = "subagent_error"
	// ErrorTypeAgent: a turn that failed with no class of its own.
	ErrorTypeAgent = "agent_error"
)

// ToolDeclined reports whether an error class means that a tool call never
// ran: the user declined it, or a permission was missing.
func ToolDeclined(errorType string) bool {
	return errorType == ErrorTypeRejected || errorType == ErrorTypePermissionDenied
}
