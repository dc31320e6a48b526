// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package storagecodec compresses the values agentotel's components write
// to a storage extension.
//
// The receiver keeps a position and parser state per file, the connector a
// record per session: small JSON documents (and protobuf-encoded events),
// one per file or session of the history, so a history of many files makes
// storage files of tens of MB. bbolt, behind `file_storage`, reads them
// through a memory map, and a first backfill, which writes every record,
// touches every page: the storage files count in the collector's resident
// memory. Compressed with S2 (Snappy's successor) and a dictionary of the
// records' field names, the values take about two thirds of their bytes at
// a few microseconds each (BenchmarkEncode). zstd with the same dictionary
// saves more bytes but costs several times the CPU per value, which a
// backfill, writing every record, pays in full.
//
// Format version 1: every value begins with the version byte (1) and an
// encoding byte: 0 for a value stored as it is, which follows; 1 for an S2
// block made with the dictionary below, preceded by the CRC-32C of the
// value (4 bytes, little endian: S2 blocks carry none, and a damaged block
// may still decode). A value too small to gain, that does not shrink, or
// larger than maxDecoded is stored as it is. A stored value of any other
// form was written by another format: Decode reports ErrOtherFormat and the
// wrapped client reads it as missing, so the component starts that state
// afresh (the receiver reads those files again per its start_at).
package storagecodec

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"reflect"
	"sync"

	"github.com/klauspost/compress/s2"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"
)

const (
	// version is the storage format version, the first byte of every value.
	version = 0x01
	// encRaw marks a value stored as it is.
	encRaw = 0x00
	// encS2 marks an S2 block made with dict. A changed dictionary needs a
	// new storage format version.
	encS2 = 0x01
	// rawHeader is the version and the encoding.
	rawHeader = 2
	// header is the version, the encoding and the CRC.
	header = 6
)

// ErrOtherFormat is what Decode reports for a value that is not of this
// storage format.
var ErrOtherFormat = errors.New("stored value of another storage format")

// ErrDamaged is what Decode reports for a compressed value that does not
// decode to a value with its CRC.
var ErrDamaged = errors.New("damaged stored value")

// minSize is the smallest value compressed: the header costs 6 bytes and a
// short value has little to share with the dictionary.
const minSize = 64

// maxDecoded bounds what one value may decompress to, so that a damaged
// block cannot make Decode allocate more (it allocates the length the
// block claims before it finds the damage). Larger values are stored as
// they are.
const maxDecoded = 64 << 20

// dict is the dictionary: the field names of the JSON records the receiver
// and the connector store and the attribute keys of the events the
// connector stores, the most frequent last (nearer offsets code shorter).
// Frozen: see formatS2.
const dict = `"not_run":"branch":"started":"producer":"sessions":"entry_order":"leaf":"parents":` +
	`"header_seen":"format_version":"header_time":"subagent_type":"project":"units":"turn":` +
	`"events":"agent_id":"host":"anchor":"turn_id":"preamble":"preamble_host":"no_carrier":` +
	`"resp_open":"warmup":"emitted":"links":"call_id":"link":"resolved":"parent":` +
	`"resp_has_usage":"git_commit":"prompt_from":"prompt_hash":"prompt_matched":"model":` +
	`"input_tokens":"output_tokens":"own_id":"reasoning_output_tokens":"cached_input_tokens":` +
	`"total":"resp_n":"meta_seen":"originator":"total_tokens":"entrypoint":"provider":"thread":` +
	`"agent":"usage":"git_branch":"last_message_id":"cwd":"call_seq":"head":"v":"line":"ino":` +
	`"last_offset":"first_line_sha256":"head_len":"offset":"timestamp":"pos":"session_id":` +
	`"state":"calls":"last_prompt_seq":"last_prompt":"threads":"caught_up":"closed":` +
	`"closed_seq":"sequence":"last_arrival":"key":"prompts":"source":"session":"version":` +
	`"trace":"skip":"out":"prompt":"at":"id":` +
	`agent.compaction.triggerservice.versionservice.nameprocess.exit.codevcs.ref.head.name` +
	`agent.tool.commandagent.tool.statusagent.tool.latency_msagent.turn.previous_prompt` +
	`agent.subagent.typeagent.subagent.linkagent.subagent.parent_tool_call.id` +
	`agent.subagent.parent_session.idagent.subagent.root_session.idagent.sidechain` +
	`agent.read.caught_upagent.project.rootagent.project.hashagent.entrypointagent.version` +
	`gen_ai.usage.reasoning.output_tokensgen_ai.usage.cache_creation.input_tokens` +
	`gen_ai.usage.cache_read.input_tokensgen_ai.usage.output_tokensgen_ai.usage.input_tokens` +
	`gen_ai.tool.call.idgen_ai.tool.namegen_ai.response.modelgen_ai.response.id` +
	`gen_ai.provider.namegen_ai.agent.idhost.namelog.file.pathagent.log.lineagent.role` +
	`agent.sourceagent.schema_versionagent.event.parent_idagent.event.sequence` +
	`gen_ai.conversation.idagent.event.typeagent.event.id`

var (
	dictionary = s2.MakeDict([]byte(dict), nil)
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
)

