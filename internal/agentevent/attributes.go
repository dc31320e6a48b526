// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentevent

// The vocabulary of agentotel beyond the event encoding (encoding.go) and the
// tool facts (facts.go): the attribute keys the parsers put in
// Event.Attributes, the keys and names of the spans agent_span builds and
// agent_native normalizes, and the metric names. Every "agent." and
// "gen_ai." name of agentotel's is a constant of this package, so that each
// is spelled once and a consumer finds what a producer wrote;
// vocabulary_test.go holds the rest of the module to it (and lists the few
// such strings that are other formats' names). docs/design/span-model.md,
// section Attributes, says what each means on a span.

// AttrNamespace is the prefix of every key agentotel defines where the GenAI
// semantic conventions have none: the vendor facts an event carries are the
// attributes under it.
const AttrNamespace = "agent."

// GenAI semantic-convention keys of the spans and metrics, beyond those the
// event encoding carries.
const (
	// AttrOperationName is invoke_agent, chat or execute_tool.
	AttrOperationName = "gen_ai.operation.name"
	// AttrAgentName is the agent, or the subagent type, on invoke_agent.
	AttrAgentName = "gen_ai.agent.name"
	// AttrRequestModel is the model asked; logs record only the model that
	// answered, so it has that value.
	AttrRequestModel = "gen_ai.request.model"
	// AttrToolType is "function" on execute_tool: the agent runs its tools
	// itself.
	AttrToolType = "gen_ai.tool.type"
	// AttrTokenType is input or output on gen_ai.client.token.usage.
	AttrTokenType = "gen_ai.token.type"
	// AttrGenAIUsagePrefix is the prefix of the conventions' token counts
	// (AttrTokensInput, AttrTokensCached, ...).
	AttrGenAIUsagePrefix = "gen_ai.usage."
)

// Content: the conventions' opt-in keys of prompts, responses, instructions
// and tool input and output. Written only with include_content.
const (
	AttrInputMessages      = "gen_ai.input.messages"
	AttrOutputMessages     = "gen_ai.output.messages"
	AttrSystemInstructions = "gen_ai.system_instructions"
	AttrToolCallArguments  = "gen_ai.tool.call.arguments"
	AttrToolCallResult     = "gen_ai.tool.call.result"
)

// Keys some agents put on their own spans that the span normalizers read and
// replace: agentotel never writes them.
const (
	// AttrGenAISystem is the deprecated predecessor of AttrProvider.
	AttrGenAISystem = "gen_ai.system"
	// AttrCodexCacheWriteTokens is Codex's key of the cache-creation tokens
	// (AttrTokensCacheCreation).
	AttrCodexCacheWriteTokens = "gen_ai.usage.cache_write.input_tokens"
	// AttrCopilotReasoningTokens is VS Code Copilot Chat's legacy key of the
	// reasoning tokens (AttrTokensThinking).
	AttrCopilotReasoningTokens = "gen_ai.usage.reasoning_tokens"
)

// Metric names of agent_metrics: the GenAI conventions' client metrics, and
// a cost counter (no convention has one).
const (
	MetricTokenUsage        = "gen_ai.client.token.usage"
	MetricOperationDuration = "gen_ai.client.operation.duration"
	// MetricCostUSD is named after the attribute it sums.
	MetricCostUSD = AttrCostUSD
)

// Usage and cost.
const (
	// AttrUsagePrefix is the prefix of the usage keys the conventions do not
	// name (AttrTokensTotal, AttrCostUSD, AttrUsageCarrier, ...).
	AttrUsagePrefix = "agent.usage."
	// AttrCostSource says where a cost (AttrCostUSD) came from: the log, the
	// price table, the configuration or an agent's fallback model
	// (gen_ai_cost).
	AttrCostSource = "agent.usage.cost_source"
)

