// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package jsonx

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestNamesPassable: a name is passed over only when the typed decoder could
// not take it for one of the names (case-insensitive, unescaped).
func TestNamesPassable(t *testing.T) {
	n := NewNames("toolUseResult", "type")
	for name, want := range map[string]bool{
		"other":         true,
		"toolUseResult": false,
		"TOOLUSERESULT": false,
		"toolUseResul":  true,
		`t\u0079pe`:     false, // escaped: may unescape to a name taken
		"aNameLongerThanAnyNameADecoderTakesInPractice": true,
	} {
		assert.Equal(t, want, n.Passable([]byte(name)), name)
	}
	assert.True(t, OnlySpace([]byte(" \t\r\n")))
	assert.True(t, OnlySpace(nil))
	assert.False(t, OnlySpace([]byte(" x")))
}
