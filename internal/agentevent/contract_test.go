// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentevent

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// contractEvents are the golden events, and each of them again with a Raw
// record, as unparsed, and with extra attributes of every kind Encode meets:
// the value types Event.Attributes holds, the ones PutValue stores raw, one
// it can only print, keys a named field owns (left out) and the wire flag.
func contractEvents(t *testing.T) []Event {
	t.Helper()
	evs := goldenEvents(t)
	out := append([]Event{fullEvent(), {}}, evs...)
	for i, ev := range evs {
		switch i % 4 {
		case 0:
			ev.Raw = []byte(fmt.Sprintf(`{"n":%d}`, i))
		case 1:
			ev.Unparsed, ev.Raw = "malformed_json", []byte{}
		case 2:
			ev.Type = EventType(fmt.Sprintf("custom_%d", i))
		case 3:
			ev.Attributes = map[string]any{
				"agent.s": "x", "agent.b": false, "agent.i64": int64(-3), "agent.i": 4,
				"agent.f": 0.25, "agent.i32": int32(5), "agent.u8": uint8(6), "agent.f32": float32(1.5),
				"agent.bytes": []byte("b"), "agent.nil": nil,
				"agent.list": []any{"a", int64(1), map[string]any{"k": true}},
				"agent.map":  map[string]any{"k": []any{1.5}},
				"agent.odd":  struct{ A int }{7}, "agent.badmap": map[string]any{"k": struct{}{}},
				AttrSessionID: "owned by a field", AttrTokensInput: int64(99), AttrReadCaughtUp: true,
				"": "empty key",
			}
			ev.TokensInput, ev.CostUSD, ev.IsSidechain, ev.FinishReason = Int(1), Float(2), true, "stop"
		}
		out = append(out, ev)
	}
	return out
}

// TestEncodeKeepsTheWireContract encodes every contract event with the old
// encoder (legacy_test.go) and the current one: the records are the same,
// byte for byte in OTLP, with the named attributes in the same order (those
// of Event.Attributes come from a Go map, in no order, before and after).
func TestEncodeKeepsTheWireContract(t *testing.T) {
	evs := contractEvents(t)
	require.Greater(t, len(evs), 500)
	for i, ev := range evs {
		want, got := plog.NewLogRecord(), plog.NewLogRecord()
		legacyEncode(ev, want)
		Encode(ev, got)
		requireSameRecord(t, want, got, "event %d", i)
	}
	// A record that has attributes already: known keys updated in place.
	for i, ev := range evs[:50] {
		want, got := plog.NewLogRecord(), plog.NewLogRecord()
		for _, lr := range []plog.LogRecord{want, got} {
			lr.Attributes().PutStr("first", "kept")
			lr.Attributes().PutInt(AttrEventType, 1)
			lr.Attributes().PutStr(AttrLogFile, "old")
			lr.Attributes().PutBool(AttrSidechain, false)
		}
		legacyEncode(ev, want)
		Encode(ev, got)
		requireSameRecord(t, want, got, "event %d onto attributes", i)
	}
	// EncodeLogs: the same resources, scopes and records.
	want, got := legacyEncodeLogs(evs, "host"), EncodeLogs(evs, "host")
	sortExtras(want)
	sortExtras(got)
	requireSameLogs(t, want, got)
	want, got = legacyEncodeLogs(nil, ""), EncodeLogs(nil, "")
	requireSameLogs(t, want, got)
}

