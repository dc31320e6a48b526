// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentevent

import (
	"fmt"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// The encoder and decoder as they were before the hand-off was made cheap
// (main 8cb31fc), kept verbatim as the reference the wire-contract test
// compares the current code with, and as the "before" of the benchmarks.

func legacySetResource(res pcommon.Resource, source Source, agentVersion string) {
	attrs := res.Attributes()
	attrs.PutStr(ResourceServiceName, source.ServiceName())
	if agentVersion != "" {
		attrs.PutStr(ResourceServiceVersion, agentVersion)
	}
}

func legacyEncode(ev Event, lr plog.LogRecord) {
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
			legacyPutValue(a, k, v)
		}
	}
}

func legacyPutValue(m pcommon.Map, k string, v any) {
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

// attrTypes is the value type Encode writes for each known key that is not
// a string (AttrCostUSD: a double, or an int); the old decoder checked types
// with it, TestDecodeRefusesEveryWrongType walks it.
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

func legacyDecode(lr plog.LogRecord) (Event, error) {
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

func legacyEncodeLogs(events []Event, hostName string) plog.Logs {
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
			legacySetResource(rl.Resource(), ev.Source, ev.AgentVersion)
			if hostName != "" {
				rl.Resource().Attributes().PutStr(ResourceHostName, hostName)
			}
			sl = rl.ScopeLogs().AppendEmpty()
			sl.Scope().SetName(ScopeName)
			scopes[k] = sl
		}
		legacyEncode(ev, sl.LogRecords().AppendEmpty())
	}
	return logs
}

func legacyDecodeLogs(logs plog.Logs) (events []Event, skipped int) {
	for i := 0; i < logs.ResourceLogs().Len(); i++ {
		sls := logs.ResourceLogs().At(i).ScopeLogs()
		for j := 0; j < sls.Len(); j++ {
			lrs := sls.At(j).LogRecords()
			for k := 0; k < lrs.Len(); k++ {
				ev, err := legacyDecode(lrs.At(k))
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
