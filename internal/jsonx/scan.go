// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package jsonx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
)

// ErrSyntax is the error of Skip, Obj and Arr on input that is not JSON.
var ErrSyntax = errors.New("jsonx: invalid JSON")

// maxDepth is encoding/json's nesting limit: a value nested deeper is not
// valid for it, so not for Skip either.
const maxDepth = 10000

// isWS reports JSON whitespace.
func isWS(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t'
}

func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

// Skip returns the length of the one JSON value at the start of b (after
// leading whitespace, which is counted), validating it strictly as it goes
// (string escapes, literals, numbers, nesting), without unescaping or
// allocating. Long strings are skipped with a vectorized search for the
// next quote and backslash.
func Skip(b []byte) (int, error) {
	return skipValue(b, skipWS(b, 0), 0)
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return 0, ErrSyntax
	}
	switch c := b[i]; c {
	case '"':
		return skipString(b, i)
	case '{':
		depth++
		if depth > maxDepth {
			return 0, ErrSyntax
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return 0, ErrSyntax
			}
			var err error
			if i, err = skipString(b, i); err != nil {
				return 0, err
			}
			i = skipWS(b, i)
			if i >= len(b) || b[i] != ':' {
				return 0, ErrSyntax
			}
			if i, err = skipValue(b, skipWS(b, i+1), depth); err != nil {
				return 0, err
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return 0, ErrSyntax
			}
			switch b[i] {
			case ',':
				i = skipWS(b, i+1)
			case '}':
				return i + 1, nil
			default:
				return 0, ErrSyntax
			}
		}
	case '[':
		depth++
		if depth > maxDepth {
			return 0, ErrSyntax
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		for {
			var err error
			if i, err = skipValue(b, i, depth); err != nil {
				return 0, err
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return 0, ErrSyntax
			}
			switch b[i] {
			case ',':
				i = skipWS(b, i+1)
			case ']':
				return i + 1, nil
			default:
				return 0, ErrSyntax
			}
		}
	case 't':
		return skipLit(b, i, "true")
	case 'f':
		return skipLit(b, i, "false")
	case 'n':
		return skipLit(b, i, "null")
	default:
		if c == '-' || (c >= '0' && c <= '9') {
			return skipNumber(b, i)
		}
		return 0, ErrSyntax
	}
}

func skipLit(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, ErrSyntax
	}
	return i + len(lit), nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// skipDigits returns the index of the first non-digit at or after i.
func skipDigits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

// skipNumber returns the index past the number literal at b[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func skipNumber(b []byte, i int) (int, error) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = skipDigits(b, i+1)
	default:
		return 0, ErrSyntax
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return 0, ErrSyntax
		}
		i = skipDigits(b, i+1)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return 0, ErrSyntax
		}
		i = skipDigits(b, i+1)
	}
	return i, nil
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// hasCtl reports whether b holds a control character (a byte below 0x20),
// sixteen bytes at a time: (w - 0x20 in each byte) &^ w has a byte's top
// bit set only if that byte, or one below it that borrowed, is below 0x20.
func hasCtl(b []byte) bool {
	for len(b) >= 16 {
		w1 := binary.LittleEndian.Uint64(b)
		w2 := binary.LittleEndian.Uint64(b[8:])
		if ((w1-lsb*0x20)&^w1|(w2-lsb*0x20)&^w2)&msb != 0 {
			return true
		}
		b = b[16:]
	}
	for _, c := range b {
		if c < 0x20 {
			return true
		}
	}
	return false
}

// skipString returns the index past the string starting at b[i] == '"'.
// Like encoding/json it rejects control characters and bad escapes and does
// not check UTF-8. The next quote and the next backslash are found with
// bytes.IndexByte (vectorized) and remembered until passed, so that a long
// string with many escapes is still read once.
func skipString(b []byte, i int) (int, error) {
	i++
	q, bs := -1, -1 // next '"' and next '\\' (q when none before it), at or after i
	for {
		if q < i {
			k := bytes.IndexByte(b[i:], '"')
			if k < 0 {
				return 0, ErrSyntax
			}
			q = i + k
		}
		if bs < i {
			if k := bytes.IndexByte(b[i:q], '\\'); k >= 0 {
				bs = i + k
			} else {
				bs = q
			}
		}
		end := min(q, bs)
		if hasCtl(b[i:end]) {
			return 0, ErrSyntax
		}
		i = end
		if b[i] == '"' {
			return i + 1, nil
		}
		// b[i] is a backslash.
		if i+1 >= len(b) {
			return 0, ErrSyntax
		}
		switch b[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if len(b)-i < 6 || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
				return 0, ErrSyntax
			}
			i += 6
		default:
			return 0, ErrSyntax
		}
	}
}

