// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package jsonl

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/tailer"
)

// TestSavedStateFormats: a JSON parser state is stored as it is, any other
// base64-encoded, and a state stored before "state" existed still reads.
func TestSavedStateFormats(t *testing.T) {
	sum := "a9c2a7afbd3c8ad6519e2907028328df4d9f6f3c65c798e69ae852383ec6c31a"
	for _, tc := range []struct {
		name, firstLine string
		state           []byte
		want            string
	}{
		{"json", sum, []byte(`{"v":2,"last_offset":1759}`), `{"first_line_sha256":"` + sum + `","state":{"v":2,"last_offset":1759}}`},
		{"json without first line", "", []byte(`{"v":2}`), `{"state":{"v":2}}`},
		{"not json", sum, []byte("\x00\x01opaque"), `{"first_line_sha256":"` + sum + `","parser":"AAFvcGFxdWU="}`},
	} {
		for _, pos := range []*tailer.Pos{nil, {Offset: 1800, Line: 7, Ino: 42}, {Offset: 3, Line: 1}} {
			t.Run(fmt.Sprintf("%s/pos=%v", tc.name, pos), func(t *testing.T) {
				b, err := marshalSaved(tc.firstLine, pos, tc.state)
				require.NoError(t, err)
				want := tc.want
				if pos != nil {
					p, marshalErr := json.Marshal(pos)
					require.NoError(t, marshalErr)
					want = `{"pos":` + string(p) + `,` + want[1:]
				}
				assert.JSONEq(t, want, string(b))
				firstLine, gotPos, state, err := unmarshalSaved(b)
				require.NoError(t, err)
				assert.Equal(t, tc.firstLine, firstLine)
				assert.Equal(t, pos, gotPos)
				assert.Equal(t, string(tc.state), string(state))
			})
		}
	}
	_, _, _, err := unmarshalSaved([]byte(`{"parser":`))
	assert.Error(t, err)
}
