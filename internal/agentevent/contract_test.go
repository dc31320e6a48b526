// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentevent

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// attrTypes is the value type Encode writes for each known key that is not a
// string (AttrCostUSD: a double; Decode also takes an int there).
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

// TestEncodeWritesTheContract: the named attributes of a full event in the
// order of the wire contract, each with its type, then Event.Attributes.
func TestEncodeWritesTheContract(t *testing.T) {
	lr := plog.NewLogRecord()
	Encode(fullEvent(), lr)
	assert.Equal(t, []string{
		AttrSchemaVersion, AttrSource, AttrProjectHash, AttrProjectRoot, AttrSessionID, AttrEventID,
		AttrParentEventID, AttrEventType, AttrRole, AttrChannel, AttrToolName, AttrToolCallID,
		AttrToolStatus, AttrToolLatencyMs, AttrExitCode, AttrFilePath, AttrFileLanguage, AttrFileOp,
		AttrModel, AttrTokensInput, AttrTokensOutput, AttrTokensTotal, AttrTokensCached,
		AttrTokensThinking, AttrTokensTool, AttrTokensCacheCreation, AttrAgentID, AttrRaw, AttrSequence,
		AttrAgentVersion, AttrGitBranch, AttrSidechain, AttrSubagentType, AttrParentToolCallID,
		AttrSpawnedAgentID, AttrEntrypoint, AttrProvider, AttrResponseID, AttrFinishReasons,
		AttrErrorType, AttrCostUSD, AttrStatus, AttrLogFile, AttrLogLine,
	}, namedKeys(lr), "fullEvent has every named field but Unparsed")
	extras := 0
	for k, v := range lr.Attributes().All() {
		if !knownAttrs[k] {
			extras++
			continue
		}
		assert.Zero(t, extras, "%s after Event.Attributes", k)
		want, typed := attrTypes[k]
		if !typed {
			want = pcommon.ValueTypeStr
		}
		assert.Equal(t, want, v.Type(), k)
	}
	assert.Equal(t, len(fullEvent().Attributes), extras)
	assert.Equal(t, "agent.tool_result", lr.EventName())
	assert.Equal(t, plog.SeverityNumberInfo, lr.SeverityNumber())
	assert.Equal(t, "INFO", lr.SeverityText())

	unparsed := plog.NewLogRecord()
	Encode(Event{Type: TypeLog, Unparsed: ReasonMalformedJSON}, unparsed)
	assert.Equal(t, plog.SeverityNumberWarn, unparsed.SeverityNumber())
	assert.Equal(t, "WARN", unparsed.SeverityText())
	assert.Equal(t, []string{AttrEventType, AttrSequence, AttrUnparsed}, namedKeys(unparsed))
}

// TestReencodeGoldenRecords decodes every record of the golden files (written
// by the receiver through Encode) and encodes it again: the same record.
func TestReencodeGoldenRecords(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "*", "*", "events.yaml"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	n := 0
	for _, p := range paths {
		logs, err := golden.ReadLogs(p)
		require.NoError(t, err, p)
		for _, rl := range logs.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, want := range sl.LogRecords().All() {
					ev, err := Decode(want)
					require.NoError(t, err, p)
					got := plog.NewLogRecord()
					Encode(ev, got)
					assert.Equal(t, want.Attributes().AsRaw(), got.Attributes().AsRaw(), "%s record %d", p, n)
					assert.Equal(t, want.EventName(), got.EventName(), p)
					assert.Equal(t, want.Timestamp(), got.Timestamp(), p)
					assert.Equal(t, want.SeverityNumber(), got.SeverityNumber(), p)
					assert.Equal(t, want.SeverityText(), got.SeverityText(), p)
					assert.Equal(t, want.Body().AsRaw(), got.Body().AsRaw(), p)
					n++
				}
			}
		}
	}
	assert.Greater(t, n, 500)
}