// TestDecodeAsBefore decodes records of every kind with the old decoder and
// the current one: the same event, or the same error.
func TestDecodeAsBefore(t *testing.T) {
	var records []plog.LogRecord
	for _, ev := range contractEvents(t) {
		lr := plog.NewLogRecord()
		legacyEncode(ev, lr)
		records = append(records, lr)
	}
	base := func() plog.LogRecord {
		lr := plog.NewLogRecord()
		legacyEncode(fullEvent(), lr)
		return lr
	}
	values := []func(pcommon.Value){
		func(v pcommon.Value) { v.SetStr("x") },
		func(v pcommon.Value) { v.SetStr("") },
		func(v pcommon.Value) { v.SetInt(3) },
		func(v pcommon.Value) { v.SetDouble(1.5) },
		func(v pcommon.Value) { v.SetBool(true) },
		func(v pcommon.Value) { v.SetEmptyBytes().FromRaw([]byte("b")) },
		func(v pcommon.Value) { v.SetEmptySlice().AppendEmpty().SetInt(1) },
		func(v pcommon.Value) { v.SetEmptySlice() },
		func(v pcommon.Value) { v.SetEmptyMap().PutInt("k", 1) },
		func(pcommon.Value) {},
	}
	keys := append(slices.Sorted(func(yield func(string) bool) {
		for k := range knownAttrs {
			if !yield(k) {
				return
			}
		}
	}), AttrReadCaughtUp, "agent.other")
	for _, k := range keys {
		for _, set := range values {
			lr := base() // the key set to another value in place
			set(lr.Attributes().PutEmpty(k))
			records = append(records, lr)
			// and once more at the end: a duplicate key, as a record off
			// the wire may have (PutEmpty cannot make one)
			lr = base()
			lr = withDuplicate(t, lr, k, set)
			records = append(records, lr)
			lr = base() // without an event type attribute, with or without a name
			lr.Attributes().Remove(AttrEventType)
			set(lr.Attributes().PutEmpty(k))
			records = append(records, lr)
			lr = base()
			lr.Attributes().Remove(AttrEventType)
			lr.SetEventName("other")
			set(lr.Attributes().PutEmpty(k))
			records = append(records, lr)
		}
	}
	for i, k := range keys { // two keys wrong: the first in record order is named
		for _, set := range values {
			lr := base()
			set(lr.Attributes().PutEmpty(k))
			lr.Attributes().PutEmptyMap(keys[(i+7)%len(keys)])
			records = append(records, lr)
		}
	}
	bare := plog.NewLogRecord()
	bare.Body().SetInt(1)
	records = append(records, bare)
	named := plog.NewLogRecord()
	named.SetEventName(EventNamePrefix)
	records = append(records, named)

	for i, lr := range records {
		want, wantErr := legacyDecode(lr)
		got, gotErr := Decode(lr)
		if wantErr != nil {
			require.Error(t, gotErr, "record %d", i)
			assert.Equal(t, wantErr.Error(), gotErr.Error(), "record %d", i)
			assert.Equal(t, errorsIs(wantErr), errorsIs(gotErr), "record %d", i)
		} else {
			require.NoError(t, gotErr, "record %d", i)
		}
		require.Equal(t, want, got, "record %d", i)
	}
	// DecodeLogs over all of them.
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for _, lr := range records {
		lr.CopyTo(lrs.AppendEmpty())
	}
	wantEvs, wantSkipped := legacyDecodeLogs(ld)
	gotEvs, gotSkipped := DecodeLogs(ld)
	assert.Equal(t, wantSkipped, gotSkipped)
	assert.Equal(t, wantEvs, gotEvs)
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

func errorsIs(err error) [2]bool {
	return [2]bool{isErr(err, ErrNotAgentEvent), isErr(err, ErrMalformed)}
}

func isErr(err, target error) bool {
	for err != nil {
		if err == target {
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// requireSameRecord checks that got is want: the same named attributes in the
// same order and, the attributes of Event.Attributes sorted by key in both,
// the same OTLP bytes.
func requireSameRecord(t *testing.T, want, got plog.LogRecord, msg string, args ...any) {
	t.Helper()
	require.Equal(t, namedKeys(want), namedKeys(got), append([]any{msg + ": named keys"}, args...)...)
	w, g := plog.NewLogs(), plog.NewLogs()
	want.CopyTo(w.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty())
	got.CopyTo(g.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty())
	sortExtras(w)
	sortExtras(g)
	requireSameLogs(t, w, g)
}

func requireSameLogs(t *testing.T, want, got plog.Logs) {
	t.Helper()
	var m plog.ProtoMarshaler
	wb, err := m.MarshalLogs(want)
	require.NoError(t, err)
	gb, err := m.MarshalLogs(got)
	require.NoError(t, err)
	if !bytes.Equal(wb, gb) {
		var j plog.JSONMarshaler
		wj, _ := j.MarshalLogs(want)
		gj, _ := j.MarshalLogs(got)
		require.Equal(t, string(wj), string(gj), "OTLP bytes differ")
		require.Fail(t, "OTLP bytes differ, JSON does not")
	}
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

// sortExtras sorts, in every record, the attributes after the named ones by key.
func sortExtras(ld plog.Logs) {
	for _, rl := range ld.ResourceLogs().All() {
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				var named, extra []string
				for k := range lr.Attributes().All() {
					if knownAttrs[k] {
						named = append(named, k)
					} else {
						extra = append(extra, k)
					}
				}
				slices.Sort(extra)
				sorted := pcommon.NewMap()
				for _, k := range append(named, extra...) {
					v, _ := lr.Attributes().Get(k)
					v.CopyTo(sorted.PutEmpty(k))
				}
				sorted.MoveTo(lr.Attributes())
			}
		}
	}
}

// FuzzDecodeAsBefore decodes arbitrary OTLP log records with the old
// decoder and the current one: the same events, the same errors.
func FuzzDecodeAsBefore(f *testing.F) {
	fuzzLogs(f, legacyEncode, []func(plog.LogRecord){
		func(plog.LogRecord) {},
		func(lr plog.LogRecord) { lr.Attributes().PutStr(AttrRaw, "not bytes") },
		func(lr plog.LogRecord) { lr.Attributes().PutInt(AttrCostUSD, 2) },
		func(lr plog.LogRecord) { lr.Attributes().PutEmptySlice(AttrFinishReasons).AppendEmpty().SetEmptyMap() },
		func(lr plog.LogRecord) { lr.Attributes().Remove(AttrEventType) },
		func(lr plog.LogRecord) { lr.Attributes().PutInt(AttrEventType, 1) },
		func(lr plog.LogRecord) { lr.Attributes().PutBool(AttrReadCaughtUp, true) },
	}, func(t *testing.T, ld plog.Logs) {
		for _, rl := range ld.ResourceLogs().All() {
			for _, sl := range rl.ScopeLogs().All() {
				for _, lr := range sl.LogRecords().All() {
					want, wantErr := legacyDecode(lr)
					got, gotErr := Decode(lr)
					if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
						t.Fatalf("error %v, was %v", gotErr, wantErr)
					}
					require.Equal(t, want, got)
				}
			}
		}
	})
}
