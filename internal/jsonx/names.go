// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package jsonx

import "strings"

// The typed decoder (goccy) matches a member name to a struct field
// case-insensitively, and after unescaping it. An in-place decoder that
// passes over the members it does not take must therefore hand a line to the
// typed decode when a name it passes over could be one of its fields written
// another way: Names and Names.Passable tell.

// Names are the member names a decoder takes, lower-cased.
type Names map[string]bool

// NewNames is the set of names.
func NewNames(names ...string) Names {
	m := make(Names, len(names))
	for _, n := range names {
		m[strings.ToLower(n)] = true
	}
	return m
}

// Passable tells whether a member name a decoder does not take can be
// passed over: written without escapes, and no case-insensitive match of one
// of n.
func (n Names) Passable(name []byte) bool {
	var buf [48]byte
	if len(name) > len(buf) {
		return true // longer than any name a decoder takes
	}
	for i, c := range name {
		switch {
		case c == '\\':
			return false
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return !n[string(buf[:len(name)])]
}

// OnlySpace reports whether b holds JSON whitespace only (what may follow a
// value).
func OnlySpace(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}
