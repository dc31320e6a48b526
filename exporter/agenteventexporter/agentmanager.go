// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agenteventexporter

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
)

// managerEvent is the agent-manager run event envelope (seed 001).
type managerEvent struct {
	ID        string `json:"id"`
	RunID     string `json:"runId"`
	Sequence  int64  `json:"sequence"`
	EventType string `json:"eventType"`
	Timestamp string `json:"timestamp"`
	Data      any    `json:"data"`
}

type (
	managerToolCall struct {
		ToolName string          `json:"toolName"`
		Input    json.RawMessage `json:"input"`
	}
	managerToolResult struct {
		ToolName   string  `json:"toolName"`
		ToolCallID string  `json:"toolCallId"`
		Output     *string `json:"output,omitempty"`
		Error      *string `json:"error,omitempty"`
		Success    bool    `json:"success"`
	}
	managerMessage struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	managerMetric struct {
		InputTokens         int64   `json:"inputTokens"`
		OutputTokens        int64   `json:"outputTokens"`
		CacheReadTokens     *int64  `json:"cacheReadTokens,omitempty"`
		CacheCreationTokens *int64  `json:"cacheCreationTokens,omitempty"`
		TotalCostUSD        float64 `json:"totalCostUsd"`
		Model               string  `json:"model,omitempty"`
	}
	managerStatus struct {
		OldStatus string `json:"oldStatus"`
		NewStatus string `json:"newStatus"`
		Reason    string `json:"reason,omitempty"`
	}
	managerLog struct {
		Level   string `json:"level"`
		Message string `json:"message"`
	}
	managerError struct {
		Code      string `json:"code"`
		Message   string `json:"message"`
		Retryable bool   `json:"retryable"`
	}
)

// Run statuses.
const (
	runPending     = "pending"
	runRunning     = "running"
	runInterrupted = "interrupted"
	runFailed      = "failed"
	runComplete    = "complete"
)

// The seed's validation warnings.
const (
	warnToolCallEmptyName      = "tool_call_empty_tool_name"
	warnToolCallEmptyInput     = "tool_call_empty_input"
	warnFailureWithoutError    = "tool_result_failure_without_error"
	warnMessageEmptyContent    = "message_empty_content"
	warnMetricZeroTokens       = "metric_zero_tokens"
	managerUnknownToolName     = "unknown_tool"
	managerNamespaceUUIDString = "6f3b0a52-9a0e-5c43-8d4e-3c1a7f0d2b91"
)

// managerNamespace makes the UUIDs of lines (and of runs whose session id
// is not a UUID) name-based (version 5), so writing the same events again
// gives the same ids.
var managerNamespace = uuid.MustParse(managerNamespaceUUIDString)

// agentManagerFormat writes agent-manager run events: a run is a session.
type agentManagerFormat struct {
	includeContent bool
	idleTimeout    time.Duration
	warn           func(warning string, ev *agentevent.Event)
}

type managerState struct {
	runID  string
	status string
}

type managerTail struct {
	Sequence  int64     `json:"sequence"`
	EventType string    `json:"eventType"`
	Timestamp time.Time `json:"timestamp"`
	Data      struct {
		NewStatus string `json:"newStatus"`
	} `json:"data"`
}

func (*agentManagerFormat) closes() bool { return true }

func (*agentManagerFormat) lineTime(line []byte) time.Time {
	var tail managerTail
	_ = jsonx.Unmarshal(line, &tail)
	return tail.Timestamp
}

func (*agentManagerFormat) begin(s *session, last []byte) {
	st := &managerState{runID: runID(s.key), status: runPending}
	s.state = st
	s.next = 0 // the sequence starts at 0
	if last == nil {
		return
	}
	var tail managerTail
	if jsonx.Unmarshal(last, &tail) == nil {
		s.next = tail.Sequence + 1
	}
	st.status = runRunning
	if tail.EventType == "status" && tail.Data.NewStatus != "" {
		st.status = tail.Data.NewStatus
	}
}

