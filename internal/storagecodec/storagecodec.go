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
// records' field names, the values take about two thirds of their bytes
// (the 1 GB benchmark history: 52.6 MB of values become about 34 MB), for
// ~1.7 µs per 600-byte state. zstd with the same dictionary takes half the
// bytes, but at ~12 µs a value it cost a tenth of the collector's CPU in a
// backfill.
//
// Format: a compressed value is the byte 0x00, a format byte (1: an S2
// block made with the dictionary below), the CRC-32C of the value (4 bytes,
// little endian: S2 blocks carry none, and a damaged block may still
// decode) and the S2 block. No value written before this package, nor any
// written uncompressed by it, begins with 0x00: JSON begins with a bracket,
// brace, quote, digit or letter, protobuf with a field tag (never 0), a
// path with a name. So a value that does not begin with 0x00 is read as
// stored, and storage written by an earlier version is read on without a
// migration. A value too small to gain, or that does not shrink, is stored
// as it is; so is one larger than maxDecoded (no record is: the only
// unbounded one is an event with its content), the one exception to the
// rule above should it begin with 0x00.
package storagecodec // import "github.com/agentotel/agentotel/internal/storagecodec"

import (
	"context"
	"encoding/binary"
	"hash/crc32"

	"github.com/klauspost/compress/s2"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

const (
	// marker begins a compressed value.
	marker = 0x00
	// formatS2 is the format of a compressed value: an S2 block made with
	// dict. A changed dictionary needs a new format byte, and the old one
	// must stay readable: it is in storage.
	formatS2 = 0x01
	// header is the marker, the format and the CRC.
	header = 6
)

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
// smaller, else the value itself (unless it begins with the marker, which
// only a compressed value may).
func Encode(v []byte) []byte {
	startsWithMarker := len(v) > 0 && v[0] == marker
	if len(v) < minSize && !startsWithMarker {
		return v
	}
	if len(v) > maxDecoded {
		return v // Decode would refuse it
	}
	n := s2.MaxEncodedLen(len(v))
	buf := make([]byte, header+n)
	block := dictionary.Encode(buf[header:], v) // in buf: it fits
	if header+len(block) >= len(v) && !startsWithMarker {
		return v
	}
	buf[0], buf[1] = marker, formatS2
	binary.LittleEndian.PutUint32(buf[2:header], crc32.Checksum(v, castagnoli))
	return buf[: header+len(block) : header+len(block)]
}

// Decode returns the value a stored form holds. A stored form that does not
// begin with the marker is the value. One that does but does not decode to
// a value with its CRC (damaged, or of a format this version does not
// know) is returned as stored: no agentotel record begins with 0x00, so the
// caller's handling of a value it cannot read applies, as to any other
// damaged record.
func Decode(b []byte) []byte {
	if len(b) == 0 || b[0] != marker {
		return b
	}
	if len(b) < header || b[1] != formatS2 {
		return b
	}
	block := b[header:]
	if n, err := s2.DecodedLen(block); err != nil || n > maxDecoded {
		return b
	}
	out, err := dictionary.Decode(nil, block)
	if err != nil || crc32.Checksum(out, castagnoli) != binary.LittleEndian.Uint32(b[2:header]) {
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
