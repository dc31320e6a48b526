// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package copilotcli

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/agentotel/agentotel/internal/agentevent"
	"github.com/agentotel/agentotel/internal/jsonx"
)

// History is a history-session-state/session_<id>_<ms>.json file, the
// oldest format (CLI 0.0.x): one JSON object rewritten as the
// session goes on. Only the timeline is mapped: it is dated and holds the
// prompts, the answers and each tool call with its result; chatMessages
// repeats the same conversation in the model's chat shape, undated.
type History struct {
	SessionID string          `json:"sessionId"`
	StartTime string          `json:"startTime"`
	Timeline  []TimelineEntry `json:"timeline"`
}

// TimelineEntry is one entry of History.Timeline.
type TimelineEntry struct {
	ID           string           `json:"id"`
	Timestamp    string           `json:"timestamp"`
	Type         string           `json:"type"`
	Text         string           `json:"text"`
	CallID       string           `json:"callId"`
	Name         string           `json:"name"`
	Arguments    jsonx.RawMessage `json:"arguments"`
	Result       jsonx.RawMessage `json:"result"`
	ToolTitle    string           `json:"toolTitle"`
	ExpandedText string           `json:"expandedText"`
}

// DecodeError is a history file that does not decode: not JSON (a file
// caught mid-rewrite: try again at the next change) or not the expected
// shape.
type DecodeError struct {
	Reason string // ReasonMalformedJSON or ReasonUnexpectedShape
	Err    error
}

func (e *DecodeError) Error() string { return e.Reason + ": " + e.Err.Error() }
func (e *DecodeError) Unwrap() error { return e.Err }

// DecodeHistory decodes a history-session-state file.
func DecodeHistory(data []byte) (History, error) {
	var h History
	trimmed := bytes.TrimSpace(data)
	// jsonx.Valid is a linear scan (see there).
	if !jsonx.Valid(trimmed) {
		return h, &DecodeError{Reason: ReasonMalformedJSON, Err: errors.New("not JSON")}
	}
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return h, &DecodeError{Reason: ReasonUnexpectedShape, Err: errors.New("not a JSON object")}
	}
	if err := jsonx.Unmarshal(trimmed, &h); err != nil {
		return h, &DecodeError{Reason: ReasonUnexpectedShape, Err: err}
	}
	if h.SessionID == "" {
		return h, &DecodeError{Reason: ReasonUnexpectedShape, Err: errors.New("no sessionId")}
	}
	return h, nil
}

// HistorySessionID is the session id a history file's name carries
// (session_<id>_<ms>.json); "" when it does not fit.
func HistorySessionID(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), ".json")
	base = strings.TrimPrefix(base, "session_")
	if i := strings.LastIndexByte(base, '_'); i > 0 {
		return base[:i]
	}
	return ""
}

// HistoryContext locates a history file. Sequence is the last sequence
// number the session used (0 at first): events are numbered from
// Sequence+1 (the caller stores the last one with its watermark).
type HistoryContext struct {
	LogFile  string
	Sequence int64
}

// Watermark is what a reader stores per history session: the keys
// MapHistory reported as emitted.
type Watermark = agentevent.Watermark

// UnmarshalWatermark decodes what Watermark.MarshalState stored; empty data
// is an empty watermark.
func UnmarshalWatermark(data []byte) (Watermark, error) {
	w, err := agentevent.UnmarshalWatermark(data)
	if err != nil {
		return nil, fmt.Errorf("copilot cli history watermark: %w", err)
	}
	return w, nil
}

// Result is what MapHistory made of a snapshot.
type Result struct {
	Events []agentevent.Event
	// Emitted lists the keys of what is in Events (timeline entry ids): the
	// caller adds them to its watermark once the events are sent.
	Emitted []string
}