// Span names of the internal spans agent_native gives an agent's own spans
// that are neither a turn, a model call nor a tool call.
const (
	// SpanToolExecution is the execution of a Claude Code tool call: the
	// agent_native processor carries its Error status and error.type to the
	// execute_tool span of the same gen_ai.tool.call.id, its parent.
	SpanToolExecution     = "agent.tool.execution"
	SpanToolBlockedOnUser = "agent.tool.blocked_on_user"
	SpanToolDispatch      = "agent.tool.dispatch"
	SpanToolHandle        = "agent.tool.handle"
	SpanToolCodeMode      = "agent.tool.code_mode"
	SpanToolMCPCall       = "agent.tool.mcp_call"
	SpanHook              = "agent.hook"
	SpanCompaction        = "agent.compaction"
	SpanSamplingRequest   = "agent.sampling_request"
)

// Span event names of agent_span, for the events that are facts of a span
// rather than spans of their own. Other events are named EventNamePrefix and
// their type.
const (
	SpanEventReasoning      = "agent.reasoning"
	SpanEventCompaction     = "agent.compaction"
	SpanEventFileSnapshot   = "agent.file_snapshot"
	SpanEventSessionSummary = "agent.session_summary"
	SpanEventAPIError       = "agent.api_error"
)

// The turn rollup agent_span puts on each invoke_agent span: what the run and
// its subagents did.
const (
	AttrTurnStatus       = "agent.turn.status"
	AttrTurnSummary      = "agent.turn.summary"
	AttrTurnModelCalls   = "agent.turn.model_calls"
	AttrTurnToolCalls    = "agent.turn.tool_calls"
	AttrTurnToolErrors   = "agent.turn.tool_errors"
	AttrTurnErrors       = "agent.turn.errors"
	AttrTurnSubagents    = "agent.turn.subagents"
	AttrTurnFiles        = "agent.turn.files"
	AttrTurnFilesChanged = "agent.turn.files_changed"
	AttrTurnLinesAdded   = "agent.turn.lines_added"
	AttrTurnLinesRemoved = "agent.turn.lines_removed"
	AttrTurnCommands     = "agent.turn.commands"
	AttrTurnCommandsRun  = "agent.turn.commands_run"
	AttrTurnTests        = "agent.turn.tests"
	AttrTurnTestsRun     = "agent.turn.tests_run"
	AttrTurnTestsPassed  = "agent.turn.tests_passed"
	// AttrTurnDurationMs is the run's duration on invoke_agent; on an event,
	// the turn's duration as the agent measured it.
	AttrTurnDurationMs = "agent.turn.duration_ms"
	// AttrTurnPreviousID is the event id of the previous turn's prompt.
	AttrTurnPreviousID = "agent.turn.previous_id"
	// AttrTurnPromptMissing marks the root of a turn whose prompt record
	// never arrived (an agent's own telemetry): the turn is built from the
	// records that name it.
	AttrTurnPromptMissing = "agent.turn.prompt_missing"
	// AttrTurnUsagePrefix is the prefix of the run's token sums (the suffixes
	// of gen_ai.usage.*, and cost_usd): not gen_ai.usage.*, so that nothing
	// counts a token twice.
	AttrTurnUsagePrefix = "agent.turn.usage."
	// AttrTurnCostUSD is the run's cost.
	AttrTurnCostUSD = AttrTurnUsagePrefix + "cost_usd"
)

// Keys of agent_span's other spans and links.
const (
	// AttrChatPrefix marks the facts of a model call that an event states
	// (an agent's own telemetry: duration, time to first token, query
	// source, ...): the call's chat span carries them, the first stated value
	// of each.
	AttrChatPrefix             = "agent.chat."
	AttrChatTimeToFirstTokenMs = "agent.chat.time_to_first_token_ms"
	// AttrChatModelSource says where a response's model was read (Copilot
	// CLI: "own" when the response names it, else the type of the record
	// that named it), so a price can be traced to its rule.
	AttrChatModelSource = "agent.chat.model_source"
	// AttrSpanLate is true on a chat span of events that came after their
	// turn went out.
	AttrSpanLate = "agent.span.late"
	// AttrLinkType is previous_turn on the link of a turn's root to the root
	// of the turn before it.
	AttrLinkType = "agent.link.type"
)