func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// Obj walks the members of one JSON object in place:
//
//	o, ok := jsonx.NewObj(raw) // ok false: raw is not an object
//	for o.Next() { name, val := o.Name(), o.Value(); ... }
//	if o.Err() != nil { ... }  // malformed input met
type Obj struct {
	b           []byte
	i           int // index of the next byte to read
	name, value []byte
	first, done bool
	err         error
	// depth is the nesting of the object's members (1 at the top).
	depth int
	// vstart: where the value NextMember stopped at starts; pending: that
	// value is not read yet.
	vstart  int
	pending bool
}

// NewObj starts walking the object at the start of b (after leading
// whitespace); ok is false when b holds no object there.
func NewObj(b []byte) (Obj, bool) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return Obj{done: true}, false
	}
	return Obj{b: b, i: i + 1, first: true, depth: 1}, true
}

// Next moves to the next member; false at the end of the object or on
// malformed input (see Err).
func (o *Obj) Next() bool {
	if o.pending && !o.skipPending() {
		return false
	}
	if o.done {
		return false
	}
	b := o.b
	i := skipWS(b, o.i)
	if i >= len(b) {
		return o.fail()
	}
	if o.first {
		o.first = false
		if b[i] == '}' {
			o.i, o.done = i+1, true
			return false
		}
	} else {
		switch b[i] {
		case '}':
			o.i, o.done = i+1, true
			return false
		case ',':
			i = skipWS(b, i+1)
		default:
			return o.fail()
		}
	}
	if i >= len(b) || b[i] != '"' {
		return o.fail()
	}
	end, err := skipString(b, i)
	if err != nil {
		return o.fail()
	}
	o.name = b[i+1 : end-1]
	i = skipWS(b, end)
	if i >= len(b) || b[i] != ':' {
		return o.fail()
	}
	i = skipWS(b, i+1)
	end, err = skipValue(b, i, o.depth)
	if err != nil {
		return o.fail()
	}
	o.value, o.i = b[i:end], end
	return true
}

func (o *Obj) fail() bool {
	o.done, o.err, o.name, o.value, o.pending = true, ErrSyntax, nil, nil, false
	return false
}

// Name is the current member's name as written, without its quotes
// (escapes left as written).
func (o *Obj) Name() []byte { return o.name }

// Value is the current member's raw value, a sub-slice of the input without
// surrounding whitespace.
func (o *Obj) Value() []byte {
	if o.pending {
		o.skipPending()
	}
	return o.value
}

// Err is the error that ended the walk, nil at a well-formed end.
func (o *Obj) Err() error { return o.err }

// End is the index in the input just past the object's closing brace once
// Next has returned false without error; what follows is the caller's.
func (o *Obj) End() int { return o.i }

// Arr walks the elements of one JSON array in place (see Obj).
type Arr struct {
	b           []byte
	i           int
	value       []byte
	first, done bool
	err         error
	depth       int
	vstart      int
	pending     bool
}

// NewArr starts walking the array at the start of b (after leading
// whitespace); ok is false when b holds no array there.
func NewArr(b []byte) (Arr, bool) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '[' {
		return Arr{done: true}, false
	}
	return Arr{b: b, i: i + 1, first: true, depth: 1}, true
}

// Next moves to the next element; false at the end of the array or on
// malformed input (see Err).
func (a *Arr) Next() bool {
	if a.pending && !a.skipPending() {
		return false
	}
	if a.done {
		return false
	}
	b := a.b
	i := skipWS(b, a.i)
	if i >= len(b) {
		return a.fail()
	}
	if a.first {
		a.first = false
		if b[i] == ']' {
			a.i, a.done = i+1, true
			return false
		}
	} else {
		switch b[i] {
		case ']':
			a.i, a.done = i+1, true
			return false
		case ',':
			i = skipWS(b, i+1)
		default:
			return a.fail()
		}
	}
	end, err := skipValue(b, i, a.depth)
	if err != nil {
		return a.fail()
	}
	a.value, a.i = b[i:end], end
	return true
}

func (a *Arr) fail() bool {
	a.done, a.err, a.value, a.pending = true, ErrSyntax, nil, false
	return false
}

// Value is the current element's raw value, a sub-slice of the input.
func (a *Arr) Value() []byte {
	if a.pending {
		a.skipPending()
	}
	return a.value
}

// Err is the error that ended the walk, nil at a well-formed end.
func (a *Arr) Err() error { return a.err }

// End is the index in the input just past the array's closing bracket once
// Next has returned false without error.
func (a *Arr) End() int { return a.i }