// runID is the session id when it is a UUID (Claude Code's are), else a
// UUID made from the agent and the session id.
func runID(k sessionKey) string {
	if id, err := uuid.Parse(k.session); err == nil {
		return id.String()
	}
	return uuid.NewSHA1(managerNamespace, []byte(k.agent+"\x00"+k.session)).String()
}

func (f *agentManagerFormat) end(s *session, out *lineBuffer) {
	st := s.state.(*managerState)
	if st.status != runRunning {
		return // interrupted and failed runs keep their status
	}
	f.emit(s, out, s.newest, "status", managerStatus{
		OldStatus: runRunning, NewStatus: runComplete,
		Reason: fmt.Sprintf("no activity for %s", f.idleTimeout),
	})
	st.status = runComplete
}

func (*agentManagerFormat) emit(s *session, out *lineBuffer, t time.Time, typ string, data any) {
	st := s.state.(*managerState)
	seq := s.next
	s.next++
	out.add(&managerEvent{
		ID:        uuid.NewSHA1(managerNamespace, []byte(st.runID+"\x00"+strconv.FormatInt(seq, 10))).String(),
		RunID:     st.runID,
		Sequence:  seq,
		EventType: typ,
		Timestamp: formatTime(t),
		Data:      data,
	})
}

func (f *agentManagerFormat) setStatus(s *session, out *lineBuffer, t time.Time, status, reason string) {
	st := s.state.(*managerState)
	f.emit(s, out, t, "status", managerStatus{OldStatus: st.status, NewStatus: status, Reason: reason})
	st.status = status
}

func (f *agentManagerFormat) event(s *session, ev *agentevent.Event, out *lineBuffer) {
	st := s.state.(*managerState)
	switch {
	case st.status == runPending:
		f.setStatus(s, out, ev.Timestamp, runRunning, "session started")
	case st.status == runComplete:
		f.setStatus(s, out, ev.Timestamp, runRunning, "session resumed")
	case st.status != runRunning && ev.Type == agentevent.TypeUserMessage:
		f.setStatus(s, out, ev.Timestamp, runRunning, "new prompt")
	}

	f.main(s, ev, out)

	if ev.TokensInput != nil || ev.TokensOutput != nil {
		m := managerMetric{
			InputTokens:         max(0, agentevent.Value(ev.TokensInput)-agentevent.Value(ev.TokensCached)-agentevent.Value(ev.TokensCacheCreation)),
			OutputTokens:        agentevent.Value(ev.TokensOutput),
			CacheReadTokens:     ev.TokensCached,
			CacheCreationTokens: ev.TokensCacheCreation,
			Model:               ev.Model,
		}
		if ev.CostUSD != nil {
			m.TotalCostUSD = *ev.CostUSD
		}
		if m.InputTokens+m.OutputTokens+agentevent.Value(m.CacheReadTokens)+agentevent.Value(m.CacheCreationTokens) == 0 {
			f.warn(warnMetricZeroTokens, ev)
		}
		f.emit(s, out, ev.Timestamp, "metric", m)
	}

	if st.status == runRunning {
		switch ev.Status {
		case "interrupted":
			f.setStatus(s, out, ev.Timestamp, runInterrupted, "interrupted by the user")
		case "error":
			reason := ev.ErrorType
			if reason == "" {
				reason = "error"
			}
			f.setStatus(s, out, ev.Timestamp, runFailed, reason)
		}
	}
}

