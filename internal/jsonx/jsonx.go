// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package jsonx is the one place that chooses how agentotel reads JSON.
// Every vendor parser and every other reader of agent records decodes
// through it, so the decoder can be changed (or measured against another)
// in one file.
//
// Decoding goes through github.com/goccy/go-json, which decodes typed
// structs faster than encoding/json. Everything else is the standard
// library's:
//   - Valid is encoding/json's linear scan: goccy's Valid decodes the whole
//     input into interface{} with its stream decoder, which is quadratic on
//     long escaped strings.
//   - Compact is encoding/json's, and nothing here encodes: goccy's encoder
//     corrupted the Go 1.26 heap (maps); encoders stay encoding/json.
//   - State a parser writes itself (MarshalState / UnmarshalState) is read
//     back with encoding/json, the encoder's counterpart.
//
// The in-place scanner (scan.go: Obj, Arr, Skip, Str and the other scalar
// readers) is for the hot paths that need a few members of a long record:
// it walks the bytes where they are, validating strictly as encoding/json's
// Valid does, and unescapes and copies only the strings asked for, so that a
// member the caller does not need (message text, tool output) is passed over
// eight bytes at a time. Unmarshal stays the way to fill a struct whenever
// most of a value is wanted, and the fallback of every fast path.
// Measured on the Claude Code user and assistant rows of the corpus
// (claudecode BenchmarkDecodeRows, 2 shared cores): goccy typed decode
// 510-610 MB/s and 7.3 MB allocated per pass; the scanner 600-710 MB/s and
// 2.3 MB; gjson path lookups 125 MB/s; valyala/fastjson 1.2-1.4 GB/s, but it
// checks neither escapes nor control characters, so a line the typed decoder
// rejects could pass; gjson and fastjson stay in that benchmark only.
// encoding/json/v2's jsontext needs GOEXPERIMENT=jsonv2, which the collector
// build does not set. Skip alone: 1.6 GB/s on long lines (goccy into a
// two-field struct: 0.8 GB/s).
//
// Not used: bytedance/sonic, whose gain over goccy is small next to what it
// brings (more modules, a JIT and links into runtime internals that a Go
// release may break), and simdjson-go, which parses into a tape, not into
// structs, so that every parser would be rewritten against it.
package jsonx

import (
	"bytes"
	stdjson "encoding/json"
	"errors"

	gojson "github.com/goccy/go-json"
)

// RawMessage is a raw encoded JSON value (encoding/json's type: goccy's is
// an alias of it). Decoding into it copies the value twice (once by the
// decoder for any json.Unmarshaler, once by RawMessage itself); Raw keeps the
// decoder's copy.
type RawMessage = stdjson.RawMessage

// Number is a JSON number literal (encoding/json's type).
type Number = stdjson.Number

// Unmarshal decodes data into v. Strings of the result may share memory
// with a copy of data the decoder made: code that keeps a decoded string
// beyond the record (parser state) clones it, or it pins the whole record.
//
// Input that is not JSON fails with encoding/json's error, whatever goccy
// made of it: on some truncated input goccy reads past the end of its copy
// of data and, depending on what lies there, fails one way or another or
// panics. A panic on valid input is decoded by encoding/json instead. So
// the error, and every reason and detail made of it, depends on data only.
func Unmarshal(data []byte, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = stdjson.Unmarshal(data, v)
		}
	}()
	if err = gojson.Unmarshal(data, v); err == nil {
		return nil
	}
	var te *gojson.UnmarshalTypeError
	if errors.As(err, &te) && te.Offset < int64(len(data)) {
		return err // a value of another type met within data: the same every time
	}
	if !stdjson.Valid(data) {
		return stdjson.Unmarshal(data, new(any))
	}
	return err
}

// Valid reports whether data is one valid JSON value (encoding/json's
// linear scan).
func Valid(data []byte) bool {
	return stdjson.Valid(data)
}

// Compact appends src to dst with insignificant space elided
// (encoding/json's).
func Compact(dst *bytes.Buffer, src []byte) error {
	return stdjson.Compact(dst, src)
}

// Raw is a raw JSON value that, decoded by Unmarshal, keeps the copy the
// decoder hands to an Unmarshaler instead of copying it once more as
// RawMessage does. It must only be filled by Unmarshal (whose decoder passes
// a fresh copy to UnmarshalJSON); see TestRawOwnsItsBytes.
type Raw []byte

// UnmarshalJSON keeps b.
func (r *Raw) UnmarshalJSON(b []byte) error {
	*r = b
	return nil
}

// Kind is the first byte of a raw value that tells its JSON type ('{', '[',
// '"', 'n' for null, 't'/'f', a digit or '-'), 0 when it is empty.
func Kind(raw []byte) byte {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}

// ObjectLen is the number of distinct member names of a JSON object, 0 for
// anything else. It uses encoding/json, so that the fast decoder never builds
// a map (goccy's map decoding is its slowest path).
func ObjectLen(raw []byte) int {
	var m map[string]stdjson.RawMessage
	if stdjson.Unmarshal(raw, &m) != nil {
		return 0
	}
	return len(m)
}