// MapHistory maps the timeline entries of a history snapshot that are not
// in emitted (the caller's watermark, the keys earlier calls returned).
// Timeline entries are written whole (a tool call with its result, an
// answer once complete), so none is held back. This format records no
// model, no token counts and no CLI version.
func MapHistory(c HistoryContext, h History, emitted map[string]bool) Result {
	var r Result
	seq := c.Sequence
	prompt := ""
	for i := range h.Timeline {
		e := &h.Timeline[i]
		key := e.ID
		if key == "" {
			key = fmt.Sprintf("#%d", i)
		}
		ts, _ := parseTime(e.Timestamp)
		base := func(id string, typ agentevent.EventType, role agentevent.Role, ch agentevent.Channel) agentevent.Event {
			return agentevent.Event{
				Source:    Source,
				SessionID: h.SessionID,
				EventID:   h.SessionID + ":" + id,
				Timestamp: ts,
				Type:      typ,
				Role:      role,
				Channel:   ch,
				LogFile:   c.LogFile,
			}
		}
		var evs []agentevent.Event
		switch e.Type {
		case "user":
			ev := base(key, agentevent.TypeUserMessage, agentevent.RoleUser, agentevent.ChannelChat)
			ev.Text = e.Text
			evs = append(evs, ev)
		case "copilot":
			ev := base(key, agentevent.TypeAssistantMessage, agentevent.RoleAssistant, agentevent.ChannelChat)
			ev.Text = e.Text
			ev.ResponseID = h.SessionID + ":" + key
			evs = append(evs, ev)
		case "info", "warning", "error":
			ev := base(key, agentevent.TypeLog, agentevent.RoleCLI, agentevent.ChannelSystem)
			ev.Text = e.Text
			agentevent.SetAttr(&ev, agentevent.AttrCopilotEvent, "timeline."+e.Type)
			if e.Type == "error" {
				ev.Role = agentevent.RoleSystem
				ev.ErrorType = agentevent.ErrorTypeSession // an error notice, as session.error
			}
			evs = append(evs, ev)
		case "tool_call_completed":
			evs = append(evs, historyTool(base, key, *e)...)
		default:
			ev := base(key, agentevent.TypeLog, agentevent.RoleSystem, agentevent.ChannelSystem)
			ev.Unparsed = ReasonUnknownType
			agentevent.SetAttr(&ev, agentevent.AttrUnparsedDetail, "timeline entry type "+e.Type)
			evs = append(evs, ev)
		}
		for j := range evs {
			ev := &evs[j]
			if ev.Type == agentevent.TypeUserMessage {
				prompt = ev.EventID
			} else {
				ev.ParentEventID = prompt
			}
		}
		if emitted[key] {
			continue
		}
		for j := range evs {
			ev := &evs[j]
			seq++
			ev.Sequence = seq
			ev.LogLine = int64(i + 1)
			agentevent.Normalize(ev)
		}
		r.Events = append(r.Events, evs...)
		r.Emitted = append(r.Emitted, key)
	}
	return r
}

// historyTool maps a tool_call_completed entry: the call and its result at
// once (one timestamp, the completion: no duration).
func historyTool(base func(string, agentevent.EventType, agentevent.Role, agentevent.Channel) agentevent.Event, key string, e TimelineEntry) []agentevent.Event {
	callID := e.CallID
	if callID == "" {
		callID = key
	}
	call := base(key+"#call", agentevent.TypeToolCall, agentevent.RoleAssistant, agentevent.ChannelChat)
	call.ToolName, call.ToolCallID = e.Name, callID
	call.Text = compactJSON(e.Arguments)
	call.ResponseID = call.EventID
	res := base(key, agentevent.TypeToolResult, agentevent.RoleTool, agentevent.ChannelChat)
	res.ToolName, res.ToolCallID = e.Name, callID
	var out struct {
		Type string `json:"type"`
		Log  string `json:"log"`
	}
	res.ToolStatus = agentevent.ToolUnknown
	raw := bytes.TrimSpace(e.Result)
	switch {
	case len(raw) > 0 && raw[0] == '{' && jsonx.Unmarshal(raw, &out) == nil:
		res.Text = out.Log
		switch out.Type {
		case "success":
			res.ToolStatus = agentevent.ToolSuccess
		case "failure", "error", "rejected", "denied":
			res.ToolStatus = agentevent.ToolError
			res.ErrorType = agentevent.ErrorTypeTool
			agentevent.SetAttr(&res, agentevent.AttrCopilotResultType, out.Type)
		}
	default:
		res.Text = compactJSON(raw)
	}
	return []agentevent.Event{call, res}
}