// main writes the line that stands for the event itself.
func (f *agentManagerFormat) main(s *session, ev *agentevent.Event, out *lineBuffer) {
	text := ""
	if f.includeContent {
		text = ev.Text
	}
	switch {
	case ev.Unparsed != "":
		msg := "unparsed record: " + ev.Unparsed
		if d := attrString(ev, agentevent.AttrUnparsedDetail); d != "" {
			msg += " (" + d + ")"
		}
		if ev.LogFile != "" {
			msg += fmt.Sprintf(" at %s line %d", ev.LogFile, ev.LogLine)
		}
		f.emit(s, out, ev.Timestamp, "log", managerLog{Level: "warn", Message: msg})
		return
	case isErrorEvent(ev):
		if text == "" {
			text = ev.ErrorType
		}
		f.emit(s, out, ev.Timestamp, "error", managerError{Code: ev.ErrorType, Message: text, Retryable: ev.ErrorType == agentevent.ErrorTypeAPIRetry})
		return
	case ev.Type == agentevent.TypeAssistantMessage && ev.Text == "" && attrString(ev, agentevent.AttrUsageCarrier) != "":
		// Only a model response's usage (held until its last row, or with no
		// response to carry it): its metric row, no empty message.
		return
	}
	switch ev.Type {
	case agentevent.TypeUserMessage, agentevent.TypeAssistantMessage, agentevent.TypeSystemMessage:
		// Without include_content every message is empty on purpose: the
		// warning is about parsing, so it is only raised when content is on.
		if f.includeContent && strings.TrimSpace(text) == "" {
			f.warn(warnMessageEmptyContent, ev)
		}
		f.emit(s, out, ev.Timestamp, "message", managerMessage{Role: string(ev.Role), Content: text})
	case agentevent.TypeToolCall:
		if ev.ToolName == "" || ev.ToolName == managerUnknownToolName {
			f.warn(warnToolCallEmptyName, ev)
		}
		input := f.input(ev)
		if f.includeContent && string(input) == "{}" {
			f.warn(warnToolCallEmptyInput, ev)
		}
		f.emit(s, out, ev.Timestamp, "tool_call", managerToolCall{ToolName: ev.ToolName, Input: input})
	case agentevent.TypeToolResult:
		r := managerToolResult{ToolName: ev.ToolName, ToolCallID: ev.ToolCallID, Success: ev.ToolStatus != agentevent.ToolError}
		if r.Success {
			if text != "" {
				r.Output = &text
			}
		} else {
			msg := text
			if msg == "" {
				msg = failureSummary(ev)
			}
			if msg == "" {
				f.warn(warnFailureWithoutError, ev)
			} else {
				r.Error = &msg
			}
		}
		f.emit(s, out, ev.Timestamp, "tool_result", r)
	default:
		level := "info"
		switch ev.Type {
		case agentevent.TypeReasoning, agentevent.TypeMeta, agentevent.TypeFileSnapshot:
			level = "debug"
		}
		if text == "" {
			text = describe(ev)
		}
		f.emit(s, out, ev.Timestamp, "log", managerLog{Level: level, Message: text})
	}
}

// input is a tool call's arguments: the tool input itself with content on;
// without it, only the facts that are always kept (the file and, for a
// shell, the command line).
func (f *agentManagerFormat) input(ev *agentevent.Event) json.RawMessage {
	if f.includeContent && ev.Text != "" {
		if t := strings.TrimSpace(ev.Text); strings.HasPrefix(t, "{") && jsonx.Valid([]byte(t)) {
			return json.RawMessage(t)
		}
		b, _ := json.Marshal(map[string]string{"value": ev.Text})
		return b
	}
	facts := map[string]string{}
	if ev.FilePath != "" {
		facts["file_path"] = ev.FilePath
	}
	if cmd := attrString(ev, agentevent.AttrToolCommand); cmd != "" {
		facts["command"] = cmd
	}
	b, _ := json.Marshal(facts)
	return b
}

// failureSummary says why a tool failed without its output: the error class
// and the exit code.
func failureSummary(ev *agentevent.Event) string {
	var parts []string
	if ev.ErrorType != "" {
		parts = append(parts, ev.ErrorType)
	}
	if ev.ToolExitCode != nil {
		parts = append(parts, fmt.Sprintf("exit code %d", *ev.ToolExitCode))
	}
	return strings.Join(parts, ", ")
}

// describe is a log message for an event whose text is left out: its type
// and the kind the parser gave it.
func describe(ev *agentevent.Event) string {
	var msg strings.Builder
	msg.WriteString(strings.ReplaceAll(string(ev.Type), "_", " "))
	for _, k := range []string{agentevent.AttrMetaKind, agentevent.AttrSummaryKind} {
		if v := attrString(ev, k); v != "" {
			msg.WriteString(": ")
			msg.WriteString(v)
		}
	}
	if ev.Status != "" {
		msg.WriteString(" (")
		msg.WriteString(ev.Status)
		msg.WriteString(")")
	}
	return msg.String()
}