// isString reports whether raw is exactly one valid JSON string.
func isString(raw []byte) bool {
	if len(raw) < 2 || raw[0] != '"' {
		return false
	}
	end, err := skipString(raw, 0)
	return err == nil && end == len(raw)
}

// Str is the JSON string raw, unescaped as Unmarshal unescapes it: bytes
// that are not UTF-8 are kept as they are, a lone surrogate escape becomes
// U+FFFD. ok is false when raw is not exactly one JSON string. It allocates
// the one string it returns.
func Str(raw []byte) (s string, ok bool) {
	if !isString(raw) {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body), true
	}
	return string(appendUnescaped(make([]byte, 0, len(body)), body)), true
}

// AppendStr appends the JSON string raw, unescaped as Str unescapes it, to
// dst; ok is false (and dst is returned as it is) when raw is not exactly one
// JSON string. It allocates only to grow dst.
func AppendStr(dst, raw []byte) (out []byte, ok bool) {
	if !isString(raw) {
		return dst, false
	}
	return appendUnescaped(dst, raw[1:len(raw)-1]), true
}

// appendUnescaped appends the body of a validated JSON string, unescaped.
func appendUnescaped(out, body []byte) []byte {
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' {
			j := bytes.IndexByte(body[i:], '\\')
			if j < 0 {
				j = len(body) - i
			}
			out = append(out, body[i:i+j]...)
			i += j
			continue
		}
		r, n, lit := unescape(body, i)
		if n == 2 {
			out = append(out, lit)
		} else {
			out = utf8.AppendRune(out, r)
		}
		i += n
	}
	return out
}

// unescape decodes the escape at body[i] == '\\' of a validated string: a
// one-byte escape gives (0, 2, byte); a \u escape (with its low surrogate
// when it makes a pair) gives (rune, 6 or 12, 0).
func unescape(body []byte, i int) (r rune, n int, lit byte) {
	switch e := body[i+1]; e {
	case 'u':
	case 'b':
		return 0, 2, '\b'
	case 'f':
		return 0, 2, '\f'
	case 'n':
		return 0, 2, '\n'
	case 'r':
		return 0, 2, '\r'
	case 't':
		return 0, 2, '\t'
	default: // '"', '\\', '/'
		return 0, 2, e
	}
	r = Hex4(body[i+2:])
	if r >= 0xd800 && r < 0xdc00 && len(body)-i >= 12 && body[i+6] == '\\' && body[i+7] == 'u' {
		if lo := Hex4(body[i+8:]); lo >= 0xdc00 && lo < 0xe000 {
			return (r-0xd800)<<10 | (lo - 0xdc00) + 0x10000, 12, 0
		}
	}
	return r, 6, 0 // utf8.AppendRune writes U+FFFD for a lone surrogate
}

// Hex4 is the value of the four hex digits (validated before) at the start
// of b.
func Hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// StrEq reports whether raw is the JSON string s, without allocating.
func StrEq(raw []byte, s string) bool {
	if !isString(raw) {
		return false
	}
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return string(body) == s
	}
	var buf [utf8.UTFMax]byte
	for i := 0; i < len(body); {
		if body[i] != '\\' {
			if s == "" || s[0] != body[i] {
				return false
			}
			s, i = s[1:], i+1
			continue
		}
		r, n, lit := unescape(body, i)
		var w []byte
		if n == 2 {
			buf[0] = lit
			w = buf[:1]
		} else {
			w = utf8.AppendRune(buf[:0], r)
		}
		if len(s) < len(w) || s[:len(w)] != string(w) {
			return false
		}
		s, i = s[len(w):], i+n
	}
	return s == ""
}

// isNumber reports whether raw is exactly one JSON number.
func isNumber(raw []byte) bool {
	if len(raw) == 0 || (raw[0] != '-' && !isDigit(raw[0])) {
		return false
	}
	end, err := skipNumber(raw, 0)
	return err == nil && end == len(raw)
}

// Int is the JSON integer raw: a number without fraction or exponent within
// the range of int64. Unmarshal into an int64 gives the same value for every
// raw Int takes; Int is the stricter (it refuses an out-of-range integer and
// a lone "-", which Unmarshal takes as some number, and null).
func Int(raw []byte) (int64, bool) {
	if !isNumber(raw) {
		return 0, false
	}
	v, err := strconv.ParseInt(string(raw), 10, 64)
	return v, err == nil
}