// TestEncodeAttributeValues: each kind of value Event.Attributes may hold is
// written as its OTLP type, a kind pcommon cannot hold as its printed form,
// and a key a named field owns is left to the field.
func TestEncodeAttributeValues(t *testing.T) {
	ev := Event{Type: TypeMeta, SessionID: "s1", TokensInput: Int(1), Attributes: map[string]any{
		"agent.s": "x", "agent.b": false, "agent.i64": int64(-3), "agent.i": 4, "agent.f": 0.25,
		"agent.i32": int32(5), "agent.u8": uint8(6), "agent.f32": float32(1.5),
		"agent.bytes": []byte("b"), "agent.nil": nil,
		"agent.list": []any{"a", int64(1), map[string]any{"k": true}},
		"agent.map":  map[string]any{"k": []any{1.5}},
		"agent.odd":  struct{ A int }{7}, "agent.badmap": map[string]any{"k": struct{}{}},
		AttrSessionID: "owned by a field", AttrTokensInput: int64(99), "": "empty key",
	}}
	lr := plog.NewLogRecord()
	Encode(ev, lr)
	a := lr.Attributes()
	get := func(k string) pcommon.Value {
		v, ok := a.Get(k)
		require.True(t, ok, k)
		return v
	}
	assert.Equal(t, "x", get("agent.s").Str())
	assert.False(t, get("agent.b").Bool())
	assert.Equal(t, int64(-3), get("agent.i64").Int())
	assert.Equal(t, int64(4), get("agent.i").Int())
	assert.InDelta(t, 0.25, get("agent.f").Double(), 0)
	assert.Equal(t, int64(5), get("agent.i32").Int())
	assert.Equal(t, int64(6), get("agent.u8").Int())
	assert.InDelta(t, 1.5, get("agent.f32").Double(), 0)
	assert.Equal(t, []byte("b"), get("agent.bytes").Bytes().AsRaw())
	assert.Equal(t, pcommon.ValueTypeEmpty, get("agent.nil").Type())
	assert.Equal(t, []any{"a", int64(1), map[string]any{"k": true}}, get("agent.list").Slice().AsRaw())
	assert.Equal(t, map[string]any{"k": []any{1.5}}, get("agent.map").Map().AsRaw())
	assert.Equal(t, "{7}", get("agent.odd").Str())
	assert.Equal(t, pcommon.ValueTypeStr, get("agent.badmap").Type())
	assert.Equal(t, "empty key", get("").Str())
	assert.Equal(t, "s1", get(AttrSessionID).Str())
	assert.Equal(t, int64(1), get(AttrTokensInput).Int())
	n := 0
	for k := range a.All() {
		if k == AttrSessionID || k == AttrTokensInput {
			n++
		}
	}
	assert.Equal(t, 2, n, "each named key once")
}

// TestEncodeOntoAttributes: a record that has attributes already keeps them
// (in their places), the keys Encode writes that it has are updated in place,
// the others appended.
func TestEncodeOntoAttributes(t *testing.T) {
	for _, ev := range []Event{fullEvent(), {Type: TypeMeta, LogFile: "f"}} {
		want := plog.NewLogRecord()
		Encode(ev, want)
		got := plog.NewLogRecord()
		got.Attributes().PutStr("first", "kept")
		got.Attributes().PutInt(AttrEventType, 1)
		got.Attributes().PutStr(AttrLogFile, "old")
		got.Attributes().PutBool(AttrSidechain, false)
		Encode(ev, got)

		var keys []string
		for k := range got.Attributes().All() {
			keys = append(keys, k)
		}
		require.GreaterOrEqual(t, len(keys), 4)
		assert.Equal(t, []string{"first", AttrEventType, AttrLogFile, AttrSidechain}, keys[:4])
		wantAttrs := want.Attributes().AsRaw()
		wantAttrs["first"] = "kept"
		if !ev.IsSidechain {
			wantAttrs[AttrSidechain] = false // Encode writes only true
		}
		assert.Equal(t, wantAttrs, got.Attributes().AsRaw())
		assert.Len(t, keys, len(wantAttrs), "no key twice")
	}
}