// Facts of a turn an event states.
const (
	AttrTurnID                 = "agent.turn.id"
	AttrTurnSequence           = "agent.turn.sequence"
	AttrTurnMessageCount       = "agent.turn.message_count"
	AttrTurnInterrupted        = "agent.turn.interrupted"
	AttrTurnAbortReason        = "agent.turn.abort_reason"
	AttrTurnTimeToFirstTokenMs = "agent.turn.time_to_first_token_ms"
	// AttrTurnRolledBack is true on an event saying that its turn was taken
	// back out of the conversation (Codex's thread_rolled_back): what the
	// turn did and the tokens it spent stay, the model no longer sees it.
	AttrTurnRolledBack = "agent.turn.rolled_back"
)

// Messages between agents: a running agent that sends another one a message
// (a tool call, whose result gives the message its id) and the message as
// the other agent receives it (a user_message whose author is that agent,
// not the user). The id is the same on both sides, so that the two can be
// joined across sessions.
const (
	// AttrAgentMessageTo is the recipient the sender named (an agent's
	// name or address), on the sending tool call.
	AttrAgentMessageTo = "agent.agent_message.to"
	// AttrAgentMessageFrom is the sender's address and
	// AttrAgentMessageFromName its name, on the received message.
	AttrAgentMessageFrom     = "agent.agent_message.from"
	AttrAgentMessageFromName = "agent.agent_message.from_name"
	// AttrAgentMessageID is the message's id, on the sending tool call's
	// result and on the received message.
	AttrAgentMessageID = "agent.agent_message.id"
)

