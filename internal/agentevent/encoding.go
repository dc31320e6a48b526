// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentevent

import (
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/xpdata"
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
//
// The attributes are written in one fixed order (the named fields, then
// ev.Attributes): the named keys are distinct and a key of ev.Attributes that
// a named field owns is left out, so into a record without attributes they
// are appended without the duplicate-key scan of pcommon.Map's Put methods
// (which makes N attributes cost O(N²)). A record that already has
// attributes keeps Put semantics: a key it has is updated in place.
func Encode(ev Event, lr plog.LogRecord) {
	var enc encoder
	enc.encode(&ev, lr)
}

// encoder holds the map builder the attributes are written into, reused from
// record to record by EncodeLogs.
type encoder struct {
	mb xpdata.MapBuilder
}

func (e *encoder) encode(ev *Event, lr plog.LogRecord) {
	lr.SetEventName(eventName(ev.Type))
	if !ev.Timestamp.IsZero() {
		lr.SetTimestamp(pcommon.NewTimestampFromTime(ev.Timestamp))
	}
	if ev.Unparsed != "" {
		lr.SetSeverityNumber(plog.SeverityNumberWarn)
		lr.SetSeverityText("WARN")
	} else {
		lr.SetSeverityNumber(plog.SeverityNumberInfo)
		lr.SetSeverityText("INFO")
	}
	if ev.Text != "" {
		lr.Body().SetStr(ev.Text)
	}
	e.mb.EnsureCapacity(attrCount(ev))
	e.appendAttrs(ev)
	a := lr.Attributes()
	if a.Len() == 0 {
		e.mb.UnsafeIntoMap(a) // the keys are distinct (see Encode)
		return
	}
	built := pcommon.NewMap()
	e.mb.UnsafeIntoMap(built)
	for k, v := range built.All() {
		v.CopyTo(a.PutEmpty(k))
	}
}

// attrCount is the number of attributes appendAttrs writes for ev, or a
// little more (a key of ev.Attributes that a named field owns is counted).
func attrCount(ev *Event) int {
	n := 1 + len(ev.Attributes) // 1: the sequence, always written
	for _, s := range [...]*string{
		&ev.SchemaVersion, (*string)(&ev.Source), &ev.ProjectHash, &ev.ProjectRoot, &ev.SessionID,
		&ev.EventID, &ev.ParentEventID, (*string)(&ev.Type), (*string)(&ev.Role), (*string)(&ev.Channel),
		&ev.ToolName, &ev.ToolCallID, (*string)(&ev.ToolStatus), &ev.FilePath, &ev.FileLanguage,
		(*string)(&ev.FileOp), &ev.Model, &ev.AgentID, &ev.AgentVersion, &ev.GitBranch,
		&ev.SubagentType, &ev.ParentToolCallID, &ev.SpawnedAgentID, &ev.Entrypoint, &ev.Provider,
		&ev.ResponseID, &ev.FinishReason, &ev.ErrorType, &ev.Status, &ev.LogFile, &ev.Unparsed,
	} {
		if *s != "" {
			n++
		}
	}
	for _, p := range [...]*int64{
		ev.ToolLatencyMs, ev.ToolExitCode, ev.TokensInput, ev.TokensOutput, ev.TokensTotal,
		ev.TokensCached, ev.TokensThinking, ev.TokensTool, ev.TokensCacheCreation,
	} {
		if p != nil {
			n++
		}
	}
	if ev.Raw != nil {
		n++
	}
	if ev.IsSidechain {
		n++
	}
	if ev.CostUSD != nil {
		n++
	}
	if ev.LogLine != 0 {
		n++
	}
	return n
}

// appendAttrs appends ev's attributes to the builder, in the order of the
// wire contract.
func (e *encoder) appendAttrs(ev *Event) {
	mb := &e.mb
	str := func(k, v string) {
		if v != "" {
			mb.AppendEmpty(k).SetStr(v)
		}
	}
	num := func(k string, v *int64) {
		if v != nil {
			mb.AppendEmpty(k).SetInt(*v)
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
		mb.AppendEmpty(AttrRaw).SetEmptyBytes().FromRaw(ev.Raw)
	}
	mb.AppendEmpty(AttrSequence).SetInt(ev.Sequence)
	str(AttrAgentVersion, ev.AgentVersion)
	str(AttrGitBranch, ev.GitBranch)
	if ev.IsSidechain {
		mb.AppendEmpty(AttrSidechain).SetBool(true)
	}
	str(AttrSubagentType, ev.SubagentType)
	str(AttrParentToolCallID, ev.ParentToolCallID)
	str(AttrSpawnedAgentID, ev.SpawnedAgentID)
	str(AttrEntrypoint, ev.Entrypoint)
	str(AttrProvider, ev.Provider)
	str(AttrResponseID, ev.ResponseID)
	if ev.FinishReason != "" {
		mb.AppendEmpty(AttrFinishReasons).SetEmptySlice().AppendEmpty().SetStr(ev.FinishReason)
	}
	str(AttrErrorType, ev.ErrorType)
	if ev.CostUSD != nil {
		mb.AppendEmpty(AttrCostUSD).SetDouble(*ev.CostUSD)
	}
	str(AttrStatus, ev.Status)
	str(AttrLogFile, ev.LogFile)
	if ev.LogLine != 0 {
		mb.AppendEmpty(AttrLogLine).SetInt(ev.LogLine)
	}
	str(AttrUnparsed, ev.Unparsed)
	for k, v := range ev.Attributes {
		if !knownAttrs[k] { // a named field owns a known key
			SetValue(mb.AppendEmpty(k), v)
		}
	}
}

// eventName is the record event name of an event type (a constant for the
// spec's types).
func eventName(t EventType) string {
	switch t {
	case TypeUserMessage:
		return EventNamePrefix + string(TypeUserMessage)
	case TypeAssistantMessage:
		return EventNamePrefix + string(TypeAssistantMessage)
	case TypeSystemMessage:
		return EventNamePrefix + string(TypeSystemMessage)
	case TypeReasoning:
		return EventNamePrefix + string(TypeReasoning)
	case TypeToolCall:
		return EventNamePrefix + string(TypeToolCall)
	case TypeToolResult:
		return EventNamePrefix + string(TypeToolResult)
	case TypeFileSnapshot:
		return EventNamePrefix + string(TypeFileSnapshot)
	case TypeSessionSummary:
		return EventNamePrefix + string(TypeSessionSummary)
	case TypeMeta:
		return EventNamePrefix + string(TypeMeta)
	case TypeLog:
		return EventNamePrefix + string(TypeLog)
	}
	return EventNamePrefix + string(t)
}

// PutValue sets k to v, for the value types Event.Attributes holds (string,
// bool, int64, int, float64); anything else is stored as its raw form.
func PutValue(m pcommon.Map, k string, v any) {
	SetValue(m.PutEmpty(k), v)
}

// SetValue is PutValue on a value already in its map.
func SetValue(dst pcommon.Value, v any) {
	switch v := v.(type) {
	case string:
		dst.SetStr(v)
	case bool:
		dst.SetBool(v)
	case int64:
		dst.SetInt(v)
	case int:
		dst.SetInt(int64(v))
	case float64:
		dst.SetDouble(v)
	default:
		if err := dst.FromRaw(v); err != nil {
			dst.SetStr(fmt.Sprint(v))
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

// Decode reads an event back from a record written by Encode. It never
// panics: a record without an event type fails with ErrNotAgentEvent, one
// whose known attributes have other types than Encode writes (or an event
// type that is not a string) with ErrMalformed. AttrReadCaughtUp is a wire
// flag, not event data: it is left out of the event (read it from the
// record).
//
// It walks the attributes once, a switch on the key mapping each known key
// to its field (the last of duplicate keys wins) and every other key to
// Event.Attributes.
func Decode(lr plog.LogRecord) (Event, error) {
	var ev Event
	err := decodeInto(lr, &ev)
	return ev, err
}

// decodeInto is Decode into *dst, left as it is on error.
func decodeInto(lr plog.LogRecord, dst *Event) error {
	var d decoder
	ev := &d.ev
	a := lr.Attributes()
	left := a.Len()
	for k, v := range a.All() {
		d.attr(k, v, left)
		left--
	}
	switch typ := d.typ; {
	case !d.hasType:
		name := lr.EventName()
		if !strings.HasPrefix(name, EventNamePrefix) || name == EventNamePrefix {
			return fmt.Errorf("%w (event name %q, no %s)", ErrNotAgentEvent, name, AttrEventType)
		}
		ev.Type = EventType(strings.TrimPrefix(name, EventNamePrefix))
	case typ.Type() != pcommon.ValueTypeStr || typ.Str() == "":
		return fmt.Errorf("%w: %s is %s %q, want a non-empty string", ErrMalformed, AttrEventType, typ.Type(), typ.AsString())
	default:
		ev.Type = EventType(typ.Str())
	}
	if d.bad != nil {
		return d.bad
	}
	if lr.Timestamp() != 0 {
		ev.Timestamp = lr.Timestamp().AsTime().UTC()
	}
	if lr.Body().Type() == pcommon.ValueTypeStr {
		ev.Text = lr.Body().Str()
	}
	*dst = *ev
	return nil
}

// decoder is the state of one Decode.
type decoder struct {
	ev      Event
	typ     pcommon.Value // the first AttrEventType
	hasType bool
	bad     error // the first known attribute of another type than Encode writes
	nums    *[numFields]int64
}

// Slots of the nullable numeric fields in decoder.nums: one allocation for
// all of an event's numbers.
const (
	numToolLatency = iota
	numExitCode
	numTokensInput
	numTokensOutput
	numTokensTotal
	numTokensCached
	numTokensThinking
	numTokensTool
	numTokensCacheCreation
	numFields
)

// attr decodes one attribute; left counts it and those after it.
func (d *decoder) attr(k string, v pcommon.Value, left int) {
	ev := &d.ev
	switch k {
	case AttrSchemaVersion:
		d.str(k, v, &ev.SchemaVersion)
	case AttrSource:
		d.str(k, v, (*string)(&ev.Source))
	case AttrProjectHash:
		d.str(k, v, &ev.ProjectHash)
	case AttrProjectRoot:
		d.str(k, v, &ev.ProjectRoot)
	case AttrSessionID:
		d.str(k, v, &ev.SessionID)
	case AttrEventID:
		d.str(k, v, &ev.EventID)
	case AttrParentEventID:
		d.str(k, v, &ev.ParentEventID)
	case AttrEventType:
		if !d.hasType {
			d.typ, d.hasType = v, true
		}
		d.want(k, v, pcommon.ValueTypeStr) // Decode sets Type from the first one
	case AttrRole:
		d.str(k, v, (*string)(&ev.Role))
	case AttrChannel:
		d.str(k, v, (*string)(&ev.Channel))
	case AttrToolName:
		d.str(k, v, &ev.ToolName)
	case AttrToolCallID:
		d.str(k, v, &ev.ToolCallID)
	case AttrToolStatus:
		d.str(k, v, (*string)(&ev.ToolStatus))
	case AttrToolLatencyMs:
		d.num(k, v, &ev.ToolLatencyMs, numToolLatency)
	case AttrExitCode:
		d.num(k, v, &ev.ToolExitCode, numExitCode)
	case AttrFilePath:
		d.str(k, v, &ev.FilePath)
	case AttrFileLanguage:
		d.str(k, v, &ev.FileLanguage)
	case AttrFileOp:
		d.str(k, v, (*string)(&ev.FileOp))
	case AttrModel:
		d.str(k, v, &ev.Model)
	case AttrTokensInput:
		d.num(k, v, &ev.TokensInput, numTokensInput)
	case AttrTokensOutput:
		d.num(k, v, &ev.TokensOutput, numTokensOutput)
	case AttrTokensTotal:
		d.num(k, v, &ev.TokensTotal, numTokensTotal)
	case AttrTokensCached:
		d.num(k, v, &ev.TokensCached, numTokensCached)
	case AttrTokensThinking:
		d.num(k, v, &ev.TokensThinking, numTokensThinking)
	case AttrTokensTool:
		d.num(k, v, &ev.TokensTool, numTokensTool)
	case AttrTokensCacheCreation:
		d.num(k, v, &ev.TokensCacheCreation, numTokensCacheCreation)
	case AttrAgentID:
		d.str(k, v, &ev.AgentID)
	case AttrRaw:
		if d.want(k, v, pcommon.ValueTypeBytes) {
			ev.Raw = v.Bytes().AsRaw()
		}
	case AttrSequence:
		if d.want(k, v, pcommon.ValueTypeInt) {
			ev.Sequence = v.Int()
		}
	case AttrAgentVersion:
		d.str(k, v, &ev.AgentVersion)
	case AttrGitBranch:
		d.str(k, v, &ev.GitBranch)
	case AttrSidechain:
		if d.want(k, v, pcommon.ValueTypeBool) {
			ev.IsSidechain = v.Bool()
		}
	case AttrSubagentType:
		d.str(k, v, &ev.SubagentType)
	case AttrParentToolCallID:
		d.str(k, v, &ev.ParentToolCallID)
	case AttrSpawnedAgentID:
		d.str(k, v, &ev.SpawnedAgentID)
	case AttrEntrypoint:
		d.str(k, v, &ev.Entrypoint)
	case AttrProvider:
		d.str(k, v, &ev.Provider)
	case AttrResponseID:
		d.str(k, v, &ev.ResponseID)
	case AttrFinishReasons:
		if d.want(k, v, pcommon.ValueTypeSlice) && v.Slice().Len() > 0 {
			ev.FinishReason = v.Slice().At(0).AsString()
		}
	case AttrErrorType:
		d.str(k, v, &ev.ErrorType)
	case AttrCostUSD:
		var c float64
		switch v.Type() {
		case pcommon.ValueTypeDouble:
			c = v.Double()
		case pcommon.ValueTypeInt:
			c = float64(v.Int())
		default:
			d.want(k, v, pcommon.ValueTypeDouble)
			return
		}
		ev.CostUSD = &c
	case AttrStatus:
		d.str(k, v, &ev.Status)
	case AttrLogFile:
		d.str(k, v, &ev.LogFile)
	case AttrLogLine:
		if d.want(k, v, pcommon.ValueTypeInt) {
			ev.LogLine = v.Int()
		}
	case AttrUnparsed:
		d.str(k, v, &ev.Unparsed)
	case AttrReadCaughtUp:
		// wire only
	default:
		if ev.Attributes == nil {
			ev.Attributes = make(map[string]any, left) // Encode writes them last
		}
		ev.Attributes[k] = v.AsRaw()
	}
}

// want reports whether v has type t, and notes the first known attribute
// that does not.
func (d *decoder) want(k string, v pcommon.Value, t pcommon.ValueType) bool {
	got := v.Type()
	if got == t {
		return true
	}
	if d.bad == nil {
		d.bad = fmt.Errorf("%w: %s is %s, want %s", ErrMalformed, k, got, t)
	}
	return false
}

func (d *decoder) str(k string, v pcommon.Value, dst *string) {
	if d.want(k, v, pcommon.ValueTypeStr) {
		*dst = v.Str()
	}
}

func (d *decoder) num(k string, v pcommon.Value, dst **int64, slot int) {
	if !d.want(k, v, pcommon.ValueTypeInt) {
		return
	}
	if d.nums == nil {
		d.nums = new([numFields]int64)
	}
	d.nums[slot] = v.Int()
	*dst = &d.nums[slot]
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
	return EncodeLogsCaughtUp(events, hostName, nil)
}

// EncodeLogsCaughtUp is EncodeLogs whose records of the events at the
// indexes caughtUp (ascending) carry AttrReadCaughtUp.
func EncodeLogsCaughtUp(events []Event, hostName string, caughtUp []int) plog.Logs {
	logs := plog.NewLogs()
	type key struct {
		source  Source
		version string
	}
	var (
		enc    encoder
		scopes = map[key]plog.LogRecordSlice{}
		last   key
		lrs    plog.LogRecordSlice
	)
	for i := range events {
		ev := &events[i]
		// Runs of events share a resource: look it up when it changes.
		if k := (key{ev.Source, ev.AgentVersion}); i == 0 || k != last {
			var ok bool
			if lrs, ok = scopes[k]; !ok {
				rl := logs.ResourceLogs().AppendEmpty()
				SetResource(rl.Resource(), ev.Source, ev.AgentVersion)
				if hostName != "" {
					rl.Resource().Attributes().PutStr(ResourceHostName, hostName)
				}
				sl := rl.ScopeLogs().AppendEmpty()
				sl.Scope().SetName(ScopeName)
				lrs = sl.LogRecords()
				if i == 0 {
					lrs.EnsureCapacity(len(events)) // most batches are of one resource
				}
				scopes[k] = lrs
			}
			last = k
		}
		lr := lrs.AppendEmpty()
		enc.encode(ev, lr)
		if len(caughtUp) > 0 && caughtUp[0] == i {
			lr.Attributes().PutBool(AttrReadCaughtUp, true)
			caughtUp = caughtUp[1:]
		}
	}
	return logs
}

// AppendLogs moves the records of src, built by EncodeLogs, to the end of
// dst, also built by EncodeLogs: into dst's ResourceLogs of the same
// resource when it has one, else into a new one after dst's. dst then holds
// what EncodeLogs of dst's events followed by src's would have built. src
// is left empty.
func AppendLogs(dst, src plog.Logs) {
	for _, rl := range src.ResourceLogs().All() {
		into, ok := sameResource(dst, rl.Resource())
		if !ok || rl.ScopeLogs().Len() != 1 || into.ScopeLogs().Len() != 1 {
			// Not of EncodeLogs's shape: moved whole.
			rl.MoveTo(dst.ResourceLogs().AppendEmpty())
			continue
		}
		rl.ScopeLogs().At(0).LogRecords().MoveAndAppendTo(into.ScopeLogs().At(0).LogRecords())
	}
	src.ResourceLogs().RemoveIf(func(plog.ResourceLogs) bool { return true })
}

// sameResource finds the ResourceLogs of logs whose resource has the
// attributes of res.
func sameResource(logs plog.Logs, res pcommon.Resource) (plog.ResourceLogs, bool) {
	for _, rl := range logs.ResourceLogs().All() {
		if rl.Resource().Attributes().Equal(res.Attributes()) {
			return rl, true
		}
	}
	return plog.ResourceLogs{}, false
}

// ScopeName is the instrumentation scope of the records the receiver emits.
const ScopeName = "github.com/agentotel/agentotel/receiver/agentlogreceiver"

// DecodeLogs reads every agent event in logs, in order. Records Decode
// refuses (not agent events, malformed) are skipped and counted in skipped.
func DecodeLogs(logs plog.Logs) (events []Event, skipped int) {
	n := logs.LogRecordCount()
	if n == 0 {
		return nil, 0
	}
	events = make([]Event, n) // decoded in place
	i := 0
	for _, rl := range logs.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				if err := decodeInto(lr, &events[i]); err != nil {
					skipped++
					continue
				}
				i++
			}
		}
	}
	if i == 0 {
		return nil, skipped
	}
	return events[:i], skipped
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
