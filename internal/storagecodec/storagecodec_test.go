// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package storagecodec

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
)

// parserState has the shape of the receiver's stored state of a Claude Code
// file (position, first-line sum, parser state).
const parserState = `{"first_line_sha256":"66ecb84e31312070c23d5cf6e620949ace5e4e1e423d0205e615c7765fbd7ea3",` +
	`"pos":{"offset":90399,"line":33,"ino":5546573,"head_len":1000,"head":"4998ae7c4b94795a256abaa918c3e66eb1226738b50bb692a23bd2b92cf4ecd8"},` +
	`"state":{"v":2,"last_offset":90215,"sequence":25,"session_id":"4e1f519b-0c87-4b0b-9f45-01b70a90b373",` +
	`"cwd":"/home/dev/src/shop","version":"2.1.111","git_branch":"main","entrypoint":"cli",` +
	`"timestamp":"2026-04-18T00:43:04.557Z","prompts":{"4e1f519b-0c87-4b0b-9f45-01b70a90b373\u0000":"3e481b86-fdf5-47b1-ae0f-01b74a4703a5"},` +
	`"usage":[{"id":"msg_01E2Wa7HctEnz3AUYbr8Ten3Zc7","out":287}],"call_seq":0}}`

func newClients(t *testing.T) (raw storage.Client, wrapped storage.Client) {
	t.Helper()
	raw = storagetest.NewFileBackedClient(component.KindReceiver, component.MustNewID("agent_log"), "", t.TempDir())
	t.Cleanup(func() { _ = raw.Close(context.Background()) })
	return raw, Wrap(raw)
}

// readBack is what the wrapped client reads under key.
func readBack(t *testing.T, c storage.Client, key string) []byte {
	t.Helper()
	b, err := c.Get(context.Background(), key)
	require.NoError(t, err)
	return b
}

// storedForm is what the raw client holds under key.
func storedForm(t *testing.T, raw storage.Client, key string) []byte {
	t.Helper()
	b, err := raw.Get(context.Background(), key)
	require.NoError(t, err)
	return b
}

func TestRecordRoundTripsSmaller(t *testing.T) {
	ctx := context.Background()
	raw, c := newClients(t)
	require.NoError(t, c.Set(ctx, "claude_code.parser./p.jsonl", []byte(parserState)))

	stored := storedForm(t, raw, "claude_code.parser./p.jsonl")
	require.NotEmpty(t, stored)
	assert.Equal(t, byte(marker), stored[0], "stored compressed")
	assert.Less(t, len(stored), len(parserState)*8/10, "the dictionary and S2 save at least 20 %% on a state record")

	got := readBack(t, c, "claude_code.parser./p.jsonl")
	assert.JSONEq(t, parserState, string(got))
}

func TestValuesWrittenBeforeAreReadAsStored(t *testing.T) {
	ctx := context.Background()
	raw, c := newClients(t)
	logs := plog.NewLogs()
	logs.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("event")
	pb, err := (&plog.ProtoMarshaler{}).MarshalLogs(logs)
	require.NoError(t, err)
	legacy := map[string][]byte{
		"json":     []byte(parserState),
		"protobuf": pb,
		"path":     []byte("/home/dev/.codex/sessions/2026/03/30/rollout.jsonl"),
	}
	for k, v := range legacy {
		require.NoError(t, raw.Set(ctx, k, v))
	}
	for k, v := range legacy {
		got, err := c.Get(ctx, k)
		require.NoError(t, err)
		assert.Equal(t, v, got, k)
	}
	ops := []*storage.Operation{storage.GetOperation("json"), storage.GetOperation("protobuf"), storage.GetOperation("absent")}
	require.NoError(t, c.Batch(ctx, ops...))
	assert.Equal(t, legacy["json"], ops[0].Value)
	assert.Equal(t, legacy["protobuf"], ops[1].Value)
	assert.Nil(t, ops[2].Value, "a missing key stays missing")
}

func TestSmallValuesAreStoredAsTheyAre(t *testing.T) {
	ctx := context.Background()
	raw, c := newClients(t)
	require.NoError(t, c.Set(ctx, "first", []byte("/home/dev/a.jsonl")))
	stored := storedForm(t, raw, "first")
	assert.Equal(t, "/home/dev/a.jsonl", string(stored))
}

func TestValuesBeginningWithTheMarkerRoundTrip(t *testing.T) {
	ctx := context.Background()
	raw, c := newClients(t)
	for _, v := range [][]byte{{marker}, {marker, 1, 2}, append([]byte{marker}, bytes.Repeat([]byte{7}, 200)...)} {
		require.NoError(t, c.Set(ctx, "k", v))
		stored := storedForm(t, raw, "k")
		assert.Equal(t, byte(marker), stored[0])
		got := readBack(t, c, "k")
		assert.Equal(t, v, got)
	}
}

