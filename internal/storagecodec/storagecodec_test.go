// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package storagecodec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"strconv"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/storagetest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// parserState has the shape of the receiver's stored state of a Claude Code
// file (position, first-line sum, parser state).
const parserState = `{"first_line_sha256":"66ecb84e31312070c23d5cf6e620949ace5e4e1e423d0205e615c7765fbd7ea3",` +
	`"pos":{"offset":90399,"line":33,"ino":5546573,"head_len":1000,"head":"4998ae7c4b94795a256abaa918c3e66eb1226738b50bb692a23bd2b92cf4ecd8"},` +
	`"state":{"v":2,"last_offset":90215,"sequence":25,"session_id":"4e1f519b-0c87-4b0b-9f45-01b70a90b373",` +
	`"cwd":"/home/dev/src/shop","version":"2.1.111","git_branch":"main","entrypoint":"cli",` +
	`"timestamp":"2026-04-18T00:43:04.557Z","prompts":{"4e1f519b-0c87-4b0b-9f45-01b70a90b373\u0000":"3e481b86-fdf5-47b1-ae0f-01b74a4703a5"},` +
	`"usage":[{"id":"msg_01E2Wa7HctEnz3AUYbr8Ten3Zc7","out":287}],"call_seq":0}}`

func newClients(t *testing.T) (raw, wrapped storage.Client, otherFormat *[]string) {
	t.Helper()
	raw = storagetest.NewFileBackedClient(component.KindReceiver, component.MustNewID("agent_log"), "", t.TempDir())
	t.Cleanup(func() { _ = raw.Close(context.Background()) })
	var keys []string
	return raw, Wrap(raw, func(key string) { keys = append(keys, key) }), &keys
}

// readBack is what the wrapped client reads under key.
func readBack(t *testing.T, c storage.Client, key string) []byte {
	t.Helper()
	b, err := c.Get(t.Context(), key)
	require.NoError(t, err)
	return b
}

// storedForm is what the raw client holds under key.
func storedForm(t *testing.T, raw storage.Client, key string) []byte {
	t.Helper()
	b, err := raw.Get(t.Context(), key)
	require.NoError(t, err)
	return b
}

func TestRecordRoundTripsSmaller(t *testing.T) {
	ctx := t.Context()
	raw, c, _ := newClients(t)
	require.NoError(t, c.Set(ctx, "claude_code.parser./p.jsonl", []byte(parserState)))

	stored := storedForm(t, raw, "claude_code.parser./p.jsonl")
	require.NotEmpty(t, stored)
	assert.Equal(t, []byte{version, encS2}, stored[:2], "stored compressed")
	assert.Less(t, len(stored), len(parserState)*8/10, "the dictionary and S2 save at least 20 %% on a state record")

	got := readBack(t, c, "claude_code.parser./p.jsonl")
	assert.JSONEq(t, parserState, string(got))
}

// TestValuesOfAnotherFormatReadAsMissing: values that do not begin with
// this format's version byte (records as JSON, protobuf or a path stored
// as they are, or a compressed form of another version) read as missing,
// and each is reported with its key.
func TestValuesOfAnotherFormatReadAsMissing(t *testing.T) {
	ctx := t.Context()
	raw, c, otherFormat := newClients(t)
	logs := plog.NewLogs()
	logs.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr("event")
	pb, err := (&plog.ProtoMarshaler{}).MarshalLogs(logs)
	require.NoError(t, err)
	other := map[string][]byte{
		"json":       []byte(parserState),
		"protobuf":   pb,
		"path":       []byte("/home/dev/.codex/sessions/2026/03/30/rollout.jsonl"),
		"compressed": append([]byte{0x00, 0x01, 1, 2, 3, 4}, Encode([]byte(parserState))[header:]...),
		"encoding":   {version, 0x07, 'x'},
	}
	for k, v := range other {
		require.NoError(t, raw.Set(ctx, k, v))
	}
	for k := range other {
		got, err := c.Get(ctx, k)
		require.NoError(t, err)
		assert.Nil(t, got, k)
	}
	ops := []*storage.Operation{storage.GetOperation("json"), storage.GetOperation("protobuf"), storage.GetOperation("absent")}
	require.NoError(t, c.Batch(ctx, ops...))
	for _, op := range ops {
		assert.Nil(t, op.Value, op.Key)
	}
	assert.ElementsMatch(t, []string{"json", "protobuf", "path", "compressed", "encoding", "json", "protobuf"}, *otherFormat,
		"each value of another format is reported; a missing key is not")
}

func TestSmallValuesAreStoredAsTheyAre(t *testing.T) {
	ctx := t.Context()
	raw, c, _ := newClients(t)
	require.NoError(t, c.Set(ctx, "first", []byte("/home/dev/a.jsonl")))
	stored := storedForm(t, raw, "first")
	assert.Equal(t, "\x01\x00/home/dev/a.jsonl", string(stored))
	assert.Equal(t, "/home/dev/a.jsonl", string(readBack(t, c, "first")))
}

func TestAnyValueRoundTrips(t *testing.T) {
	ctx := t.Context()
	_, c, otherFormat := newClients(t)
	for _, v := range [][]byte{{0x00}, {version}, {version, encS2, 2}, append([]byte{0x00}, bytes.Repeat([]byte{7}, 200)...)} {
		require.NoError(t, c.Set(ctx, "k", v))
		assert.Equal(t, v, readBack(t, c, "k"))
	}
	assert.Empty(t, *otherFormat)
}

