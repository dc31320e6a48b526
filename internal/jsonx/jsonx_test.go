// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package jsonx

import (
	"bytes"
	stdjson "encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Raw keeps the bytes the decoder hands it: they must be its own copy, not
// the caller's buffer (which the receiver reuses for the next line).
func TestRawOwnsItsBytes(t *testing.T) {
	line := []byte(`{"a":{"b":"x\ny"},"c":[1,2],"d":"s","e":null}`)
	var v struct {
		A, C, D, E, F Raw
	}
	require.NoError(t, Unmarshal(line, &v))
	want := map[string]string{"A": `{"b":"x\ny"}`, "C": `[1,2]`, "D": `"s"`, "E": `null`}
	got := map[string]string{"A": string(v.A), "C": string(v.C), "D": string(v.D), "E": string(v.E)}
	assert.Equal(t, want, got)
	assert.Nil(t, v.F, "an absent member stays nil")
	copy(line, bytes.Repeat([]byte{'#'}, len(line)))
	assert.Equal(t, want["A"], string(v.A), "Raw must not share the caller's buffer")
	assert.Equal(t, want["C"], string(v.C))
}

func TestKind(t *testing.T) {
	for raw, want := range map[string]byte{``: 0, `  `: 0, ` {"a":1}`: '{', "\n[": '[', `"s"`: '"', `null`: 'n', `-1`: '-'} {
		assert.Equal(t, want, Kind([]byte(raw)), raw)
	}
}

func TestObjectLen(t *testing.T) {
	assert.Equal(t, 2, ObjectLen([]byte(`{"a":1,"b":{"c":2},"a":3}`)), "distinct names")
	assert.Equal(t, 0, ObjectLen([]byte(`[1,2]`)))
	assert.Equal(t, 0, ObjectLen([]byte(`{"a":`)))
	assert.Equal(t, 0, ObjectLen(nil))
}

func TestValidIsLinear(t *testing.T) {
	assert.True(t, Valid([]byte(`{"a":"\n"}`)))
	assert.False(t, Valid([]byte(`{"a":`)))
}

// TestUnmarshalInvalidInputFailsAsEncodingJSON: input that is not JSON
// fails with encoding/json's error, the same every time; valid input
// decodes as before.
func TestUnmarshalInvalidInputFailsAsEncodingJSON(t *testing.T) {
	type part struct {
		Type    string `json:"type"`
		Payload Raw    `json:"payload"`
	}
	for _, in := range []string{`{"pAYloA\`, `{"type":"x",`, `{"type":"x"`, `[`, `{"a":tru}`, `"\q"`, ``} {
		want := stdjson.Unmarshal([]byte(in), new(any))
		require.Error(t, want, in)
		for range 20 {
			p := part{Type: "kept"}
			err := Unmarshal([]byte(in), &p)
			require.Error(t, err, in)
			assert.Equal(t, want.Error(), err.Error(), in)
		}
	}
	var p part
	require.NoError(t, Unmarshal([]byte(`{"type":"x","payload":{"a":1}}`), &p))
	assert.Equal(t, part{Type: "x", Payload: Raw(`{"a":1}`)}, p)
	// Valid input of another shape keeps goccy's error.
	require.Error(t, Unmarshal([]byte(`{"type":1}`), &p))
}
