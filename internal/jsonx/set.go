// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package jsonx

// The setters decode one raw value (as Obj.Value gives it) into a Go
// destination as the typed decoder (Unmarshal) would: false on a JSON type
// it rejects for that Go type; null leaves the destination as it is. The
// in-place decoders of the parsers build their structs with them.

// SetStr decodes a string into *dst. A value written exactly as one of
// known (no escapes) takes that string instead of a new one: a decoder
// passes the strings a record most often repeats, and allocates nothing
// for them.
func SetStr(dst *string, v []byte, known ...string) bool {
	if len(v) == 0 {
		return false
	}
	switch v[0] {
	case 'n':
		return true
	case '"':
		for _, w := range known {
			if w != "" && string(v[1:len(v)-1]) == w {
				*dst = w
				return true
			}
		}
	}
	s, ok := Str(v)
	*dst = s
	return ok
}

// SetStrPtr decodes a string into a new *string at *dst.
func SetStrPtr(dst **string, v []byte) bool {
	if len(v) == 0 {
		return false
	}
	if v[0] == 'n' {
		return true
	}
	s, ok := Str(v)
	*dst = &s
	return ok
}

// SetBool decodes a bool into *dst.
func SetBool(dst *bool, v []byte) bool {
	if len(v) == 0 {
		return false
	}
	if v[0] == 'n' {
		return true
	}
	b, ok := Bool(v)
	*dst = b
	return ok
}

// SetFloat decodes a number into *dst.
func SetFloat(dst *float64, v []byte) bool {
	if len(v) == 0 {
		return false
	}
	if v[0] == 'n' {
		return true
	}
	f, ok := Float(v)
	*dst = f
	return ok
}

// StrOrNull reports whether v is a value the typed decoder takes into a
// string: a string or null.
func StrOrNull(v []byte) bool { return len(v) > 0 && (v[0] == '"' || v[0] == 'n') }
