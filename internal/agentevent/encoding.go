// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentevent

import (
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// Attribute keys of the log-record encoding. GenAI semantic-convention names
// where one exists, "agent." for the rest. The event's Text travels as the
// record body; its timestamp as the record timestamp; its type also as the
// event name "agent.<event_type>".
const (
	AttrSchemaVersion       = "agent.schema_version"
	AttrSource              = "agent.source"
	AttrProjectHash         = "agent.project.hash"
	AttrProjectRoot         = "agent.project.root"
	AttrSessionID           = "gen_ai.conversation.id"
	AttrEventID             = "agent.event.id"
	AttrParentEventID       = "agent.event.parent_id"
	AttrEventType           = "agent.event.type"
	AttrRole                = "agent.role"
	AttrChannel             = "agent.channel"
	AttrToolName            = "gen_ai.tool.name"
	AttrToolCallID          = "gen_ai.tool.call.id"
	AttrToolStatus          = "agent.tool.status"
	AttrToolLatencyMs       = "agent.tool.latency_ms"
	AttrExitCode            = "process.exit.code"
	AttrFilePath            = "file.path"
	AttrFileLanguage        = "agent.file.language"
	AttrFileOp              = "agent.file.op"
	AttrModel               = "gen_ai.response.model"
	AttrTokensInput         = "gen_ai.usage.input_tokens"
	AttrTokensOutput        = "gen_ai.usage.output_tokens"
	AttrTokensTotal         = "agent.usage.total_tokens"
	AttrTokensCached        = "gen_ai.usage.cache_read.input_tokens"
	AttrTokensThinking      = "gen_ai.usage.reasoning.output_tokens"
	AttrTokensTool          = "agent.usage.tool_tokens"
	AttrTokensCacheCreation = "gen_ai.usage.cache_creation.input_tokens"
	AttrAgentID             = "gen_ai.agent.id"
	AttrRaw                 = "agent.raw"
	AttrSequence            = "agent.event.sequence"
	AttrAgentVersion        = "agent.version"
	AttrGitBranch           = "vcs.ref.head.name"
	AttrSidechain           = "agent.sidechain"
	AttrSubagentType        = "agent.subagent.type"
	AttrParentToolCallID    = "agent.subagent.parent_tool_call.id"
	AttrSpawnedAgentID      = "agent.subagent.spawned_agent.id"
	AttrEntrypoint          = "agent.entrypoint"
	AttrProvider            = "gen_ai.provider.name"
	AttrResponseID          = "gen_ai.response.id"
	AttrFinishReasons       = "gen_ai.response.finish_reasons"
	AttrErrorType           = "error.type"
	AttrCostUSD             = "agent.usage.cost_usd"
	AttrStatus              = "agent.status"
	AttrLogFile             = "log.file.path"
	AttrLogLine             = "agent.log.line"
	AttrUnparsed            = "agent.unparsed.reason"
)

// AttrReadCaughtUp is a wire-only flag, not part of the event model: the
// receiver sets it (true) on the last record of a session it hands over in one
// ConsumeLogs call when its source has, for now, nothing more of that session
// to read (end of file reached, snapshot fully emitted, no more rows). The
// connector uses it to close a turn of history at the end of its data instead
// of at a read-batch boundary; exporters never write it.
const AttrReadCaughtUp = "agent.read.caught_up"

// EventNamePrefix prefixes the event type in a record's event name.
const EventNamePrefix = "agent."

// Resource attribute keys.
const (
	ResourceServiceName    = "service.name"
	ResourceServiceVersion = "service.version"
	ResourceHostName       = "host.name"
)

// knownAttrs are the keys Decode maps back to named fields; every other
// record attribute lands in Event.Attributes.
var knownAttrs = map[string]bool{}

func init() {
	for _, k := range []string{
		AttrSchemaVersion, AttrSource, AttrProjectHash, AttrProjectRoot, AttrSessionID, AttrEventID,
		AttrParentEventID, AttrEventType, AttrRole, AttrChannel, AttrToolName, AttrToolCallID,
		AttrToolStatus, AttrToolLatencyMs, AttrExitCode, AttrFilePath, AttrFileLanguage, AttrFileOp,
		AttrModel, AttrTokensInput, AttrTokensOutput, AttrTokensTotal, AttrTokensCached,
		AttrTokensThinking, AttrTokensTool, AttrTokensCacheCreation, AttrAgentID, AttrRaw, AttrSequence,
		AttrAgentVersion, AttrGitBranch, AttrSidechain, AttrSubagentType, AttrParentToolCallID,
		AttrSpawnedAgentID, AttrEntrypoint, AttrProvider, AttrResponseID, AttrFinishReasons,
		AttrErrorType, AttrCostUSD, AttrStatus, AttrLogFile, AttrLogLine, AttrUnparsed,
	} {
		knownAttrs[k] = true
	}
}

// SetResource fills the resource attributes of the ResourceLogs that holds an
// agent's events: service.name from the source, service.version from the CLI
// version when known.
func SetResource(res pcommon.Resource, source Source, agentVersion string) {
	attrs := res.Attributes()
	attrs.PutStr(ResourceServiceName, source.ServiceName())
	if agentVersion != "" {
		attrs.PutStr(ResourceServiceVersion, agentVersion)
	}
}

// Encode writes ev into lr. Every field is carried on the record itself, so
// Decode needs nothing from the resource.
func Encode(ev Event, lr plog.LogRecord) {
	lr.SetEventName(EventNamePrefix + string(ev.Type))
	if !ev.Timestamp.IsZero() {
		lr.SetTimestamp(pcommon.NewTimestampFromTime(ev.Timestamp))
	}
	lr.SetSeverityNumber(plog.SeverityNumberInfo)
	lr.SetSeverityText("INFO")
	if ev.Unparsed != "" {
		lr.SetSeverityNumber(plog.SeverityNumberWarn)
		lr.SetSeverityText("WARN")
	}
	if ev.Text != "" {
		lr.Body().SetStr(ev.Text)
	}
	a := lr.Attributes()
	a.EnsureCapacity(24)
	str := func(k, v string) {
		if v != "" {
			a.PutStr(k, v)
		}
	}
	num := func(k string, v *int64) {
		if v != nil {
			a.PutInt(k, *v)
		}
	}
	str(AttrSchemaVersion, ev.SchemaVersion)
	str(AttrSource, string(ev.Source))
	str(AttrProjectHash, ev.ProjectHash)
	str(AttrProjectRoot, ev.ProjectRoot)
	str(AttrSessionID, ev.SessionID)
	str(AttrEventID, ev.EventID)
	str(AttrParentEventID, ev.ParentEventID)
	str(AttrEventType, string(ev.Type))
	str(AttrRole, string(ev.Role))
	str(AttrChannel, string(ev.Channel))
	str(AttrToolName, ev.ToolName)
	str(AttrToolCallID, ev.ToolCallID)
	str(AttrToolStatus, string(ev.ToolStatus))
	num(AttrToolLatencyMs, ev.ToolLatencyMs)
	num(AttrExitCode, ev.ToolExitCode)
	str(AttrFilePath, ev.FilePath)
	str(AttrFileLanguage, ev.FileLanguage)
	str(AttrFileOp, string(ev.FileOp))
	str(AttrModel, ev.Model)
	num(AttrTokensInput, ev.TokensInput)
	num(AttrTokensOutput, ev.TokensOutput)
	num(AttrTokensTotal, ev.TokensTotal)
	num(AttrTokensCached, ev.TokensCached)
	num(AttrTokensThinking, ev.TokensThinking)
	num(AttrTokensTool, ev.TokensTool)
	num(AttrTokensCacheCreation, ev.TokensCacheCreation)
	str(AttrAgentID, ev.AgentID)
	if ev.Raw != nil {
		a.PutEmptyBytes(AttrRaw).FromRaw(ev.Raw)
	}
	a.PutInt(AttrSequence, ev.Sequence)
	str(AttrAgentVersion, ev.AgentVersion)
	str(AttrGitBranch, ev.GitBranch)
	if ev.IsSidechain {
		a.PutBool(AttrSidechain, true)
	}
	str(AttrSubagentType, ev.SubagentType)
	str(AttrParentToolCallID, ev.ParentToolCallID)
	str(AttrSpawnedAgentID, ev.SpawnedAgentID)
	str(AttrEntrypoint, ev.Entrypoint)
	str(AttrProvider, ev.Provider)
	str(AttrResponseID, ev.ResponseID)
	if ev.FinishReason != "" {
		a.PutEmptySlice(AttrFinishReasons).AppendEmpty().SetStr(ev.FinishReason)
	}
	str(AttrErrorType, ev.ErrorType)
	if ev.CostUSD != nil {
		a.PutDouble(AttrCostUSD, *ev.CostUSD)
	}
	str(AttrStatus, ev.Status)
	str(AttrLogFile, ev.LogFile)
	if ev.LogLine != 0 {
		a.PutInt(AttrLogLine, ev.LogLine)
	}
	str(AttrUnparsed, ev.Unparsed)
	for k, v := range ev.Attributes {
		if !knownAttrs[k] { // a named field owns a known key
			PutValue(a, k, v)
		}
	}
}

// PutValue sets k to v, for the value types Event.Attributes holds (string,
// bool, int64, int, float64); anything else is stored as its raw form.
func PutValue(m pcommon.Map, k string, v any) {
	switch v := v.(type) {
	case string:
		m.PutStr(k, v)
	case bool:
		m.PutBool(k, v)
	case int64:
		m.PutInt(k, v)
	case int:
		m.PutInt(k, int64(v))
	case float64:
		m.PutDouble(k, v)
	default:
		if err := m.PutEmpty(k).FromRaw(v); err != nil {
			m.PutStr(k, fmt.Sprint(v))
		}
	}
}

// Decode errors. A record without an agent event type is not an agent
// event (ErrNotAgentEvent); one that has it but whose known attributes do
// not have the types Encode writes is malformed (ErrMalformed). Callers
// count the two apart and skip the record.
var (
	ErrNotAgentEvent = errors.New("log record is not an agent event")
	ErrMalformed     = errors.New("malformed agent event")
)

// attrTypes is the value type Encode writes for each known key that is not
// a string.
var attrTypes = map[string]pcommon.ValueType{
	AttrToolLatencyMs:       pcommon.ValueTypeInt,
	AttrExitCode:            pcommon.ValueTypeInt,
	AttrTokensInput:         pcommon.ValueTypeInt,
	AttrTokensOutput:        pcommon.ValueTypeInt,
	AttrTokensTotal:         pcommon.ValueTypeInt,
	AttrTokensCached:        pcommon.ValueTypeInt,
	AttrTokensThinking:      pcommon.ValueTypeInt,
	AttrTokensTool:          pcommon.ValueTypeInt,
	AttrTokensCacheCreation: pcommon.ValueTypeInt,
	AttrRaw:                 pcommon.ValueTypeBytes,
	AttrSequence:            pcommon.ValueTypeInt,
	AttrSidechain:           pcommon.ValueTypeBool,
	AttrFinishReasons:       pcommon.ValueTypeSlice,
	AttrCostUSD:             pcommon.ValueTypeDouble,
	AttrLogLine:             pcommon.ValueTypeInt,
}

// Decode reads an event back from a record written by Encode. It never
// panics: a record without an event type fails with ErrNotAgentEvent, one
// whose known attributes have other types than Encode writes (or an event
// type that is not a string) with ErrMalformed. AttrReadCaughtUp is a wire
// flag, not event data: it is left out of the event (read it from the
// record).
func Decode(lr plog.LogRecord) (Event, error) {
	var ev Event
	a := lr.Attributes()
	typ, ok := a.Get(AttrEventType)
	switch {
	case !ok:
		name := lr.EventName()
		if !strings.HasPrefix(name, EventNamePrefix) || name == EventNamePrefix {
			return ev, fmt.Errorf("%w (event name %q, no %s)", ErrNotAgentEvent, name, AttrEventType)
		}
		ev.Type = EventType(strings.TrimPrefix(name, EventNamePrefix))
	case typ.Type() != pcommon.ValueTypeStr || typ.Str() == "":
		return ev, fmt.Errorf("%w: %s is %s %q, want a non-empty string", ErrMalformed, AttrEventType, typ.Type(), typ.AsString())
	default:
		ev.Type = EventType(typ.Str())
	}
	var bad error
	a.Range(func(k string, v pcommon.Value) bool {
		if !knownAttrs[k] {
			return true
		}
		want, typed := attrTypes[k]
		if !typed {
			want = pcommon.ValueTypeStr
		}
		if got := v.Type(); got != want && (k != AttrCostUSD || got != pcommon.ValueTypeInt) {
			bad = fmt.Errorf("%w: %s is %s, want %s", ErrMalformed, k, got, want)
			return false
		}
		return true
	})
	if bad != nil {
		return Event{}, bad
	}
	if lr.Timestamp() != 0 {
		ev.Timestamp = lr.Timestamp().AsTime().UTC()
	}
	if lr.Body().Type() == pcommon.ValueTypeStr {
		ev.Text = lr.Body().Str()
	}
	// Every known key has its type now (checked above).
	a.Range(func(k string, v pcommon.Value) bool {
		s := func() string { return v.Str() }
		n := func() *int64 { x := v.Int(); return &x }
		switch k {
		case AttrSchemaVersion:
			ev.SchemaVersion = s()
		case AttrSource:
			ev.Source = Source(s())
		case AttrProjectHash:
			ev.ProjectHash = s()
		case AttrProjectRoot:
			ev.ProjectRoot = s()
		case AttrSessionID:
			ev.SessionID = s()
		case AttrEventID:
			ev.EventID = s()
		case AttrParentEventID:
			ev.ParentEventID = s()
		case AttrEventType:
		case AttrRole:
			ev.Role = Role(s())
		case AttrChannel:
			ev.Channel = Channel(s())
		case AttrToolName:
			ev.ToolName = s()
		case AttrToolCallID:
			ev.ToolCallID = s()
		case AttrToolStatus:
			ev.ToolStatus = ToolStatus(s())
		case AttrToolLatencyMs:
			ev.ToolLatencyMs = n()
		case AttrExitCode:
			ev.ToolExitCode = n()
		case AttrFilePath:
			ev.FilePath = s()
		case AttrFileLanguage:
			ev.FileLanguage = s()
		case AttrFileOp:
			ev.FileOp = FileOp(s())
		case AttrModel:
			ev.Model = s()
		case AttrTokensInput:
			ev.TokensInput = n()
		case AttrTokensOutput:
			ev.TokensOutput = n()
		case AttrTokensTotal:
			ev.TokensTotal = n()
		case AttrTokensCached:
			ev.TokensCached = n()
		case AttrTokensThinking:
			ev.TokensThinking = n()
		case AttrTokensTool:
			ev.TokensTool = n()
		case AttrTokensCacheCreation:
			ev.TokensCacheCreation = n()
		case AttrAgentID:
			ev.AgentID = s()
		case AttrRaw:
			ev.Raw = v.Bytes().AsRaw()
		case AttrSequence:
			ev.Sequence = v.Int()
		case AttrAgentVersion:
			ev.AgentVersion = s()
		case AttrGitBranch:
			ev.GitBranch = s()
		case AttrSidechain:
			ev.IsSidechain = v.Bool()
		case AttrSubagentType:
			ev.SubagentType = s()
		case AttrParentToolCallID:
			ev.ParentToolCallID = s()
		case AttrSpawnedAgentID:
			ev.SpawnedAgentID = s()
		case AttrEntrypoint:
			ev.Entrypoint = s()
		case AttrProvider:
			ev.Provider = s()
		case AttrResponseID:
			ev.ResponseID = s()
		case AttrFinishReasons:
			if v.Slice().Len() > 0 {
				ev.FinishReason = v.Slice().At(0).AsString()
			}
		case AttrErrorType:
			ev.ErrorType = s()
		case AttrCostUSD:
			c := v.Double()
			if v.Type() == pcommon.ValueTypeInt {
				c = float64(v.Int())
			}
			ev.CostUSD = &c
		case AttrStatus:
			ev.Status = s()
		case AttrLogFile:
			ev.LogFile = s()
		case AttrLogLine:
			ev.LogLine = v.Int()
		case AttrUnparsed:
			ev.Unparsed = s()
		case AttrReadCaughtUp:
			// wire only
		default:
			if ev.Attributes == nil {
				ev.Attributes = map[string]any{}
			}
			ev.Attributes[k] = v.AsRaw()
		}
		return true
	})
	return ev, nil
}

// RecordPlace names where a record came from (its log file and line), for
// reporting a record Decode refused; "" when it does not say.
func RecordPlace(lr plog.LogRecord) string {
	file, line := "", ""
	if v, ok := lr.Attributes().Get(AttrLogFile); ok {
		file = v.AsString()
	}
	if v, ok := lr.Attributes().Get(AttrLogLine); ok {
		line = v.AsString()
	}
	switch {
	case file == "":
		return ""
	case line == "":
		return file
	}
	return file + ":" + line
}

// CaughtUp reads AttrReadCaughtUp off a record.
func CaughtUp(lr plog.LogRecord) bool {
	v, ok := lr.Attributes().Get(AttrReadCaughtUp)
	return ok && v.Type() == pcommon.ValueTypeBool && v.Bool()
}

// EncodeLogs builds plog.Logs from events: one ResourceLogs per (source,
// agent version), in first-seen order, with host.name when given.
func EncodeLogs(events []Event, hostName string) plog.Logs {
	logs := plog.NewLogs()
	type key struct {
		source  Source
		version string
	}
	scopes := map[key]plog.ScopeLogs{}
	for _, ev := range events {
		k := key{ev.Source, ev.AgentVersion}
		sl, ok := scopes[k]
		if !ok {
			rl := logs.ResourceLogs().AppendEmpty()
			SetResource(rl.Resource(), ev.Source, ev.AgentVersion)
			if hostName != "" {
				rl.Resource().Attributes().PutStr(ResourceHostName, hostName)
			}
			sl = rl.ScopeLogs().AppendEmpty()
			sl.Scope().SetName(ScopeName)
			scopes[k] = sl
		}
		Encode(ev, sl.LogRecords().AppendEmpty())
	}
	return logs
}

// ScopeName is the instrumentation scope of the records the receiver emits.
const ScopeName = "github.com/agentotel/agentotel/receiver/agentlogreceiver"

// DecodeLogs reads every agent event in logs, in order. Records Decode
// refuses (not agent events, malformed) are skipped and counted in skipped.
func DecodeLogs(logs plog.Logs) (events []Event, skipped int) {
	for i := 0; i < logs.ResourceLogs().Len(); i++ {
		sls := logs.ResourceLogs().At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				ev, err := Decode(lrs.At(k))
				if err != nil {
					skipped++
					continue
				}
				events = append(events, ev)
			}
		}
	}
	return events, skipped
}

// Normalize fills what every event must carry: the schema version, the role
// section 4 mandates where it allows only one, UTC timestamps.
func Normalize(ev *Event) {
	ev.SchemaVersion = SchemaVersion
	if r, ok := RoleFor(ev.Type); ok {
		ev.Role = r
	}
	if !ev.Timestamp.IsZero() {
		ev.Timestamp = ev.Timestamp.UTC()
	}
}