// TestDecodeDuplicateKeys: of a known key that a record off the wire carries
// twice the last wins, except the event type, which the first gives; each
// copy must have its type.
func TestDecodeDuplicateKeys(t *testing.T) {
	base := func() plog.LogRecord {
		lr := plog.NewLogRecord()
		Encode(fullEvent(), lr)
		return lr
	}
	ev, err := Decode(withDuplicate(t, base(), AttrModel, func(v pcommon.Value) { v.SetStr("second") }))
	require.NoError(t, err)
	assert.Equal(t, "second", ev.Model)

	ev, err = Decode(withDuplicate(t, base(), AttrTokensInput, func(v pcommon.Value) { v.SetInt(5) }))
	require.NoError(t, err)
	assert.Equal(t, Int(5), ev.TokensInput)

	ev, err = Decode(withDuplicate(t, base(), "agent.extra", func(v pcommon.Value) { v.SetStr("b") }))
	require.NoError(t, err)
	assert.Equal(t, "b", ev.Attributes["agent.extra"])

	ev, err = Decode(withDuplicate(t, base(), AttrEventType, func(v pcommon.Value) { v.SetStr("other") }))
	require.NoError(t, err)
	assert.Equal(t, TypeToolResult, ev.Type, "the first event type")

	_, err = Decode(withDuplicate(t, base(), AttrModel, func(v pcommon.Value) { v.SetInt(1) }))
	require.ErrorIs(t, err, ErrMalformed)
	assert.ErrorContains(t, err, AttrModel)

	_, err = Decode(withDuplicate(t, base(), AttrEventType, func(v pcommon.Value) { v.SetInt(1) }))
	assert.ErrorIs(t, err, ErrMalformed)
}

// TestDecodeNamesTheFirstWrongKey: with several known keys of another type,
// the error names the first in record order.
func TestDecodeNamesTheFirstWrongKey(t *testing.T) {
	lr := plog.NewLogRecord()
	Encode(fullEvent(), lr)
	lr.Attributes().PutInt(AttrModel, 1)      // in place, after the source
	lr.Attributes().PutStr(AttrLogLine, "2")  // in place, later
	lr.Attributes().PutBool(AttrSource, true) // in place, earlier
	_, err := Decode(lr)
	require.ErrorIs(t, err, ErrMalformed)
	assert.Equal(t, "malformed agent event: agent.source is Bool, want Str", err.Error())
}

// TestDecodeLenientForms: a record without the event type attribute takes
// the type from its event name, and a cost may be an int.
func TestDecodeLenientForms(t *testing.T) {
	lr := plog.NewLogRecord()
	Encode(fullEvent(), lr)
	lr.Attributes().Remove(AttrEventType)
	ev, err := Decode(lr)
	require.NoError(t, err)
	assert.Equal(t, TypeToolResult, ev.Type)

	lr.SetEventName("other")
	_, err = Decode(lr)
	require.ErrorIs(t, err, ErrNotAgentEvent)

	lr = plog.NewLogRecord()
	Encode(fullEvent(), lr)
	lr.Attributes().PutInt(AttrCostUSD, 2)
	ev, err = Decode(lr)
	require.NoError(t, err)
	assert.Equal(t, Float(2), ev.CostUSD)
}

// withDuplicate is lr with a second attribute k (set by set) at the end, as
// an OTLP record off the wire may carry: made by unmarshalling a record
// whose extra key differs from k by one byte, patched in the wire bytes.
func withDuplicate(t *testing.T, lr plog.LogRecord, k string, set func(pcommon.Value)) plog.LogRecord {
	t.Helper()
	marker := "\x7f" + k[1:]
	ld := plog.NewLogs()
	c := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.CopyTo(c)
	set(c.Attributes().PutEmpty(marker))
	var m plog.ProtoMarshaler
	b, err := m.MarshalLogs(ld)
	require.NoError(t, err)
	require.Equal(t, 1, bytes.Count(b, []byte(marker)))
	b = bytes.Replace(b, []byte(marker), []byte(k), 1)
	var u plog.ProtoUnmarshaler
	back, err := u.UnmarshalLogs(b)
	require.NoError(t, err)
	return back.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
}

// namedKeys are the record's attribute keys that named fields own, in order.
func namedKeys(lr plog.LogRecord) []string {
	var keys []string
	for k := range lr.Attributes().All() {
		if knownAttrs[k] {
			keys = append(keys, k)
		}
	}
	return keys
}
