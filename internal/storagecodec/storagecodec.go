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
// memory. Compressed with zstd and a dictionary of the records' field names,
// the values take half the bytes (measured on the 1 GB benchmark history:
// 52.6 MB of values become 26.4 MB).
//
// Format: a compressed value is the byte 0x00 followed by one zstd frame
// made with the dictionary below (its ID is in the frame). No value written
// before this package, nor any written uncompressed by it, begins with 0x00:
// JSON begins with a bracket, brace, quote, digit or letter, protobuf with a
// field tag (never 0), a path with a name. So a value that does not begin
// with 0x00 is read as stored, and storage written by an earlier version is
// read on without a migration. A value too small to gain is stored as it is.
package storagecodec // import "github.com/agentotel/agentotel/internal/storagecodec"

import (
	"context"
	"sync"

	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// marker begins a compressed value.
const marker = 0x00

// minSize is the smallest value compressed: a zstd frame costs ~10 bytes
// and a short value has little to share with the dictionary.
const minSize = 64

// dictID names dict in the frames written with it. A changed dictionary
// needs a new ID, and the old one must stay readable: it is in storage.
const dictID = 0x61676f01

// dict is the dictionary: the field names of the JSON records the receiver
// and the connector store and the attribute keys of the events the
// connector stores, the most frequent last (zstd codes near offsets in
// fewer bits). Frozen: see dictID.
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

// maxDecoded bounds what one value may decompress to, so that a damaged
// frame cannot claim gigabytes. The largest record written is an event
// with its content, well under this.
const maxDecoded = 1 << 30

var (
	codecOnce sync.Once
	encoder   *zstd.Encoder
	decoder   *zstd.Decoder
	codecErr  error
)

func codec() (*zstd.Encoder, *zstd.Decoder, error) {
	codecOnce.Do(func() { encoder, decoder, codecErr = newCodec() })
	return encoder, decoder, codecErr
}

// newCodec makes the one encoder and decoder all values go through.
func newCodec() (encoder *zstd.Encoder, decoder *zstd.Decoder, err error) {
	// Fastest: the values are small and written often (a backfill
	// writes a file's state after each of its batches); the better
	// levels gain ~3 % on them. Concurrency 1: EncodeAll and
	// DecodeAll serialize on one coder each, a few microseconds per
	// value, instead of a coder (and its tables) per core. A 64 KB
	// window: the values are smaller than that but for an event with
	// its content, and the default (8 MB) keeps a 4 MB history
	// buffer on the heap for good (0.75 MB in all with this one).
	encoder, err = zstd.NewWriter(nil,
		zstd.WithEncoderLevel(zstd.SpeedFastest),
		zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(1<<16),
		zstd.WithEncoderDictRaw(dictID, []byte(dict)),
		zstd.WithLowerEncoderMem(true))
	if err != nil {
		return nil, nil, err
	}
	decoder, err = zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxMemory(maxDecoded),
		zstd.WithDecoderDictRaw(dictID, []byte(dict)))
	return encoder, decoder, err
}

// Encode returns the stored form of a value: compressed when that is
// smaller, else the value itself (unless it begins with the marker, which
// only a compressed value may).
func Encode(v []byte) []byte {
	if len(v) < minSize && (len(v) == 0 || v[0] != marker) {
		return v
	}
	enc, _, err := codec()
	if err != nil {
		return v // unreachable: the options are constant
	}
	out := enc.EncodeAll(v, append(make([]byte, 0, len(v)/2+16), marker))
	if len(out) >= len(v) && (len(v) == 0 || v[0] != marker) {
		return v
	}
	return out
}

// Decode returns the value a stored form holds. A stored form that does not
// begin with the marker is the value. One that does but does not decompress
// (damaged) is returned as stored: no agentotel record begins with 0x00, so
// the caller's handling of a value it cannot read applies, as to any other
// damaged record.
func Decode(b []byte) []byte {
	if len(b) == 0 || b[0] != marker {
		return b
	}
	_, dec, err := codec()
	if err != nil {
		return b
	}
	out, err := dec.DecodeAll(b[1:], nil)
	if err != nil {
		return b
	}
	if out == nil {
		out = []byte{} // an empty value is a value, not a missing key
	}
	return out
}

// Wrap returns a client that stores values through Encode and reads them
// through Decode. Keys are unchanged.
func Wrap(c storage.Client) storage.Client {
	if c == nil {
		return nil
	}
	return client{c}
}

type client struct {
	storage.Client
}

func (c client) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := c.Client.Get(ctx, key)
	if err != nil || b == nil {
		return b, err
	}
	return Decode(b), nil
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
			op.Value = Decode(op.Value)
		}
	}
	return nil
}