// Facts of meta events: what kind of record they stand for, and the session
// facts they carry.
const (
	// AttrMetaKind says what a meta event stands for (a system subtype, a
	// session record type, injected context, ...).
	AttrMetaKind        = "agent.meta.kind"
	AttrSystemSubtype   = "agent.system.subtype"
	AttrSummaryKind     = "agent.summary.kind"
	AttrSummaryLeafUUID = "agent.summary.leaf_uuid"
	// AttrSummaryFromExtension is true on a summary an extension wrote.
	AttrSummaryFromExtension     = "agent.summary.from_extension"
	AttrSessionStart             = "agent.session.start"
	AttrSessionTitle             = "agent.session.title"
	AttrSessionName              = "agent.session.name"
	AttrCommandName              = "agent.command.name"
	AttrCommandSource            = "agent.command.source"
	AttrAttachmentType           = "agent.attachment.type"
	AttrCustomType               = "agent.custom.type"
	AttrLabel                    = "agent.label"
	AttrLabelTarget              = "agent.label.target"
	AttrMode                     = "agent.mode"
	AttrPermissionMode           = "agent.permission_mode"
	AttrPermissionModePrevious   = "agent.permission_mode.previous"
	AttrPermissionModeTrigger    = "agent.permission_mode.trigger"
	AttrThinkingLevel            = "agent.thinking_level"
	AttrModelContextWindow       = "agent.model.context_window"
	AttrModelChangeModel         = "agent.model_change.model"
	AttrModelChangePreviousModel = "agent.model_change.previous_model"
	AttrModelChangeProvider      = "agent.model_change.provider"
	AttrPromptLength             = "agent.prompt.length"
	AttrMessagePhase             = "agent.message.phase"
	// AttrMessageKind names what wrote a message no model answered (an
	// OpenClaw delivery mirror or gateway injection).
	AttrMessageKind = "agent.message.kind"
	AttrMessageUUID = "agent.message.uuid"
	// AttrTextSynthetic is true on a text the agent added to the
	// conversation itself rather than the model.
	AttrTextSynthetic = "agent.text.synthetic"
	// AttrTextIgnored is true on a notice the agent showed its user and
	// kept out of the model's context (Kilo CLI's output-limit warning).
	AttrTextIgnored             = "agent.text.ignored"
	AttrReasoningSubject        = "agent.reasoning.subject"
	AttrReasoningDurationMs     = "agent.reasoning.duration_ms"
	AttrWorkflowRunID           = "agent.workflow.run_id"
	AttrWorkflowName            = "agent.workflow.name"
	AttrSkillName               = "agent.skill.name"
	AttrSkillSource             = "agent.skill.source"
	AttrSkillTrigger            = "agent.skill.trigger"
	AttrMentionType             = "agent.mention.type"
	AttrMentionSuccess          = "agent.mention.success"
	AttrGitCommit               = "agent.git.commit"
	AttrGitRepository           = "agent.git.repository"
	AttrPRURL                   = "agent.pr.url"
	AttrPRNumber                = "agent.pr.number"
	AttrPRRepository            = "agent.pr.repository"
	AttrTeleportRemoteSessionID = "agent.teleport.remote_session_id"
	AttrTeleportBranch          = "agent.teleport.branch"
	AttrRemoteControlURL        = "agent.remote_control.url"
	// AttrErrorClass is the agent's own classification of a failure, kept
	// beside error.type.
	AttrErrorClass = "agent.error.class"
	// AttrSubagentParentAgentID is the agent id of the agent that spawned a
	// subagent.
	AttrSubagentParentAgentID = "agent.subagent.parent_agent.id"
	// AttrSubagentCompletedPrefix is the prefix of the facts of a subagent
	// run's end (its type, source, tokens of its last request, tool uses).
	AttrSubagentCompletedPrefix = "agent.subagent.completed."
	// AttrSubagentOrphan (true) marks the events of a subagent whose
	// parent's log is absent (deleted, or never copied with it): read as a
	// session of its own, as no spawning call can ever claim it.
	AttrSubagentOrphan = "agent.subagent.orphan"
	// AttrSubagentForkParentRecord is, on the record that starts a forked
	// subagent, the id of the parent's record its inherited context ends at;
	// AttrSubagentForkContextLength is how many messages it inherited.
	AttrSubagentForkParentRecord  = "agent.subagent.fork.parent_record.id"
	AttrSubagentForkContextLength = "agent.subagent.fork.context_length"
	// AttrTruncationPrefix is the prefix of the facts of a context
	// truncation (token limit, tokens and messages before, after, removed).
	AttrTruncationPrefix = "agent.truncation."
)

// Facts of a file snapshot.
const (
	AttrSnapshotCommit    = "agent.snapshot.commit"
	AttrSnapshotMessageID = "agent.snapshot.message_id"
	AttrSnapshotIsUpdate  = "agent.snapshot.is_update"
	AttrSnapshotFileCount = "agent.snapshot.file_count"
)

// Facts of a move in a session tree (Pi): the entry left, the entry gone
// to, and how many entries the move abandoned; and of the records that move
// or restart it (OpenClaw).
const (
	AttrBranchFromEntry        = "agent.branch.from_entry"
	AttrBranchToEntry          = "agent.branch.to_entry"
	AttrBranchAbandonedEntries = "agent.branch.abandoned_entries"
	// AttrLeafTarget, AttrLeafAppendParent and AttrLeafAppendMode are an
	// OpenClaw leaf control's: the entry the branch now ends at, the entry
	// the next ones hang from, and "side" for entries appended beside the
	// branch.
	AttrLeafTarget       = "agent.leaf.target"
	AttrLeafAppendParent = "agent.leaf.append_parent"
	AttrLeafAppendMode   = "agent.leaf.append_mode"
	// AttrResetReason and AttrResetFirstKeptEntry are an OpenClaw reset
	// boundary's: why the context started again (new, reset, idle, daily,
	// cron-stale) and the first entry it kept.
	AttrResetReason         = "agent.reset.reason"
	AttrResetFirstKeptEntry = "agent.reset.first_kept_entry"
)

