// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentspanconnector

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
)

// A thread's markers, as a record of an earlier version holds them (a real
// OpenCode session's record, 1 GB bench history), read as they were
// written, and written again in the compact form, which reads back the same.
func TestClosedMarkersReadInBothForms(t *testing.T) {
	const earlier = `{"key":{"source":"opencode","session":"ses_41aa601e1ffe6z7I4ccw1eIKUYZ1i8"},"last_prompt":"msg_be559fe35001CfjilCeYucOsg7Z1i8","last_prompt_seq":1,"last_arrival":1795764123189264513,"closed":[{"prompt":"msg_be559fe35001CfjilCeYucOsg7Z1i8","trace":[253,37,127,135,116,226,33,66,219,117,145,94,177,234,46,137],"skip":[[199,15,117,80,146,97,186,91],[14,22,117,186,245,55,168,159]]},{"prompt":"msg_2","trace":[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}],"closed_seq":5}`
	var th savedThread
	require.NoError(t, json.Unmarshal([]byte(earlier), &th))
	want := []closedUnit{
		{
			Prompt: "msg_be559fe35001CfjilCeYucOsg7Z1i8",
			Trace:  pcommon.TraceID{253, 37, 127, 135, 116, 226, 33, 66, 219, 117, 145, 94, 177, 234, 46, 137},
			Skip:   []pcommon.SpanID{{199, 15, 117, 80, 146, 97, 186, 91}, {14, 22, 117, 186, 245, 55, 168, 159}},
		},
		{Prompt: "msg_2", Trace: pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},
	}
	assert.Equal(t, want, th.Closed)

	b, err := json.Marshal(th)
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"trace"`)
	assert.NotContains(t, string(b), `"skip"`)
	assert.Contains(t, string(b), `{"prompt":"msg_be559fe35001CfjilCeYucOsg7Z1i8","t":"/SV/h3TiIULbdZFeseouiQ==","s":"xw91UJJhulsOFnW69Teonw=="}`)
	assert.Less(t, len(b), len(earlier), "the markers' ids take less room")
	var again savedThread
	require.NoError(t, json.Unmarshal(b, &again))
	assert.Equal(t, want, again.Closed)
}

// A marker whose ids are not whole is a record that cannot be read (the
// caller's unreadable-record path), not a marker with ids made up.
func TestClosedMarkerWithBrokenIDsIsAnError(t *testing.T) {
	for _, bad := range []string{
		`{"prompt":"p","t":"AQID"}`,                                        // 3 bytes of trace id
		`{"prompt":"p","t":"AAAAAAAAAAAAAAAAAAAAAA==","s":"AQIDBAUGBwgJ"}`, // 9 bytes of span ids
		`{"prompt":"p","t":"not base64!"}`,
	} {
		var m closedUnit
		assert.Error(t, json.Unmarshal([]byte(bad), &m), bad)
	}
}
