// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentevent

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// wrongTypes sets every known key of a full event, in turn, to a value of
// each other type: every such record is malformed, none panics.
func TestDecodeRefusesEveryWrongType(t *testing.T) {
	others := map[pcommon.ValueType]func(pcommon.Value){
		pcommon.ValueTypeStr:    func(v pcommon.Value) { v.SetStr("x") },
		pcommon.ValueTypeInt:    func(v pcommon.Value) { v.SetInt(3) },
		pcommon.ValueTypeDouble: func(v pcommon.Value) { v.SetDouble(1.5) },
		pcommon.ValueTypeBool:   func(v pcommon.Value) { v.SetBool(true) },
		pcommon.ValueTypeBytes:  func(v pcommon.Value) { v.SetEmptyBytes().FromRaw([]byte("b")) },
		pcommon.ValueTypeSlice:  func(v pcommon.Value) { v.SetEmptySlice().AppendEmpty().SetInt(1) },
		pcommon.ValueTypeMap:    func(v pcommon.Value) { v.SetEmptyMap().PutInt("k", 1) },
		pcommon.ValueTypeEmpty:  func(pcommon.Value) {},
	}
	checked := 0
	for k := range knownAttrs {
		want, typed := attrTypes[k]
		if !typed {
			want = pcommon.ValueTypeStr
		}
		for typ, set := range others {
			if typ == want || (k == AttrCostUSD && typ == pcommon.ValueTypeInt) {
				continue
			}
			lr := plog.NewLogRecord()
			Encode(fullEvent(), lr)
			v := lr.Attributes().PutEmpty(k)
			set(v)
			_, err := Decode(lr)
			require.Error(t, err, "%s as %s", k, typ)
			if k == AttrEventType {
				assert.ErrorIs(t, err, ErrMalformed, "%s as %s: %v", k, typ, err)
				continue
			}
			assert.ErrorIs(t, err, ErrMalformed, "%s as %s", k, typ)
			assert.ErrorContains(t, err, k)
			checked++
		}
	}
	assert.Greater(t, checked, 300)
}

func TestDecodeNotAnAgentEvent(t *testing.T) {
	lr := plog.NewLogRecord()
	lr.Body().SetStr("hello")
	_, err := Decode(lr)
	assert.ErrorIs(t, err, ErrNotAgentEvent)
	lr.SetEventName(EventNamePrefix)
	_, err = Decode(lr)
	assert.ErrorIs(t, err, ErrNotAgentEvent, "an empty event type")
	lr.Attributes().PutStr(AttrEventType, "")
	_, err = Decode(lr)
	assert.ErrorIs(t, err, ErrMalformed)
}

func TestDecodeKeepsTheCaughtUpFlagOut(t *testing.T) {
	lr := plog.NewLogRecord()
	Encode(fullEvent(), lr)
	lr.Attributes().PutBool(AttrReadCaughtUp, true)
	ev, err := Decode(lr)
	require.NoError(t, err)
	assert.NotContains(t, ev.Attributes, AttrReadCaughtUp, "a wire flag, never event data")
	assert.True(t, CaughtUp(lr))
	lr.Attributes().PutStr(AttrReadCaughtUp, "true")
	assert.False(t, CaughtUp(lr), "only a bool true counts")
}

func TestRecordPlace(t *testing.T) {
	lr := plog.NewLogRecord()
	assert.Empty(t, RecordPlace(lr))
	lr.Attributes().PutStr(AttrLogFile, "/a.jsonl")
	assert.Equal(t, "/a.jsonl", RecordPlace(lr))
	lr.Attributes().PutInt(AttrLogLine, 4)
	assert.Equal(t, "/a.jsonl:4", RecordPlace(lr))
}

// fuzzLogs fuzzes f over arbitrary bytes; those the OTLP unmarshaler
// accepts go to check. The seeds: the empty input and, per mutation, one log
// record holding fullEvent as encode writes it, changed by the mutation.
func fuzzLogs(f *testing.F, encode func(Event, plog.LogRecord), muts []func(lr plog.LogRecord), check func(t *testing.T, ld plog.Logs)) {
	var m plog.ProtoMarshaler
	for _, mut := range muts {
		ld := plog.NewLogs()
		lr := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
		encode(fullEvent(), lr)
		mut(lr)
		b, err := m.MarshalLogs(ld)
		require.NoError(f, err)
		f.Add(b)
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var u plog.ProtoUnmarshaler
		ld, err := u.UnmarshalLogs(b)
		if err != nil {
			return
		}
		check(t, ld)
	})
}

// FuzzDecode decodes arbitrary log records (any protobuf the OTLP
// unmarshaler accepts): Decode never panics, and what it accepts encodes
// and decodes again.
func FuzzDecode(f *testing.F) {
	fuzzLogs(f, Encode, []func(plog.LogRecord){
		func(plog.LogRecord) {},
		func(lr plog.LogRecord) { lr.Attributes().PutStr(AttrRaw, "not bytes") },
		func(lr plog.LogRecord) { lr.Attributes().PutStr(AttrTokensInput, "12") },
		func(lr plog.LogRecord) { lr.Attributes().PutInt(AttrFinishReasons, 1) },
		func(lr plog.LogRecord) { lr.Attributes().PutEmptySlice(AttrFinishReasons).AppendEmpty().SetEmptyMap() },
		func(lr plog.LogRecord) { lr.Attributes().Remove(AttrEventType) },
		func(lr plog.LogRecord) { lr.Attributes().PutBool(AttrReadCaughtUp, true) },
	}, func(t *testing.T, ld plog.Logs) {
		evs, _ := DecodeLogs(ld)
		for i := range evs {
			lr := plog.NewLogRecord()
			Encode(evs[i], lr)
			if _, err := Decode(lr); err != nil {
				t.Fatalf("an accepted event does not decode after Encode: %v", err)
			}
		}
	})
}