// Facts of a compaction of the context.
const (
	// AttrCompactionPrefix is the prefix of the facts below: an event with
	// any of them is shown as the span event SpanEventCompaction.
	AttrCompactionPrefix         = "agent.compaction."
	AttrCompactionTrigger        = "agent.compaction.trigger"
	AttrCompactionPreTokens      = "agent.compaction.pre_tokens"
	AttrCompactionPostTokens     = "agent.compaction.post_tokens"
	AttrCompactionDurationMs     = "agent.compaction.duration_ms"
	AttrCompactionSuccess        = "agent.compaction.success"
	AttrCompactionFailed         = "agent.compaction.failed"
	AttrCompactionFirstKeptEntry = "agent.compaction.first_kept_entry"
)

// Facts of a hook run.
const (
	AttrHookName                  = "agent.hook.name"
	AttrHookEvent                 = "agent.hook.event"
	AttrHookType                  = "agent.hook.type"
	AttrHookSource                = "agent.hook.source"
	AttrHookExitCode              = "agent.hook.exit_code"
	AttrHookDurationMs            = "agent.hook.duration_ms"
	AttrHookCount                 = "agent.hook.count"
	AttrHookErrorCount            = "agent.hook.error_count"
	AttrHookSuccessCount          = "agent.hook.success_count"
	AttrHookBlockingCount         = "agent.hook.blocking_count"
	AttrHookCancelledCount        = "agent.hook.cancelled_count"
	AttrHookPreventedContinuation = "agent.hook.prevented_continuation"
)

// Facts of a model API call and its failures.
const (
	// AttrAPI names the API a model was called through (Pi).
	AttrAPI                     = "agent.api"
	AttrAPIError                = "agent.api.error"
	AttrAPIStatusCode           = "agent.api.status_code"
	AttrAPIModel                = "agent.api.model"
	AttrAPIRequestID            = "agent.api.request_id"
	AttrAPIQuerySource          = "agent.api.query_source"
	AttrAPIDurationMs           = "agent.api.duration_ms"
	AttrAPIAttempt              = "agent.api.attempt"
	AttrAPIRetryAttempt         = "agent.api.retry_attempt"
	AttrAPIMaxRetries           = "agent.api.max_retries"
	AttrAPITotalAttempts        = "agent.api.total_attempts"
	AttrAPITotalRetryDurationMs = "agent.api.total_retry_duration_ms"
	AttrAPIRetriesExhausted     = "agent.api.retries_exhausted"
	AttrAPIRefusalCategory      = "agent.api.refusal.category"
)

// Facts of a tool call beyond the event's fields and facts.go.
const (
	// AttrToolDecision and AttrToolDecisionSource are the decision taken on
	// a tool call that needed one, and who took it.
	AttrToolDecision        = "agent.tool.decision"
	AttrToolDecisionSource  = "agent.tool.decision.source"
	AttrToolSource          = "agent.tool.source"
	AttrToolInputSizeBytes  = "agent.tool.input_size_bytes"
	AttrToolResultSizeBytes = "agent.tool.result_size_bytes"
	AttrToolMCPServerScope  = "agent.tool.mcp_server_scope"
	AttrToolResultSeq       = "agent.tool.result_seq"
	AttrToolOutputTruncated = "agent.tool.output_truncated"
	AttrToolOutputCompacted = "agent.tool.output_compacted"
	AttrToolRepeatedResult  = "agent.tool.repeated_result"
	AttrToolCancelled       = "agent.tool.cancelled"
	AttrToolNotExecuted     = "agent.tool.not_executed"
	// AttrToolBackground is true on the result of a command sent to the
	// background: the call is over, the command is not (OpenClaw's exec).
	AttrToolBackground = "agent.tool.background"
	// AttrToolLateCallID names the call of a result whose call was never
	// seen: the result has no ToolCallID, so that it pairs with nothing
	// rather than with the wrong call.
	AttrToolLateCallID          = "agent.tool.late_call_id"
	AttrBashExcludedFromContext = "agent.bash.excluded_from_context"
	AttrMCPServer               = "agent.mcp.server"
	AttrMCPServerOrigin         = "agent.mcp.server_origin"
)

