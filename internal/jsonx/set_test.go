// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package jsonx

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSettersDecodeAsUnmarshal: each setter leaves its destination as
// Unmarshal into that Go type does, and fails where Unmarshal fails.
func TestSettersDecodeAsUnmarshal(t *testing.T) {
	for _, raw := range []string{`"a\nb"`, `"x"`, `null`, `1`, `true`, `{}`, `[]`, `-2.5e3`, `false`} {
		var s, ws string
		ok := SetStr(&s, []byte(raw), "x")
		err := Unmarshal([]byte(raw), &ws)
		assert.Equal(t, err == nil, ok, "string %s", raw)
		if ok {
			assert.Equal(t, ws, s, "string %s", raw)
		}
		var p, wp *string
		ok = SetStrPtr(&p, []byte(raw))
		err = Unmarshal([]byte(raw), &wp)
		assert.Equal(t, err == nil, ok, "*string %s", raw)
		if ok {
			assert.Equal(t, wp, p, "*string %s", raw)
		}
		var b, wb bool
		ok = SetBool(&b, []byte(raw))
		err = Unmarshal([]byte(raw), &wb)
		assert.Equal(t, err == nil, ok, "bool %s", raw)
		if ok {
			assert.Equal(t, wb, b, "bool %s", raw)
		}
		var f, wf float64
		ok = SetFloat(&f, []byte(raw))
		err = Unmarshal([]byte(raw), &wf)
		assert.Equal(t, err == nil, ok, "float64 %s", raw)
		if ok {
			assert.Equal(t, wf, f, "float64 %s", raw)
		}
		assert.Equal(t, raw[0] == '"' || raw == "null", StrOrNull([]byte(raw)), raw)
	}
	// A known string is taken, not made.
	known := "assistant"
	var s string
	require.True(t, SetStr(&s, []byte(`"assistant"`), "user", known))
	assert.Same(t, unsafeData(known), unsafeData(s))
}

func unsafeData(s string) *byte { return unsafe.StringData(s) }
