// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentevent

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWatermarkState(t *testing.T) {
	w := Watermark{}
	w.Add([]string{"result:toolu_2", "m0", "call:toolu_2"})
	w["dropped"] = false // a false entry is not emitted: not stored
	b, err := w.MarshalState()
	require.NoError(t, err)
	// The stored layout, which the Amp, Gemini and Copilot CLI history
	// readers' states in storage hold: a sorted JSON array of keys.
	assert.Equal(t, `["call:toolu_2","m0","result:toolu_2"]`, string(b))

	back, err := UnmarshalWatermark(b)
	require.NoError(t, err)
	assert.Equal(t, Watermark{"call:toolu_2": true, "m0": true, "result:toolu_2": true}, back)
}

// TestWatermarkLoadsSavedState: the readers' states, byte for byte as the
// storage extension holds them, load.
func TestWatermarkLoadsSavedState(t *testing.T) {
	for name, tt := range map[string]struct {
		saved string
		want  Watermark
	}{
		"amp thread":              {`["call:toolu_01","m0","m1","result:toolu_01"]`, Watermark{"call:toolu_01": true, "m0": true, "m1": true, "result:toolu_01": true}},
		"gemini chat":             {`["6f1c0d2e-0000-4000-8000-000000000001","log:3"]`, Watermark{"6f1c0d2e-0000-4000-8000-000000000001": true, "log:3": true}},
		"copilot history session": {`["timeline-1","timeline-2"]`, Watermark{"timeline-1": true, "timeline-2": true}},
		"empty set":               {`[]`, Watermark{}},
		"nothing stored":          {``, Watermark{}},
	} {
		t.Run(name, func(t *testing.T) {
			w, err := UnmarshalWatermark([]byte(tt.saved))
			require.NoError(t, err)
			assert.Equal(t, tt.want, w)
			if tt.saved != "" {
				b, err := w.MarshalState()
				require.NoError(t, err)
				assert.Equal(t, tt.saved, string(b), "re-saved unchanged")
			}
		})
	}
	_, err := UnmarshalWatermark([]byte(`{"v":1}`))
	assert.Error(t, err)
}
