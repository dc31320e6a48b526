// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package gemini

import (
	"encoding/json" // state is encoded with the standard library only
	"slices"
)

// Watermark is what a reader stores per thread (see ThreadKey): the keys
// MapChat and MapLogs reported as emitted.
type Watermark map[string]bool

// Add records the keys of a Result once its events are sent.
func (w Watermark) Add(keys []string) {
	for _, k := range keys {
		w[k] = true
	}
}

// MarshalState encodes the watermark for the storage extension (sorted
// keys, so the same set encodes to the same bytes).
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

// UnmarshalState decodes what MarshalState stored; empty data is an empty
// watermark.
func UnmarshalState(data []byte) (Watermark, error) {
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

// ThreadKey names the watermark of a chat: its sessionId for a top-level
// chat, "<parentSessionId>/<sessionId>" for a nested one. Keyed by thread,
// not by file, the copies of a chat under the hash-named and the
// project-named directory, and a resumed session's new file, share one
// watermark and emit each message once.
func ThreadKey(c Context, chat Chat) string {
	if c.ParentSessionID != "" {
		return c.ParentSessionID + "/" + chat.SessionID
	}
	return chat.SessionID
}