func TestDamagedValueIsHandedOnAsStored(t *testing.T) {
	ctx := context.Background()
	raw, c := newClients(t)
	require.NoError(t, c.Set(ctx, "k", []byte(parserState)))
	stored := storedForm(t, raw, "k")
	damaged := bytes.Clone(stored)
	damaged[len(damaged)/2] ^= 0xff
	require.NoError(t, raw.Set(ctx, "k", damaged))

	got := readBack(t, c, "k")
	assert.Equal(t, damaged, got, "returned as stored")
	var v any
	assert.Error(t, json.Unmarshal(got, &v), "so that the caller's unreadable-record path applies")

	truncated := stored[:len(stored)/2]
	require.NoError(t, raw.Set(ctx, "k", truncated))
	got = readBack(t, c, "k")
	assert.Equal(t, truncated, got)
}

func TestBatchEncodesSetsAndDecodesGets(t *testing.T) {
	ctx := context.Background()
	raw, c := newClients(t)
	require.NoError(t, c.Set(ctx, "gone", []byte(parserState)))
	value := []byte(parserState)
	set := storage.SetOperation("state", value)
	ops := []*storage.Operation{set, storage.DeleteOperation("gone"), storage.GetOperation("state")}
	require.NoError(t, c.Batch(ctx, ops...))

	assert.Equal(t, parserState, string(set.Value), "the caller's operation keeps its value")
	assert.JSONEq(t, parserState, string(ops[2].Value), "a get after a set in the same batch reads the value")
	stored := storedForm(t, raw, "state")
	assert.Equal(t, byte(marker), stored[0])
	assert.Nil(t, storedForm(t, raw, "gone"))
}

func TestUnknownFormatIsHandedOnAsStored(t *testing.T) {
	v := Encode([]byte(parserState))
	require.Equal(t, byte(formatS2), v[1])
	other := bytes.Clone(v)
	other[1] = formatS2 + 1 // a later version's format
	assert.Equal(t, other, Decode(other))
	for _, short := range [][]byte{{marker}, {marker, formatS2}, {marker, formatS2, 1, 2, 3, 4}} {
		assert.Equal(t, short, Decode(short))
	}
}

func TestDamageThatStillDecodesIsCaughtByTheCRC(t *testing.T) {
	v := Encode([]byte(parserState))
	caught := 0
	for i := header; i < len(v); i++ {
		damaged := bytes.Clone(v)
		damaged[i] ^= 0x01
		out := Decode(damaged)
		require.NotEqual(t, parserState, string(out), "byte %d", i)
		if bytes.Equal(out, damaged) {
			caught++
		}
	}
	assert.Equal(t, len(v)-header, caught, "every one-bit flip is returned as stored")
}

func TestEmptyValue(t *testing.T) {
	assert.Empty(t, Decode(Encode([]byte{})))
	assert.Nil(t, Decode(nil))
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(parserState))
	f.Add(Encode([]byte(parserState)))
	f.Add([]byte{marker})
	f.Fuzz(func(t *testing.T, b []byte) {
		// Never panics; whatever does not decompress comes back as stored.
		out := Decode(b)
		if len(b) == 0 || b[0] != marker {
			assert.Equal(t, b, out)
		}
		// And every value round-trips.
		assert.Equal(t, string(b), string(Decode(Encode(b))))
	})
}

func BenchmarkEncode(b *testing.B) {
	v := []byte(parserState)
	b.ReportAllocs()
	b.SetBytes(int64(len(v)))
	for b.Loop() {
		Encode(v)
	}
}

func BenchmarkDecode(b *testing.B) {
	v := Encode([]byte(parserState))
	b.ReportAllocs()
	b.SetBytes(int64(len(parserState)))
	for b.Loop() {
		Decode(v)
	}
}

// TestValueOverTheDecodeBoundIsStoredAsItIs: Decode refuses a block that
// claims more than maxDecoded (a damaged length would make it allocate
// that much), so Encode does not compress such a value: it round-trips.
func TestValueOverTheDecodeBoundIsStoredAsItIs(t *testing.T) {
	v := bytes.Repeat([]byte("{"), maxDecoded+1)
	e := Encode(v)
	assert.Same(t, &v[0], &e[0], "stored as it is")
	assert.Equal(t, len(v), len(Decode(e)))
}
