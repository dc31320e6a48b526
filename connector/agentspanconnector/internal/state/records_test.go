// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package state

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/agentotel/agentotel/connector/agentspanconnector/internal/spanmodel"
	"github.com/agentotel/agentotel/internal/agentevent"
)

// A thread's markers (ids of a real OpenCode session's record) are written
// with their ids as base64 bytes and read back as they were.
func TestClosedMarkersRoundTrip(t *testing.T) {
	want := []ClosedUnit{
		{
			Prompt: "msg_be559fe35001CfjilCeYucOsg7Z1i8",
			Trace:  pcommon.TraceID{253, 37, 127, 135, 116, 226, 33, 66, 219, 117, 145, 94, 177, 234, 46, 137},
			Skip:   []pcommon.SpanID{{199, 15, 117, 80, 146, 97, 186, 91}, {14, 22, 117, 186, 245, 55, 168, 159}},
		},
		{Prompt: "msg_2", Trace: pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},
	}
	th := SavedThread{
		Key:        spanmodel.ThreadKey{Source: agentevent.Source("opencode"), Session: "ses_41aa601e1ffe6z7I4ccw1eIKUYZ1i8"},
		LastPrompt: "msg_be559fe35001CfjilCeYucOsg7Z1i8", LastPromptSeq: 1, LastArrival: 1795764123189264513,
		Closed: want, ClosedSeq: 5,
	}
	b, err := json.Marshal(th)
	require.NoError(t, err)
	assert.NotContains(t, string(b), `"trace"`)
	assert.NotContains(t, string(b), `"skip"`)
	assert.Contains(t, string(b), `{"prompt":"msg_be559fe35001CfjilCeYucOsg7Z1i8","t":"/SV/h3TiIULbdZFeseouiQ==","s":"xw91UJJhulsOFnW69Teonw=="}`)
	var again SavedThread
	require.NoError(t, json.Unmarshal(b, &again))
	assert.Equal(t, th, again)
}

// A marker whose ids are not whole is a record that cannot be read (the
// caller's unreadable-record path), not a marker with ids made up.
func TestClosedMarkerWithBrokenIDsIsAnError(t *testing.T) {
	for _, bad := range []string{
		`{"prompt":"p","t":"AQID"}`,                                        // 3 bytes of trace id
		`{"prompt":"p","t":"AAAAAAAAAAAAAAAAAAAAAA==","s":"AQIDBAUGBwgJ"}`, // 9 bytes of span ids
		`{"prompt":"p","t":"not base64!"}`,
	} {
		var m ClosedUnit
		assert.Error(t, json.Unmarshal([]byte(bad), &m), bad)
	}
}