func TestDamagedValueIsHandedOnAsStored(t *testing.T) {
	ctx := t.Context()
	raw, c, otherFormat := newClients(t)
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
	assert.Empty(t, *otherFormat, "damage is not another format")
}

func TestBatchEncodesSetsAndDecodesGets(t *testing.T) {
	ctx := t.Context()
	raw, c, _ := newClients(t)
	require.NoError(t, c.Set(ctx, "gone", []byte(parserState)))
	value := []byte(parserState)
	set := storage.SetOperation("state", value)
	ops := []*storage.Operation{set, storage.DeleteOperation("gone"), storage.GetOperation("state")}
	require.NoError(t, c.Batch(ctx, ops...))

	assert.Equal(t, parserState, string(set.Value), "the caller's operation keeps its value")
	assert.JSONEq(t, parserState, string(ops[2].Value), "a get after a set in the same batch reads the value")
	stored := storedForm(t, raw, "state")
	assert.Equal(t, byte(version), stored[0])
	assert.Nil(t, storedForm(t, raw, "gone"))
}

func TestDecodeErrors(t *testing.T) {
	for _, b := range [][]byte{nil, {}, {version}, {0x00, encS2}, {version, 0x02}, []byte(parserState)} {
		_, err := Decode(b)
		assert.ErrorIs(t, err, ErrOtherFormat, "%q", b)
	}
	for _, b := range [][]byte{{version, encS2}, {version, encS2, 1, 2, 3, 4}} {
		_, err := Decode(b)
		assert.ErrorIs(t, err, ErrDamaged, "%q", b)
	}
}

func TestDamageThatStillDecodesIsCaughtByTheCRC(t *testing.T) {
	v := Encode([]byte(parserState))
	caught := 0
	for i := header; i < len(v); i++ {
		damaged := bytes.Clone(v)
		damaged[i] ^= 0x01
		out, err := Decode(damaged)
		require.NotEqual(t, parserState, string(out), "byte %d", i)
		if errors.Is(err, ErrDamaged) {
			caught++
		}
	}
	assert.Equal(t, len(v)-header, caught, "every one-bit flip is reported as damage")
}

func TestEmptyValue(t *testing.T) {
	v, err := Decode(Encode([]byte{}))
	require.NoError(t, err)
	assert.NotNil(t, v, "an empty value is a value")
	assert.Empty(t, v)
}

func TestShard(t *testing.T) {
	// FNV-1a of the parts joined by NUL, as a string hashed whole.
	h := fnv.New32a()
	_, _ = h.Write([]byte("claude_code\x00session-1"))
	assert.Equal(t, int(h.Sum32()%IndexShards), Shard("claude_code", "session-1"))
	h.Reset()
	_, _ = h.Write([]byte("/home/dev/a.jsonl"))
	assert.Equal(t, int(h.Sum32()%IndexShards), Shard("/home/dev/a.jsonl"))
	seen := map[int]bool{}
	for i := range 4096 {
		seen[Shard(strconv.Itoa(i))] = true
	}
	assert.Len(t, seen, IndexShards, "keys spread over every shard")
}

func TestOtherFormatWarningLogsOnce(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	dir := t.TempDir()
	id := component.MustNewID("file_storage")
	ext, err := filestorage.NewFactory().Create(t.Context(), extensiontest.NewNopSettings(filestorage.NewFactory().Type()),
		&filestorage.Config{Directory: dir})
	require.NoError(t, err)
	host := hostWith{id: id, ext: ext}
	warn := OtherFormatWarning(zap.New(core), host, id, "reading history again")
	warn("a")
	warn("b")
	require.Equal(t, 1, logs.Len(), "one warning")
	fields := logs.All()[0].ContextMap()
	assert.Equal(t, dir, fields["directory"], "names the state directory")
	assert.Equal(t, "file_storage", fields["storage"])
	assert.Equal(t, "a", fields["key"])
}

type hostWith struct {
	id  component.ID
	ext component.Component
}

func (h hostWith) GetExtensions() map[component.ID]component.Component {
	return map[component.ID]component.Component{h.id: h.ext}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(parserState))
	f.Add(Encode([]byte(parserState)))
	f.Add([]byte{version})
	f.Fuzz(func(t *testing.T, b []byte) {
		// Never panics; a value is returned only without an error.
		out, err := Decode(b)
		if err != nil {
			assert.Nil(t, out)
		}
		// And every value round-trips.
		got, err := Decode(Encode(b))
		require.NoError(t, err)
		assert.Equal(t, string(b), string(got))
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
		_, _ = Decode(v)
	}
}

// TestValueOverTheDecodeBoundIsStoredAsItIs: Decode refuses a block that
// claims more than maxDecoded (a damaged length would make it allocate
// that much), so Encode does not compress such a value: it round-trips.
func TestValueOverTheDecodeBoundIsStoredAsItIs(t *testing.T) {
	v := bytes.Repeat([]byte("{"), maxDecoded+1)
	e := Encode(v)
	assert.Equal(t, []byte{version, encRaw}, e[:2], "stored as it is")
	d, err := Decode(e)
	require.NoError(t, err)
	assert.Len(t, d, len(v))
}
