// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package vendortest

import (
	"testing"

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
