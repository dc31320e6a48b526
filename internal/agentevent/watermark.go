// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package agentevent

import (
	"encoding/json"
	"slices"
)

// Watermark is what a reader of a file rewritten in place (an Amp thread, a
// Gemini chat, a Copilot CLI history session) stores per thread: the keys
// of the records the vendor's mapper reported as emitted, so that a
// re-read emits only what is new.
type Watermark map[string]bool

// Add records the keys of a mapping's result once its events are sent.
func (w Watermark) Add(keys []string) {
	for _, k := range keys {
		w[k] = true
	}
}

// MarshalState encodes the watermark for the storage extension: a JSON
// array of the keys, sorted, so the same set encodes to the same bytes.
func (w Watermark) MarshalState() ([]byte, error) {
	keys := make([]string, 0, len(w))
	for k, ok := range w {
		if ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return json.Marshal(keys)
}

// UnmarshalWatermark decodes what MarshalState stored; empty data is an
// empty watermark.
func UnmarshalWatermark(data []byte) (Watermark, error) {
	w := Watermark{}
	if len(data) == 0 {
		return w, nil
	}
	var keys []string
	if err := json.Unmarshal(data, &keys); err != nil {
		return nil, err
	}
	w.Add(keys)
	return w, nil
}
