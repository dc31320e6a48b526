// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package vendortest

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

func TestSplitLinesOnNewlineOnly(t *testing.T) {
	first, third := "{\"a\":\"x\u2028y\u0085z\"}", "{\"b\":1}\r"
	data := []byte(first + "\n\n" + third + "\n{\"c\":2}")
	l1 := int64(len(first))
	assert.Equal(t, []Line{
		{Data: []byte(first), No: 1, Offset: 0}, // U+2028 and U+0085 are not line ends
		{Data: []byte{}, No: 2, Offset: l1 + 1},
		{Data: []byte(third), No: 3, Offset: l1 + 2},                               // "\r" stays in the line
		{Data: []byte("{\"c\":2}"), No: 4, Offset: l1 + 2 + int64(len(third)) + 1}, // no trailing "\n"
	}, SplitLines(data))
}

// recorder is a testing.TB that records Errorf calls.
type recorder struct {
	testing.TB
	errors []string
}

func (*recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// TestRequireNoAlias: a string or byte slice of the state that points into a
// record is found, with its path; copies pass.
func TestRequireNoAlias(t *testing.T) {
	record := []byte(`{"id":"call_1","name":"shell"}`)
	type call struct{ ID, Name string }
	type state struct {
		Calls map[string]*call
		Raw   []byte
		Note  any
	}
	copied := &state{
		Calls: map[string]*call{"call_1": {ID: string(record[7:13]), Name: strings.Clone("shell")}},
		Raw:   bytes.Clone(record),
		Note:  "x",
	}
	r := &recorder{TB: t}
	RequireNoAlias(r, copied, record)
	assert.Empty(t, r.errors)

	aliased := &state{
		Calls: map[string]*call{"call_1": {ID: unsafe.String(&record[7], 6), Name: "shell"}},
		Raw:   record[1:5],
		Note:  unsafe.String(&record[22], 5),
	}
	r = &recorder{TB: t}
	RequireNoAlias(r, aliased, record)
	assert.ElementsMatch(t, []string{
		"*vendortest.state.Calls[call_1].ID points into a record handed to Parse",
		"*vendortest.state.Raw points into a record handed to Parse",
		"*vendortest.state.Note points into a record handed to Parse",
	}, r.errors)
}