// Float is the JSON number raw as a float64; ok is false out of range.
func Float(raw []byte) (float64, bool) {
	if !isNumber(raw) {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	return v, err == nil && !math.IsInf(v, 0)
}

// Bool is the JSON boolean raw.
func Bool(raw []byte) (v, ok bool) {
	switch string(raw) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// IsNull reports whether raw is the JSON null.
func IsNull(raw []byte) bool { return string(raw) == "null" }

// NextMember is Next without reading the member's value: it stops after the
// colon, so that the caller reads the value once, either whole with Value
// (which then skips it) or in place with Enter/EnterArr and Leave. A value
// the caller does not read is skipped by the following NextMember or Next.
// After NextMember, Value is nil when the value is malformed (Err tells).
func (o *Obj) NextMember() bool {
	if o.pending && !o.skipPending() {
		return false
	}
	if o.done {
		return false
	}
	b := o.b
	i := skipWS(b, o.i)
	if i >= len(b) {
		return o.fail()
	}
	if o.first {
		o.first = false
		if b[i] == '}' {
			o.i, o.done = i+1, true
			return false
		}
	} else {
		switch b[i] {
		case '}':
			o.i, o.done = i+1, true
			return false
		case ',':
			i = skipWS(b, i+1)
		default:
			return o.fail()
		}
	}
	if i >= len(b) || b[i] != '"' {
		return o.fail()
	}
	end, err := skipString(b, i)
	if err != nil {
		return o.fail()
	}
	o.name = b[i+1 : end-1]
	i = skipWS(b, end)
	if i >= len(b) || b[i] != ':' {
		return o.fail()
	}
	i = skipWS(b, i+1)
	if i >= len(b) {
		return o.fail()
	}
	o.vstart, o.pending, o.value = i, true, nil
	return true
}

// skipPending skips the value NextMember stopped at.
func (o *Obj) skipPending() bool {
	end, err := skipValue(o.b, o.vstart, o.depth)
	if err != nil {
		return o.fail()
	}
	o.value, o.i, o.pending = o.b[o.vstart:end], end, false
	return true
}

// First is the first byte of the value NextMember stopped at (or of the
// current value), which tells its JSON type; 0 when there is none.
func (o *Obj) First() byte {
	switch {
	case o.pending:
		return o.b[o.vstart]
	case len(o.value) > 0:
		return o.value[0]
	}
	return 0
}

// Enter walks the object value NextMember stopped at, in place; ok is false
// when it is no object. Once the walk has ended without error, Leave(child)
// moves o past it.
func (o *Obj) Enter() (child Obj, ok bool) {
	if !o.pending || o.b[o.vstart] != '{' || o.depth >= maxDepth {
		return Obj{done: true}, false
	}
	return Obj{b: o.b, i: o.vstart + 1, first: true, depth: o.depth + 1}, true
}

// EnterArr walks the array value NextMember stopped at, in place (see
// Enter); Leave(child.End()) moves o past it.
func (o *Obj) EnterArr() (child Arr, ok bool) {
	if !o.pending || o.b[o.vstart] != '[' || o.depth >= maxDepth {
		return Arr{done: true}, false
	}
	return Arr{b: o.b, i: o.vstart + 1, first: true, depth: o.depth + 1}, true
}

// Leave moves o past the value entered with Enter or EnterArr, whose walk
// ended without error at end (the child's End); Value is then that value.
func (o *Obj) Leave(end int) {
	o.value, o.i, o.pending = o.b[o.vstart:end], end, false
}

// NextElem is NextMember for an array: it stops at the element without
// reading it (see Obj.NextMember).
func (a *Arr) NextElem() bool {
	if a.pending && !a.skipPending() {
		return false
	}
	if a.done {
		return false
	}
	b := a.b
	i := skipWS(b, a.i)
	if i >= len(b) {
		return a.fail()
	}
	if a.first {
		a.first = false
		if b[i] == ']' {
			a.i, a.done = i+1, true
			return false
		}
	} else {
		switch b[i] {
		case ']':
			a.i, a.done = i+1, true
			return false
		case ',':
			i = skipWS(b, i+1)
		default:
			return a.fail()
		}
	}
	if i >= len(b) {
		return a.fail()
	}
	a.vstart, a.pending, a.value = i, true, nil
	return true
}

func (a *Arr) skipPending() bool {
	end, err := skipValue(a.b, a.vstart, a.depth)
	if err != nil {
		return a.fail()
	}
	a.value, a.i, a.pending = a.b[a.vstart:end], end, false
	return true
}

// Enter walks the object element NextElem stopped at (see Obj.Enter).
func (a *Arr) Enter() (child Obj, ok bool) {
	if !a.pending || a.b[a.vstart] != '{' || a.depth >= maxDepth {
		return Obj{done: true}, false
	}
	return Obj{b: a.b, i: a.vstart + 1, first: true, depth: a.depth + 1}, true
}

// Leave moves a past the element entered with Enter (see Obj.Leave).
func (a *Arr) Leave(end int) {
	a.value, a.i, a.pending = a.b[a.vstart:end], end, false
}