// Facts only one agent's records have, under the agent's name.
const (
	AttrAmpOperation = "agent.amp.operation"
	AttrAmpCredits   = "agent.amp.credits"
	AttrAmpAgentMode = "agent.amp.agent_mode"
	AttrAmpRunStatus = "agent.amp.run_status"
	AttrAmpTitle     = "agent.amp.title"
	AttrAmpMessageID = "agent.amp.message_id"

	AttrCodexEvent                 = "agent.codex.event"
	AttrCodexSource                = "agent.codex.source"
	AttrCodexTask                  = "agent.codex.task"
	AttrCodexModelProvider         = "agent.codex.model_provider"
	AttrCodexServiceTier           = "agent.codex.service_tier"
	AttrCodexReasoningEffort       = "agent.codex.reasoning_effort"
	AttrCodexReasoningSummary      = "agent.codex.reasoning_summary"
	AttrCodexApprovalPolicy        = "agent.codex.approval_policy"
	AttrCodexSandboxPolicy         = "agent.codex.sandbox_policy"
	AttrCodexAutoCompactTokenLimit = "agent.codex.auto_compact_token_limit"
	AttrCodexToolNamespace         = "agent.codex.tool_namespace"
	AttrCodexAgentName             = "agent.codex.agent_name"
	AttrCodexAgentType             = "agent.codex.agent_type"
	AttrCodexParentConversationID  = "agent.codex.parent_conversation.id"
	AttrCodexDurationMs            = "agent.codex.duration_ms"
	AttrCodexSSEKind               = "agent.codex.sse.kind"
	AttrCodexEndpoint              = "agent.codex.endpoint"
	AttrCodexHTTPStatusCode        = "agent.codex.http_status_code"
	AttrCodexAttempt               = "agent.codex.attempt"
	// AttrCodexRolledBackTurns is how many of the latest turns a
	// thread_rolled_back took back.
	AttrCodexRolledBackTurns = "agent.codex.rolled_back_turns"
	// AttrCodexWorldStateFull tells a world_state snapshot (true) from a
	// delta over the previous one; AttrCodexWorldStateKeys lists the parts
	// of the state it holds, comma-separated.
	AttrCodexWorldStateFull = "agent.codex.world_state.full"
	AttrCodexWorldStateKeys = "agent.codex.world_state.keys"
	AttrCodexPersonality    = "agent.codex.personality"
	AttrCodexCollabMode     = "agent.codex.collaboration_mode"
	// AttrCodexToolSearchExecution is where a tool search ran (client,
	// server); AttrCodexToolSearchTools is how many tools (or namespaces of
	// tools) it found.
	AttrCodexToolSearchExecution = "agent.codex.tool_search.execution"
	AttrCodexToolSearchTools     = "agent.codex.tool_search.tools"
	// AttrCodexAgentPath is the path of an agent in a multi-agent thread
	// tree ("/root/worker"); AttrCodexMessageAuthor and
	// AttrCodexMessageRecipient are the paths an inter-agent message joins.
	AttrCodexAgentPath     = "agent.codex.agent_path"
	AttrCodexAgentThreadID = "agent.codex.agent_thread.id"
	AttrCodexModel         = "agent.codex.model"
	// AttrCodexRolledBackPrompts are the event ids of the prompts of the
	// turns a thread_rolled_back took back, comma-separated (as far as the
	// parser still knows them).
	AttrCodexRolledBackPrompts = "agent.codex.rolled_back_prompts"
	AttrCodexMessageAuthor     = "agent.codex.message.author"
	AttrCodexMessageRecipient  = "agent.codex.message.recipient"
	// AttrCodexTriggerTurn is true when an inter-agent message starts a
	// turn of its recipient.
	AttrCodexTriggerTurn = "agent.codex.message.trigger_turn"
	// AttrCodexSubagentActivity is what a sub_agent_activity says happened
	// to a child agent (started, interacted, interrupted, ...).
	AttrCodexSubagentActivity = "agent.codex.subagent_activity"
	// AttrCodexTurnCostUSD is Codex's own estimate of a turn's cost.
	AttrCodexTurnCostUSD = "agent.codex.turn_cost_usd"
	// AttrCodexToolDecisionSource is AttrToolDecisionSource as the Codex
	// native mapping spells it.
	AttrCodexToolDecisionSource = "agent.tool.decision_source"

	AttrCopilotEvent           = "agent.copilot.event"
	AttrCopilotInfoType        = "agent.copilot.info_type"
	AttrCopilotMode            = "agent.copilot.mode"
	AttrCopilotPreviousMode    = "agent.copilot.previous_mode"
	AttrCopilotReasoningEffort = "agent.copilot.reasoning_effort"
	// AttrCopilotBookkeeping is true on an event of the CLI's own
	// bookkeeping, which a rollup or a dashboard may leave out.
	AttrCopilotBookkeeping = "agent.copilot.bookkeeping"
	// AttrCopilotUsageScope is "session" on an event carrying a
	// session.shutdown's usage: the usage of the run it ends.
	AttrCopilotUsageScope       = "agent.copilot.usage_scope"
	AttrCopilotRequests         = "agent.copilot.requests"
	AttrCopilotPremiumRequests  = "agent.copilot.premium_requests"
	AttrCopilotAPIDurationMs    = "agent.copilot.api_duration_ms"
	AttrCopilotShutdownType     = "agent.copilot.shutdown_type"
	AttrCopilotResumeEventCount = "agent.copilot.resume_event_count"
	AttrCopilotFilesModified    = "agent.copilot.files_modified"
	AttrCopilotLinesAdded       = "agent.copilot.lines_added"
	AttrCopilotLinesRemoved     = "agent.copilot.lines_removed"
	AttrCopilotResultType       = "agent.copilot.result_type"
	AttrCopilotErrorCode        = "agent.copilot.error_code"
	// AttrSubagentsCostUSD is the cost, in USD, of subagent sessions an
	// agent added to an assistant message's stated cost (Kilo CLI): left
	// out of the message's AttrCostUSD, since the child sessions' own
	// messages carry it.
	AttrSubagentsCostUSD = "agent.cost.subagents_usd"

	// AttrCopilotCostMultiplier is Copilot's per-request model multiplier
	// (github.copilot.cost): not money, so never AttrCostUSD.
	AttrCopilotCostMultiplier = "agent.copilot.cost_multiplier"
	// AttrCopilotAIU and AttrCopilotNanoAIU count premium-request units.
	AttrCopilotAIU                   = "agent.copilot.aiu"
	AttrCopilotNanoAIU               = "agent.copilot.nano_aiu"
	AttrCopilotNotificationKind      = "agent.copilot.notification.kind"
	AttrCopilotNotificationStatus    = "agent.copilot.notification.status"
	AttrCopilotNotificationAgentID   = "agent.copilot.notification.agent_id"
	AttrCopilotNotificationAgentType = "agent.copilot.notification.agent_type"
	AttrCopilotNotificationShellID   = "agent.copilot.notification.shell_id"
	AttrCopilotNotificationExitCode  = "agent.copilot.notification.exit_code"

	AttrGeminiMessageType     = "agent.gemini.message_type"
	AttrGeminiChatKind        = "agent.gemini.chat_kind"
	AttrGeminiSkillExtraction = "agent.gemini.skill_extraction"
	AttrGeminiAnswerTool      = "agent.gemini.answer_tool"
	AttrGeminiToolStatus      = "agent.gemini.tool_status"
	// AttrGeminiFromLogs is true on a prompt read from Gemini CLI's
	// logs.json, for a session that has no chat file.
	AttrGeminiFromLogs = "agent.gemini.from_logs"
)