// Encode returns the stored form of a value: compressed when that is
// smaller, else the value itself behind the two header bytes.
func Encode(v []byte) []byte {
	if len(v) >= minSize && len(v) <= maxDecoded {
		n := s2.MaxEncodedLen(len(v))
		buf := make([]byte, header+n)
		block := dictionary.Encode(buf[header:], v) // in buf: it fits
		if header+len(block) < rawHeader+len(v) {
			buf[0], buf[1] = version, encS2
			binary.LittleEndian.PutUint32(buf[2:header], crc32.Checksum(v, castagnoli))
			return buf[: header+len(block) : header+len(block)]
		}
	}
	out := make([]byte, rawHeader+len(v))
	out[0], out[1] = version, encRaw
	copy(out[rawHeader:], v)
	return out
}

// Decode returns the value a stored form holds: ErrOtherFormat when it is
// not of this format, ErrDamaged when its compressed block does not decode
// to a value with its CRC.
func Decode(b []byte) ([]byte, error) {
	if len(b) < rawHeader || b[0] != version {
		return nil, ErrOtherFormat
	}
	switch b[1] {
	case encRaw:
		return b[rawHeader:], nil
	case encS2:
	default:
		return nil, ErrOtherFormat
	}
	if len(b) < header {
		return nil, ErrDamaged
	}
	block := b[header:]
	if n, err := s2.DecodedLen(block); err != nil || n > maxDecoded {
		return nil, ErrDamaged
	}
	out, err := dictionary.Decode(nil, block)
	if err != nil || crc32.Checksum(out, castagnoli) != binary.LittleEndian.Uint32(b[2:header]) {
		return nil, ErrDamaged
	}
	if out == nil {
		out = []byte{} // an empty value is a value, not a missing key
	}
	return out, nil
}

// Shard is the index shard, of IndexShards, of a key made of parts: the
// FNV-1a hash of the parts joined by NUL bytes.
func Shard(parts ...string) int {
	h := uint32(2166136261)
	for i, s := range parts {
		if i > 0 {
			h *= 16777619 // the NUL between parts: h ^ 0 is h
		}
		for j := 0; j < len(s); j++ {
			h ^= uint32(s[j])
			h *= 16777619
		}
	}
	return int(h % IndexShards)
}

// IndexShards is how many records a component's index of active sessions
// or files is split into, by Shard, so that a change rewrites one small
// record, not a list of thousands.
const IndexShards = 128

// Wrap returns a client that stores values through Encode and reads them
// through Decode. Keys are unchanged. A value of another format reads as
// missing and is reported to otherFormat (when not nil) with its key; a
// damaged value is handed on as stored, so that the caller's handling of a
// record it cannot read applies.
func Wrap(c storage.Client, otherFormat func(key string)) storage.Client {
	if c == nil {
		return nil
	}
	return client{Client: c, otherFormat: otherFormat}
}

type client struct {
	storage.Client
	otherFormat func(key string)
}

func (c client) decode(key string, b []byte) []byte {
	v, err := Decode(b)
	switch {
	case err == nil:
		return v
	case errors.Is(err, ErrOtherFormat):
		if c.otherFormat != nil {
			c.otherFormat(key)
		}
		return nil
	default:
		return b
	}
}

func (c client) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := c.Client.Get(ctx, key)
	if err != nil || b == nil {
		return b, err
	}
	return c.decode(key, b), nil
}

func (c client) Set(ctx context.Context, key string, value []byte) error {
	return c.Client.Set(ctx, key, Encode(value))
}

// Batch hands the inner client new set operations holding the stored form
// (the caller's keep their values) and decodes the results of the get
// operations in place.
func (c client) Batch(ctx context.Context, ops ...*storage.Operation) error {
	inner, copied := ops, false
	for i, op := range ops {
		if op.Type != storage.Set {
			continue
		}
		if !copied {
			inner, copied = append([]*storage.Operation(nil), ops...), true
		}
		inner[i] = storage.SetOperation(op.Key, Encode(op.Value))
	}
	if err := c.Client.Batch(ctx, inner...); err != nil {
		return err
	}
	for _, op := range ops {
		if op.Type == storage.Get && op.Value != nil {
			op.Value = c.decode(op.Key, op.Value)
		}
	}
	return nil
}

// OtherFormatWarning returns a function for Wrap that logs, once, that the
// storage extension id holds state of another storage format, naming its
// directory when it is contrib's file_storage. The component then starts
// that state afresh.
func OtherFormatWarning(logger *zap.Logger, host component.Host, id component.ID, what string) func(key string) {
	var once sync.Once
	return func(key string) {
		once.Do(func() {
			logger.Warn("Ignoring saved state of another storage format; "+what,
				zap.String("storage", id.String()),
				zap.String("directory", storageDirectory(host, id)),
				zap.String("key", key),
				zap.Int("format_version", version))
		})
	}
}

// storageDirectory is the directory of contrib's file_storage extension id
// (its unexported config, read by reflection: the extension exposes no
// accessor), or "" for any other storage.
func storageDirectory(host component.Host, id component.ID) (dir string) {
	defer func() {
		if recover() != nil {
			dir = ""
		}
	}()
	if host == nil {
		return ""
	}
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return ""
	}
	v := reflect.ValueOf(ext)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return ""
	}
	cfg := v.FieldByName("cfg")
	for cfg.IsValid() && (cfg.Kind() == reflect.Pointer || cfg.Kind() == reflect.Interface) {
		cfg = cfg.Elem()
	}
	if !cfg.IsValid() || cfg.Kind() != reflect.Struct {
		return ""
	}
	if d := cfg.FieldByName("Directory"); d.IsValid() && d.Kind() == reflect.String {
		return d.String()
	}
	return ""
}
